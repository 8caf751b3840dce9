-- 0020 (PostgreSQL): the audit trail as a transparency log, as Migrations/sqlite/0020_transparency_log.sql.
CREATE TABLE audit_log (
    origin TEXT NOT NULL,
    size BIGINT NOT NULL,
    integrated_until_id BIGINT NOT NULL
);
INSERT INTO audit_log (origin, size, integrated_until_id)
    VALUES ('photosd/' || substr(md5(random()::text || clock_timestamp()::text), 1, 16), 0, 0);
CREATE FUNCTION audit_log_grows_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.origin = OLD.origin AND NEW.size >= OLD.size AND NEW.integrated_until_id >= OLD.integrated_until_id THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit_log only grows: UPDATE refused';
END;
$$;
CREATE TRIGGER audit_log_grows_only BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_grows_only();

CREATE TABLE audit_log_leaves (
    event_id BIGINT PRIMARY KEY,
    log_index BIGINT NOT NULL
);
CREATE TRIGGER audit_log_leaves_no_update BEFORE UPDATE ON audit_log_leaves
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_log_leaves_no_delete BEFORE DELETE ON audit_log_leaves
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_log_leaves_no_truncate BEFORE TRUNCATE ON audit_log_leaves
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

CREATE TABLE audit_log_nodes (
    level INTEGER NOT NULL,
    idx BIGINT NOT NULL,
    hash BYTEA NOT NULL,
    PRIMARY KEY (level, idx)
);
CREATE TRIGGER audit_log_nodes_no_update BEFORE UPDATE ON audit_log_nodes
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_log_nodes_no_delete BEFORE DELETE ON audit_log_nodes
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_log_nodes_no_truncate BEFORE TRUNCATE ON audit_log_nodes
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

ALTER TABLE audit_checkpoints ADD COLUMN tree_size BIGINT;
ALTER TABLE audit_checkpoints ADD COLUMN tree_root TEXT;
ALTER TABLE audit_checkpoints ADD COLUMN note TEXT;
