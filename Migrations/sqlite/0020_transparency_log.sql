-- 0020: the audit trail as a transparency log (docs/design.md, "Receipts").
--
-- Every audit row becomes a leaf of one RFC 6962 Merkle tree, numbered in the order rows are
-- settled (`log_index` 0, 1, 2 …, gapless, never reused): `audit_log_leaves` says which leaf each
-- row is, `audit_log_nodes` keeps the hash of every complete subtree (level 0: the leaves'
-- hashes, SHA-256(0x00 ‖ row hash); level l, index i: the 2^l leaves from i·2^l), so that an
-- inclusion or consistency proof is a few reads by primary key. Leaves and nodes stay when their
-- row moves to an archive or its user is erased. Rows already here become leaves, in id order, at
-- the first checkpoint after this migration (the hashing is done by photosd, not by SQL).
--
-- `audit_log` is the tree's head: its size, the newest row id that is a leaf (every row up to
-- it is), and this database's origin — the name its checkpoints carry and sign under unless
-- `audit.logOrigin` sets another. Checkpoints gain the tree they sign: its size, its root (hex),
-- and the C2SP signed note of both.
CREATE TABLE audit_log (
    origin TEXT NOT NULL,
    size INTEGER NOT NULL,
    integrated_until_id INTEGER NOT NULL
);
INSERT INTO audit_log (origin, size, integrated_until_id) VALUES ('photosd/' || lower(hex(randomblob(8))), 0, 0);
CREATE TRIGGER audit_log_grows_only BEFORE UPDATE ON audit_log
WHEN NOT (NEW.origin = OLD.origin AND NEW.size >= OLD.size AND NEW.integrated_until_id >= OLD.integrated_until_id)
BEGIN
    SELECT RAISE(ABORT, 'audit_log only grows: UPDATE refused');
END;

-- Keyed by the row's id (the rowid: one B-tree, appended to in order): a leaf's index grows with
-- its row's id, which `audit verify` checks, so no second index is kept for it.
CREATE TABLE audit_log_leaves (
    event_id INTEGER PRIMARY KEY,
    log_index INTEGER NOT NULL
);
CREATE TRIGGER audit_log_leaves_no_update BEFORE UPDATE ON audit_log_leaves
BEGIN
    SELECT RAISE(ABORT, 'audit_log_leaves is append-only: UPDATE refused');
END;
CREATE TRIGGER audit_log_leaves_no_delete BEFORE DELETE ON audit_log_leaves
BEGIN
    SELECT RAISE(ABORT, 'audit_log_leaves is append-only: DELETE refused');
END;

CREATE TABLE audit_log_nodes (
    level INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    hash BLOB NOT NULL,
    PRIMARY KEY (level, idx)
) WITHOUT ROWID;
CREATE TRIGGER audit_log_nodes_no_update BEFORE UPDATE ON audit_log_nodes
BEGIN
    SELECT RAISE(ABORT, 'audit_log_nodes is append-only: UPDATE refused');
END;
CREATE TRIGGER audit_log_nodes_no_delete BEFORE DELETE ON audit_log_nodes
BEGIN
    SELECT RAISE(ABORT, 'audit_log_nodes is append-only: DELETE refused');
END;

ALTER TABLE audit_checkpoints ADD COLUMN tree_size INTEGER;
ALTER TABLE audit_checkpoints ADD COLUMN tree_root TEXT;
ALTER TABLE audit_checkpoints ADD COLUMN note TEXT;
