//! Sign-in through a browser: the realm session a browser holds (single sign-on), named by a cookie
//! kept as a keyed hash; and the sign-ins sent to external identity providers.

use std::collections::HashSet;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::Error;
use super::users::User;
use crate::kernel::ids::{BrowserSessionId, RealmId, UserId};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct BrowserSession {
    pub id: BrowserSessionId,
    pub realm_id: RealmId,
    pub user_id: UserId,
    pub cookie_hash: String,
    /// `pwd`, and `push` when a phone confirmed the sign-in.
    #[sqlx(try_from = "super::JsonList")]
    pub authentication_methods: Vec<String>,
    /// When the person last typed their credentials: `auth_time`, and what `max_age` is read against.
    #[sqlx(try_from = "super::Millis")]
    pub authenticated_at: DateTime<Utc>,
    pub ip_address: String,
    pub user_agent: Option<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub expires_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub ended_at: Option<DateTime<Utc>>,
    pub end_reason: Option<String>,
    /// The external identity provider the person signed in through, when they did.
    pub identity_provider: Option<String>,
}

impl BrowserSession {
    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        self.ended_at.is_none() && self.expires_at > now
    }
}

const SESSION_COLUMNS: &str = "id, realm_id, user_id, cookie_hash, authentication_methods, authenticated_at, \
     ip_address, user_agent, created_at, expires_at, ended_at, end_reason, identity_provider";

pub async fn insert_session<'c>(db: impl Executor<'c, Database = Any>, session: &BrowserSession) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO browser_sessions (id, realm_id, user_id, cookie_hash, authentication_methods, \
         authenticated_at, ip_address, user_agent, created_at, expires_at, ended_at, end_reason, identity_provider) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(&session.id)
    .bind(&session.realm_id)
    .bind(&session.user_id)
    .bind(&session.cookie_hash)
    .bind(super::to_json_list(&session.authentication_methods))
    .bind(super::millis(session.authenticated_at))
    .bind(&session.ip_address)
    .bind(&session.user_agent)
    .bind(super::millis(session.created_at))
    .bind(super::millis(session.expires_at))
    .bind(super::millis(session.ended_at))
    .bind(&session.end_reason)
    .bind(&session.identity_provider)
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// The realm's browser session whose cookie hashes to `cookie_hash`, ended or not.
pub async fn find_session<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    cookie_hash: &str,
) -> Result<Option<BrowserSession>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {SESSION_COLUMNS} FROM browser_sessions WHERE cookie_hash = $1 AND realm_id = $2"
    )))
    .bind(cookie_hash)
    .bind(realm_id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// A browser session read with its person in one query.
#[derive(sqlx::FromRow)]
struct SessionWithPerson {
    #[sqlx(flatten)]
    session: BrowserSession,
    #[sqlx(flatten)]
    person: super::users::PersonRow,
}

/// The realm's browser session whose cookie hashes to `cookie_hash`, ended or not, with its
/// person: one read for what single sign-on needs.
pub async fn find_session_with_person<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    cookie_hash: &str,
) -> Result<Option<(BrowserSession, User)>, Error> {
    static QUERY: LazyLock<String> = LazyLock::new(|| with_person_where("s.cookie_hash"));
    with_person(db, &QUERY, realm_id, cookie_hash).await
}

/// The realm's browser session `id`, ended or not, with its person: one read for a code's exchange.
pub async fn find_by_id_with_person<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    id: &str,
) -> Result<Option<(BrowserSession, User)>, Error> {
    static QUERY: LazyLock<String> = LazyLock::new(|| with_person_where("s.id"));
    with_person(db, &QUERY, realm_id, id).await
}

/// The query of a realm's browser session with its person, found by `column` (`$1`).
fn with_person_where(column: &str) -> String {
    format!(
        "SELECT {}, {} FROM browser_sessions s JOIN users u ON u.realm_id = s.realm_id AND u.id = s.user_id \
         WHERE {column} = $1 AND s.realm_id = $2",
        super::qualified("s", SESSION_COLUMNS),
        super::users::PERSON_COLUMNS
    )
}

async fn with_person<'c>(
    db: impl Executor<'c, Database = Any>,
    query: &str,
    realm_id: &str,
    key: &str,
) -> Result<Option<(BrowserSession, User)>, Error> {
    let found: Option<SessionWithPerson> =
        sqlx::query_as(sqlx::AssertSqlSafe(query)).bind(key).bind(realm_id).fetch_optional(db).await?;
    Ok(found.map(|row| {
        let person = row.person.into_user(realm_id);
        (row.session, person)
    }))
}

/// Ends a browser session and every client session opened from it; `false` when it had ended.
pub async fn end_session(
    tx: &mut super::Connection,
    id: &str,
    reason: &str,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let done =
        sqlx::query("UPDATE browser_sessions SET ended_at = $2, end_reason = $3 WHERE id = $1 AND ended_at IS NULL")
            .bind(id)
            .bind(super::millis(now))
            .bind(reason)
            .execute(&mut *tx)
            .await?;
    sqlx::query(
        "UPDATE sessions SET ended_at = $2, end_reason = $3 WHERE browser_session_id = $1 AND ended_at IS NULL",
    )
    .bind(id)
    .bind(super::millis(now))
    .bind(reason)
    .execute(&mut *tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Ends every browser session of a person (their password changed): no browser signs them in
/// again without it. Their client sessions keep their own lives.
pub async fn end_sessions_of<'c>(
    db: impl Executor<'c, Database = Any>,
    user_id: &str,
    reason: &str,
    now: DateTime<Utc>,
) -> Result<u64, Error> {
    let done = sqlx::query(
        "UPDATE browser_sessions SET ended_at = $2, end_reason = $3 WHERE user_id = $1 AND ended_at IS NULL",
    )
    .bind(user_id)
    .bind(super::millis(now))
    .bind(reason)
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}

/// Of these browser sessions, those still live (not ended), held until the transaction ends: each
/// row is written, so that on PostgreSQL a sign-out ending one of them waits for the commit (and
/// then ends the client sessions opened meanwhile), or is waited for and seen.
pub async fn hold_live<'c>(db: impl Executor<'c, Database = Any>, ids: &[&str]) -> Result<HashSet<String>, Error> {
    if ids.is_empty() {
        return Ok(HashSet::new());
    }
    let sql = format!(
        "UPDATE browser_sessions SET ended_at = NULL WHERE ended_at IS NULL AND id IN ({}) RETURNING id",
        super::list_placeholders(1, ids.len())
    );
    let mut query = sqlx::query_as::<_, (String,)>(sqlx::AssertSqlSafe(sql));
    for id in ids {
        query = query.bind(id.to_string());
    }
    Ok(query.fetch_all(db).await?.into_iter().map(|(id,)| id).collect())
}

/// Removes browser sessions an hour after they expired or ended (kept that long so that a code
/// they gave is still known when presented late) and sign-ins at external providers that expired.
pub async fn prune<'c>(db: impl Executor<'c, Database = Any> + Copy, now: DateTime<Utc>) -> Result<u64, Error> {
    let an_hour_ago = now - chrono::TimeDelta::hours(1);
    let sessions = sqlx::query("DELETE FROM browser_sessions WHERE expires_at <= $1 OR ended_at <= $1")
        .bind(super::millis(an_hour_ago))
        .execute(db)
        .await?;
    let upstream = sqlx::query("DELETE FROM upstream_sign_ins WHERE expires_at <= $1")
        .bind(super::millis(now))
        .execute(db)
        .await?;
    Ok(sessions.rows_affected() + upstream.rows_affected())
}

/// A sign-in sent to an external identity provider, waiting for the person to come back.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct UpstreamSignIn {
    pub state_hash: String,
    pub realm_id: RealmId,
    pub provider_id: String,
    /// The person connecting an account at a connection provider; `None` for a sign-in.
    pub user_id: Option<String>,
    /// The keyed hash of the cookie that binds it to the browser that started it.
    pub browser_hash: String,
    pub nonce: String,
    /// The PKCE verifier, sealed.
    pub code_verifier: String,
    /// The client's authorization request: a JSON object of its parameters.
    pub request: String,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub expires_at: DateTime<Utc>,
}

const UPSTREAM_COLUMNS: &str =
    "state_hash, realm_id, provider_id, browser_hash, nonce, code_verifier, request, created_at, expires_at, user_id";

pub async fn insert_upstream<'c>(db: impl Executor<'c, Database = Any>, sign_in: &UpstreamSignIn) -> Result<(), Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO upstream_sign_ins ({UPSTREAM_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
    )))
    .bind(&sign_in.state_hash)
    .bind(&sign_in.realm_id)
    .bind(&sign_in.provider_id)
    .bind(&sign_in.browser_hash)
    .bind(&sign_in.nonce)
    .bind(&sign_in.code_verifier)
    .bind(&sign_in.request)
    .bind(super::millis(sign_in.created_at))
    .bind(super::millis(sign_in.expires_at))
    .bind(&sign_in.user_id)
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// Removes and returns the realm's waiting sign-in whose `state` hashes to `state_hash`, in one
/// statement: of two returns with the same `state`, one finds it.
pub async fn take_upstream<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    state_hash: &str,
) -> Result<Option<UpstreamSignIn>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "DELETE FROM upstream_sign_ins WHERE state_hash = $1 AND realm_id = $2 RETURNING {UPSTREAM_COLUMNS}"
    )))
    .bind(state_hash)
    .bind(realm_id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}
