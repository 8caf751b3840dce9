-- 0011: a person can be forgotten (`photos-admin users erase NAME`) and every proof still holds.
-- The same design as the SQLite migration of this number (see there).
ALTER TABLE users ADD COLUMN name_salt TEXT, ADD COLUMN erased_at TEXT;
-- gen_random_uuid() draws from the server's strong random source (PostgreSQL 13+, no extension).
UPDATE users SET name_salt = encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex');

CREATE TABLE audit_redactions (
    event_id BIGINT PRIMARY KEY,                     -- audit_events.id (no foreign key: a TRUNCATE of audit_events must meet its trigger, not a foreign-key error)
    user_id  BIGINT NOT NULL REFERENCES users(id),
    at       TEXT NOT NULL
);
CREATE TRIGGER audit_redactions_no_update BEFORE UPDATE ON audit_redactions
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_redactions_no_delete BEFORE DELETE ON audit_redactions
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_redactions_no_truncate BEFORE TRUNCATE ON audit_redactions
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- SQLite's json_extract and json_remove for the one path they are used with here ('$.key'), so
-- that erasure's statements are the same text on both stores.
CREATE FUNCTION json_extract(document text, path text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT document::jsonb ->> substr(path, 3)
$$;
CREATE FUNCTION json_remove(document text, path text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT (document::jsonb - substr(path, 3))::text
$$;

-- The one update an audit row admits: a listed row losing its name, nothing else.
CREATE FUNCTION audit_events_redaction_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM audit_redactions r WHERE r.event_id = OLD.id)
        AND NEW.id = OLD.id AND NEW.session_id = OLD.session_id AND NEW.seq = OLD.seq AND NEW.at = OLD.at
        AND NEW.actor = OLD.actor AND NEW.user_id IS NOT DISTINCT FROM OLD.user_id AND NEW.username IS NULL
        AND NEW.coordinator IS NOT DISTINCT FROM OLD.coordinator AND NEW.step = OLD.step
        AND NEW.screen IS NOT DISTINCT FROM OLD.screen
        AND NEW.prev_hash = OLD.prev_hash AND NEW.hash = OLD.hash
        AND (NEW.detail = OLD.detail OR NEW.detail = json_remove(OLD.detail, '$.attemptedUsername'))
    THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit_events is append-only: UPDATE refused';
END;
$$;
DROP TRIGGER audit_events_no_update ON audit_events;
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_redaction_only();

-- What erasure looks up without reading the whole trail (see the SQLite migration).
CREATE INDEX audit_events_legacy_names ON audit_events(username) WHERE username IS NOT NULL;
CREATE INDEX audit_events_legacy_attempts ON audit_events(json_extract(detail, '$.attemptedUsername')) WHERE step = 'auth.signInFailed';
CREATE INDEX audit_events_sign_ins ON audit_events(user_id) WHERE step = 'auth.signIn';

CREATE OR REPLACE VIEW audit_trail AS
SELECT e.session_id, e.seq, e.at, e.actor,
       coalesce(e.username, CASE WHEN u.erased_at IS NULL THEN u.username END) AS username,
       e.coordinator, e.step, e.screen, e.detail
FROM audit_events e LEFT JOIN users u ON u.id = e.user_id
ORDER BY e.id;
