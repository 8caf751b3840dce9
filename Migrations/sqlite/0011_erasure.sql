-- 0011: a person can be forgotten (`photos-admin users erase NAME`) and every proof still holds.
--
-- From this version an audit row never holds a name: it names its user by `user_id`, and the
-- `audit_trail` view shows that user's name while there is one. What binds a user's name to the
-- chain is a commitment, sha256(name_salt || name), in the hashed detail of their `user.created`
-- step: `audit verify` opens it with the salt kept here. Erasure deletes the salt and the name (the
-- row stays as a tombstone, `erased:<id>`, so purchases still point at it), and the commitment can
-- no longer be opened or guessed.
--
-- Rows written before this version carry the clear name in `username` (and a refused sign-in's
-- `attemptedUsername` in `detail`), inside the bytes their hash covers. Erasure clears those fields
-- and lists the row in `audit_redactions`; the update trigger lets exactly that change through, and
-- nothing else. Such a row's hash can no longer be recomputed: `audit verify` proves its place in
-- the chain (the next row and the signed checkpoints name its hash), not its content.
ALTER TABLE users ADD COLUMN name_salt TEXT;      -- hex, 32 random bytes; NULL once erased
ALTER TABLE users ADD COLUMN erased_at TEXT;      -- ISO-8601 UTC; the name is `erased:<id>` from then on
UPDATE users SET name_salt = lower(hex(randomblob(32)));

CREATE TABLE audit_redactions (
    event_id INTEGER PRIMARY KEY,                    -- audit_events.id (no foreign key, as on PostgreSQL, where one would stop a TRUNCATE before its trigger)
    user_id  INTEGER NOT NULL REFERENCES users(id),   -- the erased user the row named
    at       TEXT NOT NULL
);
CREATE TRIGGER audit_redactions_no_update BEFORE UPDATE ON audit_redactions
BEGIN
    SELECT RAISE(ABORT, 'audit_redactions is append-only: UPDATE refused');
END;
CREATE TRIGGER audit_redactions_no_delete BEFORE DELETE ON audit_redactions
BEGIN
    SELECT RAISE(ABORT, 'audit_redactions is append-only: DELETE refused');
END;

-- The one update an audit row admits: a listed row losing its name, nothing else.
DROP TRIGGER audit_events_no_update;
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

-- What erasure looks up, without reading the whole trail: the rows from before 0011 that hold a
-- name, and a user's sign-ins (which sessions they were in). Rows written since hold no name, and
-- only sign-ins and refused sign-ins enter the last two, so appending costs what it did.
CREATE INDEX audit_events_legacy_names ON audit_events(username) WHERE username IS NOT NULL;
CREATE INDEX audit_events_legacy_attempts ON audit_events(json_extract(detail, '$.attemptedUsername')) WHERE step = 'auth.signInFailed';
CREATE INDEX audit_events_sign_ins ON audit_events(user_id) WHERE step = 'auth.signIn';

-- The contract view, unchanged in its columns: the name comes from the row (before 0011) or from
-- its user, and is NULL once that user is erased.
DROP VIEW audit_trail;
CREATE VIEW audit_trail AS
SELECT e.session_id, e.seq, e.at, e.actor,
       coalesce(e.username, CASE WHEN u.erased_at IS NULL THEN u.username END) AS username,
       e.coordinator, e.step, e.screen, e.detail
FROM audit_events e LEFT JOIN users u ON u.id = e.user_id
ORDER BY e.id;
