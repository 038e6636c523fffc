//! Capture endpoints and the requests they recorded.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::Error;
use super::page::{self, Listing, Page, PageRequest, Scope};
use super::{Backend, Store};
use crate::kernel::ids::{AccountId, CaptureId};

/// A temporary address recording the requests it receives.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Capture {
    pub id: CaptureId,
    pub account_id: AccountId,
    pub token: String,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub expires_at: DateTime<Utc>,
}

const CAPTURE_COLUMNS: &str = "id, account_id, token, created_at, expires_at";

pub const CAPTURE_LISTING: Listing = Listing {
    table: "webhook_captures",
    columns: CAPTURE_COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &[],
    status: None,
    sortable: &[("createdAt", "created_at"), ("expiresAt", "expires_at")],
};

/// One request a capture recorded.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CapturedRequest {
    pub id: String,
    pub capture_id: CaptureId,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub headers: String,
    pub body: String,
    pub body_size: i64,
    pub source_ip: String,
    #[sqlx(try_from = "super::Millis")]
    pub received_at: DateTime<Utc>,
}

const REQUEST_COLUMNS: &str = "id, capture_id, method, path, query, headers, body, body_size, source_ip, received_at";

pub const REQUEST_LISTING: Listing = Listing {
    table: "webhook_captured_requests",
    columns: REQUEST_COLUMNS,
    created: "received_at",
    tie_breaker: "id",
    search: &["method", "path", "body"],
    status: None,
    sortable: &[("receivedAt", "received_at")],
};

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, capture: &Capture) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO webhook_captures (id, account_id, token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&capture.id)
    .bind(&capture.account_id)
    .bind(&capture.token)
    .bind(super::millis(capture.created_at))
    .bind(super::millis(capture.expires_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// The account's capture with this id, unless it expired before `now`.
pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    id: &str,
    now: DateTime<Utc>,
) -> Result<Option<Capture>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {CAPTURE_COLUMNS} FROM webhook_captures WHERE id = $1 AND account_id = $2 AND expires_at > $3"
    )))
    .bind(id)
    .bind(account_id)
    .bind(super::millis(now))
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// The capture listening at `token`, unless it expired before `now`.
pub async fn find_by_token<'c>(
    db: impl Executor<'c, Database = Any>,
    token: &str,
    now: DateTime<Utc>,
) -> Result<Option<Capture>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {CAPTURE_COLUMNS} FROM webhook_captures WHERE token = $1 AND expires_at > $2"
    )))
    .bind(token)
    .bind(super::millis(now))
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM webhook_captures WHERE id = $1")
        .bind(id)
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// Records a request unless the capture already holds `limit` of them; whether it was recorded.
/// Concurrent requests to one capture are counted one after the other: SQLite has a single
/// writer, and on PostgreSQL the capture's row is locked while counting.
pub async fn record(store: &Store, request: &CapturedRequest, limit: i64) -> Result<bool, Error> {
    let mut tx = store.begin().await?;
    if store.backend() == Backend::Postgres {
        sqlx::query("SELECT id FROM webhook_captures WHERE id = $1 FOR UPDATE")
            .bind(&request.capture_id)
            .fetch_optional(&mut *tx)
            .await?;
    }
    let recorded = sqlx::query(
        "INSERT INTO webhook_captured_requests (id, capture_id, method, path, query, headers, body, body_size, \
         source_ip, received_at) SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 \
         WHERE (SELECT COUNT(*) FROM webhook_captured_requests WHERE capture_id = $2) < $11",
    )
    .bind(&request.id)
    .bind(&request.capture_id)
    .bind(&request.method)
    .bind(&request.path)
    .bind(&request.query)
    .bind(&request.headers)
    .bind(&request.body)
    .bind(request.body_size)
    .bind(&request.source_ip)
    .bind(super::millis(request.received_at))
    .bind(limit)
    .execute(&mut *tx)
    .await?
    .rows_affected()
        == 1;
    tx.commit().await?;
    Ok(recorded)
}

/// Removes the captures that expired before `now`, with their requests.
pub async fn delete_expired<'c>(db: impl Executor<'c, Database = Any>, now: DateTime<Utc>) -> Result<u64, Error> {
    sqlx::query("DELETE FROM webhook_captures WHERE expires_at <= $1")
        .bind(super::millis(now))
        .execute(db)
        .await
        .map(|done| done.rows_affected())
        .map_err(Error::from)
}

/// A page of the requests a capture received.
pub async fn request_page(
    store: &Store,
    capture_id: &str,
    request: &PageRequest,
) -> Result<Page<CapturedRequest>, Error> {
    page::fetch(store.pool(), &REQUEST_LISTING, &Scope::of("capture_id", capture_id), request).await
}

/// A page of an account's captures that have not expired at `now`.
pub async fn page(
    store: &Store,
    account_id: &str,
    now: DateTime<Utc>,
    request: &PageRequest,
) -> Result<Page<Capture>, Error> {
    let scope = Scope::of("account_id", account_id).and("expires_at >", now);
    page::fetch(store.pool(), &CAPTURE_LISTING, &scope, request).await
}
