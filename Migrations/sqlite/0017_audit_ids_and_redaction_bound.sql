-- 0017: audit row ids never go back, and a redaction is accepted only where a name could be.
--
-- 1. Ids. `audit_events.id` was an `INTEGER PRIMARY KEY`, which SQLite gives as max(id) + 1:
-- once `audit archive` had taken the newest rows, new rows took their ids again, below what the
-- checkpoints, `audit show --follow`, the console's stream and the funnel marks had read up to,
-- and no checkpoint ever covered them. With AUTOINCREMENT an id is never given twice
-- (`sqlite_sequence` keeps the highest ever given). The table is rebuilt, as SQLite's ALTER TABLE
-- cannot add it; `legacy_alter_table` lets the rename keep the views that read the table.
PRAGMA legacy_alter_table = ON;
CREATE TABLE audit_events_0017 (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT NOT NULL,              -- a session id, or 'operator' / 'api'
    seq         INTEGER NOT NULL,           -- 1, 2, 3 … per session_id, no gaps
    at          TEXT NOT NULL,
    actor       TEXT NOT NULL,              -- client | operator:<name> | system
    user_id     INTEGER,
    username    TEXT,                       -- only in rows written before 0011
    coordinator TEXT,
    step        TEXT NOT NULL,
    screen      TEXT,
    detail      TEXT NOT NULL DEFAULT '{}', -- JSON; never a password or a token
    prev_hash   TEXT NOT NULL,              -- hash of the trail's previous row
    hash        TEXT NOT NULL,              -- SHA-256 over prev_hash and this row's columns
    UNIQUE (session_id, seq)
);
INSERT INTO audit_events_0017 SELECT id, session_id, seq, at, actor, user_id, username, coordinator, step, screen, detail, prev_hash, hash FROM audit_events;
DROP TABLE audit_events;
ALTER TABLE audit_events_0017 RENAME TO audit_events;
PRAGMA legacy_alter_table = OFF;

-- A database that already archived its newest rows: the next id is above every id a checkpoint
-- covered (an archived row's id is at most that, or was never covered by any).
INSERT INTO sqlite_sequence (name, seq)
SELECT 'audit_events', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'audit_events');
UPDATE sqlite_sequence SET seq = max(
    seq,
    coalesce((SELECT max(id) FROM audit_events), 0),
    coalesce((SELECT max(covers_until_id) FROM audit_checkpoints), 0),
    coalesce((SELECT max(event_id) FROM audit_redactions), 0)
) WHERE name = 'audit_events';

-- What dropping the table took with it, as 0011, 0013, 0004 and 0016 made it.
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
WHEN NOT (
    EXISTS (SELECT 1 FROM audit_redactions r WHERE r.event_id = OLD.id)
    AND NEW.id = OLD.id AND NEW.session_id = OLD.session_id AND NEW.seq = OLD.seq AND NEW.at = OLD.at
    AND NEW.actor = OLD.actor AND NEW.user_id IS OLD.user_id AND NEW.username IS NULL
    AND NEW.coordinator IS OLD.coordinator AND NEW.step = OLD.step AND NEW.screen IS OLD.screen
    AND NEW.prev_hash = OLD.prev_hash AND NEW.hash = OLD.hash
    AND (NEW.detail = OLD.detail OR NEW.detail = json_remove(OLD.detail, '$.attemptedUsername'))
)
BEGIN
    SELECT RAISE(ABORT, 'audit_events is append-only: UPDATE refused');
END;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
WHEN NOT EXISTS (
    SELECT 1 FROM audit_archived_trails t
    WHERE t.trail = OLD.session_id AND t.first_seq <= OLD.seq AND t.last_seq >= OLD.seq
)
BEGIN
    SELECT RAISE(ABORT, 'audit_events is append-only: DELETE refused (rows leave only through photos-admin audit archive)');
END;
CREATE INDEX audit_events_legacy_names ON audit_events(username) WHERE username IS NOT NULL;
CREATE INDEX audit_events_legacy_attempts ON audit_events(json_extract(detail, '$.attemptedUsername')) WHERE step = 'auth.signInFailed';
CREATE INDEX audit_events_sign_ins ON audit_events(user_id) WHERE step = 'auth.signIn';
CREATE INDEX audit_buy_finishes ON audit_events (substr(at, 1, 10), detail, at)
WHERE session_id NOT IN ('operator', 'api') AND step = 'coordinator.finish' AND coordinator LIKE '%/buy';
CREATE INDEX audit_experiment_exposures ON audit_events (json_extract(detail, '$.experiment'), session_id)
WHERE step = 'experiment.exposed';

-- 2. Redactions. Only rows written before 0011 hold a name in the bytes their hash covers, so
-- only they may be listed in `audit_redactions` (and their hash then goes unchecked). The highest
-- such id is fixed here, once: every row holding a name, or already listed, is at or below it;
-- a database made at 0011 or later has none (0). `audit verify` refuses a listing above it, and
-- says which bound it used. Like `audit_chain_cutover` it is refused an UPDATE; `photos-admin
-- copy` replaces the row a new database starts with by the source's.
CREATE TABLE audit_redaction_bound (
    until_id INTEGER NOT NULL
);
INSERT INTO audit_redaction_bound (until_id)
SELECT max(
    coalesce((SELECT max(id) FROM audit_events WHERE username IS NOT NULL), 0),
    coalesce((SELECT max(id) FROM audit_events WHERE step = 'auth.signInFailed' AND json_extract(detail, '$.attemptedUsername') IS NOT NULL), 0),
    coalesce((SELECT max(event_id) FROM audit_redactions), 0)
);
CREATE TRIGGER audit_redaction_bound_no_update BEFORE UPDATE ON audit_redaction_bound
BEGIN
    SELECT RAISE(ABORT, 'audit_redaction_bound is fixed: UPDATE refused');
END;
