//! The service's periodic jobs, in one table: each with its name, its period, how it catches up
//! when the manual clock moves past several of its instants, and its work, which says what it did.
//! At start every row is registered with the scheduler.

use std::sync::{Arc, Weak};

use chrono::{DateTime, TimeDelta, Utc};
use futures_util::future::BoxFuture;

use crate::application::Services;
use crate::kernel::clock::ManualClock;
use crate::kernel::config::Settings;

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
    work: fn(Arc<Services>, DateTime<Utc>) -> BoxFuture<'static, anyhow::Result<Done>>,
}

const JOBS: &[Job] = &[
    Job {
        name: "attack-protection-counters",
        every: |_| TimeDelta::minutes(10),
        catching: Catching::Latest,
        told: Told::Debug,
        work: |host, now| {
            Box::pin(async move {
                Ok(vec![(
                    counted(host.protection.counters.prune(now)),
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
        work: |host, _| {
            Box::pin(async move {
                host.protection.store_refusals(&host.store).await?;
                Ok(Vec::new())
            })
        },
    },
    Job {
        name: "attack-incidents-resolution",
        every: |_| TimeDelta::minutes(5),
        catching: Catching::Each,
        told: Told::Info,
        work: |host, now| {
            Box::pin(async move {
                host.protection.store_refusals(&host.store).await?;
                let resolved = crate::protection::incidents::resolve_quiet(&host.store, now).await?;
                Ok(vec![(counted(resolved), "attack incidents quiet for 30 minutes resolved")])
            })
        },
    },
    Job {
        name: "secret-expiry-warnings",
        every: |_| crate::operations::secret_expiry::EVERY,
        catching: Catching::Latest,
        told: Told::Info,
        work: |host, now| {
            Box::pin(async move {
                let warned = crate::operations::secret_expiry::warn(&host.store, now).await?;
                Ok(vec![(counted(warned), "accounts warned of secrets about to expire")])
            })
        },
    },
    Job {
        name: "unusual-sign-in-failures",
        every: |_| crate::protection::unusual_failures::EVERY,
        catching: Catching::Latest,
        told: Told::Info,
        work: |host, now| {
            Box::pin(async move {
                let reported = crate::protection::unusual_failures::watch(&host.store, now).await?;
                Ok(vec![(counted(reported), "realms with unusual sign-in failures reported")])
            })
        },
    },
    Job {
        name: "incident-readings",
        every: |_| crate::protection::analyst::schedule::EVERY,
        catching: Catching::Each,
        told: Told::Info,
        work: |host, now| {
            Box::pin(async move {
                let ran = crate::protection::analyst::schedule::run_due(&host.store, &host.analyst, now).await?;
                Ok(vec![(counted(ran), "incident readings written")])
            })
        },
    },
    Job {
        name: "webhook-history-retention",
        every: |_| TimeDelta::hours(1),
        catching: Catching::Latest,
        told: Told::Info,
        work: |host, now| {
            Box::pin(async move {
                let before = now - TimeDelta::days(crate::operations::webhooks::HISTORY_DAYS);
                let removed = crate::store::webhooks::delete_history_before(host.store.writer(), before).await?;
                let expired = crate::store::captures::delete_expired(host.store.writer(), now).await?;
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
        work: |host, now| {
            Box::pin(async move {
                let retention = TimeDelta::days(i64::from(host.settings.access_log_retention_days));
                let removed = crate::store::access_log::delete_before(host.store.writer(), now - retention).await?;
                Ok(vec![(counted(removed), "access log entries past retention removed")])
            })
        },
    },
    Job {
        name: "token-pruning",
        every: |_| TimeDelta::hours(1),
        catching: Catching::Latest,
        told: Told::Info,
        work: |host, now| {
            host.caches.prune_revocations(now);
            host.caches.verified_tokens.prune(now);
            Box::pin(async move {
                let writer = host.store.writer();
                let window_start = now - crate::store::lockout::FAILURE_WINDOW;
                Ok(vec![
                    (
                        counted(crate::store::sessions::prune(writer, now).await?),
                        "expired refresh tokens and token revocations removed",
                    ),
                    (
                        counted(crate::store::assertions::prune(writer, now).await?),
                        "expired client assertions, DPoP proofs and passkey challenges removed",
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
        work: |host, now| {
            Box::pin(async move {
                let rotated = crate::directory::keys::rotate_due(&host, now).await?;
                Ok(vec![(counted(rotated), "signing keys rotated on schedule")])
            })
        },
    },
    Job {
        name: "suspensions",
        every: |_| TimeDelta::seconds(15),
        catching: Catching::Latest,
        told: Told::Info,
        work: |host, now| {
            Box::pin(async move {
                let settled = crate::oauth::suspensions::settle(&host.store, now).await?;
                Ok(vec![(counted(settled), "suspensions started or ran out")])
            })
        },
    },
    Job {
        name: "rate-limit-pruning",
        every: |_| TimeDelta::minutes(1),
        catching: Catching::Latest,
        told: Told::Info,
        work: |host, now| {
            host.limiter.prune(now);
            Box::pin(async { Ok(Vec::new()) })
        },
    },
];

/// Registers every job of the table with the host's scheduler.
pub async fn register(services: &Arc<Services>) {
    for job in JOBS {
        // A weak handle: the scheduler lives inside the services and must not keep them alive.
        let host: Weak<Services> = Arc::downgrade(services);
        let (name, work, told) = (job.name, job.work, job.told);
        let run: crate::runtime::jobs::JobFn = Arc::new(move |now| {
            let host = host.upgrade();
            Box::pin(async move {
                let Some(host) = host else { return Ok(()) };
                for (count, words) in work(host, now).await? {
                    match (count, told) {
                        (0, _) => {}
                        (count, Told::Info) => tracing::info!(job = name, count, "{words}"),
                        (count, Told::Debug) => tracing::debug!(job = name, count, "{words}"),
                    }
                }
                Ok(())
            })
        });
        let every = (job.every)(&services.settings);
        match job.catching {
            Catching::Latest => services.scheduler.every_latest(name, every, run).await,
            Catching::Each => services.scheduler.every(name, every, run).await,
        }
    }
}

/// Moves the manual clock to `target` as [`Scheduler::advance_to`] does, with the webhook and
/// notification workers and the sends detached from requests as its steps.
///
/// [`Scheduler::advance_to`]: crate::runtime::jobs::Scheduler::advance_to
pub async fn advance_manual_clock(services: &Services, clock: &ManualClock, target: DateTime<Utc>) {
    let step = |_| -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Err(error) =
                crate::operations::webhooks::delivery::settle(&services.context, &services.webhooks).await
            {
                tracing::error!(error = format!("{error:#}"), "delivering due webhooks failed");
            }
            if let Err(error) = crate::operations::notifications::settle(&services.context).await {
                tracing::error!(error = format!("{error:#}"), "posting due notifications failed");
            }
            services.detached.idle().await;
        })
    };
    services.scheduler.advance_to(clock, target, step).await;
}
