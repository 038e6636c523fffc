//! Device authorizations (RFC 8628): what a device without a browser asked for, found by its
//! device code (the device's) or its user code (the person's), each kept as a keyed hash.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::{Error, text_enum};
use crate::kernel::ids::{ClientId, RealmId, SessionId};

text_enum! {
    /// Where a device authorization stands.
    pub enum DeviceStatus {
        /// Waiting for a person to approve or deny it.
        Pending,
        /// Approved: the device's next poll gets the tokens.
        Approved,
        Denied,
        /// The device took its tokens; the device code is spent.
        Issued,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DeviceAuthorization {
    pub device_code_hash: String,
    pub realm_id: RealmId,
    pub user_code_hash: String,
    pub client_id: ClientId,
    #[sqlx(try_from = "super::JsonList")]
    pub scopes: Vec<String>,
    pub resource: Option<String>,
    #[sqlx(try_from = "String")]
    pub status: DeviceStatus,
    pub session_id: Option<SessionId>,
    pub interval_seconds: i64,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub polled_at: Option<DateTime<Utc>>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub expires_at: DateTime<Utc>,
}

const COLUMNS: &str = "device_code_hash, realm_id, user_code_hash, client_id, scopes, resource, status, session_id, \
     interval_seconds, polled_at, created_at, expires_at";

/// Inserts the authorization; `false` when its user code is taken in the realm (the caller draws
/// another).
pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, device: &DeviceAuthorization) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO device_authorizations (device_code_hash, realm_id, user_code_hash, client_id, scopes, resource, \
         status, session_id, interval_seconds, polled_at, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING",
    )
    .bind(&device.device_code_hash)
    .bind(&device.realm_id)
    .bind(&device.user_code_hash)
    .bind(&device.client_id)
    .bind(super::to_json_list(&device.scopes))
    .bind(&device.resource)
    .bind(device.status.as_str())
    .bind(&device.session_id)
    .bind(device.interval_seconds)
    .bind(super::millis(device.polled_at))
    .bind(super::millis(device.created_at))
    .bind(super::millis(device.expires_at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The realm's pending authorization of this user code, while it has not expired.
pub async fn pending_by_user_code<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    user_code_hash: &str,
    now: DateTime<Utc>,
) -> Result<Option<DeviceAuthorization>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM device_authorizations WHERE realm_id = $1 AND user_code_hash = $2 \
         AND status = 'Pending' AND expires_at > $3"
    )))
    .bind(realm_id)
    .bind(user_code_hash)
    .bind(super::millis(now))
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// The realm's authorization of this device code, whatever its state.
pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    device_code_hash: &str,
) -> Result<Option<DeviceAuthorization>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM device_authorizations WHERE realm_id = $1 AND device_code_hash = $2"
    )))
    .bind(realm_id)
    .bind(device_code_hash)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Settles a pending, unexpired authorization: approved with the session it opened, or denied.
/// `false` when it was settled already or expired.
pub async fn settle<'c>(
    db: impl Executor<'c, Database = Any>,
    device_code_hash: &str,
    status: DeviceStatus,
    session_id: Option<&SessionId>,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE device_authorizations SET status = $2, session_id = $3 \
         WHERE device_code_hash = $1 AND status = 'Pending' AND expires_at > $4",
    )
    .bind(device_code_hash)
    .bind(status.as_str())
    .bind(session_id)
    .bind(super::millis(now))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Records a poll of the device at `now`, with the interval it must keep from now on.
pub async fn polled<'c>(
    db: impl Executor<'c, Database = Any>,
    device_code_hash: &str,
    interval_seconds: i64,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    sqlx::query("UPDATE device_authorizations SET polled_at = $2, interval_seconds = $3 WHERE device_code_hash = $1")
        .bind(device_code_hash)
        .bind(super::millis(now))
        .bind(interval_seconds)
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// Spends an approved authorization: `true` for the one poll that takes its tokens.
pub async fn issue<'c>(db: impl Executor<'c, Database = Any>, device_code_hash: &str) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE device_authorizations SET status = 'Issued' WHERE device_code_hash = $1 AND status = 'Approved'",
    )
    .bind(device_code_hash)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Removes authorizations an hour past their expiry (kept that long so that a late poll is told
/// `expired_token`).
pub async fn prune<'c>(db: impl Executor<'c, Database = Any>, now: DateTime<Utc>) -> Result<u64, Error> {
    let an_hour_ago = now - chrono::TimeDelta::hours(1);
    let done = sqlx::query("DELETE FROM device_authorizations WHERE expires_at <= $1")
        .bind(super::millis(an_hour_ago))
        .execute(db)
        .await?;
    Ok(done.rows_affected())
}
