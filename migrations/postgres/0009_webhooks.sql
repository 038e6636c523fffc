-- Webhooks (SPEC "Webhook endpoint", "Events", "Delivery and retry"). An event in the outbox is
-- fanned out once: its payload is built and one attempt is scheduled per subscribed endpoint. The
-- delivery worker claims due attempts (a lease in `claimed_until`), sends them, and records each
-- outcome on its row; an automatic retry is a new row of kind Retry.

CREATE TABLE webhook_endpoints (
    id                         TEXT PRIMARY KEY,
    account_id                 TEXT NOT NULL,
    realm_id                   TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    -- Client (hears user, sign-in, token and key events of its client) or Realm (hears
    -- administrative changes and attacks).
    kind                       TEXT NOT NULL,
    -- Null for a realm endpoint.
    client_id                  TEXT,
    name                       TEXT NOT NULL,
    url                        TEXT NOT NULL,
    description                TEXT,
    -- JSON list of event names.
    events                     TEXT NOT NULL,
    retries                    BIGINT NOT NULL,
    first_retry_after_seconds  BIGINT NOT NULL,
    status                     TEXT NOT NULL,
    -- The signing secret, encrypted with a key derived from the deployment key.
    secret_sealed              TEXT NOT NULL,
    secret_last_four           TEXT NOT NULL,
    consecutive_failures       BIGINT NOT NULL DEFAULT 0,
    created_at                 BIGINT NOT NULL,
    updated_at                 BIGINT NOT NULL,
    FOREIGN KEY (realm_id, client_id) REFERENCES clients (realm_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_endpoints_by_realm ON webhook_endpoints (realm_id, kind, client_id, created_at);

ALTER TABLE event_outbox ADD COLUMN fanned_out_at BIGINT;
CREATE INDEX event_outbox_to_fan_out ON event_outbox (created_at) WHERE fanned_out_at IS NULL;

CREATE TABLE webhook_attempts (
    id               TEXT PRIMARY KEY,
    endpoint_id      TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    -- The endpoint's realm, kind and client, for the delivery history.
    realm_id         TEXT NOT NULL,
    endpoint_kind    TEXT NOT NULL,
    client_id        TEXT,
    event_id         TEXT NOT NULL,
    event_type       TEXT NOT NULL,
    -- Event, Retry, Replay or Test.
    kind             TEXT NOT NULL,
    -- 0 for every kind but Retry; n for the n-th automatic retry.
    retry_number     BIGINT NOT NULL,
    -- The request body, byte for byte.
    payload          TEXT NOT NULL,
    -- Scheduled, Succeeded, Failed or Cancelled.
    state            TEXT NOT NULL,
    due_at           BIGINT NOT NULL,
    claimed_until    BIGINT,
    sent_at          BIGINT,
    response_status  BIGINT,
    -- JSON object of the response headers.
    response_headers TEXT,
    -- The response body, truncated.
    response_body    TEXT,
    latency_ms       BIGINT,
    error            TEXT,
    created_at       BIGINT NOT NULL
);
CREATE INDEX webhook_attempts_due ON webhook_attempts (due_at) WHERE state = 'Scheduled';
CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts (endpoint_id, created_at);
CREATE INDEX webhook_attempts_by_realm ON webhook_attempts (realm_id, endpoint_kind, client_id, created_at);
CREATE INDEX webhook_attempts_by_event ON webhook_attempts (event_id);
