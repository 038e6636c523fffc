//! The service's metrics. Every part of the service records here; `http::metrics` serves them,
//! in the Prometheus text format or, when asked, OpenMetrics (`text`), after `readings` has set
//! the gauges read at scrape time (backlogs, blocks in force, key age, pools, the process).
//!
//! Every family is present from the start: those whose labels are known in advance hold a zero
//! sample for each label set; those labelled by realm gain samples as realms see traffic.

pub mod process;
pub mod readings;
pub mod text;

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct HttpLabels {
    pub method: String,
    pub route: String,
    pub status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TokenLabels {
    pub realm: String,
    pub grant_type: String,
    /// `issued`, or the RFC 6749 `error` of the refusal.
    pub outcome: String,
}

macro_rules! labels {
    ($($name:ident { $field:ident }),* $(,)?) => {
        $(
            #[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
            pub struct $name {
                pub $field: String,
            }
        )*
    };
}

labels! {
    CauseLabels { cause },
    TaskLabels { task },
    ReasonLabels { reason },
    MeasureLabels { measure },
    KindLabels { kind },
    OutcomeLabels { outcome },
    StateLabels { state },
    ClassLabels { class },
    BuildLabels { version },
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CacheLabels {
    pub cache: String,
    /// `hit` or `miss`.
    pub result: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PoolLabels {
    /// `read` or `write` (one pool on PostgreSQL: both name it).
    pub pool: String,
    /// `in_use` or `idle`.
    pub state: String,
}

/// The reasons a sign-in is refused, as `login_failed` names them.
pub const SIGN_IN_FAILURE_REASONS: &[&str] =
    &["invalid_credentials", "user_locked_out", "user_disabled", "password_change_required"];

/// The measures attack protection takes.
pub const MEASURES: &[&str] = &[
    "source_blocked",
    "closed_to_unknown_addresses",
    "sign_in_pushes_paused",
    "password_exposed",
    "recovery_silenced",
];

/// The kinds of attack incidents.
pub const INCIDENT_KINDS: &[&str] = &[
    "credential_stuffing",
    "password_spraying",
    "brute_force",
    "push_bombing",
    "recovery_abuse",
    "sign_up_abuse",
    "second_factor_guessing",
];

/// The caches of each host.
pub const CACHES: &[&str] = &[
    "credentials",
    "realms",
    "signers",
    "clients",
    "client_roles",
    "user_roles",
    "verifiers",
    "grants",
    "suspensions",
    "admin_networks",
    "realm_signers",
    "jwks",
    "offered_providers",
];

/// Why a connection was closed for holding still.
pub const CONNECTION_CUT_REASONS: &[&str] = &["header_timeout", "idle_timeout"];

/// The rate limit classes.
pub const RATE_LIMIT_CLASSES: &[&str] = &["standard", "sensitive", "failed_authentication"];

/// The service's metrics registry.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<HttpLabels, Counter>,
    latency: Family<HttpLabels, Histogram>,
    in_flight: Gauge,
    connections: Gauge,
    connections_cut: Family<ReasonLabels, Counter>,
    jobs_failed: Family<TaskLabels, Counter>,
    token_requests: Family<TokenLabels, Counter>,
    sign_in_failures: Family<ReasonLabels, Counter>,
    lockouts: Counter,
    protection_decisions: Family<MeasureLabels, Counter>,
    protection_failed_open: Family<CauseLabels, Counter>,
    incidents_opened: Family<KindLabels, Counter>,
    webhook_attempts: Family<OutcomeLabels, Counter>,
    webhook_latency: Histogram,
    cache_lookups: Family<CacheLabels, Counter>,
    rate_limit_refusals: Family<ClassLabels, Counter>,
    /// Set at scrape time by `readings`.
    pub(crate) gauges: readings::Gauges,
}

/// A family described even before its first sample, which the registry would leave out: those
/// labelled by values known only as traffic comes (routes, realms, jobs that failed).
#[derive(Debug)]
struct Described<M> {
    name: &'static str,
    help: &'static str,
    metric: M,
}

impl<M: EncodeMetric + std::fmt::Debug + Send + Sync + 'static> Collector for Described<M> {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let metric = encoder.encode_descriptor(self.name, self.help, None, self.metric.metric_type())?;
        self.metric.encode(metric)
    }
}

/// Registers `metric` to be described from the start, samples or not.
fn describe<M>(registry: &mut Registry, name: &'static str, help: &'static str, metric: M)
where
    M: EncodeMetric + std::fmt::Debug + Send + Sync + 'static,
{
    registry.register_collector(Box::new(Described { name, help, metric }));
}

/// Latency buckets from a quarter of a millisecond to about eight seconds.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.000_25, 2.0, 16))
}

/// A family with a zero sample for each of `values` under the label `make` builds.
fn preset<L, F>(values: &[&str], make: F) -> Family<L, Counter>
where
    L: Clone + std::hash::Hash + Eq + prometheus_client::encoding::EncodeLabelSet + std::fmt::Debug + Send + Sync,
    F: Fn(&str) -> L,
{
    let family = Family::<L, Counter>::default();
    for value in values {
        family.get_or_create(&make(value)).inc_by(0);
    }
    family
}

impl Metrics {
    pub fn new() -> Arc<Self> {
        let mut root = Registry::default();
        process::register(&mut root);
        let registry = root.sub_registry_with_prefix("castellan");

        let build = Family::<BuildLabels, Gauge>::default();
        build.get_or_create(&BuildLabels { version: env!("CARGO_PKG_VERSION").to_owned() }).set(1);
        registry.register("build_info", "The running version; always 1", build);

        let requests = Family::<HttpLabels, Counter>::default();
        let latency = Family::<HttpLabels, Histogram>::new_with_constructor(latency_histogram as fn() -> Histogram);
        let in_flight = Gauge::default();
        describe(registry, "http_requests", "HTTP requests served.", requests.clone());
        describe(registry, "http_request_duration_seconds", "Time to answer HTTP requests.", latency.clone());
        registry.register("http_requests_in_flight", "HTTP requests received and not yet answered", in_flight.clone());
        let connections = Gauge::default();
        registry.register("http_connections", "Client connections open", connections.clone());
        let connections_cut = preset(CONNECTION_CUT_REASONS, |reason| ReasonLabels { reason: reason.to_owned() });
        describe(
            registry,
            "http_connections_cut",
            "Connections closed for holding still: the request head too slow, or idle too long.",
            connections_cut.clone(),
        );
        let jobs_failed = Family::<TaskLabels, Counter>::default();
        describe(registry, "job_failures", "Background job runs that failed.", jobs_failed.clone());

        let token_requests = Family::<TokenLabels, Counter>::default();
        describe(
            registry,
            "token_requests",
            "Token endpoint requests of existing realms, by grant type and outcome (issued, or the OAuth error).",
            token_requests.clone(),
        );
        let sign_in_failures = preset(SIGN_IN_FAILURE_REASONS, |reason| ReasonLabels { reason: reason.to_owned() });
        registry.register("sign_in_failures", "Refused password sign-ins, by reason", sign_in_failures.clone());
        let lockouts = Counter::default();
        registry.register("lockouts", "Accounts or names locked by the realm lockout", lockouts.clone());

        let protection_decisions = preset(MEASURES, |measure| MeasureLabels { measure: measure.to_owned() });
        registry.register(
            "attack_protection_measures",
            "Measures attack protection took, by kind",
            protection_decisions.clone(),
        );
        let protection_failed_open = preset(&["detector", "counting"], |cause| CauseLabels { cause: cause.to_owned() });
        registry.register(
            "attack_protection_failed_open",
            "Attempts that proceeded unprotected: the detector or the counting store could not answer",
            protection_failed_open.clone(),
        );
        let incidents_opened = preset(INCIDENT_KINDS, |kind| KindLabels { kind: kind.to_owned() });
        registry.register("attack_incidents_opened", "Attack incidents opened, by kind", incidents_opened.clone());

        let webhook_attempts =
            preset(&["succeeded", "failed"], |outcome| OutcomeLabels { outcome: outcome.to_owned() });
        registry.register("webhook_attempts", "Webhook delivery attempts sent, by outcome", webhook_attempts.clone());
        let webhook_latency = latency_histogram();
        registry.register(
            "webhook_attempt_duration_seconds",
            "Time from sending a webhook attempt to the end of the receiver's answer",
            webhook_latency.clone(),
        );

        let cache_lookups = Family::<CacheLabels, Counter>::default();
        for cache in CACHES {
            for result in ["hit", "miss"] {
                cache_lookups
                    .get_or_create(&CacheLabels { cache: (*cache).to_owned(), result: result.to_owned() })
                    .inc_by(0);
            }
        }
        registry.register("cache_lookups", "Lookups in this host's caches, by cache and result", cache_lookups.clone());
        let rate_limit_refusals = preset(RATE_LIMIT_CLASSES, |class| ClassLabels { class: class.to_owned() });
        registry.register(
            "rate_limit_refusals",
            "Admin requests refused 429 by the rate limits, by class",
            rate_limit_refusals.clone(),
        );

        let gauges = readings::Gauges::register(registry);
        Arc::new(Self {
            registry: root,
            requests,
            latency,
            in_flight,
            connections,
            connections_cut,
            jobs_failed,
            token_requests,
            sign_in_failures,
            lockouts,
            protection_decisions,
            protection_failed_open,
            incidents_opened,
            webhook_attempts,
            webhook_latency,
            cache_lookups,
            rate_limit_refusals,
            gauges,
        })
    }

    /// A run of the background job `task` failed. The label is not `job`: Prometheus sets `job`
    /// on every series of a target, and would rename this one `exported_job`.
    pub fn job_failed(&self, task: &str) {
        self.jobs_failed.get_or_create(&TaskLabels { task: task.to_owned() }).inc();
    }

    /// An attempt proceeded as if attack protection were absent; `cause` is `detector` or `counting`.
    pub fn protection_failed_open(&self, cause: &str) {
        self.protection_failed_open.get_or_create(&CauseLabels { cause: cause.to_owned() }).inc();
    }

    /// A measure attack protection took.
    pub fn protection_measure(&self, measure: &str) {
        self.protection_decisions.get_or_create(&MeasureLabels { measure: measure.to_owned() }).inc();
    }

    /// An attack incident opened.
    pub fn incident_opened(&self, kind: &str) {
        self.incidents_opened.get_or_create(&KindLabels { kind: kind.to_owned() }).inc();
    }

    /// One answer of the token endpoint in an existing realm.
    pub fn token_request(&self, realm: &str, grant_type: &str, outcome: &str) {
        let labels =
            TokenLabels { realm: realm.to_owned(), grant_type: grant_type.to_owned(), outcome: outcome.to_owned() };
        self.token_requests.get_or_create(&labels).inc();
    }

    /// A refused password sign-in.
    pub fn sign_in_failed(&self, reason: &str) {
        self.sign_in_failures.get_or_create(&ReasonLabels { reason: reason.to_owned() }).inc();
    }

    /// An account or name locked by the realm lockout.
    pub fn locked_out(&self) {
        self.lockouts.inc();
    }

    /// A webhook attempt's outcome and time to answer.
    pub fn webhook_attempt(&self, succeeded: bool, seconds: f64) {
        let outcome = if succeeded { "succeeded" } else { "failed" };
        self.webhook_attempts.get_or_create(&OutcomeLabels { outcome: outcome.to_owned() }).inc();
        self.webhook_latency.observe(seconds);
    }

    /// The lookups of the caches, for them to count in (see `crate::runtime::cache`).
    pub fn cache_lookups(&self) -> Family<CacheLabels, Counter> {
        self.cache_lookups.clone()
    }

    /// An admin request refused by a rate limit of `class`.
    pub fn rate_limited(&self, class: &str) {
        self.rate_limit_refusals.get_or_create(&ClassLabels { class: class.to_owned() }).inc();
    }

    /// One answered HTTP request: its method, route template, status and time to answer.
    pub fn http_request(&self, labels: &HttpLabels, seconds: f64) {
        self.requests.get_or_create(labels).inc();
        self.latency.get_or_create(labels).observe(seconds);
    }

    /// Counts a request in flight until the returned guard is dropped (answered, or abandoned by
    /// its client).
    pub fn request_started(&self) -> InFlight {
        self.in_flight.inc();
        InFlight(self.in_flight.clone())
    }

    /// HTTP requests received and not yet answered.
    pub fn requests_in_flight(&self) -> i64 {
        self.in_flight.get()
    }

    /// Counts a connection open until the returned guard is dropped.
    pub fn connection_opened(&self) -> InFlight {
        self.connections.inc();
        InFlight(self.connections.clone())
    }

    /// Client connections open.
    pub fn connections_open(&self) -> i64 {
        self.connections.get()
    }

    /// A connection closed for holding still (`header_timeout`, `idle_timeout`).
    pub fn connection_cut(&self, reason: &str) {
        self.connections_cut.get_or_create(&ReasonLabels { reason: reason.to_owned() }).inc();
    }

    /// The registry in the OpenMetrics text format.
    pub fn render(&self) -> String {
        let mut text = String::new();
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::error!(%error, "cannot encode metrics");
        }
        text
    }
}

/// A request in flight, or a connection open; see [`Metrics::request_started`].
#[derive(Debug)]
pub struct InFlight(Gauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}
