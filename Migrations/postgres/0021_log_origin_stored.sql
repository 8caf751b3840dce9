-- 0021 (PostgreSQL): the log's origin may change (its first checkpoint, a new log), as
-- Migrations/sqlite/0021_log_origin_stored.sql; its size and the rows it covers still only grow.
CREATE OR REPLACE FUNCTION audit_log_grows_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.size >= OLD.size AND NEW.integrated_until_id >= OLD.integrated_until_id THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit_log only grows: UPDATE refused';
END;
$$;
