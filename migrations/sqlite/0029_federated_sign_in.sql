-- Signing in through an external identity provider.

-- The provider a browser session's person signed in through, told by `login_succeeded`.
ALTER TABLE browser_sessions ADD COLUMN identity_provider TEXT;

-- A sign-in sent to a provider and not yet back: found again by the keyed hash of the `state` it
-- sent, bound to the browser that started it by the keyed hash of a cookie, good once and for ten
-- minutes. `request` is the client's authorization request (a JSON list of its parameters),
-- answered once the person is back; the PKCE verifier is sealed. `user_id` names the person
-- already signed in who connects an account at a connection provider; it is null for a sign-in.
CREATE TABLE upstream_sign_ins (
    state_hash     TEXT PRIMARY KEY,
    realm_id       TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    provider_id    TEXT NOT NULL,
    browser_hash   TEXT NOT NULL,
    nonce          TEXT NOT NULL,
    code_verifier  TEXT NOT NULL,
    request        TEXT NOT NULL,
    user_id        TEXT,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL
);
CREATE INDEX upstream_sign_ins_by_expiry ON upstream_sign_ins (expires_at);
