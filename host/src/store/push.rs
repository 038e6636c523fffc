//! Push devices and the sign-in requests pushed to them.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::Error;
use super::text_enum;
use crate::kernel::ids::{ClientId, DeviceId, PushRequestId, RealmId, UserId};

text_enum! {
    pub enum RequestStatus {
        /// Waiting for a phone's answer.
        Pending,
        Approved,
        Refused,
        /// Approved and exchanged for tokens (once).
        Exchanged,
        /// Made while the account's pushes were paused: no phone sees it; it lapses unanswered.
        Withheld,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Device {
    pub id: DeviceId,
    pub realm_id: RealmId,
    pub user_id: UserId,
    pub name: String,
    pub secret_hash: String,
    pub push_token: Option<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub revoked_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PushRequest {
    pub id: PushRequestId,
    pub realm_id: RealmId,
    pub user_id: UserId,
    pub client_id: ClientId,
    pub ip_address: String,
    pub user_agent: Option<String>,
    #[sqlx(try_from = "super::JsonList")]
    pub scopes: Vec<String>,
    pub resource: Option<String>,
    #[sqlx(try_from = "String")]
    pub status: RequestStatus,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub expires_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub answered_at: Option<DateTime<Utc>>,
    pub device_id: Option<DeviceId>,
}

const DEVICE_COLUMNS: &str = "id, realm_id, user_id, name, secret_hash, push_token, created_at, revoked_at";
const REQUEST_COLUMNS: &str = "id, realm_id, user_id, client_id, ip_address, user_agent, scopes, resource, status, \
     created_at, expires_at, answered_at, device_id";

pub async fn insert_device<'c>(db: impl Executor<'c, Database = Any>, d: &Device) -> Result<(), Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO push_devices ({DEVICE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
    )))
    .bind(&d.id)
    .bind(&d.realm_id)
    .bind(&d.user_id)
    .bind(&d.name)
    .bind(&d.secret_hash)
    .bind(&d.push_token)
    .bind(super::millis(d.created_at))
    .bind(super::millis(d.revoked_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

pub async fn find_device<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<Option<Device>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {DEVICE_COLUMNS} FROM push_devices WHERE id = $1")))
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// The account's devices still enrolled.
pub async fn devices_of<'c>(db: impl Executor<'c, Database = Any>, user_id: &str) -> Result<Vec<Device>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {DEVICE_COLUMNS} FROM push_devices WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at"
    )))
    .bind(user_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

pub async fn insert_request<'c>(db: impl Executor<'c, Database = Any>, r: &PushRequest) -> Result<(), Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO push_requests ({REQUEST_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
    )))
    .bind(&r.id)
    .bind(&r.realm_id)
    .bind(&r.user_id)
    .bind(&r.client_id)
    .bind(&r.ip_address)
    .bind(&r.user_agent)
    .bind(super::to_json_list(&r.scopes))
    .bind(&r.resource)
    .bind(r.status.as_str())
    .bind(super::millis(r.created_at))
    .bind(super::millis(r.expires_at))
    .bind(super::millis(r.answered_at))
    .bind(&r.device_id)
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

pub async fn find_request<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<Option<PushRequest>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {REQUEST_COLUMNS} FROM push_requests WHERE id = $1")))
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// The requests a phone of the account may answer at `now`.
pub async fn pending_for<'c>(
    db: impl Executor<'c, Database = Any>,
    user_id: &str,
    now: DateTime<Utc>,
) -> Result<Vec<PushRequest>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {REQUEST_COLUMNS} FROM push_requests WHERE user_id = $1 AND status = 'Pending' AND expires_at > $2 \
         ORDER BY created_at"
    )))
    .bind(user_id)
    .bind(super::millis(now))
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// Moves a request from `from` to `to`; false when it was not in `from` any more.
pub async fn transition<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    from: RequestStatus,
    to: RequestStatus,
    device_id: Option<&str>,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE push_requests SET status = $3, answered_at = COALESCE(answered_at, $4), \
         device_id = COALESCE(device_id, $5) WHERE id = $1 AND status = $2",
    )
    .bind(id)
    .bind(from.as_str())
    .bind(to.as_str())
    .bind(super::millis(now))
    .bind(device_id)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}
