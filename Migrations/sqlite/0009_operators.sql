-- 0009: the operators of the console (`photos-admin operators add|list|remove`) and their
-- console sign-ins. An operator is not a shop user: a name, a role (`viewer` reads; `operator`
-- may also act on live sessions) and a bcrypt hash. A console session is kept only as the
-- SHA-256 of its cookie's random id; removing an operator ends their console sessions.
CREATE TABLE operators (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    role          TEXT NOT NULL CHECK (role IN ('viewer', 'operator')),
    password_hash TEXT NOT NULL,            -- bcrypt, never the password
    created_at    TEXT NOT NULL
);
CREATE TABLE console_sessions (
    id_hash     TEXT PRIMARY KEY,           -- SHA-256 of the cookie's value, never the value
    operator_id INTEGER NOT NULL REFERENCES operators(id) ON DELETE CASCADE,
    csrf_token  TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    last_seen   TEXT NOT NULL               -- the session ends console.sessionMinutes after it
);
CREATE INDEX console_sessions_by_operator ON console_sessions(operator_id);
