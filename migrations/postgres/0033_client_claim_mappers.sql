-- The claims a client adds to its access and ID tokens from a person's attributes, roles, groups,
-- organizations or a fixed value, as a JSON list of mappers.
ALTER TABLE clients ADD COLUMN claim_mappers TEXT NOT NULL DEFAULT '[]';
