-- Counting a realm's failed sign-ins by the hour and over a week, for the notification of an
-- unusual rate of failures.
CREATE INDEX event_outbox_by_type ON event_outbox (event_type, created_at);
