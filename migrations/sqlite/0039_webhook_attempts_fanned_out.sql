-- An endpoint's Events view pages through the events fanned out to a place, newest first. This
-- partial index holds the fan-out attempts alone (one per endpoint an event went to), in that
-- order and with every column the page is chosen by, so that a page reads only its own entries.
CREATE INDEX webhook_attempts_fanned_out
    ON webhook_attempts (realm_id, endpoint_kind, client_id, created_at, event_id, event_type)
    WHERE kind = 'Event';
