//! The client assertions accepted (RFC 7523), by `jti`, until they expire: one presented again is
//! a replay.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::Error;

/// Records the assertion; `false` when the client already presented one with this `jti`.
pub async fn record_once<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    client_id: &str,
    jti: &str,
    expires_at: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO client_assertions (realm_id, client_id, jti, expires_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (realm_id, client_id, jti) DO NOTHING",
    )
    .bind(realm_id)
    .bind(client_id)
    .bind(jti)
    .bind(super::millis(expires_at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Forgets assertions that have expired, which no one can present again anyway.
pub async fn prune<'c>(db: impl Executor<'c, Database = Any>, now: DateTime<Utc>) -> Result<u64, Error> {
    let done = sqlx::query("DELETE FROM client_assertions WHERE expires_at <= $1")
        .bind(super::millis(now))
        .execute(db)
        .await?;
    Ok(done.rows_affected())
}
