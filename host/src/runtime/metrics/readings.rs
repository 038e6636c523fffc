//! The gauges read at scrape time: what the database holds (measures in force, the webhook
//! backlog, disabled endpoints, the oldest signing key), the database pools, the write queues, and
//! how long transactions waited for a connection.

use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::{MEASURES, MeasureLabels, PoolLabels, StateLabels};
use crate::runtime::context::Context;
use crate::store::access_log::AccessLog;
use crate::store::readings::{self, Waited};

#[derive(Debug)]
pub struct Gauges {
    measures_in_force: Family<MeasureLabels, Gauge>,
    webhook_backlog: Family<StateLabels, Gauge>,
    endpoints_disabled: Gauge,
    signing_key_age: Gauge<f64, AtomicU64>,
    connections: Family<PoolLabels, Gauge>,
    access_log_queue: Gauge,
    write_queue: Gauge,
    transactions: Counter,
    transaction_wait: Counter<f64, AtomicU64>,
    /// The waits counted at the last scrape, to add only what came since.
    last_waited: Mutex<Waited>,
    /// When the database was last read for the gauges: `/metrics` is open to anyone, so scrapes
    /// closer together than `DATABASE_READINGS_EVERY` share one reading.
    database_read_at: Mutex<Option<Instant>>,
    read_failures: Counter,
}

impl Gauges {
    pub fn register(registry: &mut Registry) -> Self {
        let measures_in_force = Family::<MeasureLabels, Gauge>::default();
        for measure in MEASURES {
            measures_in_force.get_or_create(&MeasureLabels { measure: (*measure).to_owned() }).set(0);
        }
        registry.register(
            "attack_protection_measures_in_force",
            "Attack protection measures in force now (blocks, closed accounts, …), by kind",
            measures_in_force.clone(),
        );
        let webhook_backlog = Family::<StateLabels, Gauge>::default();
        for state in ["due", "leased"] {
            webhook_backlog.get_or_create(&StateLabels { state: state.to_owned() }).set(0);
        }
        registry.register(
            "webhook_backlog",
            "Webhook attempts due now: waiting for a worker (due), or being sent (leased)",
            webhook_backlog.clone(),
        );
        let endpoints_disabled = Gauge::default();
        registry.register(
            "webhook_endpoints_disabled",
            "Webhook endpoints disabled after ten failed deliveries in a row",
            endpoints_disabled.clone(),
        );
        let signing_key_age = Gauge::<f64, AtomicU64>::default();
        registry.register(
            "signing_key_age_seconds",
            "How long the oldest signing key in use has been signing",
            signing_key_age.clone(),
        );
        let connections = Family::<PoolLabels, Gauge>::default();
        for pool in ["read", "write"] {
            for state in ["in_use", "idle"] {
                connections.get_or_create(&PoolLabels { pool: pool.to_owned(), state: state.to_owned() }).set(0);
            }
        }
        registry.register(
            "db_pool_connections",
            "Open database connections by pool, in use or idle",
            connections.clone(),
        );
        let transactions = Counter::default();
        registry.register("db_transactions", "Database transactions begun", transactions.clone());
        let transaction_wait = Counter::<f64, AtomicU64>::default();
        registry.register(
            "db_transaction_wait_seconds",
            "Time transactions waited for a connection of the pool, in all",
            transaction_wait.clone(),
        );
        let access_log_queue = Gauge::default();
        registry.register(
            "access_log_queue",
            "Admin access log entries waiting for the writer",
            access_log_queue.clone(),
        );
        let write_queue = Gauge::default();
        registry.register(
            "write_queue",
            "Writes waiting for the group commit (sign-in events, refresh token rotations)",
            write_queue.clone(),
        );
        let read_failures = Counter::default();
        registry.register(
            "metrics_read_failures",
            "Scrapes whose database readings failed; their gauges kept the values read before",
            read_failures.clone(),
        );
        Self {
            measures_in_force,
            webhook_backlog,
            endpoints_disabled,
            signing_key_age,
            connections,
            access_log_queue,
            write_queue,
            transactions,
            transaction_wait,
            last_waited: Mutex::new(Waited::default()),
            database_read_at: Mutex::new(None),
            read_failures,
        }
    }
}

/// Sets every gauge read at scrape time. Without the database the gauges it feeds keep their
/// values and the failure is counted; the others are read all the same. The database is read at
/// most once every `DATABASE_READINGS_EVERY`.
/// The shortest time between two readings of the database for the gauges, however often
/// `/metrics` is asked (a scraper asks every 15 s or more).
pub const DATABASE_READINGS_EVERY: Duration = Duration::from_secs(5);

/// Whether the database may be read now, noting the reading if so.
fn database_reading_due(gauges: &Gauges) -> bool {
    let Ok(mut read_at) = gauges.database_read_at.lock() else { return false };
    let due = read_at.is_none_or(|at| at.elapsed() >= DATABASE_READINGS_EVERY);
    if due {
        *read_at = Some(Instant::now());
    }
    due
}

/// Reads the gauges taken at scrape time: the database's figures (at most every few seconds), the
/// pools, the queues of the access log and of the group commit, and the transactions' waits.
pub async fn refresh(context: &Context, access_log: &AccessLog) {
    let gauges = &context.metrics.gauges;
    let now = context.clock.now();
    let reading =
        if database_reading_due(gauges) { Some(readings::read(context.store.pool(), now).await) } else { None };
    match reading {
        None => {}
        Some(Ok(counts)) => {
            for measure in MEASURES {
                let in_force = counts
                    .measures_in_force
                    .iter()
                    .find(|(kind, _)| snake_case(kind) == *measure)
                    .map_or(0, |(_, count)| *count);
                gauges.measures_in_force.get_or_create(&MeasureLabels { measure: (*measure).to_owned() }).set(in_force);
            }
            gauges.webhook_backlog.get_or_create(&StateLabels { state: "due".into() }).set(counts.webhooks_due);
            gauges.webhook_backlog.get_or_create(&StateLabels { state: "leased".into() }).set(counts.webhooks_leased);
            gauges.endpoints_disabled.set(counts.endpoints_disabled);
            let age = counts.oldest_signing_key.map_or(0.0, |since| (now - since).as_seconds_f64().max(0.0));
            gauges.signing_key_age.set(age);
        }
        Some(Err(error)) => {
            gauges.read_failures.inc();
            tracing::debug!(%error, "metrics readings of the database failed");
        }
    }
    for (pool, name) in [(context.store.pool(), "read"), (context.store.writer(), "write")] {
        let (open, idle) = readings::connections(pool);
        let in_use = i64::from(open) - i64::try_from(idle).unwrap_or(0);
        gauges.connections.get_or_create(&PoolLabels { pool: name.into(), state: "in_use".into() }).set(in_use);
        let idle = i64::try_from(idle).unwrap_or(i64::MAX);
        gauges.connections.get_or_create(&PoolLabels { pool: name.into(), state: "idle".into() }).set(idle);
    }
    gauges.access_log_queue.set(i64::try_from(access_log.queued()).unwrap_or(i64::MAX));
    gauges.write_queue.set(i64::try_from(context.writes.queued()).unwrap_or(i64::MAX));
    if let Ok(mut last) = gauges.last_waited.lock() {
        let waited = context.store.waits();
        gauges.transactions.inc_by(waited.transactions.saturating_sub(last.transactions));
        gauges.transaction_wait.inc_by(waited.micros.saturating_sub(last.micros) as f64 / 1e6);
        *last = waited;
    }
}

/// `SourceBlocked` → `source_blocked`.
fn snake_case(name: &str) -> String {
    let mut snake = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                snake.push('_');
            }
            snake.push(c.to_ascii_lowercase());
        } else {
            snake.push(c);
        }
    }
    snake
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrapes_close_together_share_one_reading_of_the_database() {
        let gauges = Gauges::register(&mut Registry::default());
        assert!(database_reading_due(&gauges), "the first scrape reads");
        assert!(!database_reading_due(&gauges), "one right after it does not");
        *gauges.database_read_at.lock().unwrap() = Instant::now().checked_sub(DATABASE_READINGS_EVERY);
        assert!(database_reading_due(&gauges), "one a period later reads again");
    }

    #[test]
    fn kinds_are_named_in_snake_case() {
        assert_eq!(snake_case("SourceBlocked"), "source_blocked");
        assert_eq!(snake_case("ClosedToUnknownAddresses"), "closed_to_unknown_addresses");
    }
}
