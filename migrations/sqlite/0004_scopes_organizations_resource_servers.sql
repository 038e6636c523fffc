-- Scopes (the account's catalogue, shared by its realms, and scopes exclusive to one realm),
-- organizations with their domains and members, and resource servers (the APIs and MCP servers
-- tokens are issued for).

CREATE TABLE scopes (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- NULL for a catalogue scope; the realm for a realm-exclusive scope.
    realm_id     TEXT REFERENCES realms (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    description  TEXT,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX scopes_unique_catalogue_name ON scopes (account_id, name) WHERE realm_id IS NULL;
CREATE UNIQUE INDEX scopes_unique_realm_name ON scopes (realm_id, name) WHERE realm_id IS NOT NULL;
CREATE INDEX scopes_by_creation ON scopes (account_id, created_at);

CREATE TABLE organizations (
    id           TEXT PRIMARY KEY,
    realm_id     TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    description  TEXT,
    -- JSON list of DNS domains, each unique in the realm (see organization_domains).
    domains      TEXT NOT NULL,
    status       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    UNIQUE (realm_id, name)
);
CREATE INDEX organizations_by_creation ON organizations (realm_id, created_at);

CREATE TABLE organization_domains (
    realm_id         TEXT NOT NULL,
    domain           TEXT NOT NULL,
    organization_id  TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    PRIMARY KEY (realm_id, domain)
);

CREATE TABLE organization_members (
    organization_id  TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id          TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at       BIGINT NOT NULL,
    PRIMARY KEY (organization_id, user_id)
);
CREATE INDEX organization_members_by_user ON organization_members (user_id);

CREATE TABLE resource_servers (
    id               TEXT PRIMARY KEY,
    realm_id         TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    -- The address tokens for it carry as `aud` (RFC 8707 `resource`).
    address          TEXT NOT NULL,
    -- Api or McpServer.
    kind             TEXT NOT NULL,
    -- JSON lists: the scopes it accepts, the clients that may request tokens for it.
    scopes           TEXT NOT NULL,
    allowed_clients  TEXT NOT NULL,
    status           TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    UNIQUE (realm_id, address)
);
CREATE INDEX resource_servers_by_creation ON resource_servers (realm_id, created_at);
