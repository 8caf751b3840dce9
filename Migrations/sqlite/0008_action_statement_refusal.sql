-- 0008: on PostgreSQL, the function an action's one-statement write calls to keep nothing
-- when a fact it relied on went stale. SQLite writes an action in a transaction of several
-- statements on its one writer and needs no such function: this migration only keeps the two
-- dialects' numbers in step.
SELECT 1;
