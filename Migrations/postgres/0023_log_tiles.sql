-- 0023 (PostgreSQL): the transparency log's tree kept in tiles, as Migrations/sqlite/0023_log_tiles.sql.
CREATE TABLE audit_log_tiles (
    idx BIGINT PRIMARY KEY,
    hashes BYTEA NOT NULL CHECK (length(hashes) % 32 = 0 AND length(hashes) BETWEEN 32 AND 8192)
);
CREATE FUNCTION audit_log_tiles_only_extended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.idx = OLD.idx AND length(NEW.hashes) > length(OLD.hashes)
       AND substring(NEW.hashes FROM 1 FOR length(OLD.hashes)) = OLD.hashes THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit_log_tiles only grows: a tile is only ever extended';
END;
$$;
CREATE TRIGGER audit_log_tiles_only_extended BEFORE UPDATE ON audit_log_tiles
    FOR EACH ROW EXECUTE FUNCTION audit_log_tiles_only_extended();
CREATE TRIGGER audit_log_tiles_no_delete BEFORE DELETE ON audit_log_tiles
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_log_tiles_no_truncate BEFORE TRUNCATE ON audit_log_tiles
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

CREATE TABLE audit_log_leaf_runs (
    first_event_id BIGINT PRIMARY KEY,
    first_index BIGINT NOT NULL,
    count BIGINT NOT NULL CHECK (count > 0)
);
CREATE TRIGGER audit_log_leaf_runs_no_update BEFORE UPDATE ON audit_log_leaf_runs
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_log_leaf_runs_no_delete BEFORE DELETE ON audit_log_leaf_runs
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER audit_log_leaf_runs_no_truncate BEFORE TRUNCATE ON audit_log_leaf_runs
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

INSERT INTO audit_log_tiles (idx, hashes)
SELECT idx / 256, string_agg(hash, ''::bytea ORDER BY idx) FROM audit_log_nodes WHERE level = 0 GROUP BY idx / 256;

INSERT INTO audit_log_leaf_runs (first_event_id, first_index, count)
SELECT min(event_id), min(log_index), count(*) FROM audit_log_leaves GROUP BY event_id - log_index;

DROP TABLE audit_log_leaves;
-- What was the table of leaves stays readable as a view: the leaf index of every row here that
-- is a leaf (archived rows keep their leaves in the runs and tiles, not here).
CREATE VIEW audit_log_leaves AS
SELECT e.id AS event_id, r.first_index + (e.id - r.first_event_id) AS log_index
FROM audit_log_leaf_runs r JOIN audit_events e ON e.id >= r.first_event_id AND e.id < r.first_event_id + r.count;
ALTER TABLE audit_log_nodes DISABLE TRIGGER audit_log_nodes_no_delete;
DELETE FROM audit_log_nodes WHERE level < 6;
ALTER TABLE audit_log_nodes ENABLE TRIGGER audit_log_nodes_no_delete;
