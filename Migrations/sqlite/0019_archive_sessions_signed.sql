-- 0019: an archive's statement signs the sessions it holds, too.
--
-- Statements written before this (version 1) signed an archive's rows and trail segments but not
-- its `sessions` table, so who a session belonged to and when it ended could be changed in the
-- file unnoticed. Version 2 adds a digest of those sessions; these two columns keep it beside the
-- rest of the statement (NULL for version 1 statements, which `audit verify` reports as such).
ALTER TABLE audit_archives ADD COLUMN sessions INTEGER;
ALTER TABLE audit_archives ADD COLUMN sessions_digest TEXT;
