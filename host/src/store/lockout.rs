//! The realm lockout: failed password sign-ins per account and source address, and the addresses
//! an account is approved at (where the lockout never applies).

use sqlx::{Any, Executor};

/// Failures of one account from one address.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Failures {
    pub failed_count: i64,
    pub first_failed_at: i64,
    pub locked_until: Option<i64>,
}

pub async fn failures<'c>(
    db: impl Executor<'c, Database = Any>,
    user_id: &str,
    ip_address: &str,
) -> Result<Option<Failures>, sqlx::Error> {
    sqlx::query_as(
        "SELECT failed_count, first_failed_at, locked_until FROM login_failures WHERE user_id = $1 AND ip_address = $2",
    )
    .bind(user_id)
    .bind(ip_address)
    .fetch_optional(db)
    .await
}

/// Stores the failures of an account at an address.
pub async fn save<'c>(
    db: impl Executor<'c, Database = Any>,
    user_id: &str,
    ip_address: &str,
    failures: &Failures,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO login_failures (user_id, ip_address, failed_count, first_failed_at, locked_until) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (user_id, ip_address) DO UPDATE SET \
         failed_count = excluded.failed_count, first_failed_at = excluded.first_failed_at, \
         locked_until = excluded.locked_until",
    )
    .bind(user_id)
    .bind(ip_address)
    .bind(failures.failed_count)
    .bind(failures.first_failed_at)
    .bind(failures.locked_until)
    .execute(db)
    .await
    .map(|_| ())
}

pub async fn is_approved<'c>(
    db: impl Executor<'c, Database = Any>,
    user_id: &str,
    ip_address: &str,
) -> Result<bool, sqlx::Error> {
    let found: Option<(String,)> =
        sqlx::query_as("SELECT user_id FROM approved_addresses WHERE user_id = $1 AND ip_address = $2")
            .bind(user_id)
            .bind(ip_address)
            .fetch_optional(db)
            .await?;
    Ok(found.is_some())
}

/// Approves the address for the account (a successful sign-in from it) and forgets its failures.
pub async fn approve(tx: &mut super::Connection, user_id: &str, ip_address: &str, now: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO approved_addresses (user_id, ip_address, approved_at) VALUES ($1, $2, $3) \
         ON CONFLICT (user_id, ip_address) DO UPDATE SET approved_at = excluded.approved_at",
    )
    .bind(user_id)
    .bind(ip_address)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM login_failures WHERE user_id = $1 AND ip_address = $2")
        .bind(user_id)
        .bind(ip_address)
        .execute(&mut *tx)
        .await
        .map(|_| ())
}
