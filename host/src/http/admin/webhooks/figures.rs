//! The delivery figures of a client's endpoints (attempts, acceptance, latency, failures) and
//! the events with their fan-out status.

use serde::Serialize;
use utoipa::ToSchema;

use super::super::ListQuery;
use super::*;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope::Answer;
use crate::kernel::clock::iso;
use crate::kernel::validate::{Notification, Rule};
use crate::runtime::error::Error;
use crate::store::webhooks::events::{EventDelivery, event_page};
use crate::store::webhooks::{self as store};

/// The window metrics cover when the caller names none: the last 24 hours.
const DEFAULT_METRICS_WINDOW_HOURS: i64 = 24;

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
    fn of(event: EventDelivery) -> Self {
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

pub(crate) async fn metrics(
    state: AppState,
    caller: Caller,
    realm_id: &str,
    client_id: &str,
    query: Option<String>,
) -> Result<Answer<MetricsView>, Error> {
    let place = place_in_reach(&state, &caller, realm_id, Some(client_id), Intent::Read).await?;
    let now = state.clock.now();
    let (mut webhook_id, mut from, mut to) = (None, None, None);
    let mut refused = Vec::new();
    for (name, value) in
        query.map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect::<Vec<_>>()).unwrap_or_default()
    {
        let instant = || chrono::DateTime::parse_from_rfc3339(&value).map(|at| at.with_timezone(&chrono::Utc)).ok();
        match name.as_str() {
            "webhookId" => webhook_id = Some(value.clone()).filter(|v| !v.is_empty()),
            "createdFrom" | "createdTo" => match instant() {
                Some(at) if name == "createdFrom" => from = Some(at),
                Some(at) => to = Some(at),
                None => refused.push(Notification::new(
                    &name,
                    Rule::Format,
                    format!("{name} must be an ISO 8601 timestamp"),
                )),
            },
            _ => refused.push(Notification::new(
                &name,
                Rule::Unknown,
                format!("{name} is not a parameter of the metrics"),
            )),
        }
    }
    // Without an end, the window includes what happened at this very instant.
    let end = to.unwrap_or(now + chrono::Duration::milliseconds(1));
    let to = to.unwrap_or(now);
    let from = from.unwrap_or(to - chrono::Duration::hours(DEFAULT_METRICS_WINDOW_HOURS));
    if from >= to {
        refused.push(Notification::new("createdFrom", Rule::Range, "createdFrom must be before createdTo"));
    }
    if !refused.is_empty() {
        return Err(Error::Validation(refused));
    }
    if let Some(id) = &webhook_id {
        store::find(state.store.pool(), &place.realm_id, Some(client_id), id)
            .await?
            .ok_or(Error::NotFound("webhook"))?;
    }
    let figures =
        store::metrics(state.store.pool(), (&place.realm_id, client_id), webhook_id.as_deref(), (from, end)).await?;
    let latency_ms = figures
        .latency_average_ms
        .zip(figures.latency_percentiles_ms)
        .map(|(average, [p50, p95, p99])| LatencyView { average, p50, p95, p99 });
    Ok(Answer::Ok(MetricsView {
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
    }))
}

pub(crate) async fn events(
    state: AppState,
    caller: Caller,
    realm_id: &str,
    client_id: &str,
    query: Option<String>,
) -> Result<Answer<EventView>, Error> {
    let place = place_in_reach(&state, &caller, realm_id, Some(client_id), Intent::Read).await?;
    let list = ListQuery::parse(query, &["eventType"])?;
    list.status_in(&[("Pending", ()), ("Delivered", ()), ("Partial", ()), ("Failed", ())])?;
    let found = event_page(&state.store, place.rows(), list.filter("eventType"), &list.page).await?;
    Ok(Answer::Paged(found.map(EventView::of)))
}
