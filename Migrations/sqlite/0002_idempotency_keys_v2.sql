-- 0002: idempotency keys expire and are stored under the server secret.
--
-- From this version `key` and `request_hash` are HMACs under the server secret (a file outside
-- the database) instead of plain SHA-256, so answers stored before it can never be found again:
-- they are dropped. A retry that spans the upgrade is treated as a new request.
DELETE FROM idempotency_keys;

-- Answers older than `idempotency.retentionSeconds` are pruned by this index's order.
CREATE INDEX idempotency_keys_by_created_at ON idempotency_keys(created_at);
