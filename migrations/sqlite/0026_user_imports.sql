-- Imports of users into a realm through one of its clients: each is a job whose progress is
-- updated after every batch, so it can be read while the import runs, and whose refused rows are
-- kept with their line and reasons.
CREATE TABLE user_imports (
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL,
    realm_id         TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    client_id        TEXT NOT NULL,
    -- Running, Completed, or Failed (the service stopped it: `failure` says why).
    status           TEXT NOT NULL,
    -- Skip, Overwrite or Fail: what a row naming an existing person does.
    on_conflict      TEXT NOT NULL,
    rows_read        BIGINT NOT NULL,
    created          BIGINT NOT NULL,
    updated          BIGINT NOT NULL,
    skipped          BIGINT NOT NULL,
    refused          BIGINT NOT NULL,
    failure          TEXT,
    created_by_type  TEXT NOT NULL,
    created_by_id    TEXT,
    started_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    finished_at      BIGINT,
    FOREIGN KEY (realm_id, client_id) REFERENCES clients (realm_id, id) ON DELETE CASCADE
);
CREATE INDEX user_imports_by_client ON user_imports (realm_id, client_id, started_at);

-- A refused row: its line (JSON Lines) or position (a JSON array), the username it named if any,
-- and why, as a JSON list of {field, rule, message}.
CREATE TABLE user_import_refusals (
    import_id  TEXT NOT NULL REFERENCES user_imports (id) ON DELETE CASCADE,
    line       BIGINT NOT NULL,
    username   TEXT,
    reasons    TEXT NOT NULL,
    PRIMARY KEY (import_id, line)
);
