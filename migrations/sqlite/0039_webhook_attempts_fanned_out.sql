-- An endpoint's Events view pages through the events fanned out to a place, newest first. This
-- partial index holds the fan-out attempts alone (one per endpoint an event went to), in that
-- order and with every column the page is chosen by, so that a page reads only its own entries.
CREATE INDEX webhook_attempts_fanned_out
    ON webhook_attempts (realm_id, endpoint_kind, client_id, created_at, event_id, event_type)
    WHERE kind = 'Event';
-- Each event of the page is then summed up from its attempts at that place: found by the event and
-- the place, and answered from the index alone.
DROP INDEX webhook_attempts_by_event;
CREATE INDEX webhook_attempts_by_event
    ON webhook_attempts (event_id, realm_id, endpoint_kind, client_id, endpoint_id, kind, state);
