-- Suspensions of a person's use of one client. A suspension is Scheduled until `starts_at`, Active
-- until `ends_at` (none: until lifted), then Ended, or Lifted early by an administrator: its status
-- is read from these instants. `ended_at` records when its end was announced (a lift, or the
-- suspensions job once `ends_at` passed). JSON lists hold the scopes taken out of new tokens and
-- the roles withheld from them.
CREATE TABLE suspensions (
    id                      TEXT PRIMARY KEY,
    account_id              TEXT NOT NULL,
    realm_id                TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id               TEXT NOT NULL,
    user_id                 TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- Restricted (scopes and roles withheld from new tokens) or Full (no sign-in, no token).
    level                   TEXT NOT NULL,
    reason                  TEXT,
    starts_at               BIGINT NOT NULL,
    ends_at                 BIGINT,
    restricted_scopes       TEXT NOT NULL,
    revokes_every_role      INTEGER NOT NULL,
    revoked_role_ids        TEXT NOT NULL,
    -- Whether the person's sessions at the client end when the suspension starts, and when they did.
    terminates_sessions     INTEGER NOT NULL,
    sessions_terminated_at  BIGINT,
    lifted_at               BIGINT,
    ended_at                BIGINT,
    created_at              BIGINT NOT NULL,
    updated_at              BIGINT NOT NULL,
    FOREIGN KEY (realm_id, client_id) REFERENCES clients (realm_id, id) ON DELETE CASCADE
);
CREATE INDEX suspensions_by_person ON suspensions (realm_id, client_id, user_id);
CREATE INDEX suspensions_by_account ON suspensions (account_id, created_at);
CREATE INDEX suspensions_by_end ON suspensions (ended_at, ends_at);
