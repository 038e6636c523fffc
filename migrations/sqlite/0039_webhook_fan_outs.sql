-- One row per event and place it was fanned out to (a realm's endpoints, or one client's), written
-- in the fan-out's transaction. An endpoint's Events view pages and counts these rows, one per
-- event, rather than de-duplicating the fan-out attempts (one per endpoint) on every request.
CREATE TABLE webhook_fan_outs (
    event_id      TEXT NOT NULL,
    realm_id      TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    endpoint_kind TEXT NOT NULL,
    client_id     TEXT,
    event_type    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    FOREIGN KEY (realm_id, client_id) REFERENCES clients (realm_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_fan_outs_by_place
    ON webhook_fan_outs (realm_id, endpoint_kind, client_id, created_at, event_id, event_type);
INSERT INTO webhook_fan_outs (event_id, realm_id, endpoint_kind, client_id, event_type, created_at)
    SELECT DISTINCT event_id, realm_id, endpoint_kind, client_id, event_type, created_at
    FROM webhook_attempts WHERE kind = 'Event';
-- Each event of a page is then summed up from its attempts at that place: found by the event and
-- the place, and answered from the index alone.
DROP INDEX webhook_attempts_by_event;
CREATE INDEX webhook_attempts_by_event
    ON webhook_attempts (event_id, realm_id, endpoint_kind, client_id, endpoint_id, kind, state);
