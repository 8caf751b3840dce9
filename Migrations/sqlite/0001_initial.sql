-- 0001: the whole first schema. Times are ISO-8601 UTC text with milliseconds.

CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,            -- bcrypt, never the password
    created_at    TEXT NOT NULL
);

CREATE TABLE tokens (
    id         INTEGER PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,        -- hex SHA-256 of the bearer token, never the token
    user_id    INTEGER NOT NULL REFERENCES users(id),
    issued_at  TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE INDEX tokens_by_user ON tokens(user_id);

CREATE TABLE photos (
    id          INTEGER PRIMARY KEY,
    title       TEXT NOT NULL,
    url         TEXT NOT NULL,
    price_cents INTEGER NOT NULL CHECK (price_cents >= 0),
    created_at  TEXT NOT NULL
);

CREATE TABLE purchases (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users(id),
    photo_id     INTEGER NOT NULL REFERENCES photos(id),
    price_cents  INTEGER NOT NULL,
    purchased_at TEXT NOT NULL,
    session_id   TEXT,
    UNIQUE (user_id, photo_id)
);

CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    version    INTEGER NOT NULL,
    state      TEXT NOT NULL,               -- JSON: stacks, coordinator tree, top actions
    user_id    INTEGER REFERENCES users(id),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE audit_events (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL,              -- a session id, or 'operator' / 'api'
    seq         INTEGER NOT NULL,           -- 1, 2, 3 … per session_id, no gaps
    at          TEXT NOT NULL,
    actor       TEXT NOT NULL,              -- client | operator:<name> | system
    user_id     INTEGER,
    username    TEXT,
    coordinator TEXT,
    step        TEXT NOT NULL,
    screen      TEXT,
    detail      TEXT NOT NULL DEFAULT '{}', -- JSON; never a password or a token
    prev_hash   TEXT NOT NULL,              -- hash of the previous row (by id)
    hash        TEXT NOT NULL,              -- SHA-256 over prev_hash and this row's columns
    UNIQUE (session_id, seq)
);

CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN
    SELECT RAISE(ABORT, 'audit_events is append-only: UPDATE refused');
END;

CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN
    SELECT RAISE(ABORT, 'audit_events is append-only: DELETE refused');
END;

CREATE TABLE idempotency_keys (
    session_id   TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,             -- SHA-256 of the request, to refuse a reused key
    response     TEXT NOT NULL,             -- the first answer, returned again on retry
    created_at   TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
);

-- The contract view (DESIGN §3): one row per navigation step, in order.
CREATE VIEW audit_trail AS
SELECT session_id, seq, at, actor, username, coordinator, step, screen, detail
FROM audit_events
ORDER BY id;
