-- 0022 (PostgreSQL): witnesses' cosignatures of the log's checkpoints, as
-- Migrations/sqlite/0022_witness_cosignatures.sql.
CREATE TABLE audit_cosignatures (
    checkpoint  BIGINT NOT NULL,  -- audit_checkpoints.number (no foreign key: a TRUNCATE of the checkpoints meets their own trigger)
    witness_key TEXT NOT NULL,
    tree_size   BIGINT NOT NULL,
    line        TEXT NOT NULL,
    at          TEXT NOT NULL,
    PRIMARY KEY (checkpoint, witness_key)
);
CREATE INDEX audit_cosignatures_by_witness ON audit_cosignatures (witness_key, checkpoint);
CREATE TRIGGER audit_cosignatures_no_update BEFORE UPDATE ON audit_cosignatures
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_cosignatures_no_delete BEFORE DELETE ON audit_cosignatures
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_cosignatures_no_truncate BEFORE TRUNCATE ON audit_cosignatures
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
