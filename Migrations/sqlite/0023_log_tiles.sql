-- 0023: the transparency log's tree kept in tiles (docs/design.md, "The tree's storage").
--
-- Until 0022 every leaf cost three rows: its place (`audit_log_leaves`), its hash and, on
-- average, one internal node (`audit_log_nodes`). Now the writer adds a few rows per thousand
-- leaves:
-- * `audit_log_tiles`: the leaves' hashes, 256 to a row (C2SP tlog-tiles' level-0 tiles: tile N
--   holds leaves N·256 ..< N·256 + width, 32 bytes each, in order); the newest tile is partial
--   and is rewritten as it fills, only ever extended. The nodes of levels 1 to 5 are not stored:
--   each is the hash of at most 32 leaves of one tile, computed when a proof needs it.
-- * `audit_log_nodes` keeps the nodes of level 6 and above (one per 32 leaves in all).
-- * `audit_log_leaf_runs`: which row each leaf is, one row per run of consecutive row ids that
--   are consecutive leaves (row `first_event_id + k` is leaf `first_index + k` for k < count).
--   Rows become leaves in id order, so a run breaks only where an id never committed or its row
--   was archived before it became a leaf.
-- The tree and every hash are unchanged: this only moves them. `audit_log_leaves` becomes a view.
CREATE TABLE audit_log_tiles (
    idx INTEGER PRIMARY KEY,
    hashes BLOB NOT NULL CHECK (length(hashes) % 32 = 0 AND length(hashes) BETWEEN 32 AND 8192)
);
CREATE TRIGGER audit_log_tiles_only_extended BEFORE UPDATE ON audit_log_tiles
WHEN NOT (NEW.idx = OLD.idx AND length(NEW.hashes) > length(OLD.hashes) AND substr(NEW.hashes, 1, length(OLD.hashes)) = OLD.hashes)
BEGIN
    SELECT RAISE(ABORT, 'audit_log_tiles only grows: a tile is only ever extended');
END;
CREATE TRIGGER audit_log_tiles_no_delete BEFORE DELETE ON audit_log_tiles
BEGIN
    SELECT RAISE(ABORT, 'audit_log_tiles is append-only: DELETE refused');
END;

CREATE TABLE audit_log_leaf_runs (
    first_event_id INTEGER PRIMARY KEY,
    first_index INTEGER NOT NULL,
    count INTEGER NOT NULL CHECK (count > 0)
);
CREATE TRIGGER audit_log_leaf_runs_no_update BEFORE UPDATE ON audit_log_leaf_runs
BEGIN
    SELECT RAISE(ABORT, 'audit_log_leaf_runs is append-only: UPDATE refused');
END;
CREATE TRIGGER audit_log_leaf_runs_no_delete BEFORE DELETE ON audit_log_leaf_runs
BEGIN
    SELECT RAISE(ABORT, 'audit_log_leaf_runs is append-only: DELETE refused');
END;

-- The leaves' hashes, tile by tile, in index order.
INSERT INTO audit_log_tiles (idx, hashes)
SELECT t, (SELECT CAST(group_concat(hash, '') AS BLOB) FROM (
              SELECT hash FROM audit_log_nodes WHERE level = 0 AND idx >= t * 256 AND idx < t * 256 + 256 ORDER BY idx))
FROM (SELECT DISTINCT idx / 256 AS t FROM audit_log_nodes WHERE level = 0);

-- Leaves are numbered in row id order, so event_id - log_index only grows, and stays the same
-- along a run.
INSERT INTO audit_log_leaf_runs (first_event_id, first_index, count)
SELECT min(event_id), min(log_index), count(*) FROM audit_log_leaves GROUP BY event_id - log_index;

DROP TABLE audit_log_leaves;
-- What was the table of leaves stays readable as a view: the leaf index of every row here that
-- is a leaf (archived rows keep their leaves in the runs and tiles, not here).
CREATE VIEW audit_log_leaves AS
SELECT e.id AS event_id, r.first_index + (e.id - r.first_event_id) AS log_index
FROM audit_log_leaf_runs r JOIN audit_events e ON e.id >= r.first_event_id AND e.id < r.first_event_id + r.count;
DROP TRIGGER audit_log_nodes_no_delete;
DELETE FROM audit_log_nodes WHERE level < 6;
CREATE TRIGGER audit_log_nodes_no_delete BEFORE DELETE ON audit_log_nodes
BEGIN
    SELECT RAISE(ABORT, 'audit_log_nodes is append-only: DELETE refused');
END;
