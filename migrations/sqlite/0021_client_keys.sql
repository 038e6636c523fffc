-- Clients that authenticate with keys instead of secrets (private_key_jwt, RFC 7523): their
-- public keys as a JWK Set, or the address they publish it at.
ALTER TABLE clients ADD COLUMN jwks TEXT;
ALTER TABLE clients ADD COLUMN jwks_uri TEXT;

-- The `jti` of each client assertion accepted, kept until the assertion expires: one presented
-- again is refused.
CREATE TABLE client_assertions (
    realm_id     TEXT NOT NULL,
    client_id    TEXT NOT NULL,
    jti          TEXT NOT NULL,
    expires_at   BIGINT NOT NULL,
    PRIMARY KEY (realm_id, client_id, jti)
);
CREATE INDEX client_assertions_by_expiry ON client_assertions (expires_at);
