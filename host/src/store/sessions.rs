//! Sign-in sessions, their refresh tokens, and revoked access tokens.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::trail::{Place, Placed, ResourceKind};
use super::users::User;
use super::{Error, Store};
use crate::kernel::ids::{BrowserSessionId, ClientId, RealmId, RefreshTokenId, SessionId, UserId};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Session {
    pub id: SessionId,
    pub realm_id: RealmId,
    pub client_id: ClientId,
    pub user_id: UserId,
    pub ip_address: String,
    pub user_agent: Option<String>,
    /// `pwd`, …
    #[sqlx(try_from = "super::JsonList")]
    pub authentication_methods: Vec<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub last_active_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub expires_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub ended_at: Option<DateTime<Utc>>,
    pub end_reason: Option<String>,
    /// The browser's sign-in this session was opened from, for sessions of the authorization code
    /// flow: ending it ends this session too.
    pub browser_session_id: Option<BrowserSessionId>,
}

impl Placed for Session {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::Session, &self.id, &self.realm_id).of_client(&self.client_id)
    }
}

impl Session {
    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        self.ended_at.is_none() && self.expires_at > now
    }
}

const COLUMNS: &str = "id, realm_id, client_id, user_id, ip_address, user_agent, authentication_methods, \
     created_at, last_active_at, expires_at, ended_at, end_reason, browser_session_id";

pub const LISTING: Listing = Listing {
    table: "sessions",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["client_id", "user_id", "ip_address", "user_agent"],
    status: None,
    sortable: &[("lastActiveAt", "last_active_at"), ("expiresAt", "expires_at"), ("createdAt", "created_at")],
};

/// Inserts a session (its id is fresh).
pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, session: &Session) -> Result<(), Error> {
    insert_new_rows(db, &[session]).await.map(drop)
}

/// Inserts sessions in one statement (at most [`super::ROWS_PER_STATEMENT`]), each unless one with
/// its id is there already: answers the ids inserted.
pub async fn insert_new_rows<'c>(
    db: impl Executor<'c, Database = Any>,
    sessions: &[&Session],
) -> Result<Vec<String>, Error> {
    let sql = format!(
        "INSERT INTO sessions (id, realm_id, client_id, user_id, ip_address, user_agent, authentication_methods, \
         created_at, last_active_at, expires_at, ended_at, end_reason, browser_session_id) VALUES {} \
         ON CONFLICT (id) DO NOTHING RETURNING id",
        super::values_placeholders(sessions.len(), 13)
    );
    let mut query = sqlx::query_as::<_, (String,)>(sqlx::AssertSqlSafe(sql));
    for session in sessions {
        query = query
            .bind(session.id.clone())
            .bind(session.realm_id.clone())
            .bind(session.client_id.clone())
            .bind(session.user_id.clone())
            .bind(session.ip_address.clone())
            .bind(session.user_agent.clone())
            .bind(super::to_json_list(&session.authentication_methods))
            .bind(super::millis(session.created_at))
            .bind(super::millis(session.last_active_at))
            .bind(super::millis(session.expires_at))
            .bind(super::millis(session.ended_at))
            .bind(session.end_reason.clone())
            .bind(session.browser_session_id.clone());
    }
    Ok(query.fetch_all(db).await?.into_iter().map(|(id,)| id).collect())
}

pub async fn find<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<Option<Session>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM sessions WHERE id = $1")))
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// The session `id` of `realm_id`, ended or not, with its person: one read where tokens are
/// issued from a session.
pub async fn find_with_person<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    id: &str,
) -> Result<Option<(Session, User)>, Error> {
    static QUERY: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {} FROM sessions s JOIN users u ON u.realm_id = s.realm_id AND u.id = s.user_id \
             WHERE s.id = $1 AND s.realm_id = $2",
            *SESSION_AND_PERSON_COLUMNS
        )
    });
    let found: Option<SessionPersonRow> =
        sqlx::query_as(sqlx::AssertSqlSafe(QUERY.as_str())).bind(id).bind(realm_id).fetch_optional(db).await?;
    Ok(found.map(|row| {
        let user = row.person.into_user(&row.session.realm_id);
        (row.session, user)
    }))
}

/// Ends a live session, and the browser session it was opened from (which then signs no client in
/// again); `false` when it had already ended.
pub async fn end(tx: &mut super::Connection, id: &str, reason: &str, now: DateTime<Utc>) -> Result<bool, Error> {
    // The browser's session is written first, then the session: the order in which the write
    // queue holds a browser's session and then opens a session in it. In the other order, ending
    // a session whose code is presented again at that moment deadlocks with the queue's commit on
    // PostgreSQL (each waits on the row the other wrote).
    sqlx::query(
        "UPDATE browser_sessions SET ended_at = $2, end_reason = $3 \
         WHERE id = (SELECT browser_session_id FROM sessions WHERE id = $1) AND ended_at IS NULL",
    )
    .bind(id)
    .bind(super::millis(now))
    .bind(reason)
    .execute(&mut *tx)
    .await?;
    end_alone(tx, id, reason, now).await
}

/// Ends the session `id` alone: its tokens go inactive, while the browser's sign-in it was opened
/// from, and the person's sessions at other clients, stay (what revoking a refresh token does).
pub async fn end_alone(tx: &mut super::Connection, id: &str, reason: &str, now: DateTime<Utc>) -> Result<bool, Error> {
    let done = sqlx::query("UPDATE sessions SET ended_at = $2, end_reason = $3 WHERE id = $1 AND ended_at IS NULL")
        .bind(id)
        .bind(super::millis(now))
        .bind(reason)
        .execute(&mut *tx)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Ends the person's live sessions at the client, leaving their browser signed in to the realm;
/// the number ended.
pub async fn end_at_client<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    user_id: &str,
    client_id: &str,
    reason: &str,
    now: DateTime<Utc>,
) -> Result<u64, Error> {
    let done = sqlx::query(
        "UPDATE sessions SET ended_at = $4, end_reason = $5 \
         WHERE realm_id = $1 AND user_id = $2 AND client_id = $3 AND ended_at IS NULL",
    )
    .bind(realm_id)
    .bind(user_id)
    .bind(client_id)
    .bind(super::millis(now))
    .bind(reason)
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RefreshToken {
    pub id: RefreshTokenId,
    pub session_id: SessionId,
    pub token_hash: String,
    #[sqlx(try_from = "super::JsonList")]
    pub scopes: Vec<String>,
    pub resource: Option<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub expires_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub exchanged_at: Option<DateTime<Utc>>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub revoked_at: Option<DateTime<Utc>>,
    /// The thumbprint of the DPoP key the token is bound to (RFC 9449 §5): only a proof signed
    /// with that key refreshes it.
    pub dpop_jkt: Option<String>,
}

const REFRESH_COLUMNS: &str =
    "id, session_id, token_hash, scopes, resource, created_at, expires_at, exchanged_at, revoked_at, dpop_jkt";

pub async fn insert_refresh<'c>(db: impl Executor<'c, Database = Any>, token: &RefreshToken) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO refresh_tokens (id, session_id, token_hash, scopes, resource, created_at, expires_at, \
         exchanged_at, revoked_at, dpop_jkt) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&token.id)
    .bind(&token.session_id)
    .bind(&token.token_hash)
    .bind(super::to_json_list(&token.scopes))
    .bind(&token.resource)
    .bind(super::millis(token.created_at))
    .bind(super::millis(token.expires_at))
    .bind(super::millis(token.exchanged_at))
    .bind(super::millis(token.revoked_at))
    .bind(&token.dpop_jkt)
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

pub async fn find_refresh<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<Option<RefreshToken>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {REFRESH_COLUMNS} FROM refresh_tokens WHERE id = $1")))
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// Marks every listed refresh token exchanged that was not yet; the ids it marked. (A batch holds at
/// most a few hundred ids, well within both backends' parameter limits.)
pub async fn mark_all_exchanged<'c>(
    db: impl Executor<'c, Database = Any>,
    ids: &[&str],
    now: DateTime<Utc>,
) -> Result<std::collections::HashSet<String>, Error> {
    let sql = format!(
        "UPDATE refresh_tokens SET exchanged_at = $1 WHERE exchanged_at IS NULL AND id IN ({}) RETURNING id",
        super::list_placeholders(2, ids.len())
    );
    let mut query = sqlx::query_as::<_, (String,)>(sqlx::AssertSqlSafe(sql)).bind(super::millis(now));
    for id in ids {
        query = query.bind(id.to_string());
    }
    Ok(query.fetch_all(db).await?.into_iter().map(|(id,)| id).collect())
}

/// Inserts refresh tokens in one statement.
pub async fn insert_refresh_rows<'c>(
    db: impl Executor<'c, Database = Any>,
    tokens: &[&RefreshToken],
) -> Result<(), Error> {
    let sql = format!(
        "INSERT INTO refresh_tokens (id, session_id, token_hash, scopes, resource, created_at, expires_at, \
         exchanged_at, revoked_at, dpop_jkt) VALUES {}",
        super::values_placeholders(tokens.len(), 10)
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for token in tokens {
        query = query
            .bind(token.id.clone())
            .bind(token.session_id.clone())
            .bind(token.token_hash.clone())
            .bind(super::to_json_list(&token.scopes))
            .bind(token.resource.clone())
            .bind(super::millis(token.created_at))
            .bind(super::millis(token.expires_at))
            .bind(super::millis(token.exchanged_at))
            .bind(super::millis(token.revoked_at))
            .bind(token.dpop_jkt.clone());
    }
    query.execute(db).await.map(|_| ()).map_err(Error::from)
}

/// Records the activity of several sessions at once.
pub async fn touch_all<'c>(
    db: impl Executor<'c, Database = Any>,
    ids: &[&str],
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let sql =
        format!("UPDATE sessions SET last_active_at = $1 WHERE id IN ({})", super::list_placeholders(2, ids.len()));
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(super::millis(now));
    for id in ids {
        query = query.bind(id.to_string());
    }
    query.execute(db).await.map(|_| ()).map_err(Error::from)
}

pub async fn revoke_refresh<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    sqlx::query("UPDATE refresh_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL")
        .bind(id)
        .bind(super::millis(now))
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// Records an access token revoked before its expiry.
pub async fn revoke_access<'c>(
    db: impl Executor<'c, Database = Any>,
    jti: &str,
    realm_id: &str,
    now: DateTime<Utc>,
    expires_at: DateTime<Utc>,
) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO revoked_tokens (jti, realm_id, revoked_at, expires_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (jti) DO NOTHING",
    )
    .bind(jti)
    .bind(realm_id)
    .bind(super::millis(now))
    .bind(super::millis(expires_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

pub async fn is_access_revoked<'c>(db: impl Executor<'c, Database = Any>, jti: &str) -> Result<bool, Error> {
    let found: Option<(String,)> =
        sqlx::query_as("SELECT jti FROM revoked_tokens WHERE jti = $1").bind(jti).fetch_optional(db).await?;
    Ok(found.is_some())
}

/// Every revocation of a token not yet expired: jti and expiry.
pub async fn live_revocations<'c>(
    db: impl Executor<'c, Database = Any>,
    now: DateTime<Utc>,
) -> Result<Vec<(String, DateTime<Utc>)>, Error> {
    let rows: Vec<(String, super::Millis)> =
        sqlx::query_as("SELECT jti, expires_at FROM revoked_tokens WHERE expires_at > $1")
            .bind(super::millis(now))
            .fetch_all(db)
            .await?;
    Ok(rows.into_iter().map(|(jti, expires_at)| (jti, expires_at.into())).collect())
}

/// Removes revocations of tokens that have expired anyway, and refresh tokens past expiry.
pub async fn prune<'c>(db: impl Executor<'c, Database = Any> + Copy, now: DateTime<Utc>) -> Result<u64, Error> {
    let revoked =
        sqlx::query("DELETE FROM revoked_tokens WHERE expires_at <= $1").bind(super::millis(now)).execute(db).await?;
    let refresh =
        sqlx::query("DELETE FROM refresh_tokens WHERE expires_at <= $1").bind(super::millis(now)).execute(db).await?;
    let console =
        sqlx::query("DELETE FROM console_sessions WHERE expires_at <= $1").bind(super::millis(now)).execute(db).await?;
    Ok(revoked.rows_affected() + refresh.rows_affected() + console.rows_affected())
}

/// The session columns and its person's, for a query joining `sessions s` and `users u`.
static SESSION_AND_PERSON_COLUMNS: LazyLock<String> =
    LazyLock::new(|| format!("{}, {}", super::qualified("s", COLUMNS), super::users::PERSON_COLUMNS));

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
struct SessionPersonRow {
    #[sqlx(flatten)]
    session: Session,
    #[sqlx(flatten)]
    person: super::users::PersonRow,
}

/// The sessions with these ids that exist, each with its person, in one query.
pub async fn find_all_with_person<'c>(
    db: impl Executor<'c, Database = Any>,
    ids: &[&str],
) -> Result<Vec<(Session, User)>, Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT {} FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id IN ({})",
        *SESSION_AND_PERSON_COLUMNS,
        super::list_placeholders(1, ids.len())
    );
    let mut query = sqlx::query_as::<_, SessionPersonRow>(sqlx::AssertSqlSafe(sql));
    for id in ids {
        query = query.bind(*id);
    }
    Ok(query
        .fetch_all(db)
        .await?
        .into_iter()
        .map(|row| {
            let user = row.person.into_user(&row.session.realm_id);
            (row.session, user)
        })
        .collect())
}

/// A refresh token with its session and the session's person, read together.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
struct RefreshGrantRow {
    t_id: RefreshTokenId,
    t_session_id: SessionId,
    t_token_hash: String,
    #[sqlx(try_from = "super::JsonList")]
    t_scopes: Vec<String>,
    t_resource: Option<String>,
    #[sqlx(try_from = "super::Millis")]
    t_created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    t_expires_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    t_exchanged_at: Option<DateTime<Utc>>,
    #[sqlx(try_from = "super::OptionalMillis")]
    t_revoked_at: Option<DateTime<Utc>>,
    t_dpop_jkt: Option<String>,
    #[sqlx(flatten)]
    session: Session,
    #[sqlx(flatten)]
    person: super::users::PersonRow,
}

/// The refresh token with this id, its session and the session's person, in one query.
pub async fn find_refresh_grant<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
) -> Result<Option<(RefreshToken, Session, User)>, Error> {
    let row: Option<RefreshGrantRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT t.id AS t_id, t.session_id AS t_session_id, t.token_hash AS t_token_hash, t.scopes AS t_scopes, \
         t.resource AS t_resource, t.created_at AS t_created_at, t.expires_at AS t_expires_at, \
         t.exchanged_at AS t_exchanged_at, t.revoked_at AS t_revoked_at, t.dpop_jkt AS t_dpop_jkt, \
         {} \
         FROM refresh_tokens t JOIN sessions s ON s.id = t.session_id JOIN users u ON u.id = s.user_id \
         WHERE t.id = $1",
        *SESSION_AND_PERSON_COLUMNS
    )))
    .bind(id)
    .fetch_optional(db)
    .await?;
    Ok(row.map(|row| {
        let token = RefreshToken {
            id: row.t_id,
            session_id: row.t_session_id,
            token_hash: row.t_token_hash,
            scopes: row.t_scopes,
            resource: row.t_resource,
            created_at: row.t_created_at,
            expires_at: row.t_expires_at,
            exchanged_at: row.t_exchanged_at,
            revoked_at: row.t_revoked_at,
            dpop_jkt: row.t_dpop_jkt,
        };
        let user = row.person.into_user(&row.session.realm_id);
        (token, row.session, user)
    }))
}

/// Which open sessions of a realm a page shows.
#[derive(Debug, Clone, Default)]
pub struct SessionFilter<'a> {
    pub user_id: Option<&'a str>,
    pub client_id: Option<&'a str>,
}

/// A page of a realm's sessions open at `now`.
pub async fn page(
    store: &Store,
    realm_id: &str,
    now: DateTime<Utc>,
    filter: SessionFilter<'_>,
    request: &PageRequest,
) -> Result<Page<Session>, Error> {
    let scope = Scope::of("realm_id", realm_id)
        .and("expires_at >", now)
        .and("COALESCE(ended_at, 0) =", 0)
        .and_given("user_id", filter.user_id)
        .and_given("client_id", filter.client_id);
    page::fetch(store.pool(), &LISTING, &scope, request).await
}
