//! Start-up: a host built from its settings (database and migrations, policies, the secret key,
//! the first start's bootstrap, caches, counters, components, workers and jobs) and bound to its
//! port, then run until it is told to stop. Everything a request or a job needs is in its
//! [`Services`].

pub mod bootstrap;
pub mod jobs;

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::application::bootstrap::Bootstrapped;
use crate::authz::Authorizer;
use crate::kernel::clock::{Clock, ManualClock, SystemClock};
use crate::kernel::config::Settings;
use crate::kernel::crypto::SecretHasher;
use crate::runtime::cache::Caches;
use crate::runtime::context::Context;
use crate::runtime::jobs::Scheduler;
use crate::runtime::metrics::Metrics;
use crate::runtime::rate_limit::RateLimiter;
use crate::store::Store;
use crate::store::access_log::AccessLog;

/// The context of the domain operations, and every service beside it: what start-up builds, the
/// job table's jobs use and the edges hold. The domain never takes it whole: each operation takes
/// the context and the one or two services it calls.
#[derive(Debug)]
pub struct Services {
    pub context: Arc<Context>,
    /// Present only with `--manual-clock`.
    pub manual_clock: Option<Arc<ManualClock>>,
    pub authz: Arc<Authorizer>,
    pub access_log: AccessLog,
    pub limiter: Arc<RateLimiter>,
    pub scheduler: Arc<Scheduler>,
    pub webhooks: crate::operations::webhooks::Webhooks,
    /// Attack protection: its detector, and its counters in memory or in Redis shared by every host.
    pub protection: Arc<crate::protection::Protection>,
    /// The incident analyst: its component, and the language model when one is configured.
    pub analyst: Arc<crate::protection::analyst::Analyst>,
    /// Set once the host was told to stop: readiness fails while it drains.
    pub draining: Arc<crate::runtime::shutdown::Draining>,
}

impl std::ops::Deref for Services {
    type Target = Context;
    fn deref(&self) -> &Context {
        &self.context
    }
}

impl std::fmt::Debug for dyn Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock")
    }
}

/// A built service, bound to its port and ready to run.
pub struct Application {
    listener: TcpListener,
    services: Arc<Services>,
    bootstrapped: Option<Bootstrapped>,
    access_writer: JoinHandle<()>,
    queue_writer: JoinHandle<()>,
    change_follower: Option<JoinHandle<()>>,
}

impl Application {
    /// Connects and migrates the database (or, with `migrate_on_start` off, refuses a schema other
    /// than this release's), loads and validates the policies (refusing to start on an invalid
    /// one), bootstraps an empty database, and binds the listen address.
    pub async fn build(settings: Settings, policies: &crate::authz::PolicyFiles) -> anyhow::Result<Self> {
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
        if settings.migrate_on_start {
            store.migrate().await?;
        } else {
            store.check_schema().await?;
        }

        let (clock, manual_clock): (Arc<dyn Clock>, _) = if settings.manual_clock {
            let manual = Arc::new(ManualClock::starting_at(SystemClock.now()));
            (manual.clone(), Some(manual))
        } else {
            (Arc::new(SystemClock), None)
        };
        let bootstrapped = crate::application::bootstrap::run_if_empty(&store, &hasher, clock.as_ref()).await?;
        if let (Some(first), Some(path)) = (&bootstrapped, &settings.bootstrap_key_file) {
            crate::kernel::crypto::write_private_file(path, &first.api_key)
                .with_context(|| format!("cannot write the bootstrap key to {}", path.display()))?;
        }
        let metrics = Metrics::new();
        let scheduler = Arc::new(Scheduler::new(clock.clone(), metrics.clone()));
        let (access_log, access_writer) = AccessLog::start(store.clone());
        let (writes, queue_writer) = crate::store::write_queue::WriteQueue::start(store.clone());
        let session_reads = crate::store::session_reads::SessionReads::start(store.clone());
        let caches = Arc::new(Caches::new(!store.is_shared(), &metrics.cache_lookups()));
        let change_follower = crate::store::changes::follow(&store, caches.clone());
        let listener = TcpListener::bind(settings.listen)
            .await
            .with_context(|| format!("cannot listen on {}", settings.listen))?;

        let public_url = match &settings.public_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => format!("http://{}", listener.local_addr()?),
        };
        let passwords = crate::kernel::passwords::PasswordChecks {
            breached: crate::kernel::passwords::BreachedPasswords::load(
                settings.breached_passwords_file.as_deref(),
                settings.breached_passwords_api.as_deref(),
            )?,
            refusal_floors: crate::kernel::passwords::RefusalFloors::default(),
        };
        let outbound = crate::runtime::outbound::Outbound::new(&settings)?;
        let webhooks = crate::operations::webhooks::Webhooks::new(&settings, &hasher, outbound.web.clone())
            .context("cannot set up webhooks")?;
        let counters = Arc::new(match &settings.redis_url {
            Some(url) => {
                crate::runtime::counting::Counters::redis(url).await.context("cannot reach Redis (redis_url)")?
            }
            None => crate::runtime::counting::Counters::in_memory(),
        });
        let detector = crate::protection::detector::AttackDetector::load(settings.detector_component.as_deref())
            .context("cannot load the attack detector (detector_component)")?;
        let network_list = |path: &Option<std::path::PathBuf>| {
            path.as_deref().map_or_else(
                || Ok(crate::protection::networks::NetworkList::default()),
                crate::protection::networks::NetworkList::load,
            )
        };
        let protection = Arc::new(crate::protection::Protection::new(
            counters,
            detector,
            (network_list(&settings.datacenter_networks_file)?, network_list(&settings.tor_exits_file)?),
            crate::protection::networks::Geography::load(
                settings.country_database_file.as_deref(),
                settings.network_database_file.as_deref(),
            )?,
            metrics.clone(),
        ));
        let analyst = Arc::new(
            crate::protection::analyst::Analyst::load(&settings.analyst)
                .context("cannot load the incident analyst ([analyst] component or model)")?,
        );
        let admin_rate_limits = settings.admin_rate_limits;
        let services = Arc::new(Services {
            context: Arc::new(Context {
                settings: Arc::new(settings),
                public_url,
                store,
                clock,
                hasher,
                caches,
                metrics,
                writes,
                session_reads,
                passwords,
                outbound,
                detached: crate::runtime::detached::Detached::new(),
            }),
            manual_clock,
            authz: Arc::new(authz),
            access_log,
            limiter: Arc::new(RateLimiter::counting_in(admin_rate_limits, protection.counters.clone())),
            scheduler,
            webhooks,
            protection,
            analyst,
            draining: Arc::default(),
        });
        jobs::register(&services).await;
        Ok(Self { listener, services, bootstrapped, access_writer, queue_writer, change_follower })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or(self.services.settings.listen)
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
            self.services.public_url,
            crate::kernel::ids::PLATFORM_REALM,
            first.owner_code
        ))
    }

    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }

    /// Serves with `serve` (given the listener, the services, and what completes once `shutdown` has
    /// and the host has drained for `drain_seconds`, readiness failing), with the scheduler's ticker
    /// and the delivery workers beside it; then stops them and stores every queued access log entry.
    pub async fn run_with<Serve, Served>(
        self,
        serve: Serve,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()>
    where
        Serve: FnOnce(TcpListener, Arc<Services>, Stopped) -> Served,
        Served: Future<Output = anyhow::Result<()>>,
    {
        let Self { listener, services, access_writer, queue_writer, change_follower, .. } = self;
        if services.manual_clock.is_some() {
            tracing::warn!(
                "MANUAL CLOCK IS ON: time moves only through POST /_dev/clock. Never run production like this."
            );
        }
        let ticker = (services.manual_clock.is_none()).then(|| {
            let scheduler = services.scheduler.clone();
            tokio::spawn(async move {
                let mut every_second = tokio::time::interval(Duration::from_secs(1));
                loop {
                    every_second.tick().await;
                    scheduler.run_due().await;
                }
            })
        });
        // With the manual clock the workers are steps of the clock instead (see `register_jobs`).
        let workers = services.manual_clock.is_none().then(|| {
            [
                tokio::spawn(crate::operations::webhooks::delivery::run(
                    services.context.clone(),
                    services.webhooks.clone(),
                )),
                tokio::spawn(crate::operations::notifications::run(services.context.clone())),
            ]
        });
        tracing::info!(address = %listener.local_addr()?, "serving");
        let drain = Duration::from_secs(services.settings.drain_seconds.into());
        let stopped: Stopped = Box::pin(services.draining.clone().after(shutdown, drain));
        serve(listener, services.clone(), stopped).await?;
        // Every request has ended, so every queued write has been stored and answered.
        for task in ticker.into_iter().chain(change_follower).chain([queue_writer]).chain(workers.into_iter().flatten())
        {
            task.abort();
        }
        // Everything queued is stored before returning; the writer itself ends with the last handle.
        services.access_log.flush().await;
        drop(access_writer);
        tracing::info!("stopped");
        Ok(())
    }
}

/// What completes once the host was told to stop and has drained: the signal to stop serving.
pub type Stopped = Pin<Box<dyn Future<Output = ()> + Send>>;
