-- DPoP (RFC 9449): the thumbprint of the key a refresh token is bound to, and the proofs seen,
-- by key and `jti`, kept while they could still be presented.
ALTER TABLE refresh_tokens ADD COLUMN dpop_jkt TEXT;

CREATE TABLE dpop_proofs (
    jkt          TEXT NOT NULL,
    jti          TEXT NOT NULL,
    expires_at   BIGINT NOT NULL,
    PRIMARY KEY (jkt, jti)
);
CREATE INDEX dpop_proofs_by_expiry ON dpop_proofs (expires_at);
