-- What an account sets on the deployment it is served by (/api/v1/dedicated/instance): the weekly
-- maintenance window it expects (JSON: weekday, startTime in UTC, durationMinutes; NULL for none)
-- and the networks its admin API credentials may be used from (a JSON list; empty: anywhere).
CREATE TABLE account_instance_settings (
    account_id          TEXT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    maintenance_window  TEXT,
    admin_networks      TEXT NOT NULL DEFAULT '[]',
    updated_at          BIGINT NOT NULL
);
