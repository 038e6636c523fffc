-- Key rollover: a key is published before it signs. `signs_from` is when it starts signing (until
-- then verifiers fetch it with the JWKS); a key that retires keeps signing until `retired_at`.
ALTER TABLE signing_keys ADD COLUMN signs_from BIGINT NOT NULL DEFAULT 0;
UPDATE signing_keys SET signs_from = created_at;
