-- A search term of one or two characters matches the start of a username, e-mail address, first
-- or last name, and is looked up in the trigram index like a longer term. Each field is now
-- preceded by two U+0001 characters, so the trigrams `\x01\x01a` and `\x01ab` name the fields that
-- start with `a` and with `ab`; a term of three characters or more still holds no U+0001 and
-- matches inside a field only.
DROP TRIGGER user_search_on_insert;
DROP TRIGGER user_search_on_update;

CREATE TRIGGER user_search_on_insert AFTER INSERT ON users BEGIN
    INSERT INTO user_search_keys (user_id) VALUES (new.id);
    INSERT INTO user_search (rowid, realm, words) VALUES (
        last_insert_rowid(),
        '[' || new.realm_id || ']',
        char(1, 1) || coalesce(new.username, '') || char(1, 1) || coalesce(new.email, '')
            || char(1, 1) || coalesce(new.first_name, '') || char(1, 1) || coalesce(new.last_name, '')
    );
END;

CREATE TRIGGER user_search_on_update AFTER UPDATE OF username, email, first_name, last_name ON users BEGIN
    UPDATE user_search SET
        realm = '[' || new.realm_id || ']',
        words = char(1, 1) || coalesce(new.username, '') || char(1, 1) || coalesce(new.email, '')
            || char(1, 1) || coalesce(new.first_name, '') || char(1, 1) || coalesce(new.last_name, '')
    WHERE rowid = (SELECT search_key FROM user_search_keys WHERE user_id = new.id);
END;

DELETE FROM user_search;

INSERT INTO user_search (rowid, realm, words)
    SELECT k.search_key, '[' || u.realm_id || ']',
           char(1, 1) || coalesce(u.username, '') || char(1, 1) || coalesce(u.email, '')
               || char(1, 1) || coalesce(u.first_name, '') || char(1, 1) || coalesce(u.last_name, '')
    FROM user_search_keys k JOIN users u ON u.id = k.user_id;
