//! Capture endpoints in the console: addresses of the service that record every request they get
//! for a day, to point a webhook at while building a receiver. A capture's page shows what arrived
//! and keeps itself current: a small script asks for the list again every two seconds and tells
//! screen readers when more arrived.

use crate::operations::webhooks::captures::CapturedRequestView;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use maud::{Markup, html};

use super::page::{self, Section, Shell, csrf};
use super::{Console, Listed, Page, data, encode, form, listed, one, pairs, value, when};
use crate::authz::{Resource, permission};
use crate::directory::reach::Owned;
use crate::http::AppState;
use crate::operations::admin::captures;

/// Replaces the list when the count it carries changed.
const WATCH: &str = r#"
const list = document.getElementById("captured");
const status = document.getElementById("captured-status");
setInterval(async () => {
  const answer = await fetch(location.pathname + "?part=requests", { credentials: "same-origin" });
  if (!answer.ok) return;
  const fresh = document.createElement("div");
  fresh.innerHTML = await answer.text();
  const count = fresh.firstElementChild && fresh.firstElementChild.dataset.count;
  if (count !== undefined && count !== list.firstElementChild.dataset.count) {
    list.replaceChildren(...fresh.childNodes);
    status.textContent = count + " requests received";
  }
}, 2000);
"#;

/// `/console/webhooks/captures`.
pub async fn list(State(state): State<AppState>, console: Console) -> Page {
    let caller = console.acting("GET /webhook-captures");
    let query = Some("pageSize=100".to_owned());
    let listed = listed(captures::list_captures(&state.admin(), caller, query).await)?;
    let account = Resource::Account(console.caller.account_id().to_string());
    let may_create = console.may(&state, "POST /webhook-captures", permission::WEBHOOK_CREATE, account);
    let content = html! {
        p { "A capture endpoint records every request sent to its address for 24 hours: point an endpoint at it to see exactly what the service sends." }
        @if may_create {
            form method="post" action="/console/webhooks/captures" { (csrf(&console)) button type="submit" { "Create a capture endpoint" } }
        }
        @if listed.items.is_empty() { p.panel { "No capture endpoint." } } @else {
            div.panel { table {
                caption { (listed.total_items) " capture endpoints" }
                thead { tr { th scope="col" { "Address" } th scope="col" { "Created" } th scope="col" { "Until" } } }
                tbody { @for capture in &listed.items {
                    tr { td { a href={ "/console/webhooks/captures/" (encode(&capture.id)) } { (capture.url) } }
                         td { (when(&capture.created_at)) } td { (when(&capture.expires_at)) } }
                } }
            } }
        }
    };
    let shell = Shell { console: &console, section: Section::Captures, title: "Capture endpoints" };
    Ok(shell.answer(StatusCode::OK, content))
}

/// Creates a capture endpoint and shows it.
pub async fn create(State(state): State<AppState>, console: Console, body: Bytes) -> Page {
    let form = form(&body);
    let operation = ("POST /webhook-captures", "/webhook-captures");
    let created =
        console.acted(&state, &form, operation, async |caller| captures::create_capture(&state.admin(), caller).await);
    let capture = one(created.await?)?;
    Ok(page::see_other(&format!("/console/webhooks/captures/{}", encode(&capture.id))))
}

/// `/console/webhooks/captures/{id}`; with `?part=requests`, the list alone, for the page's script.
pub async fn capture(
    State(state): State<AppState>,
    console: Console,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Page {
    let caller = console.acting("GET /webhook-captures/{captureId}/requests");
    let owned = Owned::reach(&state.admin(), &caller, &id).await.map_err(|error| page::refused(&error))?;
    let query_of_list = Some("pageSize=100".to_owned());
    let listed = listed(captures::captured_requests(&state.admin(), owned, query_of_list).await)?;
    if value(&pairs(query), "part") == Some("requests") {
        return Ok(page::fragment(requests(&listed)));
    }
    let caller = console.acting("GET /webhook-captures/{captureId}");
    let owned = Owned::reach(&state.admin(), &caller, &id).await.map_err(|error| page::refused(&error))?;
    let capture = data(captures::read_capture(&state.admin(), owned).await)?;
    let content = html! {
        p.panel { "Address: " code #capture-url { (capture.url) } br; "Recording until " (when(&capture.expires_at)) "." }
        p #captured-status role="status" aria-live="polite" { (listed.total_items) " requests received" }
        div #captured { (requests(&listed)) }
    };
    let shell = Shell { console: &console, section: Section::Captures, title: "Capture endpoint" };
    Ok(shell.answer_with_script(StatusCode::OK, content, Some(WATCH)))
}

/// The requests received, newest first; the count travels with them for the page's script.
fn requests(listed: &Listed<CapturedRequestView>) -> Markup {
    html! {
        div data-count=(listed.total_items) {
            @if listed.items.is_empty() { p { "Nothing yet. This page shows each request as it arrives." } }
            @for request in &listed.items {
                details.panel {
                    summary { (request.method) " /" (request.path)
                        @if let Some(query) = &request.query { "?" (query) }
                        " — " (request.body_size) " bytes from " (request.source_ip) " — " (when(&request.received_at)) }
                    h3 { "Headers" } pre { code { (serde_json::to_string_pretty(&request.headers).unwrap_or_default()) } }
                    h3 { "Body" } pre { code { (request.body) } }
                }
            }
        }
    }
}
