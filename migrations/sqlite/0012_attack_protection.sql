-- Attack protection (SPEC "Attack incident, measure, exposure"): the incidents detections are
-- grouped into, the measures they took, and the accounts whose password arrived from an attack.
-- What each attempt counts lives in the counting store (memory or Redis), never here.

CREATE TABLE threat_incidents (
    id                  TEXT PRIMARY KEY,
    account_id          TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    realm_id            TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    -- The client the first detection came through.
    client_id           TEXT,
    -- CredentialStuffing, PasswordSpraying, BruteForce, PushBombing or RecoveryAbuse.
    kind                TEXT NOT NULL,
    -- Low, Medium, High or Critical; the highest reached is kept.
    severity            TEXT NOT NULL,
    -- Active, Resolved or Dismissed.
    status              TEXT NOT NULL,
    started_at          BIGINT NOT NULL,
    -- The latest detection: a later one within 30 minutes joins the incident.
    last_detection_at   BIGINT NOT NULL,
    -- The latest detection or refused attempt: 30 quiet minutes resolve the incident.
    last_activity_at    BIGINT NOT NULL,
    closed_at           BIGINT,
    detections          BIGINT NOT NULL,
    refused_attempts    BIGINT NOT NULL,
    blocked_sources     BIGINT NOT NULL,
    protected_accounts  BIGINT NOT NULL,
    exposed_passwords   BIGINT NOT NULL
);
CREATE INDEX threat_incidents_by_account ON threat_incidents (account_id, started_at);
CREATE INDEX threat_incidents_open ON threat_incidents (realm_id, kind, status);

CREATE TABLE threat_measures (
    id             TEXT PRIMARY KEY,
    incident_id    TEXT NOT NULL REFERENCES threat_incidents (id) ON DELETE CASCADE,
    account_id     TEXT NOT NULL,
    realm_id       TEXT NOT NULL,
    -- SourceBlocked, ClosedToUnknownAddresses, SignInPushesPaused or PasswordExposed.
    kind           TEXT NOT NULL,
    -- The address a block refuses, or the account the measure protects.
    target_address TEXT,
    target_user_id TEXT,
    -- Country and network of a blocked address, when the data files know them.
    country        TEXT,
    network        TEXT,
    -- JSON list of the reasons, in words.
    reasons        TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    -- When it lapses by itself; NULL for an exposed password, which never does.
    lapses_at      BIGINT,
    lifted_at      BIGINT,
    -- The person or credential that lifted it (directly or by dismissing the incident).
    lifted_by      TEXT,
    -- An exposed password: when the password was changed after it.
    resolved_at    BIGINT
);
CREATE INDEX threat_measures_by_incident ON threat_measures (incident_id, created_at);
CREATE INDEX threat_measures_by_account ON threat_measures (account_id, created_at);
CREATE INDEX threat_measures_by_user ON threat_measures (target_user_id);

-- One row per account, by its latest exposure.
CREATE TABLE threat_exposures (
    user_id      TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    account_id   TEXT NOT NULL,
    realm_id     TEXT NOT NULL,
    client_id    TEXT,
    incident_id  TEXT NOT NULL,
    exposed_at   BIGINT NOT NULL,
    exposures    BIGINT NOT NULL,
    resolved_at  BIGINT
);
CREATE INDEX threat_exposures_by_account ON threat_exposures (account_id, exposed_at);

-- Shared networks: how many accounts approved an address.
CREATE INDEX approved_addresses_by_address ON approved_addresses (ip_address);

-- Password reset codes sent by recovery e-mail, stored as keyed hashes; each works once, for 30
-- minutes.
CREATE TABLE password_resets (
    id          TEXT PRIMARY KEY,
    realm_id    TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The client the request named (the e-mail is branded for it).
    client_id   TEXT NOT NULL,
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT
);
CREATE INDEX password_resets_by_user ON password_resets (user_id, created_at);
