-- 0014: a session's credential. Creating a session returns a secret once (`sessionSecret`);
-- every request on the session carries it (`Authorization: Session <secret>`), so the id in the
-- URL — what proxies and load balancers log — no longer lets anyone act on the session. Only the
-- secret's SHA-256 (hex) is kept. Sessions created before this migration have none and answer
-- `401 unauthorized` (their apps start a new session).
ALTER TABLE sessions ADD COLUMN secret_hash TEXT;
