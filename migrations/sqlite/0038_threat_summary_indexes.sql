-- The attack-protection summary sums an account's incidents of a period by day, kind and severity,
-- and counts its blocked sources by country and network. These indexes hold every column those
-- two queries read, so that they read the indexes alone, not the rows.
CREATE INDEX threat_incidents_summed
    ON threat_incidents (account_id, started_at, kind, severity, realm_id, client_id, refused_attempts,
                         blocked_sources, protected_accounts, exposed_passwords);
CREATE INDEX threat_measures_by_origin
    ON threat_measures (account_id, kind, created_at, incident_id, country, network);
