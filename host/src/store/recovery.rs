//! Password reset codes sent by recovery e-mail: kept as keyed hashes, each used once.

use super::Error;
use sqlx::{Any, Executor};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Reset {
    pub id: String,
    pub realm_id: String,
    pub user_id: String,
    pub client_id: String,
    pub token_hash: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub used_at: Option<i64>,
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
    .bind(reset.created_at)
    .bind(reset.expires_at)
    .bind(reset.used_at)
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
pub async fn use_once<'c>(db: impl Executor<'c, Database = Any>, id: &str, now: i64) -> Result<bool, Error> {
    let done = sqlx::query("UPDATE password_resets SET used_at = $2 WHERE id = $1 AND used_at IS NULL")
        .bind(id)
        .bind(now)
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}
