-- The console's server-side sessions. The browser holds a random value in an HttpOnly cookie; the
-- row is found by its keyed hash (`id`, HMAC-SHA256). Each is bound to the person's session at the
-- platform realm (`session_id`), so that ending that session, or the person leaving the team, ends
-- the console session too. `csrf_token` is the value every form of the session must carry.
CREATE TABLE console_sessions (
    id          TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token  TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);
