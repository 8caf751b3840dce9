-- 0015: the audit signing key can be rotated. A rotation is a checkpoint like any other, signed
-- by the key in use, that names the public key of the next one (`next_public_key`); every later
-- checkpoint must be signed by that key. `audit verify` follows the chain of keys from the first
-- trusted one. NULL on every other checkpoint.
ALTER TABLE audit_checkpoints ADD COLUMN next_public_key TEXT;
