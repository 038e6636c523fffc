//! The people of a realm.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Matching, Page, PageRequest, Scope, Within};
use super::text_enum;
use super::trail::{Place, Placed, ResourceKind};
use super::{Backend, Error, Store};
use crate::kernel::ids::{RealmId, UserId};

text_enum! {
    /// Whether a person may sign in.
    pub enum UserStatus {
        Active,
        Disabled,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct User {
    pub id: UserId,
    pub realm_id: RealmId,
    pub username: String,
    pub email: Option<String>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    #[sqlx(try_from = "super::Flag")]
    pub email_confirmed: bool,
    #[sqlx(try_from = "String")]
    pub status: UserStatus,
    /// Argon2id PHC string; never leaves the service.
    pub password_hash: Option<String>,
    #[sqlx(try_from = "super::Flag")]
    pub must_change_password: bool,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Placed for User {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::User, &self.id, &self.realm_id)
    }
}

pub(super) const COLUMNS: &str = "id, realm_id, username, email, first_name, last_name, email_confirmed, status, password_hash, \
     must_change_password, created_at, updated_at";

/// A person read beside another row in one query (a session's, say): the columns of `users u`
/// prefixed `u_`, read by [`PersonRow`].
pub(super) const PERSON_COLUMNS: &str = "u.id AS u_id, u.username AS u_username, u.email AS u_email, \
     u.first_name AS u_first_name, u.last_name AS u_last_name, u.email_confirmed AS u_email_confirmed, \
     u.status AS u_status, u.password_hash AS u_password_hash, u.must_change_password AS u_must_change_password, \
     u.created_at AS u_created_at, u.updated_at AS u_updated_at";

/// A person as [`PERSON_COLUMNS`] names them; the realm is the joined row's.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub(super) struct PersonRow {
    u_id: UserId,
    u_username: String,
    u_email: Option<String>,
    u_first_name: Option<String>,
    u_last_name: Option<String>,
    #[sqlx(try_from = "super::Flag")]
    u_email_confirmed: bool,
    #[sqlx(try_from = "String")]
    u_status: UserStatus,
    u_password_hash: Option<String>,
    #[sqlx(try_from = "super::Flag")]
    u_must_change_password: bool,
    #[sqlx(try_from = "super::Millis")]
    u_created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    u_updated_at: DateTime<Utc>,
}

impl PersonRow {
    pub(super) fn into_user(self, realm_id: &str) -> User {
        User {
            id: self.u_id,
            realm_id: RealmId::known(realm_id),
            username: self.u_username,
            email: self.u_email,
            first_name: self.u_first_name,
            last_name: self.u_last_name,
            email_confirmed: self.u_email_confirmed,
            status: self.u_status,
            password_hash: self.u_password_hash,
            must_change_password: self.u_must_change_password,
            created_at: self.u_created_at,
            updated_at: self.u_updated_at,
        }
    }
}

pub const LISTING: Listing = Listing {
    table: "users",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["username", "email", "first_name", "last_name"],
    status: Some("status"),
    sortable: &[("username", "username"), ("email", "email"), ("updatedAt", "updated_at"), ("createdAt", "created_at")],
};

pub async fn find<'c>(db: impl Executor<'c, Database = Any>, realm_id: &str, id: &str) -> Result<Option<User>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM users WHERE realm_id = $1 AND id = $2")))
        .bind(realm_id)
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// The person who signs in as `login`: a username, or an e-mail address (case-insensitive).
pub async fn find_by_login<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    login: &str,
) -> Result<Option<User>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM users WHERE realm_id = $1 AND (username = $2 OR lower(email) = lower($2)) \
         ORDER BY CASE WHEN username = $2 THEN 0 ELSE 1 END LIMIT 1"
    )))
    .bind(realm_id)
    .bind(login)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Up to `limit` password hashes of the realm that do not start with `own_prefix`: those imported
/// from another provider and not replaced yet.
pub async fn imported_hashes<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    own_prefix: &str,
    limit: i64,
) -> Result<Vec<String>, Error> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT password_hash FROM users WHERE realm_id = $1 AND password_hash IS NOT NULL \
         AND substr(password_hash, 1, length($2)) <> $2 LIMIT $3",
    )
    .bind(realm_id)
    .bind(own_prefix)
    .bind(limit)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(hash,)| hash).collect())
}

/// Which of username and e-mail another person of the realm already has.
pub async fn taken<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    except_id: &str,
    username: &str,
    email: Option<&str>,
) -> Result<(bool, bool), Error> {
    let (username_taken, email_taken): (i64, i64) = sqlx::query_as(
        "SELECT COALESCE(SUM(CASE WHEN username = $3 THEN 1 ELSE 0 END), 0), \
                COALESCE(SUM(CASE WHEN lower(email) = lower($4) THEN 1 ELSE 0 END), 0) \
         FROM users WHERE realm_id = $1 AND id <> $2",
    )
    .bind(realm_id)
    .bind(except_id)
    .bind(username)
    .bind(email)
    .fetch_one(db)
    .await?;
    Ok((username_taken > 0, email_taken > 0))
}

/// Inserts the person; `false` when the username is taken in the realm.
pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, user: &User) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO users (id, realm_id, username, email, first_name, last_name, email_confirmed, status, \
         password_hash, must_change_password, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (realm_id, username) DO NOTHING",
    )
    .bind(&user.id)
    .bind(&user.realm_id)
    .bind(&user.username)
    .bind(&user.email)
    .bind(&user.first_name)
    .bind(&user.last_name)
    .bind(user.email_confirmed)
    .bind(user.status.as_str())
    .bind(&user.password_hash)
    .bind(user.must_change_password)
    .bind(super::millis(user.created_at))
    .bind(super::millis(user.updated_at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Writes every changeable field, the password hash included.
pub async fn update<'c>(db: impl Executor<'c, Database = Any>, user: &User) -> Result<(), Error> {
    sqlx::query(
        "UPDATE users SET username = $3, email = $4, first_name = $5, last_name = $6, email_confirmed = $7, \
         status = $8, password_hash = $9, must_change_password = $10, updated_at = $11 \
         WHERE realm_id = $1 AND id = $2",
    )
    .bind(&user.realm_id)
    .bind(&user.id)
    .bind(&user.username)
    .bind(&user.email)
    .bind(&user.first_name)
    .bind(&user.last_name)
    .bind(user.email_confirmed)
    .bind(user.status.as_str())
    .bind(&user.password_hash)
    .bind(user.must_change_password)
    .bind(super::millis(user.updated_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// The account must change its password at next sign-in (its password was exposed).
pub async fn require_password_change<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    sqlx::query("UPDATE users SET must_change_password = $2, updated_at = $3 WHERE id = $1")
        .bind(id)
        .bind(true)
        .bind(super::millis(now))
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// Inserts the people in one statement.
pub async fn insert_many<'c>(db: impl Executor<'c, Database = Any>, users: &[User]) -> Result<(), Error> {
    if users.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO users (id, realm_id, username, email, first_name, last_name, email_confirmed, status, \
         password_hash, must_change_password, created_at, updated_at) VALUES {}",
        super::values_placeholders(users.len(), 12)
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for user in users {
        query = query
            .bind(user.id.to_string())
            .bind(user.realm_id.to_string())
            .bind(user.username.clone())
            .bind(user.email.clone())
            .bind(user.first_name.clone())
            .bind(user.last_name.clone())
            .bind(user.email_confirmed)
            .bind(user.status.as_str())
            .bind(user.password_hash.clone())
            .bind(user.must_change_password)
            .bind(super::millis(user.created_at))
            .bind(super::millis(user.updated_at));
    }
    query.execute(db).await?;
    Ok(())
}

/// Replaces the person's password hash with `from`'s successor `to`, unless it changed meanwhile:
/// an imported hash giving way to the service's own once the password is known to match it.
pub async fn replace_password_hash<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    from: &str,
    to: &str,
) -> Result<bool, Error> {
    let done = sqlx::query("UPDATE users SET password_hash = $3 WHERE id = $1 AND password_hash = $2")
        .bind(id)
        .bind(from)
        .bind(to)
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, realm_id: &str, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM users WHERE realm_id = $1 AND id = $2")
        .bind(realm_id)
        .bind(id)
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// A page of a realm's users, optionally only those whose e-mail is (or is not) confirmed.
pub async fn page(
    store: &Store,
    realm_id: &str,
    email_confirmed: Option<bool>,
    request: &PageRequest,
) -> Result<Page<User>, Error> {
    let scope = Scope::of("realm_id", realm_id).and_given("email_confirmed", email_confirmed);
    let matching = request
        .search
        .as_deref()
        .map_or(Matching::Scan(Within::Anywhere), |term| searched(store.backend(), realm_id, term));
    page::fetch_matching(store.pool(), &LISTING, &scope, request, &matching).await
}

/// The people `user_search` (SQLite) finds. `CROSS JOIN` keeps the full-text table the outer
/// loop: the planner would otherwise walk the realm's people and run the full-text query again
/// for each of them.
const SEARCH_JOIN: &str = "user_search CROSS JOIN user_search_keys ON user_search_keys.search_key = user_search.rowid \
     CROSS JOIN users ON users.id = user_search_keys.user_id";

/// What `users_search` (PostgreSQL) indexes: the lowered searched fields, each after
/// [`FIELD_START`].
const SEARCH_EXPRESSION: &str = "lower(chr(1) || chr(1) || coalesce(username, '') || chr(1) || chr(1) || \
     coalesce(email, '') || chr(1) || chr(1) || coalesce(first_name, '') || chr(1) || chr(1) || \
     coalesce(last_name, ''))";

/// What precedes each searched field in both indexes. No search term holds it, so no match spans
/// two fields, and a term of fewer than three characters, after it, is three characters long: a
/// trigram at the start of a field.
const FIELD_START: &str = "\u{1}\u{1}";

/// How the realm's people holding `term` in a searched field are found: through the trigram index
/// of the backend. A term of three characters or more matches anywhere in a field; a shorter one
/// has no trigram of its own and would match nearly everyone anywhere, so it matches the start of
/// a field, after [`FIELD_START`].
fn searched<'a>(backend: Backend, realm_id: &str, term: &str) -> Matching<'a> {
    if term.chars().any(char::is_control) {
        return Matching::Scan(Within::Anywhere);
    }
    let (within, indexed) = if term.chars().count() < 3 {
        (Within::Start, format!("{FIELD_START}{term}"))
    } else {
        (Within::Anywhere, term.to_owned())
    };
    match backend {
        Backend::Postgres => Matching::Like {
            expression: SEARCH_EXPRESSION,
            pattern: format!("%{}%", page::escape_like(&indexed.to_lowercase())),
        },
        Backend::Sqlite => Matching::Match {
            from: SEARCH_JOIN,
            table: "user_search",
            query: format!("realm : {} AND words : {}", phrase(&format!("[{realm_id}]")), phrase(&indexed)),
            within,
        },
    }
}

/// `text` as an FTS5 phrase: in double quotes, its own doubled.
fn phrase(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}
