-- 0012: sessions end (see the SQLite migration of this number).
ALTER TABLE sessions ADD COLUMN ended_at TEXT;

CREATE TABLE maintenance_leases (
    name   TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until  TEXT NOT NULL
);
