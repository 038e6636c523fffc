-- A realm's people are searched through a trigram index instead of a scan of the realm. The
-- indexed expression is the lowered username, e-mail address, first and last name separated by
-- U+0001, which no search term holds, so no match spans two fields; a search is
-- `LIKE '%<term>%'` over it, then the realm. (The realm's id in the expression would narrow the
-- postings to one realm, but its trigrams are in every row of a large realm, and reading their
-- postings cost a search there 9 ms instead of 0.5.)
--
-- pg_trgm is a trusted extension: the owner of the database may create it. Where it is already
-- installed, in whichever schema, that installation's operator class is the one used.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

DO $$
DECLARE
    trigrams name := (
        SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_trgm'
    );
BEGIN
    EXECUTE format(
        'CREATE INDEX users_search ON users USING gin ((lower('
        'coalesce(username, '''') || chr(1) || coalesce(email, '''') || chr(1) || '
        'coalesce(first_name, '''') || chr(1) || coalesce(last_name, ''''))) %I.gin_trgm_ops)',
        trigrams
    );
END
$$;
