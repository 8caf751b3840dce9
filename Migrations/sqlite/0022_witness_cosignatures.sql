-- 0022: witnesses' cosignatures of the log's checkpoints (C2SP tlog-cosignature), one per
-- checkpoint and witness key (`audit.witnesses`). A checkpoint's note never changes, so they are
-- kept beside it and appended to it when it is served (`/v1/log/checkpoint`, receipts).
CREATE TABLE audit_cosignatures (
    checkpoint  INTEGER NOT NULL,  -- audit_checkpoints.number (checked when stored; no foreign key, as audit_checkpoints has none pointing at it)
    witness_key TEXT NOT NULL,     -- the witness's verifier key (type 0x04) as configured
    tree_size   INTEGER NOT NULL,  -- the checkpoint's tree size
    line        TEXT NOT NULL,     -- the cosignature's signature line, newline included
    at          TEXT NOT NULL,     -- when photosd stored it (the line carries the witness's time)
    PRIMARY KEY (checkpoint, witness_key)
);
CREATE INDEX audit_cosignatures_by_witness ON audit_cosignatures (witness_key, checkpoint);
CREATE TRIGGER audit_cosignatures_no_update BEFORE UPDATE ON audit_cosignatures
BEGIN
    SELECT RAISE(ABORT, 'audit_cosignatures is append-only: UPDATE refused');
END;
CREATE TRIGGER audit_cosignatures_no_delete BEFORE DELETE ON audit_cosignatures
BEGIN
    SELECT RAISE(ABORT, 'audit_cosignatures is append-only: DELETE refused');
END;
