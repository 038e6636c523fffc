-- People are found by e-mail address case-insensitively (a sign-in by e-mail, an import checking
-- its rows): without this index each such lookup read every person of the realm.
CREATE INDEX users_by_email ON users (realm_id, lower(email));
