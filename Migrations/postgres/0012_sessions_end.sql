-- 0012: sessions end (see the SQLite migration of this number).
ALTER TABLE sessions ADD COLUMN ended_at TEXT;

CREATE TABLE maintenance_leases (
    name   TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until  TEXT NOT NULL
);
INSERT INTO maintenance_leases (name, holder, until) VALUES ('session-sweep', '', '1970-01-01T00:00:00.000Z');
