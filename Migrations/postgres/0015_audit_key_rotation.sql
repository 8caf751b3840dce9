-- 0015: the audit signing key can be rotated (see the SQLite migration of this number).
ALTER TABLE audit_checkpoints ADD COLUMN next_public_key TEXT;
