//! The service's periodic jobs, in one table: each with its name, its period, how it catches up
//! when the manual clock moves past several of its instants, and its work, which says what it did.
//! At start every row is registered with the scheduler.

use std::sync::{Arc, Weak};

use chrono::{DateTime, TimeDelta, Utc};
use futures_util::future::BoxFuture;

use crate::AppState;
use crate::kernel::config::Settings;
use crate::runtime::application::Services;

/// What a run did: counts, each with the words logged when it is not zero.
type Done = Vec<(u64, &'static str)>;

/// A count as the log tells it.
fn counted(n: impl TryInto<u64>) -> u64 {
    n.try_into().unwrap_or(u64::MAX)
}

/// How a job catches up when the manual clock moves past several of its instants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Catching {
    /// Its work depends on when it runs (it forgets what is past a horizon): run once, at the
    /// latest instant, as a late system clock does.
    Latest,
    /// Run at each instant, in order.
    Each,
}

/// Whether a job's counts are worth the log at `info` or only at `debug`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Told {
    Info,
    Debug,
}

struct Job {
    name: &'static str,
    every: fn(&Settings) -> TimeDelta,
    catching: Catching,
    told: Told,
    work: fn(AppState, DateTime<Utc>) -> BoxFuture<'static, anyhow::Result<Done>>,
}

const JOBS: &[Job] = &[
    Job {
        name: "attack-protection-counters",
        every: |_| TimeDelta::minutes(10),
        catching: Catching::Latest,
        told: Told::Debug,
        work: |state, now| {
            Box::pin(async move {
                Ok(vec![(
                    counted(state.protection.counters.prune(now)),
                    "attack protection series past a day forgotten",
                )])
            })
        },
    },
    Job {
        name: "attack-protection-refusals",
        every: |_| TimeDelta::seconds(crate::protection::REFUSALS_STORED_EVERY_SECONDS),
        catching: Catching::Latest,
        told: Told::Info,
        work: |state, _| {
            Box::pin(async move {
                state.protection.store_refusals(&state.store).await?;
                Ok(Vec::new())
            })
        },
    },
    Job {
        name: "attack-incidents-resolution",
        every: |_| TimeDelta::minutes(5),
        catching: Catching::Each,
        told: Told::Info,
        work: |state, now| {
            Box::pin(async move {
                state.protection.store_refusals(&state.store).await?;
                let resolved = crate::protection::incidents::resolve_quiet(&state.store, now).await?;
                Ok(vec![(counted(resolved), "attack incidents quiet for 30 minutes resolved")])
            })
        },
    },
    Job {
        name: "secret-expiry-warnings",
        every: |_| crate::operations::secret_expiry::EVERY,
        catching: Catching::Latest,
        told: Told::Info,
        work: |state, now| {
            Box::pin(async move {
                let warned = crate::operations::secret_expiry::warn(&state.store, now).await?;
                Ok(vec![(counted(warned), "accounts warned of secrets about to expire")])
            })
        },
    },
    Job {
        name: "unusual-sign-in-failures",
        every: |_| crate::protection::unusual_failures::EVERY,
        catching: Catching::Latest,
        told: Told::Info,
        work: |state, now| {
            Box::pin(async move {
                let reported = crate::protection::unusual_failures::watch(&state.store, now).await?;
                Ok(vec![(counted(reported), "realms with unusual sign-in failures reported")])
            })
        },
    },
    Job {
        name: "incident-readings",
        every: |_| crate::protection::analyst::schedule::EVERY,
        catching: Catching::Each,
        told: Told::Info,
        work: |state, now| {
            Box::pin(async move {
                let ran = crate::protection::analyst::schedule::run_due(&state.store, &state.analyst, now).await?;
                Ok(vec![(counted(ran), "incident readings written")])
            })
        },
    },
    Job {
        name: "webhook-history-retention",
        every: |_| TimeDelta::hours(1),
        catching: Catching::Latest,
        told: Told::Info,
        work: |state, now| {
            Box::pin(async move {
                let before = now - TimeDelta::days(crate::operations::webhooks::HISTORY_DAYS);
                let removed = crate::store::webhooks::delete_history_before(state.store.writer(), before).await?;
                let expired = crate::store::captures::delete_expired(state.store.writer(), now).await?;
                Ok(vec![
                    (counted(removed), "webhook deliveries and events past 30 days removed"),
                    (counted(expired), "expired capture endpoints removed"),
                ])
            })
        },
    },
    Job {
        name: "access-log-retention",
        every: |_| TimeDelta::hours(1),
        catching: Catching::Latest,
        told: Told::Info,
        work: |state, now| {
            Box::pin(async move {
                let retention = TimeDelta::days(i64::from(state.settings.access_log_retention_days));
                let removed = crate::store::access_log::delete_before(state.store.writer(), now - retention).await?;
                Ok(vec![(counted(removed), "access log entries past retention removed")])
            })
        },
    },
    Job {
        name: "token-pruning",
        every: |_| TimeDelta::hours(1),
        catching: Catching::Latest,
        told: Told::Info,
        work: |state, now| {
            state.caches.prune_revocations(now);
            state.caches.verified_tokens.prune(now);
            Box::pin(async move {
                let writer = state.store.writer();
                let window_start = now - crate::store::lockout::FAILURE_WINDOW;
                Ok(vec![
                    (
                        counted(crate::store::sessions::prune(writer, now).await?),
                        "expired refresh tokens and token revocations removed",
                    ),
                    (
                        counted(crate::store::assertions::prune(writer, now).await?),
                        "expired client assertions and DPoP proofs removed",
                    ),
                    (
                        counted(crate::store::browser::prune(writer, now).await?),
                        "expired authorization codes and browser sessions removed",
                    ),
                    (
                        counted(crate::store::devices::prune(writer, now).await?),
                        "expired device authorizations removed",
                    ),
                    (counted(crate::store::sign_ups::prune(writer, now).await?), "lapsed sign-ups removed"),
                    (
                        counted(crate::store::lockout::prune(writer, window_start, now).await?),
                        "sign-in failures past the lockout window removed",
                    ),
                ])
            })
        },
    },
    Job {
        name: "signing-key-rotation",
        every: |_| TimeDelta::hours(1),
        catching: Catching::Each,
        told: Told::Info,
        work: |state, now| {
            Box::pin(async move {
                let rotated = crate::oauth::tokens::keys::rotate_due(&state, now).await?;
                Ok(vec![(counted(rotated), "signing keys rotated on schedule")])
            })
        },
    },
    Job {
        name: "suspensions",
        every: |_| TimeDelta::seconds(15),
        catching: Catching::Latest,
        told: Told::Info,
        work: |state, now| {
            Box::pin(async move {
                let settled = crate::oauth::suspensions::settle(&state.store, now).await?;
                Ok(vec![(counted(settled), "suspensions started or ran out")])
            })
        },
    },
    Job {
        name: "rate-limit-pruning",
        every: |_| TimeDelta::minutes(1),
        catching: Catching::Latest,
        told: Told::Info,
        work: |state, now| {
            state.limiter.prune(now);
            Box::pin(async { Ok(Vec::new()) })
        },
    },
];

/// Registers every job of the table with the state's scheduler.
pub async fn register(state: &AppState) {
    for job in JOBS {
        // A weak handle: the scheduler lives inside the state and must not keep it alive.
        let services: Weak<Services> = Arc::downgrade(&state.0);
        let (name, work, told) = (job.name, job.work, job.told);
        let run: crate::runtime::jobs::JobFn = Arc::new(move |now| {
            let state = services.upgrade().map(AppState);
            Box::pin(async move {
                let Some(state) = state else { return Ok(()) };
                for (count, words) in work(state, now).await? {
                    match (count, told) {
                        (0, _) => {}
                        (count, Told::Info) => tracing::info!(job = name, count, "{words}"),
                        (count, Told::Debug) => tracing::debug!(job = name, count, "{words}"),
                    }
                }
                Ok(())
            })
        });
        let every = (job.every)(&state.settings);
        match job.catching {
            Catching::Latest => state.scheduler.every_latest(name, every, run).await,
            Catching::Each => state.scheduler.every(name, every, run).await,
        }
    }
}
