-- 0014: a session's credential (see the SQLite migration of this number).
ALTER TABLE sessions ADD COLUMN secret_hash TEXT;
