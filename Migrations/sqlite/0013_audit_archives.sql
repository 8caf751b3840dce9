-- 0013: old trails move to archives (`photos-admin audit archive --before T --to FILE`).
--
-- An archive is a SQLite file of its own holding the moved rows with their hashes, the trails'
-- segments it holds, and a statement signed with the audit key (its number, the previous
-- archive's hash, and digests of its rows and segments). The live database keeps the same
-- statement and the same segments: what left, up to which seq and with which hash, so that
-- `audit verify` still proves the live trails (a reserved trail goes on where its archived part
-- ended; a checkpoint's head that was archived is found in a signed segment) and
-- `audit verify --archive FILE` joins the archives and the live rows into one history.
CREATE TABLE audit_archives (
    number        INTEGER PRIMARY KEY,      -- 1, 2, 3 … without gaps
    path          TEXT NOT NULL,            -- where it was written (absolute), for the operator
    before        TEXT NOT NULL,            -- ISO-8601 UTC: what it moved ended, or was written, before this
    started_at    TEXT NOT NULL,
    finished_at   TEXT,                     -- NULL while rows are moving (or the move was interrupted)
    rows          INTEGER,                  -- the rest is the signed statement, set when finished
    segments      INTEGER,
    rows_digest   TEXT,
    segments_digest TEXT,
    prev_hash     TEXT,                     -- the previous archive's hash (64 zeros for the first)
    public_key    TEXT,
    signature     TEXT,
    hash          TEXT
);

-- One trail's rows first_seq … last_seq, moved to archive `archive`. A session's trail moves
-- whole (it has ended); a reserved trail ('operator', 'api') moves in segments, each going on
-- from the one before.
CREATE TABLE audit_archived_trails (
    trail     TEXT NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq  INTEGER NOT NULL,
    last_hash TEXT NOT NULL,                -- the hash of row last_seq: where the trail goes on
    archive   INTEGER NOT NULL REFERENCES audit_archives(number),
    PRIMARY KEY (trail, first_seq)
);
CREATE INDEX audit_archived_trails_by_archive ON audit_archived_trails(archive, trail, first_seq);

CREATE TRIGGER audit_archives_no_delete BEFORE DELETE ON audit_archives
BEGIN
    SELECT RAISE(ABORT, 'audit_archives is append-only: DELETE refused');
END;
-- The one update: an archive being written gets its signed statement, once.
CREATE TRIGGER audit_archives_no_update BEFORE UPDATE ON audit_archives
WHEN OLD.finished_at IS NOT NULL OR NEW.number != OLD.number OR NEW.path != OLD.path OR NEW.before != OLD.before
BEGIN
    SELECT RAISE(ABORT, 'audit_archives is append-only: UPDATE refused');
END;
CREATE TRIGGER audit_archived_trails_no_update BEFORE UPDATE ON audit_archived_trails
BEGIN
    SELECT RAISE(ABORT, 'audit_archived_trails is append-only: UPDATE refused');
END;
CREATE TRIGGER audit_archived_trails_no_delete BEFORE DELETE ON audit_archived_trails
BEGIN
    SELECT RAISE(ABORT, 'audit_archived_trails is append-only: DELETE refused');
END;

-- An audit row leaves only once a segment says where it went.
DROP TRIGGER audit_events_no_delete;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
WHEN NOT EXISTS (
    SELECT 1 FROM audit_archived_trails t
    WHERE t.trail = OLD.session_id AND t.first_seq <= OLD.seq AND t.last_seq >= OLD.seq
)
BEGIN
    SELECT RAISE(ABORT, 'audit_events is append-only: DELETE refused (rows leave only through photos-admin audit archive)');
END;
-- A redaction listing moves with its row.
DROP TRIGGER audit_redactions_no_delete;
CREATE TRIGGER audit_redactions_no_delete BEFORE DELETE ON audit_redactions
WHEN EXISTS (SELECT 1 FROM audit_events e WHERE e.id = OLD.event_id)
BEGIN
    SELECT RAISE(ABORT, 'audit_redactions is append-only: DELETE refused');
END;
