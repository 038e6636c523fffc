-- The device authorization grant (RFC 8628): a device without a browser asks for tokens, and a
-- person approves it on another device with the user code it shows. Codes are kept as keyed
-- hashes, the user code normalised (uppercase, without its dash).
CREATE TABLE device_authorizations (
    device_code_hash  TEXT PRIMARY KEY,
    realm_id          TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_code_hash    TEXT NOT NULL,
    client_id         TEXT NOT NULL,
    -- The scopes asked for, a JSON list; and the resource server, if any.
    scopes            TEXT NOT NULL,
    resource          TEXT,
    -- Pending, Approved, Denied, or Issued once the device took its tokens.
    status            TEXT NOT NULL,
    -- The client session a person's approval opened.
    session_id        TEXT,
    -- Seconds the device must wait between two polls; each slow_down adds five.
    interval_seconds  BIGINT NOT NULL,
    polled_at         BIGINT,
    created_at        BIGINT NOT NULL,
    expires_at        BIGINT NOT NULL,
    UNIQUE (realm_id, user_code_hash)
);
CREATE INDEX device_authorizations_by_expiry ON device_authorizations (expires_at);
