-- 0010: what an action's read needs of a session's state, kept as columns beside it, so the
-- read parses no JSON and, for a state photosd has cached, never touches (or decompresses) the
-- state at all; and what an operator filters sessions by, readable with plain SQL:
--   layout      'stack' or 'tabs'
--   top_screen  the top screen's name (photos, photo, purchases, signIn, buy, terms)
--   token_id    the session's token (row id in tokens), NULL when signed out
--   photo_ids   every photo the state names, as an array literal: '{3,7}'
-- Every writer of a session row sets them from the state it writes. A row whose photo_ids is
-- NULL (none written since) is read from its JSON as before; a read that finds the columns
-- did not cover what the decision needs reads the facts again (never a wrong answer).
ALTER TABLE sessions
    ADD COLUMN layout TEXT,
    ADD COLUMN top_screen TEXT,
    ADD COLUMN token_id BIGINT,
    ADD COLUMN photo_ids TEXT;
UPDATE sessions SET
    layout = coalesce(state::jsonb ->> 'layout', 'stack'),
    top_screen = state::jsonb #>> '{top,screen}',
    token_id = (state::jsonb ->> 'tokenId')::bigint,
    photo_ids = (
        SELECT '{' || coalesce(string_agg(id::text, ',' ORDER BY id), '') || '}'
        FROM (SELECT DISTINCT (v #>> '{}')::bigint AS id
              FROM jsonb_path_query(state::jsonb, 'strict $.**.photoId') AS v
              WHERE jsonb_typeof(v) = 'number') AS named
    );
-- Every action rewrites its session's row: room on the page lets PostgreSQL update it in
-- place (a HOT update, no new index entry), and lz4 compresses the state's JSON several times
-- faster than the default pglz (kept where the server was built without lz4).
ALTER TABLE sessions SET (fillfactor = 70);
DO $$
BEGIN
    ALTER TABLE sessions ALTER COLUMN state SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    NULL;
END
$$;
-- The console's sessions list: newest first by creation, and by user. Neither column changes
-- when an action updates its session, so the update needs no new index entry.
CREATE INDEX sessions_by_created ON sessions (created_at, id);
CREATE INDEX sessions_by_user ON sessions (user_id);
