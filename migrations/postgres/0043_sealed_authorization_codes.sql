-- An authorization code now carries its own grant, sealed; its exchange opens the client session
-- the code names, and that row makes it single use. Codes are no longer stored.
DROP TABLE authorization_codes;
