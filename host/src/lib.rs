//! Castellan: a multi-tenant identity and access service.
//!
//! [`Application::build`] owns start-up: configuration, database and migrations, policies,
//! bootstrap, background workers and the HTTP listener. Everything a request needs travels in the
//! cloneable [`AppState`].

pub mod authz;
pub mod directory;
pub mod http;
pub mod kernel;
pub mod oauth;
pub mod operations;
pub mod plugins;
pub mod protection;
pub mod runtime;
pub mod store;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use chrono::{DateTime, TimeDelta, Utc};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::authz::Authorizer;
use crate::http::rate_limit::RateLimiter;
use crate::kernel::clock::{Clock, ManualClock, SystemClock};
use crate::kernel::config::Settings;
use crate::kernel::crypto::SecretHasher;
use crate::runtime::bootstrap::Bootstrapped;
use crate::runtime::cache::Caches;
use crate::runtime::jobs::Scheduler;
use crate::runtime::metrics::Metrics;
use crate::store::Store;
use crate::store::access_log::AccessLog;

/// What every request handler and job may use; cloning it is one reference count.
#[derive(Debug, Clone)]
pub struct AppState(Arc<Services>);

impl std::ops::Deref for AppState {
    type Target = Services;
    fn deref(&self) -> &Services {
        &self.0
    }
}

#[derive(Debug)]
pub struct Services {
    pub settings: Arc<Settings>,
    pub store: Store,
    pub clock: Arc<dyn Clock>,
    /// Present only with `--manual-clock`.
    pub manual_clock: Option<Arc<ManualClock>>,
    pub authz: Arc<Authorizer>,
    pub hasher: SecretHasher,
    pub access_log: AccessLog,
    pub limiter: Arc<RateLimiter>,
    pub metrics: Arc<Metrics>,
    pub scheduler: Arc<Scheduler>,
    pub caches: Arc<Caches>,
    /// The public base address of the service, without a trailing slash.
    pub public_url: String,
    pub breached_passwords: Arc<kernel::passwords::BreachedPasswords>,
    /// How long a refused password takes in realms whose people still hold imported hashes.
    pub refusal_floors: kernel::passwords::RefusalFloors,
    /// Metadata documents being fetched at once ([`oauth::metadata_documents::FETCHES_AT_ONCE`]).
    pub document_fetches: tokio::sync::Semaphore,
    /// Group commit for lone events and refresh-token rotations.
    pub writes: store::write_queue::WriteQueue,
    /// Coalesced reads of the sessions access tokens name.
    pub session_reads: store::session_reads::SessionReads,
    pub webhooks: operations::webhooks::Webhooks,
    pub mailer: operations::mail::Mailer,
    /// Attack protection: its detector, and its counters in memory or in Redis shared by every host.
    pub protection: Arc<protection::Protection>,
    /// The incident analyst: its component, and the language model when one is configured.
    pub analyst: Arc<protection::analyst::Analyst>,
    /// Sends that run after their request was answered.
    pub detached: Arc<runtime::detached::Detached>,
    /// The JWK Sets fetched from clients' and upstream providers' `jwks_uri`.
    pub client_keys: oauth::client_keys::FetchedKeys,
    /// The metadata fetched from upstream providers' discovery addresses.
    pub upstreams: oauth::federation::upstream::FetchedMetadata,
    /// Set once the host was told to stop: readiness fails while it drains.
    pub draining: Arc<runtime::shutdown::Draining>,
}

impl std::fmt::Debug for dyn Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock")
    }
}

/// A built service, bound to its port and ready to run.
pub struct Application {
    listener: TcpListener,
    state: AppState,
    bootstrapped: Option<Bootstrapped>,
    access_writer: JoinHandle<()>,
    queue_writer: JoinHandle<()>,
    change_follower: Option<JoinHandle<()>>,
}

impl Application {
    /// Connects and migrates the database, loads and validates the policies (refusing to start on
    /// an invalid one), bootstraps an empty database, and binds the listen address.
    pub async fn build(settings: Settings, policies: &authz::PolicyFiles) -> anyhow::Result<Self> {
        // Outgoing TLS (the breached-password range API, webhooks) uses aws-lc, the same crypto
        // as token signing. Installing twice (several applications in one process) is harmless.
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let authz =
            Authorizer::from_files(policies).with_context(|| format!("invalid policies: {}", policies.origin))?;
        let (hasher, created) = SecretHasher::load_or_create(&settings.secret_key_file)?;
        if created {
            tracing::warn!(
                path = %settings.secret_key_file.display(),
                "created a new secret key; every host of this deployment must use the same file"
            );
        }
        let store = Store::connect(&settings.database_url, settings.database_max_connections).await?;
        store.migrate().await?;

        let (clock, manual_clock): (Arc<dyn Clock>, _) = if settings.manual_clock {
            let manual = Arc::new(ManualClock::starting_at(SystemClock.now()));
            (manual.clone(), Some(manual))
        } else {
            (Arc::new(SystemClock), None)
        };
        let bootstrapped = runtime::bootstrap::run_if_empty(&store, &hasher, clock.as_ref()).await?;
        if let (Some(first), Some(path)) = (&bootstrapped, &settings.bootstrap_key_file) {
            kernel::crypto::write_private_file(path, &first.api_key)
                .with_context(|| format!("cannot write the bootstrap key to {}", path.display()))?;
        }
        let metrics = Metrics::new();
        let scheduler = Arc::new(Scheduler::new(clock.clone(), metrics.clone()));
        let (access_log, access_writer) = AccessLog::start(store.clone());
        let (writes, queue_writer) = store::write_queue::WriteQueue::start(store.clone());
        let session_reads = store::session_reads::SessionReads::start(store.clone());
        let caches = Arc::new(Caches::new(!store.is_shared(), &metrics.cache_lookups()));
        let change_follower = store::changes::follow(&store, caches.clone());
        let listener = TcpListener::bind(settings.listen)
            .await
            .with_context(|| format!("cannot listen on {}", settings.listen))?;

        let public_url = match &settings.public_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => format!("http://{}", listener.local_addr()?),
        };
        let breached_passwords = Arc::new(kernel::passwords::BreachedPasswords::load(
            settings.breached_passwords_file.as_deref(),
            settings.breached_passwords_api.as_deref(),
        )?);
        let webhooks = operations::webhooks::Webhooks::new(&settings, &hasher).context("cannot set up webhooks")?;
        let mailer = operations::mail::Mailer::new(&settings).context("cannot set up e-mail")?;
        let counters = Arc::new(match &settings.redis_url {
            Some(url) => protection::counting::Counters::redis(url).await.context("cannot reach Redis (redis_url)")?,
            None => protection::counting::Counters::in_memory(),
        });
        let detector = plugins::detector::AttackDetector::load(settings.detector_component.as_deref())
            .context("cannot load the attack detector (detector_component)")?;
        let network_list = |path: &Option<std::path::PathBuf>| {
            path.as_deref().map_or_else(
                || Ok(protection::networks::NetworkList::default()),
                protection::networks::NetworkList::load,
            )
        };
        let protection = Arc::new(protection::Protection::new(
            counters,
            detector,
            (network_list(&settings.datacenter_networks_file)?, network_list(&settings.tor_exits_file)?),
            protection::networks::Geography::load(
                settings.country_database_file.as_deref(),
                settings.network_database_file.as_deref(),
            )?,
            metrics.clone(),
        ));
        let analyst = Arc::new(
            protection::analyst::Analyst::load(&settings.analyst)
                .context("cannot load the incident analyst ([analyst] component or model)")?,
        );
        let admin_rate_limits = settings.admin_rate_limits;
        let state = AppState(Arc::new(Services {
            settings: Arc::new(settings),
            store,
            clock,
            manual_clock,
            authz: Arc::new(authz),
            hasher,
            access_log,
            limiter: Arc::new(RateLimiter::counting_in(admin_rate_limits, protection.counters.clone())),
            metrics,
            scheduler,
            caches,
            public_url,
            breached_passwords,
            refusal_floors: kernel::passwords::RefusalFloors::default(),
            document_fetches: tokio::sync::Semaphore::new(oauth::metadata_documents::FETCHES_AT_ONCE),
            writes,
            session_reads,
            webhooks,
            mailer,
            protection,
            analyst,
            detached: runtime::detached::Detached::new(),
            client_keys: oauth::client_keys::FetchedKeys::default(),
            upstreams: oauth::federation::upstream::FetchedMetadata::default(),
            draining: Arc::default(),
        }));
        register_jobs(&state).await;
        Ok(Self { listener, state, bootstrapped, access_writer, queue_writer, change_follower })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or(self.state.settings.listen)
    }

    /// What the first start created, if this start was the first.
    pub fn bootstrapped(&self) -> Option<&Bootstrapped> {
        self.bootstrapped.as_ref()
    }

    /// The link the Owner of the first account follows to choose a password, when this start
    /// bootstrapped the database.
    pub fn owner_link(&self) -> Option<String> {
        let first = self.bootstrapped.as_ref()?;
        Some(format!(
            "{}/realms/{}/account/password?code={}",
            self.state.public_url,
            kernel::ids::PLATFORM_REALM,
            first.owner_code
        ))
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serves until `shutdown` completes, drains for `drain_seconds` (readiness failing), then lets
    /// in-flight requests finish and stores every queued access log entry.
    pub async fn run_until_stopped(self, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        let Self { listener, state, access_writer, queue_writer, change_follower, .. } = self;
        if state.manual_clock.is_some() {
            tracing::warn!(
                "MANUAL CLOCK IS ON: time moves only through POST /_dev/clock. Never run production like this."
            );
        }
        let ticker = (state.manual_clock.is_none()).then(|| {
            let scheduler = state.scheduler.clone();
            tokio::spawn(async move {
                let mut every_second = tokio::time::interval(Duration::from_secs(1));
                loop {
                    every_second.tick().await;
                    scheduler.run_due().await;
                }
            })
        });
        // With the manual clock the workers are steps of the clock instead (see `register_jobs`).
        let workers = state.manual_clock.is_none().then(|| {
            [
                tokio::spawn(operations::webhooks::delivery::run(state.clone())),
                tokio::spawn(operations::notifications::run(state.clone())),
            ]
        });
        let router = http::router(state.clone());
        tracing::info!(address = %listener.local_addr()?, "serving");
        let drain = Duration::from_secs(state.settings.drain_seconds.into());
        let settings = &state.settings;
        let limits = http::connections::Limits {
            header_read: TimeDelta::seconds(settings.header_read_timeout_seconds.into()),
            idle: TimeDelta::seconds(settings.idle_timeout_seconds.into()),
            max_connections: usize::try_from(settings.max_connections).unwrap_or(usize::MAX),
        };
        let listener = http::connections::Guarded::new(listener, limits, state.clock.clone(), state.metrics.clone());
        axum::serve(listener, router.into_make_service_with_connect_info::<http::connections::Peer>())
            .with_graceful_shutdown(state.draining.clone().after(shutdown, drain))
            .await
            .context("server failed")?;
        // Every request has ended, so every queued write has been stored and answered.
        for task in ticker.into_iter().chain(change_follower).chain([queue_writer]).chain(workers.into_iter().flatten())
        {
            task.abort();
        }
        // Everything queued is stored before returning; the writer itself ends with the last handle.
        state.access_log.flush().await;
        drop(access_writer);
        tracing::info!("stopped");
        Ok(())
    }
}

/// Work over the store alone that says how many things it did.
type StoreWork =
    fn(store::Store, DateTime<Utc>) -> futures_util::future::BoxFuture<'static, Result<usize, store::Error>>;

/// Registers `work` to run at the latest instant of each period, logging `done` when it did any.
async fn store_job(state: &AppState, name: &'static str, every: TimeDelta, work: StoreWork, done: &'static str) {
    let store = state.store.clone();
    let run: runtime::jobs::JobFn = Arc::new(move |now| {
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

async fn register_jobs(state: &AppState) {
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
    let warn: StoreWork = |store, now| Box::pin(async move { operations::secret_expiry::warn(&store, now).await });
    let warned = "accounts warned of secrets about to expire";
    store_job(state, "secret-expiry-warnings", operations::secret_expiry::EVERY, warn, warned).await;
    let watch: StoreWork = |store, now| Box::pin(async move { protection::unusual_failures::watch(&store, now).await });
    let reported = "realms with unusual sign-in failures reported";
    store_job(state, "unusual-sign-in-failures", protection::unusual_failures::EVERY, watch, reported).await;
    let (store, analyst) = (state.store.clone(), state.analyst.clone());
    state
        .scheduler
        .every(
            "incident-readings",
            protection::analyst::schedule::EVERY,
            Arc::new(move |now| {
                let (store, analyst) = (store.clone(), analyst.clone());
                Box::pin(async move {
                    let ran = protection::analyst::schedule::run_due(&store, &analyst, now).await?;
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
                    let before = now - TimeDelta::days(operations::webhooks::HISTORY_DAYS);
                    let removed = store::webhooks::delete_history_before(store.writer(), before).await?;
                    if removed > 0 {
                        tracing::info!(removed, "webhook deliveries and events past 30 days removed");
                    }
                    let expired = store::captures::delete_expired(store.writer(), now).await?;
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
                    let removed = store::access_log::delete_before(store.writer(), now - retention).await?;
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
                    let removed = store::sessions::prune(store.writer(), now).await?;
                    if removed > 0 {
                        tracing::info!(removed, "expired refresh tokens and token revocations removed");
                    }
                    let removed = store::assertions::prune(store.writer(), now).await?;
                    if removed > 0 {
                        tracing::info!(removed, "expired client assertions and DPoP proofs removed");
                    }
                    let removed = store::browser::prune(store.writer(), now).await?;
                    if removed > 0 {
                        tracing::info!(removed, "expired authorization codes and browser sessions removed");
                    }
                    let removed = store::devices::prune(store.writer(), now).await?;
                    if removed > 0 {
                        tracing::info!(removed, "expired device authorizations removed");
                    }
                    let removed = store::sign_ups::prune(store.writer(), now).await?;
                    if removed > 0 {
                        tracing::info!(removed, "lapsed sign-ups removed");
                    }
                    let window_start = now - store::lockout::FAILURE_WINDOW;
                    let removed = store::lockout::prune(store.writer(), window_start, now).await?;
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
                    let rotated = oauth::tokens::keys::rotate_due(&state, now).await?;
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
                    let settled = oauth::suspensions::settle(&store, now).await?;
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
