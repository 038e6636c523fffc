-- Self sign-ups waiting for the code sent to their e-mail address. Nothing of the person exists
-- until the code comes back. A sign-up naming a username or an address another account has gets a
-- row too, whose code is never sent: the form answers alike whatever was taken, and the address's
-- owner hears of it by e-mail. Rows are removed a day after they lapse.
CREATE TABLE sign_ups (
    id            TEXT PRIMARY KEY,
    realm_id      TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id     TEXT NOT NULL,
    username      TEXT NOT NULL,
    email         TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    code_hash     TEXT NOT NULL UNIQUE,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    used_at       BIGINT
);
CREATE INDEX sign_ups_by_expiry ON sign_ups (expires_at);
