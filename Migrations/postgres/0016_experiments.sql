-- 0016: flow experiments (docs/design.md, "Flow experiments"). An experiment varies one
-- variation point of the purchase flow (buy.presentation, signIn.when, terms.required) between
-- its variants, the first of which is the control; at most one runs per point. A stopped one
-- keeps governing its point for new flows (its kept variant, else the control) until another
-- experiment on the point is added. Assignments are not stored: they are a hash of the
-- experiment's name and the subject. Exposures are audit steps (`experiment.exposed`), in the
-- trails' hash chains like every step, read through the view `experiment_exposures`.
CREATE TABLE experiments (
    name       TEXT PRIMARY KEY,
    point      TEXT NOT NULL,
    variants   TEXT NOT NULL,               -- JSON: [{"name": "push", "weight": 50}, …], control first
    running    BIGINT NOT NULL CHECK (running IN (0, 1)),
    kept       TEXT,                        -- once stopped: the variant new flows get (NULL: the control)
    started_at TEXT NOT NULL,
    stopped_at TEXT
);
CREATE UNIQUE INDEX experiments_one_running_per_point ON experiments (point) WHERE running = 1;

-- Exposure rows only: the report reads one experiment's without scanning the trail.
CREATE INDEX audit_experiment_exposures ON audit_events ((detail::jsonb ->> 'experiment'), session_id)
WHERE step = 'experiment.exposed';

-- One row per exposure: a session's purchase flow took the experiment's variation point.
CREATE VIEW experiment_exposures AS
SELECT session_id, seq, at, user_id, coordinator,
       detail::jsonb ->> 'experiment' AS experiment,
       detail::jsonb ->> 'point' AS point,
       detail::jsonb ->> 'variant' AS variant
FROM audit_events
WHERE step = 'experiment.exposed';
