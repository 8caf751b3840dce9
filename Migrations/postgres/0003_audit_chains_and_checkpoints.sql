-- 0003 (PostgreSQL): audit integrity v2, as Migrations/sqlite/0003_audit_chains_and_checkpoints.sql.

CREATE TABLE audit_chain_cutover (
    global_chain_until_id BIGINT NOT NULL
);
INSERT INTO audit_chain_cutover (global_chain_until_id) SELECT coalesce(max(id), 0) FROM audit_events;

CREATE TABLE audit_checkpoints (
    number     BIGINT PRIMARY KEY,
    at         TEXT NOT NULL,
    prev_hash  TEXT NOT NULL,
    covers_until_id BIGINT NOT NULL,
    heads      TEXT NOT NULL,
    public_key TEXT NOT NULL,
    signature  TEXT NOT NULL,
    hash       TEXT NOT NULL
);

CREATE TRIGGER audit_checkpoints_no_update BEFORE UPDATE ON audit_checkpoints
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_checkpoints_no_delete BEFORE DELETE ON audit_checkpoints
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

CREATE TRIGGER audit_chain_cutover_no_update BEFORE UPDATE ON audit_chain_cutover
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
