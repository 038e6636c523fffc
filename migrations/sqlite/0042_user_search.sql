-- A realm's people are searched through a trigram index instead of a scan of the realm: a term of
-- three characters or more is looked up as a phrase of its trigrams, which is a case-insensitive
-- substring match of the username, e-mail address, first or last name.
--
-- The index is an FTS5 table keyed by `user_search_keys.search_key` rather than by the people's
-- own rowids (which VACUUM may renumber). It keeps its own copy of the text, as FTS5 tables always
-- have, so that the `sqlite3` of any distribution since 3.34 can still write to `users`. Its
-- `realm` column holds the realm id in brackets, so a search of one realm reads only that realm's
-- postings; its `words` column holds the four searched fields separated by U+0001, which no
-- search term contains, so no match spans two fields. Triggers keep it in step with `users`.
CREATE TABLE user_search_keys (
    search_key  INTEGER PRIMARY KEY,
    user_id     TEXT NOT NULL UNIQUE
);

CREATE VIRTUAL TABLE user_search USING fts5 (realm, words, tokenize = 'trigram');

CREATE TRIGGER user_search_on_insert AFTER INSERT ON users BEGIN
    INSERT INTO user_search_keys (user_id) VALUES (new.id);
    INSERT INTO user_search (rowid, realm, words) VALUES (
        last_insert_rowid(),
        '[' || new.realm_id || ']',
        coalesce(new.username, '') || char(1) || coalesce(new.email, '') || char(1)
            || coalesce(new.first_name, '') || char(1) || coalesce(new.last_name, '')
    );
END;

CREATE TRIGGER user_search_on_update AFTER UPDATE OF username, email, first_name, last_name ON users BEGIN
    UPDATE user_search SET
        realm = '[' || new.realm_id || ']',
        words = coalesce(new.username, '') || char(1) || coalesce(new.email, '') || char(1)
            || coalesce(new.first_name, '') || char(1) || coalesce(new.last_name, '')
    WHERE rowid = (SELECT search_key FROM user_search_keys WHERE user_id = new.id);
END;

CREATE TRIGGER user_search_on_delete AFTER DELETE ON users BEGIN
    DELETE FROM user_search WHERE rowid = (SELECT search_key FROM user_search_keys WHERE user_id = old.id);
    DELETE FROM user_search_keys WHERE user_id = old.id;
END;

INSERT INTO user_search_keys (user_id) SELECT id FROM users ORDER BY realm_id, created_at;

INSERT INTO user_search (rowid, realm, words)
    SELECT k.search_key, '[' || u.realm_id || ']',
           coalesce(u.username, '') || char(1) || coalesce(u.email, '') || char(1)
               || coalesce(u.first_name, '') || char(1) || coalesce(u.last_name, '')
    FROM user_search_keys k JOIN users u ON u.id = k.user_id;
