-- 0018: the periodic sweep reads what it finds, not everything kept.
--
-- The sweep walked every session by id to find the idle ones, and pruned tokens, sign-in
-- attempts and trusted addresses by scanning them whole: on a database of a million sessions an
-- idle photosd read gigabytes. A session idle past the expiry was created before the cutoff and
-- has not ended, so the sweep walks only the live sessions created before it, through this
-- partial index (an action changes neither column: the hot path pays nothing; a session enters
-- it when created and leaves it when it ends). The pruning reads the rows past their windows
-- through an index on the time it compares.
CREATE INDEX sessions_live_by_created ON sessions (created_at, id) WHERE ended_at IS NULL;
CREATE INDEX tokens_by_expiry ON tokens (expires_at);
CREATE INDEX sign_in_attempts_by_time ON sign_in_attempts (at);
CREATE INDEX sign_in_trusted_addresses_by_time ON sign_in_trusted_addresses (at);
