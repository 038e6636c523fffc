//! The realm lockout: failed password sign-ins per account and source address, and the addresses
//! an account is approved at (where the lockout never applies).

use super::Error;
use chrono::{DateTime, TimeDelta, Utc};
use sqlx::{Any, Executor};

/// Failures are counted within this window (the realm lockout's Max Failed Attempts).
pub const FAILURE_WINDOW: TimeDelta = TimeDelta::hours(1);

/// Failures of one account from one address.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Failures {
    pub failed_count: i64,
    #[sqlx(try_from = "super::Millis")]
    pub first_failed_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub locked_until: Option<DateTime<Utc>>,
}

/// Whose failures: an account of the realm, or a name the realm does not have (by the keyed hash
/// of the name as typed, lower-cased), locked out the same way so that the lockout never tells one
/// from the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    Account { user_id: &'a str },
    UnknownName { realm_id: &'a str, name_hash: &'a str },
}

pub async fn failures<'c>(
    db: impl Executor<'c, Database = Any>,
    target: Target<'_>,
    ip_address: &str,
) -> Result<Option<Failures>, Error> {
    let found = match target {
        Target::Account { user_id } => {
            sqlx::query_as(
                "SELECT failed_count, first_failed_at, locked_until FROM login_failures \
                 WHERE user_id = $1 AND ip_address = $2",
            )
            .bind(user_id)
            .bind(ip_address)
            .fetch_optional(db)
            .await
        }
        Target::UnknownName { realm_id, name_hash } => {
            sqlx::query_as(
                "SELECT failed_count, first_failed_at, locked_until FROM unknown_login_failures \
                 WHERE realm_id = $1 AND name_hash = $2 AND ip_address = $3",
            )
            .bind(realm_id)
            .bind(name_hash)
            .bind(ip_address)
            .fetch_optional(db)
            .await
        }
    };
    Ok(found?)
}

/// Stores the failures of an account or name at an address.
pub async fn save<'c>(
    db: impl Executor<'c, Database = Any>,
    target: Target<'_>,
    ip_address: &str,
    failures: &Failures,
) -> Result<(), Error> {
    let query = match target {
        Target::Account { user_id } => sqlx::query(
            "INSERT INTO login_failures (user_id, ip_address, failed_count, first_failed_at, locked_until) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (user_id, ip_address) DO UPDATE SET \
             failed_count = excluded.failed_count, first_failed_at = excluded.first_failed_at, \
             locked_until = excluded.locked_until",
        )
        .bind(user_id),
        Target::UnknownName { realm_id, name_hash } => sqlx::query(
            "INSERT INTO unknown_login_failures \
             (realm_id, name_hash, ip_address, failed_count, first_failed_at, locked_until) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (realm_id, name_hash, ip_address) DO UPDATE SET \
             failed_count = excluded.failed_count, first_failed_at = excluded.first_failed_at, \
             locked_until = excluded.locked_until",
        )
        .bind(realm_id)
        .bind(name_hash),
    };
    query
        .bind(ip_address)
        .bind(failures.failed_count)
        .bind(super::millis(failures.first_failed_at))
        .bind(super::millis(failures.locked_until))
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// Forgets failures counted before `window_start` whose lock, if any, has ended by `now`: the next
/// failure would start a new count anyway.
pub async fn prune<'c>(
    db: impl Executor<'c, Database = Any> + Copy,
    window_start: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<u64, Error> {
    let mut removed = 0;
    for table in ["login_failures", "unknown_login_failures"] {
        let statement =
            format!("DELETE FROM {table} WHERE first_failed_at < $1 AND (locked_until IS NULL OR locked_until <= $2)");
        removed += sqlx::query(sqlx::AssertSqlSafe(statement))
            .bind(super::millis(window_start))
            .bind(super::millis(now))
            .execute(db)
            .await?
            .rows_affected();
    }
    Ok(removed)
}

pub async fn is_approved<'c>(
    db: impl Executor<'c, Database = Any>,
    user_id: &str,
    ip_address: &str,
) -> Result<bool, Error> {
    let found: Option<(String,)> =
        sqlx::query_as("SELECT user_id FROM approved_addresses WHERE user_id = $1 AND ip_address = $2")
            .bind(user_id)
            .bind(ip_address)
            .fetch_optional(db)
            .await?;
    Ok(found.is_some())
}

/// Approves the address for the account (a successful sign-in from it) and forgets its failures.
pub async fn approve(
    tx: &mut super::Connection,
    user_id: &str,
    ip_address: &str,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    approve_all(tx, &[(user_id, ip_address)], now).await
}

/// Approves each address for its account and forgets their failures, a statement of each kind for
/// up to [`super::ROWS_PER_STATEMENT`] pairs (a pair named twice counts once).
pub async fn approve_all(
    tx: &mut super::Connection,
    approvals: &[(&str, &str)],
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let distinct: Vec<(&str, &str)> =
        approvals.iter().copied().collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    for pairs in distinct.chunks(super::ROWS_PER_STATEMENT) {
        let sql = format!(
            "INSERT INTO approved_addresses (user_id, ip_address, approved_at) VALUES {} \
             ON CONFLICT (user_id, ip_address) DO UPDATE SET approved_at = excluded.approved_at",
            super::values_placeholders(pairs.len(), 3)
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (user_id, ip_address) in pairs {
            query = query.bind(user_id.to_string()).bind(ip_address.to_string()).bind(super::millis(now));
        }
        query.execute(&mut *tx).await?;
        let each: Vec<String> =
            (0..pairs.len()).map(|i| format!("(user_id = ${} AND ip_address = ${})", 2 * i + 1, 2 * i + 2)).collect();
        let sql = format!("DELETE FROM login_failures WHERE {}", each.join(" OR "));
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (user_id, ip_address) in pairs {
            query = query.bind(user_id.to_string()).bind(ip_address.to_string());
        }
        query.execute(&mut *tx).await?;
    }
    Ok(())
}
