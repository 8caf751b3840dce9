-- 0004: the purchase funnel and the buy flows' exits, for analysts (docs/analytics.md).
--
-- Counts are of distinct client sessions (not the reserved trails 'operator' and 'api'); `day`
-- is the UTC date (YYYY-MM-DD) of the step's `at`.

-- Only the steps the funnel counts, by day: a covering partial index, so a query for a few days
-- reads a few index pages per session instead of every audit row. The views below repeat its
-- WHERE clause word for word, which is what lets SQLite use it.
CREATE INDEX audit_funnel_steps ON audit_events (substr(at, 1, 10), step, screen, coordinator, session_id, at)
WHERE session_id NOT IN ('operator', 'api')
  AND (step IN ('session.start', 'purchase.completed')
       OR (step = 'screen.push' AND screen = 'photo')
       OR (step IN ('screen.push', 'screen.present') AND screen = 'signIn' AND coordinator LIKE '%/buy')
       OR (step = 'coordinator.start' AND coordinator LIKE '%/buy'));

CREATE INDEX audit_buy_finishes ON audit_events (substr(at, 1, 10), detail, at)
WHERE session_id NOT IN ('operator', 'api') AND step = 'coordinator.finish' AND coordinator LIKE '%/buy';

-- Sessions that, that day: started; were shown a photo; started a buy flow; were asked to sign
-- in by a buy flow; completed a purchase.
CREATE VIEW purchase_funnel AS
SELECT substr(at, 1, 10) AS day,
       count(DISTINCT CASE WHEN step = 'session.start' THEN session_id END) AS sessions,
       count(DISTINCT CASE WHEN step = 'screen.push' AND screen = 'photo' THEN session_id END) AS viewed_photo,
       count(DISTINCT CASE WHEN step = 'coordinator.start' THEN session_id END) AS started_buy,
       count(DISTINCT CASE WHEN screen = 'signIn' THEN session_id END) AS asked_to_sign_in,
       count(DISTINCT CASE WHEN step = 'purchase.completed' THEN session_id END) AS purchased
FROM audit_events
WHERE session_id NOT IN ('operator', 'api')
  AND (step IN ('session.start', 'purchase.completed')
       OR (step = 'screen.push' AND screen = 'photo')
       OR (step IN ('screen.push', 'screen.present') AND screen = 'signIn' AND coordinator LIKE '%/buy')
       OR (step = 'coordinator.start' AND coordinator LIKE '%/buy'))
GROUP BY substr(at, 1, 10);

-- Buy flows that ended that day (a buy coordinator's coordinator.finish), by the reason in its
-- detail: completed, cancelled, back, dismissed.
CREATE VIEW buy_exits AS
SELECT substr(at, 1, 10) AS day,
       json_extract(detail, '$.reason') AS reason,
       count(*) AS flows
FROM audit_events
WHERE session_id NOT IN ('operator', 'api') AND step = 'coordinator.finish' AND coordinator LIKE '%/buy'
GROUP BY substr(at, 1, 10), json_extract(detail, '$.reason');
