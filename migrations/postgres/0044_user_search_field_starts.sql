-- A search term of one or two characters matches the start of a username, e-mail address, first
-- or last name. Each field in the indexed expression is now preceded by two U+0001 characters: a
-- short term is `LIKE '%' || chr(1) || chr(1) || term || '%'`, for which pg_trgm reads the
-- trigrams of a word starting with the term; a term of three characters or more holds no U+0001
-- and matches inside a field only.
DROP INDEX users_search;

DO $$
DECLARE
    trigrams name := (
        SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_trgm'
    );
BEGIN
    EXECUTE format(
        'CREATE INDEX users_search ON users USING gin ((lower('
        'chr(1) || chr(1) || coalesce(username, '''') || chr(1) || chr(1) || coalesce(email, '''') || '
        'chr(1) || chr(1) || coalesce(first_name, '''') || chr(1) || chr(1) || coalesce(last_name, ''''))) '
        '%I.gin_trgm_ops)',
        trigrams
    );
END
$$;
