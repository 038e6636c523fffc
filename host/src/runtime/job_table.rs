//! The service's periodic jobs, registered with the scheduler at start: pruning of counters and
//! limits, retention of histories, incident resolution, readings, warnings and the like.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};

use crate::AppState;

/// Work over the store alone that says how many things it did.
type StoreWork = fn(
    crate::store::Store,
    DateTime<Utc>,
) -> futures_util::future::BoxFuture<'static, Result<usize, crate::store::Error>>;

/// Registers `work` to run at the latest instant of each period, logging `done` when it did any.
async fn store_job(state: &AppState, name: &'static str, every: TimeDelta, work: StoreWork, done: &'static str) {
    let store = state.store.clone();
    let run: crate::runtime::jobs::JobFn = Arc::new(move |now| {
        let store = store.clone();
        Box::pin(async move {
            let count = work(store, now).await?;
            if count > 0 {
                tracing::info!(count, "{done}");
            }
            Ok(())
        })
    });
    state.scheduler.every_latest(name, every, run).await;
}

/// Registers every periodic job of the service.
pub async fn register(state: &AppState) {
    let counters = state.protection.counters.clone();
    state
        .scheduler
        .every_latest(
            "attack-protection-counters",
            TimeDelta::minutes(10),
            Arc::new(move |now| {
                let counters = counters.clone();
                Box::pin(async move {
                    let forgotten = counters.prune(now);
                    if forgotten > 0 {
                        tracing::debug!(forgotten, "attack protection series past a day forgotten");
                    }
                    Ok(())
                })
            }),
        )
        .await;
    let (store, protection) = (state.store.clone(), state.protection.clone());
    state
        .scheduler
        .every_latest(
            "attack-protection-refusals",
            TimeDelta::seconds(crate::protection::REFUSALS_STORED_EVERY_SECONDS),
            Arc::new(move |_| {
                let (store, protection) = (store.clone(), protection.clone());
                Box::pin(async move { Ok(protection.store_refusals(&store).await?) })
            }),
        )
        .await;
    let (store, protection) = (state.store.clone(), state.protection.clone());
    state
        .scheduler
        .every(
            "attack-incidents-resolution",
            TimeDelta::minutes(5),
            Arc::new(move |now| {
                let (store, protection) = (store.clone(), protection.clone());
                Box::pin(async move {
                    protection.store_refusals(&store).await?;
                    let resolved = crate::protection::incidents::resolve_quiet(&store, now).await?;
                    if resolved > 0 {
                        tracing::info!(resolved, "attack incidents quiet for 30 minutes resolved");
                    }
                    Ok(())
                })
            }),
        )
        .await;
    let warn: StoreWork =
        |store, now| Box::pin(async move { crate::operations::secret_expiry::warn(&store, now).await });
    let warned = "accounts warned of secrets about to expire";
    store_job(state, "secret-expiry-warnings", crate::operations::secret_expiry::EVERY, warn, warned).await;
    let watch: StoreWork =
        |store, now| Box::pin(async move { crate::protection::unusual_failures::watch(&store, now).await });
    let reported = "realms with unusual sign-in failures reported";
    store_job(state, "unusual-sign-in-failures", crate::protection::unusual_failures::EVERY, watch, reported).await;
    let (store, analyst) = (state.store.clone(), state.analyst.clone());
    state
        .scheduler
        .every(
            "incident-readings",
            crate::protection::analyst::schedule::EVERY,
            Arc::new(move |now| {
                let (store, analyst) = (store.clone(), analyst.clone());
                Box::pin(async move {
                    let ran = crate::protection::analyst::schedule::run_due(&store, &analyst, now).await?;
                    if ran > 0 {
                        tracing::info!(ran, "incident readings written");
                    }
                    Ok(())
                })
            }),
        )
        .await;
    let store = state.store.clone();
    state
        .scheduler
        .every_latest(
            "webhook-history-retention",
            TimeDelta::hours(1),
            Arc::new(move |now| {
                let store = store.clone();
                Box::pin(async move {
                    let before = now - TimeDelta::days(crate::operations::webhooks::HISTORY_DAYS);
                    let removed = crate::store::webhooks::delete_history_before(store.writer(), before).await?;
                    if removed > 0 {
                        tracing::info!(removed, "webhook deliveries and events past 30 days removed");
                    }
                    let expired = crate::store::captures::delete_expired(store.writer(), now).await?;
                    if expired > 0 {
                        tracing::info!(expired, "expired capture endpoints removed");
                    }
                    Ok(())
                })
            }),
        )
        .await;
    let store = state.store.clone();
    let retention = TimeDelta::days(i64::from(state.settings.access_log_retention_days));
    state
        .scheduler
        .every_latest(
            "access-log-retention",
            TimeDelta::hours(1),
            Arc::new(move |now| {
                let store = store.clone();
                Box::pin(async move {
                    let removed = crate::store::access_log::delete_before(store.writer(), now - retention).await?;
                    if removed > 0 {
                        tracing::info!(removed, "access log entries past retention removed");
                    }
                    Ok(())
                })
            }),
        )
        .await;
    let store = state.store.clone();
    let caches = state.caches.clone();
    state
        .scheduler
        .every_latest(
            "token-pruning",
            TimeDelta::hours(1),
            Arc::new(move |now| {
                let store = store.clone();
                caches.prune_revocations(now);
                caches.verified_tokens.prune(now);
                Box::pin(async move {
                    let removed = crate::store::sessions::prune(store.writer(), now).await?;
                    if removed > 0 {
                        tracing::info!(removed, "expired refresh tokens and token revocations removed");
                    }
                    let removed = crate::store::assertions::prune(store.writer(), now).await?;
                    if removed > 0 {
                        tracing::info!(removed, "expired client assertions and DPoP proofs removed");
                    }
                    let removed = crate::store::browser::prune(store.writer(), now).await?;
                    if removed > 0 {
                        tracing::info!(removed, "expired authorization codes and browser sessions removed");
                    }
                    let removed = crate::store::devices::prune(store.writer(), now).await?;
                    if removed > 0 {
                        tracing::info!(removed, "expired device authorizations removed");
                    }
                    let removed = crate::store::sign_ups::prune(store.writer(), now).await?;
                    if removed > 0 {
                        tracing::info!(removed, "lapsed sign-ups removed");
                    }
                    let window_start = now - crate::store::lockout::FAILURE_WINDOW;
                    let removed = crate::store::lockout::prune(store.writer(), window_start, now).await?;
                    if removed > 0 {
                        tracing::info!(removed, "sign-in failures past the lockout window removed");
                    }
                    Ok(())
                })
            }),
        )
        .await;
    // A weak handle: the scheduler lives inside the state and must not keep it alive.
    let keys_state = Arc::downgrade(&state.0);
    state
        .scheduler
        .every(
            "signing-key-rotation",
            TimeDelta::hours(1),
            Arc::new(move |now| {
                let state = keys_state.upgrade().map(AppState);
                Box::pin(async move {
                    let Some(state) = state else { return Ok(()) };
                    let rotated = crate::oauth::tokens::keys::rotate_due(&state, now).await?;
                    if rotated > 0 {
                        tracing::info!(rotated, "signing keys rotated on schedule");
                    }
                    Ok(())
                })
            }),
        )
        .await;
    let store = state.store.clone();
    state
        .scheduler
        .every_latest(
            "suspensions",
            TimeDelta::seconds(15),
            Arc::new(move |now| {
                let store = store.clone();
                Box::pin(async move {
                    let settled = crate::oauth::suspensions::settle(&store, now).await?;
                    if settled > 0 {
                        tracing::info!(settled, "suspensions started or ran out");
                    }
                    Ok(())
                })
            }),
        )
        .await;
    let limiter = state.limiter.clone();
    state
        .scheduler
        .every_latest(
            "rate-limit-pruning",
            TimeDelta::minutes(1),
            Arc::new(move |now| {
                limiter.prune(now);
                Box::pin(async { Ok(()) })
            }),
        )
        .await;
}
