-- 0004: the purchase funnel and the buy flows' exits, for analysts (docs/analytics.md).
--
-- Counts are of distinct client sessions (not the reserved trails 'operator' and 'api'); `day`
-- is the UTC date (YYYY-MM-DD) of the step's `at`.

-- Which funnel stages each session reached on each day, so that the funnel of a week of a busy
-- shop is a short range scan rather than a distinct count over millions of audit rows. Derived
-- data, kept off the request path: `photosd` adds the marks of new audit rows in the background
-- (with its audit checkpoints, every audit.checkpointIntervalSeconds) and `photos-admin report
-- funnel` before it reads; the first run fills it from the rows already there. The rule (which
-- step counts for which stage) is in PhotosCore's FunnelMarks, in SQL.
-- stage: 1 session.start, 2 screen.push of photo, 3 coordinator.start of a buy coordinator,
-- 4 screen.push or screen.present of signIn by a buy coordinator, 5 purchase.completed.
CREATE TABLE funnel_marks (
    day        TEXT NOT NULL,
    stage      INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    PRIMARY KEY (day, stage, session_id)
) WITHOUT ROWID;

-- The audit rows up to this id have their marks.
CREATE TABLE funnel_marks_progress (
    marked_until_id INTEGER NOT NULL
);
INSERT INTO funnel_marks_progress (marked_until_id) VALUES (0);

-- Sessions that, that day: started; were shown a photo; started a buy flow; were asked to sign
-- in by a buy flow; completed a purchase.
CREATE VIEW purchase_funnel AS
SELECT day,
       sum(stage = 1) AS sessions,
       sum(stage = 2) AS viewed_photo,
       sum(stage = 3) AS started_buy,
       sum(stage = 4) AS asked_to_sign_in,
       sum(stage = 5) AS purchased
FROM funnel_marks
GROUP BY day;

-- The buy flows' ends, by day: a covering partial index, so a query for a few days reads only
-- those rows. The view repeats its WHERE clause word for word, which lets SQLite use it.
CREATE INDEX audit_buy_finishes ON audit_events (substr(at, 1, 10), detail, at)
WHERE session_id NOT IN ('operator', 'api') AND step = 'coordinator.finish' AND coordinator LIKE '%/buy';

-- Buy flows that ended that day (a buy coordinator's coordinator.finish), by the reason in its
-- detail: completed, cancelled, back, dismissed.
CREATE VIEW buy_exits AS
SELECT substr(at, 1, 10) AS day,
       json_extract(detail, '$.reason') AS reason,
       count(*) AS flows
FROM audit_events
WHERE session_id NOT IN ('operator', 'api') AND step = 'coordinator.finish' AND coordinator LIKE '%/buy'
GROUP BY substr(at, 1, 10), json_extract(detail, '$.reason');
