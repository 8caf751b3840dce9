-- 0013: old trails move to archives (see the SQLite migration of this number).
CREATE TABLE audit_archives (
    number        BIGINT PRIMARY KEY,
    path          TEXT NOT NULL,
    before        TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    finished_at   TEXT,
    rows          BIGINT,
    segments      BIGINT,
    rows_digest   TEXT,
    segments_digest TEXT,
    prev_hash     TEXT,
    public_key    TEXT,
    signature     TEXT,
    hash          TEXT
);

CREATE TABLE audit_archived_trails (
    trail     TEXT NOT NULL,
    first_seq BIGINT NOT NULL,
    last_seq  BIGINT NOT NULL,
    last_hash TEXT NOT NULL,
    archive   BIGINT NOT NULL REFERENCES audit_archives(number),
    PRIMARY KEY (trail, first_seq)
);
CREATE INDEX audit_archived_trails_by_archive ON audit_archived_trails(archive, trail, first_seq);

CREATE TRIGGER audit_archives_no_delete BEFORE DELETE ON audit_archives
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_archives_no_truncate BEFORE TRUNCATE ON audit_archives
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
CREATE FUNCTION audit_archives_finish_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.finished_at IS NULL AND NEW.number = OLD.number AND NEW.path = OLD.path AND NEW.before = OLD.before THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit_archives is append-only: UPDATE refused';
END;
$$;
CREATE TRIGGER audit_archives_no_update BEFORE UPDATE ON audit_archives
    FOR EACH ROW EXECUTE FUNCTION audit_archives_finish_only();
CREATE TRIGGER audit_archived_trails_no_update BEFORE UPDATE ON audit_archived_trails
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_archived_trails_no_delete BEFORE DELETE ON audit_archived_trails
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_archived_trails_no_truncate BEFORE TRUNCATE ON audit_archived_trails
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- An audit row leaves only once a segment says where it went.
CREATE FUNCTION audit_events_archived_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM audit_archived_trails t
               WHERE t.trail = OLD.session_id AND t.first_seq <= OLD.seq AND t.last_seq >= OLD.seq) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit_events is append-only: DELETE refused (rows leave only through photos-admin audit archive)';
END;
$$;
DROP TRIGGER audit_events_no_delete ON audit_events;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_archived_only();

-- A redaction listing moves with its row.
CREATE FUNCTION audit_redactions_with_row_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM audit_events e WHERE e.id = OLD.event_id) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit_redactions is append-only: DELETE refused';
END;
$$;
DROP TRIGGER audit_redactions_no_delete ON audit_redactions;
CREATE TRIGGER audit_redactions_no_delete BEFORE DELETE ON audit_redactions
    FOR EACH ROW EXECUTE FUNCTION audit_redactions_with_row_only();
