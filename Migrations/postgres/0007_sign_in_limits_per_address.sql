-- 0007 (PostgreSQL): the sign-in limits count per (username, address), per address and per username
-- (auth.signInMaxAttempts, auth.signInMaxAttemptsPerAddress, auth.signInMaxAttemptsPerUsername).
-- username_key is now the exact username (usernames are case-sensitive; 0005 lower-cased it).
--
-- The PostgreSQL store uses these tables (several instances count together); the SQLite
-- store counts in memory and leaves its copies empty.
ALTER TABLE sign_in_attempts ADD COLUMN address TEXT NOT NULL DEFAULT '';
CREATE INDEX sign_in_attempts_by_address ON sign_in_attempts(address, at);
-- An address where a user signed in successfully: exempt from the per-username limit for
-- that user until `at` is older than 30 days.
CREATE TABLE sign_in_trusted_addresses (
    username_key TEXT NOT NULL,
    address      TEXT NOT NULL,
    at           TEXT NOT NULL,     -- ISO-8601 UTC: the last successful sign-in from it
    PRIMARY KEY (username_key, address)
);
