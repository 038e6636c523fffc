-- The web origins whose browser code may call the token and revocation endpoints for a client
-- (CORS), as a JSON list of `scheme://host[:port]`.
ALTER TABLE clients ADD COLUMN allowed_origins TEXT NOT NULL DEFAULT '[]';
