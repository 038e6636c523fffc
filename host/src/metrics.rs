//! The service's Prometheus metrics: HTTP requests by route and status with latency histograms,
//! requests in flight, failed job runs, and attempts attack protection let through unprotected. Every part of the
//! service records here; `http::metrics` serves them and observes requests.

use std::sync::Arc;

use prometheus_client::encoding::EncodeLabelSet;
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

/// The service's metrics registry.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<HttpLabels, Counter>,
    latency: Family<HttpLabels, Histogram>,
    in_flight: Gauge,
    jobs_failed: Family<JobLabels, Counter>,
    protection_failed_open: Family<CauseLabels, Counter>,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CauseLabels {
    pub cause: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct JobLabels {
    pub job: String,
}

impl Metrics {
    pub fn new() -> Arc<Self> {
        let mut registry = Registry::with_prefix("castellan");
        let requests = Family::<HttpLabels, Counter>::default();
        let latency = Family::<HttpLabels, Histogram>::new_with_constructor(
            (|| Histogram::new(exponential_buckets(0.000_25, 2.0, 16))) as fn() -> Histogram,
        );
        let in_flight = Gauge::default();
        registry.register("http_requests_in_flight", "HTTP requests received and not yet answered", in_flight.clone());
        let jobs_failed = Family::<JobLabels, Counter>::default();
        registry.register("http_requests", "HTTP requests served", requests.clone());
        registry.register("http_request_duration_seconds", "Time to answer HTTP requests", latency.clone());
        registry.register("job_failures", "Background job runs that failed", jobs_failed.clone());
        let protection_failed_open = Family::<CauseLabels, Counter>::default();
        registry.register(
            "attack_protection_failed_open",
            "Attempts that proceeded unprotected: the detector or the counting store could not answer",
            protection_failed_open.clone(),
        );
        Arc::new(Self { registry, requests, latency, in_flight, jobs_failed, protection_failed_open })
    }

    pub fn job_failed(&self, job: &str) {
        self.jobs_failed.get_or_create(&JobLabels { job: job.to_owned() }).inc();
    }

    /// An attempt proceeded as if attack protection were absent; `cause` is `detector` or `counting`.
    pub fn protection_failed_open(&self, cause: &str) {
        self.protection_failed_open.get_or_create(&CauseLabels { cause: cause.to_owned() }).inc();
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

    pub fn render(&self) -> String {
        let mut text = String::new();
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::error!(%error, "cannot encode metrics");
        }
        text
    }
}

/// A request in flight; see [`Metrics::request_started`].
#[derive(Debug)]
pub struct InFlight(Gauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}
