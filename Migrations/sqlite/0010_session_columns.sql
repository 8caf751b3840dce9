-- 0010: what an operator filters sessions by, and what PostgreSQL's one-statement read needs
-- of a session's state, kept as columns beside it (the same columns on both stores, so
-- `photos-admin copy` moves sessions either way):
--   layout      'stack' or 'tabs'
--   top_screen  the top screen's name (photos, photo, purchases, signIn, buy, terms)
--   token_id    the session's token (row id in tokens), NULL when signed out
--   photo_ids   every photo the state names, as an array literal: '{3,7}'
-- Every writer of a session row sets them from the state it writes.
ALTER TABLE sessions ADD COLUMN layout TEXT;
ALTER TABLE sessions ADD COLUMN top_screen TEXT;
ALTER TABLE sessions ADD COLUMN token_id INTEGER;
ALTER TABLE sessions ADD COLUMN photo_ids TEXT;
UPDATE sessions SET
    layout = coalesce(json_extract(state, '$.layout'), 'stack'),
    top_screen = json_extract(state, '$.top.screen'),
    token_id = json_extract(state, '$.tokenId'),
    photo_ids = '{' || coalesce((
        SELECT group_concat(id, ',') FROM (
            SELECT DISTINCT t.value AS id FROM json_tree(sessions.state) AS t
            WHERE t.key = 'photoId' AND t.type = 'integer' ORDER BY t.value)
    ), '') || '}';
-- The console's sessions list: newest first by creation, and by user. Neither column changes
-- when an action updates its session, so the update needs no new index entry.
CREATE INDEX sessions_by_created ON sessions (created_at, id);
CREATE INDEX sessions_by_user ON sessions (user_id);
