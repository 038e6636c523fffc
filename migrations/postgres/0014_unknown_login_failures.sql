-- The realm lockout of names the realm does not have: failed password sign-ins per typed name
-- (a keyed hash of it, lower-cased) and source address, counted and locked exactly as an existing
-- account's are, so the lockout never tells which accounts exist.

CREATE TABLE unknown_login_failures (
    realm_id         TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name_hash        TEXT NOT NULL,
    ip_address       TEXT NOT NULL,
    failed_count     BIGINT NOT NULL,
    first_failed_at  BIGINT NOT NULL,
    locked_until     BIGINT,
    PRIMARY KEY (realm_id, name_hash, ip_address)
);
CREATE INDEX unknown_login_failures_by_start ON unknown_login_failures (first_failed_at);
CREATE INDEX login_failures_by_start ON login_failures (first_failed_at);
