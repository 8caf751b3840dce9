-- 0005: sign-in attempts in a table, for the sign-in limit counted across photosd instances
-- (auth.signInMaxAttempts failures per username in auth.signInWindowSeconds).
--
-- The PostgreSQL store uses it; the SQLite store (one process serving the file) keeps its
-- in-process limiter and leaves it empty. It exists here too so that both dialects have the
-- same migrations and `photos-admin copy` moves the same tables.
-- state: 'checking' while a password is being checked (it holds a place), 'failed' after.
CREATE TABLE sign_in_attempts (
    id           INTEGER PRIMARY KEY,
    username_key TEXT NOT NULL,     -- the lower-cased username, at most 128 characters
    state        TEXT NOT NULL CHECK (state IN ('checking', 'failed')),
    at           TEXT NOT NULL      -- ISO-8601 UTC: when the check began, or failed
);
CREATE INDEX sign_in_attempts_by_user ON sign_in_attempts(username_key, at);
