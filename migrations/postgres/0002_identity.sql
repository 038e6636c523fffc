-- Identity core: the clients' signing keys, sign-in sessions, refresh tokens, revoked access
-- tokens, and the realm lockout (failures per account and address, approved addresses).
-- Instants are milliseconds since the Unix epoch (UTC).

-- ES256 (default) or RS256; rotation_days NULL means no scheduled rotation.
ALTER TABLE clients ADD COLUMN key_algorithm TEXT NOT NULL DEFAULT 'ES256';
ALTER TABLE clients ADD COLUMN key_rotation_days BIGINT;

-- A client's signing keys. The private key is PKCS#8 PEM sealed with AES-256-GCM under a key
-- derived from the deployment's secret key. A Retired key signs nothing but stays in the JWKS
-- until `published_until`, when every token it signed has expired; a Revoked key leaves it at once.
CREATE TABLE signing_keys (
    id               TEXT PRIMARY KEY,
    realm_id         TEXT NOT NULL,
    client_id        TEXT NOT NULL,
    algorithm        TEXT NOT NULL,
    sealed_key       TEXT NOT NULL,
    public_jwk       TEXT NOT NULL,
    status           TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    retired_at       BIGINT,
    published_until  BIGINT,
    FOREIGN KEY (realm_id, client_id) REFERENCES clients (realm_id, id) ON DELETE CASCADE
);
CREATE INDEX signing_keys_by_client ON signing_keys (realm_id, client_id, status);

CREATE TABLE sessions (
    id                      TEXT PRIMARY KEY,
    realm_id                TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id               TEXT NOT NULL,
    user_id                 TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    ip_address              TEXT NOT NULL,
    user_agent              TEXT,
    authentication_methods  TEXT NOT NULL,
    created_at              BIGINT NOT NULL,
    last_active_at          BIGINT NOT NULL,
    expires_at              BIGINT NOT NULL,
    ended_at                BIGINT,
    end_reason              TEXT
);
CREATE INDEX sessions_by_realm ON sessions (realm_id, created_at);
CREATE INDEX sessions_by_user ON sessions (user_id);

-- Refresh tokens are stored as keyed hashes. Exchanging one sets `exchanged_at`; presenting it
-- again ends its session (reuse detection).
CREATE TABLE refresh_tokens (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    token_hash    TEXT NOT NULL UNIQUE,
    scopes        TEXT NOT NULL,
    resource      TEXT,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    exchanged_at  BIGINT,
    revoked_at    BIGINT
);
CREATE INDEX refresh_tokens_by_session ON refresh_tokens (session_id);

-- Access tokens revoked before they expire (RFC 7009); pruned once expired.
CREATE TABLE revoked_tokens (
    jti         TEXT PRIMARY KEY,
    realm_id    TEXT NOT NULL,
    revoked_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX revoked_tokens_by_expiry ON revoked_tokens (expires_at);

-- Realm lockout: failed password sign-ins per account and source address.
CREATE TABLE login_failures (
    user_id          TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    ip_address       TEXT NOT NULL,
    failed_count     BIGINT NOT NULL,
    first_failed_at  BIGINT NOT NULL,
    locked_until     BIGINT,
    PRIMARY KEY (user_id, ip_address)
);

-- Addresses an account signed in from successfully; the realm lockout never applies there.
CREATE TABLE approved_addresses (
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    ip_address   TEXT NOT NULL,
    approved_at  BIGINT NOT NULL,
    PRIMARY KEY (user_id, ip_address)
);

CREATE INDEX users_by_realm ON users (realm_id, created_at);
