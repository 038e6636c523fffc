-- Consumers of a client (SPEC "Admin API credentials", rule 3): API keys a customer gives the users
-- of its own API. The customer's API validates them at the realm's introspection endpoint; the admin
-- API never accepts them. Values are stored as keyed hashes.

CREATE TABLE consumers (
    id               TEXT PRIMARY KEY,
    realm_id         TEXT NOT NULL,
    client_id        TEXT NOT NULL,
    consumer_type    TEXT NOT NULL,
    name             TEXT NOT NULL,
    description      TEXT,
    status           TEXT NOT NULL,
    value_hash       TEXT NOT NULL UNIQUE,
    value_last_four  TEXT NOT NULL,
    -- JSON list: scopes among the client's allowed scopes.
    scopes           TEXT NOT NULL,
    expires_at       BIGINT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    FOREIGN KEY (realm_id, client_id) REFERENCES clients (realm_id, id) ON DELETE CASCADE
);
CREATE INDEX consumers_by_client ON consumers (realm_id, client_id, created_at);
