-- 0017: audit row ids never go back, and a redaction is accepted only where a name could be
-- (see the SQLite migration of this number).
--
-- 1. Ids come from the identity's sequence, which never goes back; this only makes sure it is
-- past every id a checkpoint covered (a copy into this database sets it to max(id), which an
-- archive may have lowered).
SELECT setval(pg_get_serial_sequence('audit_events', 'id'), m)
FROM (SELECT greatest(
    (SELECT max(id) FROM audit_events),
    (SELECT max(covers_until_id) FROM audit_checkpoints),
    (SELECT max(event_id) FROM audit_redactions)
) AS m) AS floor
WHERE m IS NOT NULL;

-- 2. The highest id a redaction may list: the rows written before 0011 that hold a name.
CREATE TABLE audit_redaction_bound (
    until_id BIGINT NOT NULL
);
INSERT INTO audit_redaction_bound (until_id)
SELECT greatest(
    coalesce((SELECT max(id) FROM audit_events WHERE username IS NOT NULL), 0),
    coalesce((SELECT max(id) FROM audit_events WHERE step = 'auth.signInFailed' AND json_extract(detail, '$.attemptedUsername') IS NOT NULL), 0),
    coalesce((SELECT max(event_id) FROM audit_redactions), 0)
);
CREATE TRIGGER audit_redaction_bound_no_update BEFORE UPDATE ON audit_redaction_bound
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
