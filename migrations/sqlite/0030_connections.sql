-- Accounts people connect at OAuth 2.0 authorization servers (a calendar, a code host), so that
-- a resource server acting for them may exchange a token it received for the upstream token.

-- The authorization servers of a realm people connect accounts at. The client secret is sealed.
CREATE TABLE connection_providers (
    realm_id                 TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    id                       TEXT NOT NULL,
    display_name             TEXT NOT NULL,
    status                   TEXT NOT NULL,
    discovery_url            TEXT,
    authorization_url        TEXT,
    token_url                TEXT,
    client_id                TEXT NOT NULL,
    client_secret            TEXT,
    client_secret_last_four  TEXT,
    -- JSON list of the scopes asked for.
    scopes                   TEXT NOT NULL,
    -- JSON list of the ids of the resource servers that may exchange tokens for this provider's.
    resource_servers         TEXT NOT NULL,
    created_at               BIGINT NOT NULL,
    updated_at               BIGINT NOT NULL,
    PRIMARY KEY (realm_id, id)
);
CREATE INDEX connection_providers_by_creation ON connection_providers (realm_id, created_at);

-- A person's account at a provider: one per person and provider, its tokens sealed.
CREATE TABLE connections (
    id              TEXT PRIMARY KEY,
    realm_id        TEXT NOT NULL,
    user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider_id     TEXT NOT NULL,
    -- JSON list of the scopes the provider granted.
    scopes          TEXT NOT NULL,
    access_token    TEXT NOT NULL,
    refresh_token   TEXT,
    -- When the access token expires, when the provider said.
    expires_at      BIGINT,
    -- Active, or Revoked once the provider refused to refresh it.
    status          TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    last_used_at    BIGINT,
    UNIQUE (user_id, provider_id),
    FOREIGN KEY (realm_id, provider_id) REFERENCES connection_providers (realm_id, id) ON DELETE CASCADE
);
CREATE INDEX connections_by_creation ON connections (realm_id, created_at);

-- The client a resource server authenticates as when it exchanges the tokens it receives.
ALTER TABLE resource_servers ADD COLUMN client_id TEXT;

-- A token exchange for a connected account names the connection provider.
ALTER TABLE delegation_exchanges ADD COLUMN connection_provider TEXT;
