-- An endpoint's delivery history is listed within its place (realm, kind, client) and counted for
-- its pagination: with the endpoint in the same index, the count reads the index alone instead of
-- every attempt of the place.
CREATE INDEX webhook_attempts_by_place_and_endpoint
    ON webhook_attempts (realm_id, endpoint_kind, client_id, endpoint_id, created_at);
