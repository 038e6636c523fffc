//! Counts read at each metrics scrape: aggregates over small or indexed sets, so a scrape costs the
//! database little.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use chrono::{DateTime, Utc};
use sqlx::{Any, AnyPool, Executor};

use super::Error;

/// What the database holds at one moment, for the gauges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Attack protection measures in force, by kind (`SourceBlocked`, …).
    pub measures_in_force: Vec<(String, i64)>,
    /// Webhook attempts due and not claimed by a worker.
    pub webhooks_due: i64,
    /// Webhook attempts claimed by a worker whose lease has not run out.
    pub webhooks_leased: i64,
    /// Webhook endpoints disabled after failing ten times in a row.
    pub endpoints_disabled: i64,
    /// Since when the oldest key that signs now has been signing.
    pub oldest_signing_key: Option<DateTime<Utc>>,
}

pub async fn read(db: &AnyPool, now: DateTime<Utc>) -> Result<Counts, Error> {
    let at = super::millis(now);
    let measures_in_force = sqlx::query_as(
        "SELECT kind, COUNT(*) FROM threat_measures WHERE lifted_at IS NULL \
         AND ((kind = 'PasswordExposed' AND resolved_at IS NULL) OR lapses_at > $1) GROUP BY kind ORDER BY kind",
    )
    .bind(at)
    .fetch_all(db)
    .await?;
    let (due, leased): (Option<i64>, Option<i64>) = sqlx::query_as(
        "SELECT SUM(CASE WHEN claimed_until IS NULL OR claimed_until <= $1 THEN 1 ELSE 0 END), \
         SUM(CASE WHEN claimed_until > $1 THEN 1 ELSE 0 END) \
         FROM webhook_attempts WHERE state = 'Scheduled' AND due_at <= $1",
    )
    .bind(at)
    .fetch_one(db)
    .await?;
    let endpoints_disabled = count(db, "SELECT COUNT(*) FROM webhook_endpoints WHERE status = 'Disabled'").await?;
    let oldest: Option<i64> =
        sqlx::query_scalar("SELECT MIN(signs_from) FROM signing_keys WHERE status = 'Active' AND signs_from <= $1")
            .bind(at)
            .fetch_one(db)
            .await?;
    Ok(Counts {
        measures_in_force,
        webhooks_due: due.unwrap_or(0),
        webhooks_leased: leased.unwrap_or(0),
        endpoints_disabled,
        oldest_signing_key: oldest.and_then(DateTime::from_timestamp_millis),
    })
}

async fn count<'c>(db: impl Executor<'c, Database = Any>, statement: &'static str) -> Result<i64, Error> {
    Ok(sqlx::query_scalar(statement).fetch_one(db).await?)
}

/// Connections of `pool`: `(open, idle)`.
pub fn connections(pool: &AnyPool) -> (u32, usize) {
    (pool.size(), pool.num_idle())
}

/// The transactions begun and how long they waited for a connection, counted as they begin.
#[derive(Debug, Default)]
pub struct Waits {
    begun: AtomicU64,
    waited_micros: AtomicU64,
}

/// What [`Waits`] counted so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Waited {
    pub transactions: u64,
    pub micros: u64,
}

impl Waits {
    /// Runs `begin`, counting it and the time it took.
    pub async fn time<T>(&self, begin: impl Future<Output = T>) -> T {
        let started = Instant::now();
        let begun = begin.await;
        let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.begun.fetch_add(1, Ordering::Relaxed);
        self.waited_micros.fetch_add(micros, Ordering::Relaxed);
        begun
    }

    pub fn so_far(&self) -> Waited {
        Waited { transactions: self.begun.load(Ordering::Relaxed), micros: self.waited_micros.load(Ordering::Relaxed) }
    }
}
