-- Foundation: accounts, realms, clients, people, account roles, API secrets, the change trail,
-- the event outbox and the access log. Instants are milliseconds since the Unix epoch (UTC);
-- lists and records are JSON text; flags are INTEGER 0/1 (PostgreSQL: BOOLEAN).

CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

CREATE TABLE realms (
    id                        TEXT PRIMARY KEY,
    account_id                TEXT NOT NULL REFERENCES accounts (id),
    display_name              TEXT NOT NULL,
    status                    TEXT NOT NULL,
    max_failed_attempts       BIGINT NOT NULL,
    lockout_duration_minutes  BIGINT NOT NULL,
    lockout_enabled           INTEGER NOT NULL,
    minimum_password_length   BIGINT NOT NULL,
    block_breached_passwords  INTEGER NOT NULL,
    created_at                BIGINT NOT NULL,
    updated_at                BIGINT NOT NULL
);
CREATE INDEX realms_by_account ON realms (account_id, created_at);

CREATE TABLE clients (
    realm_id                      TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    id                            TEXT NOT NULL,
    name                          TEXT NOT NULL,
    description                   TEXT,
    client_type                   TEXT NOT NULL,
    status                        TEXT NOT NULL,
    secret_hash                   TEXT,
    secret_last_four              TEXT,
    secret_rotated_at             BIGINT,
    previous_secret_hash          TEXT,
    previous_secret_valid_until   BIGINT,
    issued_tokens_revoked_before  BIGINT,
    token_exchange_enabled        INTEGER NOT NULL,
    allowed_scopes                TEXT NOT NULL,
    grant_types                   TEXT NOT NULL,
    redirect_uris                 TEXT NOT NULL,
    created_at                    BIGINT NOT NULL,
    updated_at                    BIGINT NOT NULL,
    PRIMARY KEY (realm_id, id)
);
CREATE INDEX clients_by_creation ON clients (realm_id, created_at);

CREATE TABLE users (
    id                    TEXT PRIMARY KEY,
    realm_id              TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    username              TEXT NOT NULL,
    email                 TEXT,
    first_name            TEXT,
    last_name             TEXT,
    email_confirmed       INTEGER NOT NULL,
    status                TEXT NOT NULL,
    password_hash         TEXT,
    must_change_password  INTEGER NOT NULL,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    UNIQUE (realm_id, username)
);

CREATE TABLE account_members (
    account_id  TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    roles       TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (account_id, user_id)
);

CREATE TABLE account_roles (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    description  TEXT,
    permissions  TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    UNIQUE (account_id, name)
);

CREATE TABLE secrets (
    id                TEXT PRIMARY KEY,
    account_id        TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    secret_type       TEXT NOT NULL,
    name              TEXT NOT NULL,
    value_hash        TEXT NOT NULL UNIQUE,
    value_last_four   TEXT NOT NULL,
    roles             TEXT NOT NULL,
    scopes            TEXT,
    expires_at        BIGINT,
    acts_for_user_id  TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
CREATE INDEX secrets_by_account ON secrets (account_id, created_at);

CREATE TABLE audit_trail (
    id                     TEXT PRIMARY KEY,
    account_id             TEXT,
    realm_id               TEXT,
    client_id              TEXT,
    occurred_at            BIGINT NOT NULL,
    outcome                TEXT NOT NULL,
    action                 TEXT NOT NULL,
    resource_type          TEXT NOT NULL,
    resource_id            TEXT,
    parent_id              TEXT,
    actor_type             TEXT NOT NULL,
    actor_user_id          TEXT,
    actor_username         TEXT,
    actor_email            TEXT,
    actor_credential_id    TEXT,
    actor_credential_name  TEXT,
    ip_address             TEXT NOT NULL,
    method                 TEXT NOT NULL,
    path                   TEXT NOT NULL,
    status                 BIGINT NOT NULL,
    error_code             TEXT,
    before_state           TEXT,
    after_state            TEXT,
    details                TEXT
);
CREATE INDEX audit_trail_by_account ON audit_trail (account_id, occurred_at);

CREATE TABLE event_outbox (
    id          TEXT PRIMARY KEY,
    event_type  TEXT NOT NULL,
    account_id  TEXT,
    realm_id    TEXT,
    client_id   TEXT,
    created_at  BIGINT NOT NULL,
    data        TEXT NOT NULL
);
CREATE INDEX event_outbox_by_creation ON event_outbox (created_at);

CREATE TABLE access_log (
    id                TEXT PRIMARY KEY,
    occurred_at       BIGINT NOT NULL,
    account_id        TEXT,
    credential_id     TEXT,
    credential_name   TEXT,
    actor_user_id     TEXT,
    ip_address        TEXT NOT NULL,
    method            TEXT NOT NULL,
    path              TEXT NOT NULL,
    status            BIGINT NOT NULL,
    outcome           TEXT NOT NULL,
    reason            TEXT
);
CREATE INDEX access_log_by_account ON access_log (account_id, occurred_at);
CREATE INDEX access_log_by_time ON access_log (occurred_at);
