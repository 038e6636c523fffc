-- Rotation of account secrets (SPEC "Secret rotation record"): the previous value's keyed hash while
-- it still authenticates (Overlap), and the instant before which tokens issued with an earlier value
-- are revoked (Compromise). Clients carry the same columns since the foundation.

ALTER TABLE secrets ADD COLUMN rotated_at BIGINT;
ALTER TABLE secrets ADD COLUMN previous_value_hash TEXT;
ALTER TABLE secrets ADD COLUMN previous_value_valid_until BIGINT;
ALTER TABLE secrets ADD COLUMN issued_tokens_revoked_before BIGINT;
CREATE UNIQUE INDEX secrets_by_previous_value ON secrets (previous_value_hash);
