//! The client assertions (RFC 7523) and DPoP proofs (RFC 9449) accepted, by `jti`, and the passkey
//! challenges answered, by their nonce, until they expire: one presented again is a replay.

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

/// Records a DPoP proof of the key with thumbprint `jkt`; `false` when the key already signed one
/// with this `jti`.
pub async fn record_proof_once<'c>(
    db: impl Executor<'c, Database = Any>,
    jkt: &str,
    jti: &str,
    expires_at: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO dpop_proofs (jkt, jti, expires_at) VALUES ($1, $2, $3) ON CONFLICT (jkt, jti) DO NOTHING",
    )
    .bind(jkt)
    .bind(jti)
    .bind(super::millis(expires_at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Records the answer to a passkey challenge; `false` when the challenge was answered before.
pub async fn record_challenge_once<'c>(
    db: impl Executor<'c, Database = Any>,
    nonce: &str,
    expires_at: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO passkey_challenges (nonce, expires_at) VALUES ($1, $2) ON CONFLICT (nonce) DO NOTHING",
    )
    .bind(nonce)
    .bind(super::millis(expires_at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Forgets assertions, proofs and challenges that have expired, which no one can present again anyway.
pub async fn prune<'c>(db: impl Executor<'c, Database = Any> + Copy, now: DateTime<Utc>) -> Result<u64, Error> {
    let assertions = sqlx::query("DELETE FROM client_assertions WHERE expires_at <= $1")
        .bind(super::millis(now))
        .execute(db)
        .await?;
    let proofs =
        sqlx::query("DELETE FROM dpop_proofs WHERE expires_at <= $1").bind(super::millis(now)).execute(db).await?;
    let challenges = sqlx::query("DELETE FROM passkey_challenges WHERE expires_at <= $1")
        .bind(super::millis(now))
        .execute(db)
        .await?;
    Ok(assertions.rows_affected() + proofs.rows_affected() + challenges.rows_affected())
}
