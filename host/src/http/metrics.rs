//! Prometheus metrics: requests by route and status, with latency histograms.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::AppState;

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
        Arc::new(Self { registry, requests, latency, jobs_failed, protection_failed_open })
    }

    pub fn job_failed(&self, job: &str) {
        self.jobs_failed.get_or_create(&JobLabels { job: job.to_owned() }).inc();
    }

    /// An attempt proceeded as if attack protection were absent; `cause` is `detector` or `counting`.
    pub fn protection_failed_open(&self, cause: &str) {
        self.protection_failed_open.get_or_create(&CauseLabels { cause: cause.to_owned() }).inc();
    }

    pub fn render(&self) -> String {
        let mut text = String::new();
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::error!(%error, "cannot encode metrics");
        }
        text
    }
}

pub async fn observe(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let response = next.run(request).await;
    let labels = HttpLabels { method, route, status: response.status().as_u16() };
    state.metrics.requests.get_or_create(&labels).inc();
    state.metrics.latency.get_or_create(&labels).observe(started.elapsed().as_secs_f64());
    response
}

pub async fn render(State(state): State<AppState>) -> Response {
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], state.metrics.render())
        .into_response()
}
