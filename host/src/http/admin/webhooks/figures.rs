//! The delivery figures of a client's endpoints (attempts, acceptance, latency, failures) and
//! the events with their fan-out status.

use super::super::ListQuery;
use super::*;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope::Answer;
use crate::kernel::validate::{Notification, Rule};
use crate::operations::webhooks::figures;
use crate::operations::webhooks::figures::{EventView, MetricsView};
use crate::runtime::error::Error;
use crate::store::webhooks::events::event_page;
use crate::store::webhooks::{self as store};

/// The window metrics cover when the caller names none: the last 24 hours.
const DEFAULT_METRICS_WINDOW_HOURS: i64 = 24;

pub(crate) async fn metrics(
    state: AppState,
    caller: Caller,
    realm_id: &str,
    client_id: &str,
    query: Option<String>,
) -> Result<Answer<MetricsView>, Error> {
    let place = place_in_reach(&state.admin(), &caller, realm_id, Some(client_id), Intent::Read).await?;
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
    let window = (from, to, end);
    Ok(Answer::Ok(figures::metrics(&state, (&place.realm_id, client_id), webhook_id, window).await?))
}

pub(crate) async fn events(
    state: AppState,
    caller: Caller,
    realm_id: &str,
    client_id: &str,
    query: Option<String>,
) -> Result<Answer<EventView>, Error> {
    let place = place_in_reach(&state.admin(), &caller, realm_id, Some(client_id), Intent::Read).await?;
    let list = ListQuery::parse(query, &["eventType"])?;
    list.status_in(&[("Pending", ()), ("Delivered", ()), ("Partial", ()), ("Failed", ())])?;
    let found = event_page(&state.store, place.rows(), list.filter("eventType"), &list.page).await?;
    Ok(Answer::Paged(found.map(EventView::of)))
}
