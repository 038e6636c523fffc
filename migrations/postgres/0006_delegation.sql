-- Delegation grants (SPEC "Delegation grant"): written once, never edited, only withdrawn; and the
-- trail of token exchanges made under them, granted or refused.

CREATE TABLE delegation_grants (
    id                       TEXT PRIMARY KEY,
    realm_id                 TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    -- The acting client, and the person it may act for.
    client_id                TEXT NOT NULL,
    subject_user_id          TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- JSON lists: the ceiling of scopes; the resource server addresses tokens may be for (empty: any).
    scopes                   TEXT NOT NULL,
    allowed_resources        TEXT NOT NULL,
    max_depth                BIGINT NOT NULL,
    organization_id          TEXT,
    expires_at               BIGINT,
    created_at               BIGINT NOT NULL,
    -- Who wrote it: a person's id or a credential's id, and which of the two.
    created_by_type          TEXT NOT NULL,
    created_by_id            TEXT,
    -- The latest expiry of a token issued under it, raised by every exchange in the transaction
    -- that records it; a withdrawal reads it to state how long local validators may still accept one.
    issued_tokens_expire_at  BIGINT,
    withdrawn_at             BIGINT,
    withdrawal_reason        TEXT,
    withdrawn_by_type        TEXT,
    withdrawn_by_id          TEXT,
    -- A client deleted takes its grants along: a client created later with the same id gets none.
    FOREIGN KEY (realm_id, client_id) REFERENCES clients (realm_id, id) ON DELETE CASCADE
);
CREATE INDEX delegation_grants_by_pair ON delegation_grants (realm_id, client_id, subject_user_id);
CREATE INDEX delegation_grants_by_creation ON delegation_grants (realm_id, created_at);

CREATE TABLE delegation_exchanges (
    id               TEXT PRIMARY KEY,
    realm_id         TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id        TEXT NOT NULL,
    -- The person, when the subject token named one; the grant, when one decided.
    subject_user_id  TEXT,
    grant_id         TEXT,
    -- Granted or Refused, with the refusal's error code.
    outcome          TEXT NOT NULL,
    error_code       TEXT,
    -- JSON list of the scopes asked for.
    scopes           TEXT NOT NULL,
    resource         TEXT,
    -- Actors already in the subject token.
    depth            BIGINT,
    -- The jti of the token issued.
    token_id         TEXT,
    ip_address       TEXT NOT NULL,
    occurred_at      BIGINT NOT NULL
);
CREATE INDEX delegation_exchanges_by_time ON delegation_exchanges (realm_id, occurred_at);
