-- People signing in through a browser: the realm session a browser holds (single sign-on), the
-- client sessions it opened, and the authorization codes handed to clients.

-- One per browser and realm, named by a cookie whose value is kept only as a keyed hash.
CREATE TABLE browser_sessions (
    id                      TEXT PRIMARY KEY,
    realm_id                TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id                 TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    cookie_hash             TEXT NOT NULL UNIQUE,
    -- JSON list of how the person authenticated (`pwd`, …), and when.
    authentication_methods  TEXT NOT NULL,
    authenticated_at        BIGINT NOT NULL,
    ip_address              TEXT NOT NULL,
    user_agent              TEXT,
    created_at              BIGINT NOT NULL,
    expires_at              BIGINT NOT NULL,
    ended_at                BIGINT,
    end_reason              TEXT
);
CREATE INDEX browser_sessions_by_user ON browser_sessions (user_id);
CREATE INDEX browser_sessions_by_expiry ON browser_sessions (expires_at);

-- Where a client may send a browser after signing it out (RP-Initiated Logout): a JSON list.
ALTER TABLE clients ADD COLUMN post_logout_redirect_uris TEXT NOT NULL DEFAULT '[]';
-- The login page's branding: the address of a logo (https) and a colour (#rrggbb), when set.
ALTER TABLE clients ADD COLUMN logo_uri TEXT;
ALTER TABLE clients ADD COLUMN brand_color TEXT;

-- The browser session a client session was opened from, when it was.
ALTER TABLE sessions ADD COLUMN browser_session_id TEXT;
CREATE INDEX sessions_by_browser_session ON sessions (browser_session_id);

-- Codes are single use and short-lived; the value is kept only as a keyed hash. `session_id` is
-- the client session the code opened: presenting the code again ends it.
CREATE TABLE authorization_codes (
    code_hash       TEXT PRIMARY KEY,
    realm_id        TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id       TEXT NOT NULL,
    session_id      TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    redirect_uri    TEXT NOT NULL,
    -- JSON list of the scopes granted.
    scopes          TEXT NOT NULL,
    nonce           TEXT,
    -- The PKCE challenge (S256), when the request carried one.
    code_challenge  TEXT,
    created_at      BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL,
    used_at         BIGINT
);
CREATE INDEX authorization_codes_by_expiry ON authorization_codes (expires_at);
