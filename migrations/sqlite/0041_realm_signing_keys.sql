-- Tokens are signed with keys of the realm unless a client is given keys of its own: a realm's
-- JWKS holds a few keys whatever the number of its clients.
--
-- A realm's keys have no client (client_id NULL); they go with their realm. Clients say whose keys
-- sign their tokens: `Realm`, or `Own` for those created by an administrator before realm keys,
-- which keep theirs. Clients that registered themselves or came from a metadata document move to
-- the realm's keys: their own stop signing now and stay published for a day, longer than any
-- token they signed lives. Self-registration and metadata documents are bounded per realm.
CREATE TABLE signing_keys_by_owner (
    id               TEXT PRIMARY KEY,
    realm_id         TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id        TEXT,
    algorithm        TEXT NOT NULL,
    sealed_key       TEXT NOT NULL,
    public_jwk       TEXT NOT NULL,
    status           TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    retired_at       BIGINT,
    published_until  BIGINT,
    signs_from       BIGINT NOT NULL DEFAULT 0,
    FOREIGN KEY (realm_id, client_id) REFERENCES clients (realm_id, id) ON DELETE CASCADE
);
INSERT INTO signing_keys_by_owner (id, realm_id, client_id, algorithm, sealed_key, public_jwk, status, created_at,
    retired_at, published_until, signs_from)
SELECT id, realm_id, client_id, algorithm, sealed_key, public_jwk, status, created_at, retired_at, published_until,
    signs_from FROM signing_keys;
DROP TABLE signing_keys;
ALTER TABLE signing_keys_by_owner RENAME TO signing_keys;
CREATE INDEX signing_keys_by_client ON signing_keys (realm_id, client_id, status);

ALTER TABLE clients ADD COLUMN signing_keys TEXT NOT NULL DEFAULT 'Realm';
UPDATE clients SET signing_keys = 'Own' WHERE registration = 'Admin';
UPDATE signing_keys
SET status = 'Retired',
    retired_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000,
    published_until = (CAST(strftime('%s', 'now') AS INTEGER) + 86400) * 1000
WHERE status = 'Active'
  AND EXISTS (SELECT 1 FROM clients c WHERE c.realm_id = signing_keys.realm_id AND c.id = signing_keys.client_id
              AND c.signing_keys = 'Realm');

ALTER TABLE realms ADD COLUMN self_registered_clients_per_minute BIGINT NOT NULL DEFAULT 60;
ALTER TABLE realms ADD COLUMN max_self_registered_clients BIGINT NOT NULL DEFAULT 10000;
CREATE INDEX clients_self_registered ON clients (realm_id, registration, created_at);
