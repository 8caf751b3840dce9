-- 0012: sessions end. A session idle for `sessions.idleExpirySeconds` ends with a `session.expired`
-- step (actor `system`): `ended_at` is set, its state is dropped (`{}`), and every request on it
-- is answered `410 session_expired`; its audit trail stays readable. It is ended at its next
-- request, or by photosd's sweep, whichever comes first.
ALTER TABLE sessions ADD COLUMN ended_at TEXT;

-- Who runs a periodic job now, for jobs that one instance at a time should run (the sweep): a
-- holder takes the row when `until` has passed, and keeps it by moving `until` on. The first
-- holder inserts it (a migrated database has no rows, so `photos-admin copy` sees it empty).
CREATE TABLE maintenance_leases (
    name   TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until  TEXT NOT NULL            -- ISO-8601 UTC
);
