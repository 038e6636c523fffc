-- Clients known by a metadata document: their client_id is the https address of a JSON document
-- describing them, which the service fetches instead of taking a registration.

-- Whether the realm admits such clients, and from which hosts (a JSON list of host names,
-- `*.domain` patterns or `*`).
ALTER TABLE realms ADD COLUMN client_id_metadata_documents INTEGER NOT NULL DEFAULT 0;
ALTER TABLE realms ADD COLUMN metadata_document_hosts TEXT NOT NULL DEFAULT '[]';

-- Until when the stored copy of a client's metadata document is used without fetching it again.
ALTER TABLE clients ADD COLUMN document_fresh_until BIGINT;
