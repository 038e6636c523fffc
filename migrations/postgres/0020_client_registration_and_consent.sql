-- Clients that register themselves (RFC 7591), and the consent people give to such clients.

-- Whether a realm takes registrations: Closed, Open, or InitialAccessToken; and, as a JSON list,
-- the most scopes a self-registered client may be allowed.
ALTER TABLE realms ADD COLUMN client_registration TEXT NOT NULL DEFAULT 'Closed';
ALTER TABLE realms ADD COLUMN registration_scopes TEXT NOT NULL DEFAULT '[]';

-- How a client came to be: Admin (through the admin API) or Dynamic (it registered itself).
ALTER TABLE clients ADD COLUMN registration TEXT NOT NULL DEFAULT 'Admin';
-- The keyed hash of a self-registered client's registration access token (RFC 7592).
ALTER TABLE clients ADD COLUMN registration_token_hash TEXT;
-- What a self-registered client said of itself: client_uri, contacts, software_id and
-- software_version, as a JSON object.
ALTER TABLE clients ADD COLUMN registered_metadata TEXT NOT NULL DEFAULT '{}';

-- Whether a resource server takes tokens of self-registered clients besides its allowed clients.
ALTER TABLE resource_servers ADD COLUMN accepts_self_registered BOOLEAN NOT NULL DEFAULT FALSE;

-- Tokens an administrator hands out, each good for a number of registrations until it expires.
CREATE TABLE initial_access_tokens (
    id                   TEXT PRIMARY KEY,
    realm_id             TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    token_hash           TEXT NOT NULL UNIQUE,
    remaining_uses       BIGINT NOT NULL,
    expires_at           BIGINT NOT NULL,
    created_at           BIGINT NOT NULL
);
CREATE INDEX initial_access_tokens_by_creation ON initial_access_tokens (realm_id, created_at);

-- What a person allowed a client: the scopes, for one resource server ('' for none).
CREATE TABLE consents (
    realm_id     TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id    TEXT NOT NULL,
    resource     TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (realm_id, user_id, client_id, resource)
);
CREATE INDEX consents_by_client ON consents (realm_id, client_id);
