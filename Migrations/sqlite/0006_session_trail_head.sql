-- 0006: each session row carries its audit trail's head (last seq and its hash), so that an
-- action reads the session and its chain's head in one row, and writes them back with the
-- audit rows, only if neither moved since (the write's WHERE: version and trail_seq).
-- Only the session writer appends to a session's trail, and it keeps these two up to date.
ALTER TABLE sessions ADD COLUMN trail_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN trail_hash TEXT NOT NULL DEFAULT '0000000000000000000000000000000000000000000000000000000000000000';
UPDATE sessions SET
    trail_seq = (SELECT seq FROM audit_events a WHERE a.session_id = sessions.id ORDER BY seq DESC LIMIT 1),
    trail_hash = (SELECT hash FROM audit_events a WHERE a.session_id = sessions.id ORDER BY seq DESC LIMIT 1)
WHERE EXISTS (SELECT 1 FROM audit_events a WHERE a.session_id = sessions.id);
