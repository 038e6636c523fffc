//! Password reset codes sent by recovery e-mail: kept as keyed hashes, each used once.

use super::Error;
use crate::kernel::ids::{ClientId, RealmId, ResetId, UserId};
use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Reset {
    pub id: ResetId,
    pub realm_id: RealmId,
    pub user_id: UserId,
    pub client_id: ClientId,
    pub token_hash: String,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub expires_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub used_at: Option<DateTime<Utc>>,
}

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, reset: &Reset) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO password_resets (id, realm_id, user_id, client_id, token_hash, created_at, expires_at, used_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&reset.id)
    .bind(&reset.realm_id)
    .bind(&reset.user_id)
    .bind(&reset.client_id)
    .bind(&reset.token_hash)
    .bind(super::millis(reset.created_at))
    .bind(super::millis(reset.expires_at))
    .bind(super::millis(reset.used_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

pub async fn find_by_hash<'c>(db: impl Executor<'c, Database = Any>, token_hash: &str) -> Result<Option<Reset>, Error> {
    sqlx::query_as(
        "SELECT id, realm_id, user_id, client_id, token_hash, created_at, expires_at, used_at \
         FROM password_resets WHERE token_hash = $1",
    )
    .bind(token_hash)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Marks the code used; false when it already was (two resets at once: one wins).
pub async fn use_once<'c>(db: impl Executor<'c, Database = Any>, id: &str, now: DateTime<Utc>) -> Result<bool, Error> {
    let done = sqlx::query("UPDATE password_resets SET used_at = $2 WHERE id = $1 AND used_at IS NULL")
        .bind(id)
        .bind(super::millis(now))
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}
