-- Capture endpoints (SPEC "Webhook administration"): a temporary address, protected only by its
-- random path, that records every request it receives for 24 hours so customers can inspect what
-- a delivery looks like. Expired captures and their requests are removed by the hourly cleanup.

CREATE TABLE webhook_captures (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL,
    -- The random path segment of the capture's address.
    token       TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX webhook_captures_by_account ON webhook_captures (account_id, created_at);
CREATE INDEX webhook_captures_by_expiry ON webhook_captures (expires_at);

CREATE TABLE webhook_captured_requests (
    id           TEXT PRIMARY KEY,
    capture_id   TEXT NOT NULL REFERENCES webhook_captures (id) ON DELETE CASCADE,
    method       TEXT NOT NULL,
    -- The path after the capture's address (empty for the address itself) and the query string.
    path         TEXT NOT NULL,
    query        TEXT,
    -- JSON object of the request headers; repeated headers joined with ", ".
    headers      TEXT NOT NULL,
    -- The body as text (invalid UTF-8 replaced), cut at the documented size.
    body         TEXT NOT NULL,
    -- The body's full size in bytes.
    body_size    BIGINT NOT NULL,
    source_ip    TEXT NOT NULL,
    received_at  BIGINT NOT NULL
);
CREATE INDEX webhook_captured_requests_by_capture ON webhook_captured_requests (capture_id, received_at);
