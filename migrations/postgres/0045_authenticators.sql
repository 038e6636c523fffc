-- A person's authenticators beyond the password: time-based one-time password apps (TOTP), the
-- set of recovery codes, and passkeys (WebAuthn credentials). Each is named by its person, and
-- none keeps a secret in the clear: a TOTP secret is sealed with the deployment's key, a recovery
-- code is a keyed hash, a passkey is a public key.
CREATE TABLE authenticators (
    id            TEXT PRIMARY KEY,
    realm_id      TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- Totp, RecoveryCodes or Passkey.
    kind          TEXT NOT NULL,
    name          TEXT NOT NULL,
    -- Totp: the sealed secret.
    secret_sealed TEXT,
    -- JSON: a TOTP's parameters (algorithm, digits, period); a passkey's public key and flags.
    data          TEXT NOT NULL,
    -- Totp: the step of the last code accepted, so that no code is accepted twice. Passkey: the
    -- authenticator's signature counter.
    counter       BIGINT,
    -- Unique in the realm: a passkey's credential id (base64url); a TOTP's keyed hash of its
    -- secret, so that one enrolment is not kept twice.
    credential_id TEXT,
    created_at    BIGINT NOT NULL,
    last_used_at  BIGINT
);
CREATE INDEX authenticators_by_user ON authenticators (user_id, kind);
CREATE UNIQUE INDEX authenticators_by_credential ON authenticators (realm_id, credential_id);

-- The recovery codes of a RecoveryCodes authenticator, each usable once.
CREATE TABLE recovery_codes (
    authenticator_id TEXT NOT NULL REFERENCES authenticators (id) ON DELETE CASCADE,
    code_hash        TEXT NOT NULL,
    used_at          BIGINT,
    PRIMARY KEY (authenticator_id, code_hash)
);
