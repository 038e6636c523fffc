-- Sign-in requests pushed to phones (SPEC "Attack protection rules": push bombing): the devices a
-- person enrolled, and each request a password sign-in asked them to confirm.

CREATE TABLE push_devices (
    id            TEXT PRIMARY KEY,
    realm_id      TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    -- The device's credential, as a keyed hash.
    secret_hash   TEXT NOT NULL,
    -- Where the push gateway reaches the phone (its platform token), when given.
    push_token    TEXT,
    created_at    BIGINT NOT NULL,
    revoked_at    BIGINT
);
CREATE INDEX push_devices_by_user ON push_devices (user_id);

CREATE TABLE push_requests (
    id            TEXT PRIMARY KEY,
    realm_id      TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id     TEXT NOT NULL,
    -- Where the sign-in came from.
    ip_address    TEXT NOT NULL,
    user_agent    TEXT,
    -- JSON list of scopes, and the resource, the sign-in asked for.
    scopes        TEXT NOT NULL,
    resource      TEXT,
    -- Pending, Approved, Refused, Exchanged, or Withheld (pushes paused: never shown to a phone,
    -- answered to the client as an unanswered request).
    status        TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    answered_at   BIGINT,
    device_id     TEXT
);
CREATE INDEX push_requests_by_user ON push_requests (user_id, status, expires_at);
