-- Refresh tokens are found by the id their value carries (`cstl_rt_<id>.<secret>`), then their
-- keyed hash is compared: ids are time-ordered, so new tokens land at the end of the primary key
-- instead of on random pages of a unique index over random hashes. Tokens issued before carry no
-- id and stop working; their sessions sign in again.
CREATE TABLE refresh_tokens_by_id (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    token_hash    TEXT NOT NULL,
    scopes        TEXT NOT NULL,
    resource      TEXT,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    exchanged_at  BIGINT,
    revoked_at    BIGINT
);
DROP TABLE refresh_tokens;
ALTER TABLE refresh_tokens_by_id RENAME TO refresh_tokens;
CREATE INDEX refresh_tokens_by_session ON refresh_tokens (session_id);
