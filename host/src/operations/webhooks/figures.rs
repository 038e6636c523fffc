//! The delivery figures of a client's endpoints (attempts, acceptance, latency, failures) and the
//! events with their fan-out status.

use crate::kernel::clock::iso;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::webhooks::events::EventDelivery;
use crate::store::webhooks::{self as store};
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

/// How the attempts to a client's endpoints went in a window.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MetricsView {
    /// The endpoint the figures are for; null for all of the client's endpoints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook_id: Option<String>,
    /// Attempts created from this instant on…
    pub from: String,
    /// …and before this one.
    pub to: String,
    /// Attempts made (succeeded or failed); tests, retries and replays included.
    pub attempts: i64,
    pub succeeded: i64,
    pub failed: i64,
    /// Attempts still waiting to be sent.
    pub scheduled: i64,
    /// Succeeded attempts over attempts made, 0 to 1; null when none was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acceptance_rate: Option<f64>,
    /// Milliseconds from sending the request to the end of the answer; null when none was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<LatencyView>,
    /// The most common failures (at most five), most frequent first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub top_failures: Vec<FailureView>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LatencyView {
    pub average: i64,
    pub p50: i64,
    pub p95: i64,
    pub p99: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureView {
    /// The receiver's status; null for a timeout, a refused address or a connection error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_status: Option<i64>,
    pub error: String,
    pub count: i64,
}

/// One event delivered to a client's endpoints, with its fan-out status.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventView {
    pub event_id: String,
    pub event_type: String,
    /// When it was fanned out to the endpoints.
    pub created_at: String,
    /// Endpoints it was fanned out to.
    pub endpoints: i64,
    /// Endpoints that accepted it (any attempt answered 2xx).
    pub delivered: i64,
    /// Pending (an endpoint has not accepted it and an attempt is still scheduled), Delivered (every
    /// endpoint accepted it), Partial (some did, the others have nothing left scheduled) or Failed
    /// (none did and nothing is left scheduled).
    pub status: String,
}

impl EventView {
    pub(crate) fn of(event: EventDelivery) -> Self {
        Self {
            event_id: event.event_id.into(),
            event_type: event.event_type,
            created_at: iso(event.created_at),
            endpoints: event.endpoints,
            delivered: event.delivered,
            status: event.status,
        }
    }
}

/// How the attempts to the endpoints of `client` of its realm (or to `webhook_id` alone) went in
/// a window: attempts created from its first instant on and before its last, which the figures
/// say ends at its second.
pub async fn metrics(
    context: &Context,
    client: (&str, &str),
    webhook_id: Option<String>,
    (from, to, end): (DateTime<Utc>, DateTime<Utc>, DateTime<Utc>),
) -> Result<MetricsView, Error> {
    let figures = store::metrics(context.store.pool(), client, webhook_id.as_deref(), (from, end)).await?;
    let latency_ms = figures
        .latency_average_ms
        .zip(figures.latency_percentiles_ms)
        .map(|(average, [p50, p95, p99])| LatencyView { average, p50, p95, p99 });
    Ok(MetricsView {
        webhook_id,
        from: iso(from),
        to: iso(to),
        attempts: figures.attempts,
        succeeded: figures.succeeded,
        failed: figures.attempts - figures.succeeded,
        scheduled: figures.scheduled,
        acceptance_rate: (figures.attempts > 0).then(|| figures.succeeded as f64 / figures.attempts as f64),
        latency_ms,
        top_failures: figures
            .failures
            .into_iter()
            .map(|(response_status, error, count)| FailureView { response_status, error, count })
            .collect(),
    })
}
