-- 0004 (PostgreSQL): the purchase funnel and the buy flows' exits, as
-- Migrations/sqlite/0004_analytics_views.sql, with the same views and columns.

CREATE TABLE funnel_marks (
    day        TEXT NOT NULL,
    stage      BIGINT NOT NULL,
    session_id TEXT NOT NULL,
    PRIMARY KEY (day, stage, session_id)
);

CREATE TABLE funnel_marks_progress (
    marked_until_id BIGINT NOT NULL
);
INSERT INTO funnel_marks_progress (marked_until_id) VALUES (0);

CREATE VIEW purchase_funnel AS
SELECT day,
       count(*) FILTER (WHERE stage = 1) AS sessions,
       count(*) FILTER (WHERE stage = 2) AS viewed_photo,
       count(*) FILTER (WHERE stage = 3) AS started_buy,
       count(*) FILTER (WHERE stage = 4) AS asked_to_sign_in,
       count(*) FILTER (WHERE stage = 5) AS purchased
FROM funnel_marks
GROUP BY day;

CREATE INDEX audit_buy_finishes ON audit_events (substr(at, 1, 10), detail, at)
WHERE session_id NOT IN ('operator', 'api') AND step = 'coordinator.finish' AND coordinator LIKE '%/buy';

-- `detail` is text (its bytes are hashed); it is read as JSON only here.
CREATE VIEW buy_exits AS
SELECT substr(at, 1, 10) AS day,
       detail::jsonb ->> 'reason' AS reason,
       count(*) AS flows
FROM audit_events
WHERE session_id NOT IN ('operator', 'api') AND step = 'coordinator.finish' AND coordinator LIKE '%/buy'
GROUP BY substr(at, 1, 10), detail::jsonb ->> 'reason';
