-- 0021: the log's origin is stored with the log at its first checkpoint (`audit.logOrigin`, or
-- the database's own), and a new log (`photos-admin audit log restart --origin NEW`) renames it:
-- audit_log's origin may change; its size and the rows it covers still only grow.
DROP TRIGGER audit_log_grows_only;
CREATE TRIGGER audit_log_grows_only BEFORE UPDATE ON audit_log
WHEN NOT (NEW.size >= OLD.size AND NEW.integrated_until_id >= OLD.integrated_until_id)
BEGIN
    SELECT RAISE(ABORT, 'audit_log only grows: UPDATE refused');
END;
