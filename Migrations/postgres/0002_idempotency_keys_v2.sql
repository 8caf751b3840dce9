-- 0002 (PostgreSQL): idempotency keys expire and are stored under the server secret, as
-- Migrations/sqlite/0002_idempotency_keys_v2.sql (answers stored before it are dropped).
DELETE FROM idempotency_keys;

CREATE INDEX idempotency_keys_by_created_at ON idempotency_keys(created_at);
