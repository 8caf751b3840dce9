-- 0003: audit integrity v2 — one hash chain per trail, and signed checkpoints of the trails' heads.

-- A trail's head (its last seq and hash, where its next row chains from) is read from the
-- trail's newest row through the (session_id, seq) index: nothing shared is read or written.

-- The cut-over: rows up to this id were written with the first version's single global chain
-- (prev_hash = the hash of the row before by id) and keep verifying under that rule; later rows
-- chain within their trail (prev_hash = the hash of the same trail's row seq - 1).
CREATE TABLE audit_chain_cutover (
    global_chain_until_id INTEGER NOT NULL
);
INSERT INTO audit_chain_cutover (global_chain_until_id) SELECT coalesce(max(id), 0) FROM audit_events;

-- Signed statements of the trails' heads (see docs/reliability.md, "Tamper evidence").
CREATE TABLE audit_checkpoints (
    number     INTEGER PRIMARY KEY,   -- 1, 2, 3 … without gaps
    at         TEXT NOT NULL,
    prev_hash  TEXT NOT NULL,         -- the previous checkpoint's hash (64 zeros for the first)
    covers_until_id INTEGER NOT NULL, -- it covers the rows with id up to this (all committed before it)
    heads      TEXT NOT NULL,         -- JSON [{"trail", "seq", "hash"}] of the trails changed since the previous one
    public_key TEXT NOT NULL,         -- hex Ed25519 key that signed (informative: verify checks against a trusted key)
    signature  TEXT NOT NULL,         -- hex Ed25519 signature of the statement
    hash       TEXT NOT NULL          -- hex SHA-256 of the statement and the signature
);

CREATE TRIGGER audit_checkpoints_no_update BEFORE UPDATE ON audit_checkpoints
BEGIN
    SELECT RAISE(ABORT, 'audit_checkpoints is append-only: UPDATE refused');
END;

CREATE TRIGGER audit_checkpoints_no_delete BEFORE DELETE ON audit_checkpoints
BEGIN
    SELECT RAISE(ABORT, 'audit_checkpoints is append-only: DELETE refused');
END;

CREATE TRIGGER audit_chain_cutover_no_update BEFORE UPDATE ON audit_chain_cutover
BEGIN
    SELECT RAISE(ABORT, 'audit_chain_cutover is fixed: UPDATE refused');
END;
