-- The addresses and networks (CIDR) a client may ask the token endpoint from, as a JSON list;
-- empty allows every address.
ALTER TABLE clients ADD COLUMN allowed_ips TEXT NOT NULL DEFAULT '[]';
