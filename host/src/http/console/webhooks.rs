//! Webhooks in the console: the endpoints of a realm or of a client, registering one (its signing
//! secret shown once, to people who may read secrets), editing, pausing and turning one back on,
//! rotating its secret, sending a test and removing it; an endpoint's history — Overview, Events and
//! Deliveries, each attempt with its request and response — with replay.

use crate::operations::webhooks::endpoints::EndpointView;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::{Map, json};

use super::page::{self, Section, Shell, csrf};
use super::{Console, Page, data, encode, form, listed, one, page_number, pairs, value, when};
use crate::authz::{Resource, permission};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::kernel::validate::Body;
use crate::operations::admin::webhooks as admin;
use crate::store::events::EventType;
use crate::store::webhooks::{AttemptState, EndpointKind, EndpointStatus};

/// Where the endpoints are: a realm, or a client of it.
#[derive(Debug, Deserialize)]
pub struct At {
    realm: String,
    client: Option<String>,
}

/// One endpoint.
#[derive(Debug, Deserialize)]
pub struct EndpointAt {
    #[serde(flatten)]
    at: At,
    #[serde(rename = "webhookId")]
    id: String,
}

/// One attempt of a client endpoint.
#[derive(Debug, Deserialize)]
pub struct DeliveryAt {
    #[serde(flatten)]
    endpoint: EndpointAt,
    #[serde(rename = "deliveryId")]
    delivery: String,
}

impl EndpointAt {
    /// The endpoint's realm, client and id, as the operations take them.
    fn parts(&self) -> (&str, Option<&str>, &str) {
        (&self.at.realm, self.at.client.as_deref(), &self.id)
    }

    /// The admin route of the endpoint and the operation `verb` on it (`""`, `/test`…), as the
    /// policies name it, and its path.
    fn operation(&self, method: &str, verb: &str) -> (String, String) {
        (
            format!("{method} {}/{{webhookId}}{verb}", self.at.route()),
            format!("{}/{}{verb}", self.at.api(), encode(&self.id)),
        )
    }
}

impl At {
    fn kind(&self) -> EndpointKind {
        if self.client.is_some() { EndpointKind::Client } else { EndpointKind::Realm }
    }

    /// The endpoints' path under the admin API.
    fn api(&self) -> String {
        match &self.client {
            Some(client) => format!("/realms/{}/clients/{}/webhooks", encode(&self.realm), encode(client)),
            None => format!("/realms/{}/webhooks", encode(&self.realm)),
        }
    }

    /// The place's realm and client, as the operations take them.
    fn place(&self) -> (&str, Option<&str>) {
        (&self.realm, self.client.as_deref())
    }

    /// The endpoints' page.
    fn page(&self) -> String {
        format!("/console{}", self.api())
    }

    fn named(&self) -> String {
        match &self.client {
            Some(client) => format!("client {client} of realm {}", self.realm),
            None => format!("realm {}", self.realm),
        }
    }

    /// The admin route of this place's endpoints, as the policies name operations.
    fn route(&self) -> &'static str {
        match self.kind() {
            EndpointKind::Client => "/realms/{realm}/clients/{client}/webhooks",
            EndpointKind::Realm => "/realms/{realm}/webhooks",
        }
    }

    /// Whether the person may do everything `permissions` name on this place, through `operation`
    /// (a method and a path under the endpoints' route).
    fn may(&self, state: &AppState, console: &Console, operation: &str, permissions: &[&str]) -> bool {
        let operation = match operation.split_once(' ') {
            Some((method, rest)) => format!("{method} {}{rest}", self.route()),
            None => operation.to_owned(),
        };
        let owner = Some(console.caller.account_id().clone());
        permissions.iter().all(|permission| {
            let resource = match &self.client {
                Some(client) => {
                    Resource::Client { realm_id: self.realm.clone(), id: client.clone(), owner: owner.clone() }
                }
                None => Resource::Realm { id: self.realm.clone(), owner: owner.clone() },
            };
            console.may(state, &operation, permission, resource)
        })
    }

    fn may_register(&self, state: &AppState, console: &Console) -> bool {
        match self.kind() {
            EndpointKind::Client => self.may(
                state,
                console,
                "POST ",
                &[permission::CLIENT_CREATE, permission::CLIENT_UPDATE, permission::CLIENT_DELETE],
            ),
            EndpointKind::Realm => self.may(state, console, "POST ", &[permission::WEBHOOK_CREATE]),
        }
    }
}

/// The fields of the registration and edit forms, as the operations take them.
fn endpoint_body(form: &[(String, String)]) -> Body {
    let events: Vec<&str> = form.iter().filter(|(name, _)| name == "events").map(|(_, v)| v.as_str()).collect();
    let whole = |name: &str| value(form, name).map(|v| v.trim().parse::<i64>().map_or(json!(v), |n| json!(n)));
    let mut body = Map::new();
    body.insert("name".into(), json!(value(form, "name").unwrap_or_default()));
    body.insert("url".into(), json!(value(form, "url").unwrap_or_default()));
    body.insert("description".into(), json!(value(form, "description").filter(|d| !d.trim().is_empty())));
    body.insert("events".into(), json!(events));
    for field in ["retries", "firstRetryAfterSeconds"] {
        if let Some(number) = whole(field) {
            body.insert(field.into(), number);
        }
    }
    Body::from_map(body)
}

/// The fields of an endpoint, filled from `endpoint` when editing one.
fn endpoint_fields(kind: EndpointKind, endpoint: Option<&EndpointView>) -> Markup {
    let heard: Vec<&str> =
        EventType::ALL.iter().filter(|event| event.heard_by() == Some(kind)).map(|event| event.as_str()).collect();
    let chosen = |event: &str| endpoint.is_some_and(|e| e.events.iter().any(|chosen| chosen == event));
    html! {
        div { label for="name" { "Name" } input #name name="name" required maxlength="128" value=[endpoint.map(|e| e.name.as_str())]; }
        div { label for="url" { "Address (https://)" } input #url name="url" type="url" required size="50" value=[endpoint.map(|e| e.url.as_str())]; }
        div { label for="description" { "Description" } input #description name="description" maxlength="1000" value=[endpoint.and_then(|e| e.description.as_deref())]; }
        fieldset {
            legend { "Events" }
            @for event in heard {
                div {
                    input type="checkbox" id={ "event-" (event) } name="events" value=(event) checked[chosen(event)];
                    " " label.inline for={ "event-" (event) } { (event) }
                }
            }
        }
        div { label for="retries" { "Retries (0–10)" } input #retries name="retries" type="number" min="0" max="10" value=(endpoint.map_or(5, |e| e.retries)); }
        div { label for="firstRetryAfterSeconds" { "First retry after, in seconds (30–3,600)" }
              input #firstRetryAfterSeconds name="firstRetryAfterSeconds" type="number" min="30" max="3600" value=(endpoint.map_or(60, |e| e.first_retry_after_seconds)); }
    }
}

/// The endpoints of a realm or a client, with the registration form.
pub async fn list(State(state): State<AppState>, console: Console, Path(at): Path<At>) -> Page {
    let caller = console.acting(&format!("GET {}", at.route()));
    let (realm, client) = at.place();
    let query = Some("pageSize=100".to_owned());
    let listed = listed(admin::list_endpoints(&state.admin(), caller, realm, client, query).await)?;
    let content = html! {
        @if listed.items.is_empty() {
            p.panel { "No endpoint yet." }
        } @else {
            div.panel { table {
                caption { "Endpoints of the " (at.named()) }
                thead { tr { th scope="col" { "Name" } th scope="col" { "Address" } th scope="col" { "Events" } th scope="col" { "Status" } } }
                tbody {
                    @for endpoint in &listed.items {
                        tr {
                            td { a href={ (at.page()) "/" (encode(&endpoint.id)) } { (endpoint.name) } }
                            td { (endpoint.url) }
                            td { (endpoint.events.join(", ")) }
                            td { span.tag { (endpoint.status.as_str()) } }
                        }
                    }
                }
            } }
        }
        @if at.may_register(&state, &console) {
            section aria-labelledby="register" {
                h2 #register { "Register an endpoint" }
                form method="post" action=(at.page()) {
                    (csrf(&console))
                    (endpoint_fields(at.kind(), None))
                    button type="submit" { "Register" }
                }
            }
        }
    };
    let title = format!("Webhooks of the {}", at.named());
    Ok(Shell { console: &console, section: Section::Realms, title: &title }.answer(StatusCode::OK, content))
}

/// Registers an endpoint; its page then shows the signing secret, this once.
pub async fn register(State(state): State<AppState>, console: Console, Path(at): Path<At>, body: Bytes) -> Page {
    let form = form(&body);
    let (operation, path) = (format!("POST {}", at.route()), at.api());
    let (realm, client) = at.place();
    let registered = console.acted(&state, &form, (&operation, &path), async |caller: Caller| {
        admin::register(&state.admin(), &state.webhooks, caller, realm, client, endpoint_body(&form)).await
    });
    let endpoint = one(registered.await?)?;
    let content = html! {
        div.panel role="status" {
            p { "The endpoint " strong { (endpoint.name) } " is registered." }
            @if let Some(secret) = &endpoint.signing_secret {
                p { "Its signing secret, shown this once — keep it where the receiver reads it:" }
                p { code #signing-secret { (secret) } }
            } @else {
                p { "Its signing secret ends in " code { (endpoint.signing_secret_last_four) } "; reading it takes the permission to read secrets." }
            }
            p { a href={ (at.page()) "/" (encode(&endpoint.id)) } { "Open the endpoint" } }
        }
    };
    let shell = Shell { console: &console, section: Section::Realms, title: "Endpoint registered" };
    Ok(shell.answer(StatusCode::CREATED, content))
}

/// The views of an endpoint's history.
const VIEWS: [(&str, &str); 3] = [("overview", "Overview"), ("events", "Events"), ("deliveries", "Deliveries")];

/// An endpoint: its settings and actions, and its history (`?view=overview|events|deliveries`).
pub async fn endpoint(
    State(state): State<AppState>,
    console: Console,
    Path(at): Path<EndpointAt>,
    RawQuery(query): RawQuery,
) -> Page {
    let pairs = pairs(query);
    let view = value(&pairs, "view").filter(|v| VIEWS.iter().any(|(name, _)| name == v)).unwrap_or("overview");
    let here = format!("{}/{}", at.at.page(), encode(&at.id));
    let caller = console.acting(&at.operation("GET", "").0);
    let endpoint = data(admin::read_endpoint(&state.admin(), caller, at.parts()).await)?;
    let may_change = at.at.may(&state, &console, "PUT /{webhookId}", &[permission::WEBHOOK_UPDATE]);
    let may_remove = at.at.may(&state, &console, "DELETE /{webhookId}", &[permission::WEBHOOK_DELETE]);
    let history = match view {
        "events" => events(&state, &console, &at, &pairs).await?,
        "deliveries" => deliveries(&state, &console, &at, may_change, &here).await?,
        _ => overview(&state, &console, &at).await?,
    };
    let content = html! {
        section aria-labelledby="settings" {
            h2 #settings { "Settings" }
            p { "Status: " span.tag { (endpoint.status.as_str()) }
                @if endpoint.consecutive_failures > 0 { " — " (endpoint.consecutive_failures) " failures in a row" } }
            p { "Registered " (when(&endpoint.created_at)) "; signing secret ending in " code { (endpoint.signing_secret_last_four) } "." }
            @if may_change {
                form method="post" action=(here) {
                    (csrf(&console))
                    (endpoint_fields(at.at.kind(), Some(&endpoint)))
                    button type="submit" { "Save" }
                }
                div.pages {
                    @let (status, label) = match endpoint.status {
                        EndpointStatus::Active => ("Paused", "Pause"),
                        EndpointStatus::Paused => ("Active", "Resume"),
                        _ => ("Active", "Turn back on"),
                    };
                    form.inline method="post" action={ (here) "/status" } {
                        (csrf(&console)) input type="hidden" name="status" value=(status);
                        button.quiet type="submit" { (label) }
                    }
                    form.inline method="post" action={ (here) "/test" } {
                        (csrf(&console)) button.quiet type="submit" { "Send test" }
                    }
                    form.inline method="post" action={ (here) "/rotate-secret" } {
                        (csrf(&console)) button.quiet type="submit" { "Rotate the signing secret" }
                    }
                    @if may_remove {
                        form.inline method="post" action={ (here) "/delete" } {
                            (csrf(&console)) button.danger type="submit" { "Remove" }
                        }
                    }
                }
            } @else {
                p { "Address: " (endpoint.url) } p { "Events: " (endpoint.events.join(", ")) }
            }
        }
        section aria-labelledby="history" {
            h2 #history { "History" }
            nav aria-label="History" { p {
                @for (name, label) in VIEWS {
                    a href={ "?view=" (name) } aria-current=[(name == view).then_some("page")] { (label) } " "
                }
            } }
            (history)
        }
        p { a href=(at.at.page()) { "All endpoints of the " (at.at.named()) } }
    };
    let title = format!("Endpoint {}", endpoint.name);
    Ok(Shell { console: &console, section: Section::Realms, title: &title }.answer(StatusCode::OK, content))
}

/// Attempts, acceptance rate, latency and the most common failures.
async fn overview(state: &AppState, console: &Console, at: &EndpointAt) -> Page<Markup> {
    let Some(client) = &at.at.client else {
        return Ok(html! { p { "Figures are kept for client endpoints; see Deliveries." } });
    };
    let caller = console.acting("GET /realms/{realm}/clients/{client}/webhooks/metrics");
    let query = Some(format!("webhookId={}", encode(&at.id)));
    let metrics = admin::metrics(&state.admin(), caller, &at.at.realm, client, query).await;
    let metrics = data(metrics)?;
    Ok(html! {
        dl.figures {
            div { dt { "Attempts" } dd { (metrics.attempts) } }
            div { dt { "Accepted" } dd { (metrics.succeeded) } }
            div { dt { "Failed" } dd { (metrics.failed) } }
            div { dt { "Scheduled" } dd { (metrics.scheduled) } }
            div { dt { "Acceptance rate" } dd { (metrics.acceptance_rate.map_or_else(|| "—".to_owned(), |r| format!("{:.1}%", r * 100.0))) } }
            @if let Some(latency) = &metrics.latency_ms {
                div { dt { "Latency (average)" } dd { (latency.average) " ms" } }
                div { dt { "Latency p50 / p95" } dd { (latency.p50) " / " (latency.p95) " ms" } }
            }
        }
        @if !metrics.top_failures.is_empty() {
            table {
                caption { "Most common failures" }
                thead { tr { th scope="col" { "Answer" } th scope="col" { "Failure" } th.n scope="col" { "Times" } } }
                tbody { @for failure in &metrics.top_failures {
                    tr { td { (failure.response_status.map_or_else(|| "none".to_owned(), |s| s.to_string())) } td { (failure.error) } td.n { (failure.count) } }
                } }
            }
        }
    })
}

/// Each event the client's endpoints heard, with its fan-out, 50 to a page. (The admin API also
/// narrows them to a status, but only by summing up every event of the client, far slower than
/// the page's other views; the console leaves it out.)
async fn events(state: &AppState, console: &Console, at: &EndpointAt, pairs: &[(String, String)]) -> Page<Markup> {
    let Some(client) = &at.at.client else {
        return Ok(html! { p { "The fan-out of events is kept for client endpoints; see Deliveries." } });
    };
    let number = page_number(pairs);
    let caller = console.acting("GET /realms/{realm}/clients/{client}/webhooks/events");
    let query = Some(format!("pageSize=50&pageNumber={number}"));
    let listed = listed(admin::events(&state.admin(), caller, &at.at.realm, client, query).await)?;
    Ok(html! {
        @if listed.items.is_empty() { p { "No event yet." } } @else {
            table {
                caption { "Events of the client, newest first (" (listed.total_items) ")" }
                thead { tr { th scope="col" { "Event" } th scope="col" { "Type" } th scope="col" { "At" } th.n scope="col" { "Endpoints" } th.n scope="col" { "Delivered" } th scope="col" { "Status" } } }
                tbody { @for event in &listed.items {
                    tr { td { code { (event.event_id) } } td { (event.event_type) } td { (when(&event.created_at)) }
                         td.n { (event.endpoints) } td.n { (event.delivered) } td { (event.status) } }
                } }
            }
            (page::pages(&listed, "&view=events"))
        }
    })
}

/// Each attempt to the endpoint with its request body and the answer, newest first; replay on a
/// client endpoint's.
async fn deliveries(
    state: &AppState,
    console: &Console,
    at: &EndpointAt,
    may_change: bool,
    here: &str,
) -> Page<Markup> {
    let caller = console.acting(&format!("GET {}/deliveries", at.at.route()));
    let query = Some(format!("webhookId={}&pageSize=50", encode(&at.id)));
    let (realm, client) = at.at.place();
    let listed = listed(admin::deliveries(&state.admin(), caller, realm, client, query).await)?;
    let attempts: Vec<_> = listed.items.iter().filter(|a| a.webhook_id == at.id).collect();
    Ok(html! {
        @if attempts.is_empty() { p { "No attempt yet." } }
        @for attempt in attempts {
            details.panel id={ "attempt-" (attempt.id) } {
                summary { (attempt.event_type) " — " (attempt.kind.as_str())
                    @if attempt.retry_number > 0 { " (retry " (attempt.retry_number) ")" }
                    " — " strong { (attempt.state.as_str()) }
                    @if let Some(status) = attempt.response_status { " — " (status) }
                    " — " (when(attempt.sent_at.as_deref().unwrap_or(&attempt.due_at))) }
                @if let Some(latency) = attempt.latency_ms { p { "Answered in " (latency) " ms." } }
                @if let Some(error) = &attempt.error { p.notice { (error) } }
                h3 { "Request body" } pre { code { (attempt.request_body) } }
                @if let Some(body) = &attempt.response_body { h3 { "Response body" } pre { code { (body) } } }
                @if may_change && at.at.client.is_some() && attempt.state != AttemptState::Scheduled {
                    form method="post" action={ (here) "/deliveries/" (encode(&attempt.id)) "/replay" } {
                        (csrf(console)) button.quiet type="submit" { "Replay" }
                    }
                }
            }
        }
    })
}

/// Saves the edit form.
pub async fn update(State(state): State<AppState>, console: Console, Path(at): Path<EndpointAt>, body: Bytes) -> Page {
    let here = format!("{}/{}", at.at.page(), encode(&at.id));
    let form = form(&body);
    let (operation, path) = at.operation("PUT", "");
    console
        .act(&state, &form, (&operation, &path), &here, async |caller| {
            admin::update_endpoint(&state.admin(), caller, at.parts(), endpoint_body(&form)).await
        })
        .await
}

/// Pauses, resumes, or turns a disabled endpoint back on.
pub async fn status(State(state): State<AppState>, console: Console, Path(at): Path<EndpointAt>, body: Bytes) -> Page {
    let here = format!("{}/{}", at.at.page(), encode(&at.id));
    let form = form(&body);
    let status = Map::from_iter([("status".to_owned(), json!(value(&form, "status").unwrap_or_default()))]);
    let (operation, path) = at.operation("PUT", "");
    console
        .act(&state, &form, (&operation, &path), &here, async |caller| {
            admin::update_endpoint(&state.admin(), caller, at.parts(), Body::from_map(status)).await
        })
        .await
}

/// Sends a `ping` now, then shows the deliveries.
pub async fn test(State(state): State<AppState>, console: Console, Path(at): Path<EndpointAt>, body: Bytes) -> Page {
    let here = format!("{}/{}?view=deliveries", at.at.page(), encode(&at.id));
    let (operation, path) = at.operation("POST", "/test");
    console
        .act(&state, &form(&body), (&operation, &path), &here, async |caller| {
            admin::test(&state.admin(), &state.webhooks, caller, at.parts()).await
        })
        .await
}

/// Rotates the signing secret and shows the new one, this once.
pub async fn rotate(State(state): State<AppState>, console: Console, Path(at): Path<EndpointAt>, body: Bytes) -> Page {
    let form = form(&body);
    let (operation, path) = at.operation("POST", "/rotate-secret");
    let rotated = console.acted(&state, &form, (&operation, &path), async |caller| {
        admin::rotate(&state.admin(), &state.webhooks, caller, at.parts()).await
    });
    let endpoint = one(rotated.await?)?;
    let content = html! {
        div.panel role="status" {
            @if let Some(secret) = &endpoint.signing_secret {
                p { "The new signing secret, shown this once:" } p { code #signing-secret { (secret) } }
            } @else {
                p { "The signing secret now ends in " code { (endpoint.signing_secret_last_four) } "." }
            }
            p { a href={ (at.at.page()) "/" (encode(&at.id)) } { "Back to the endpoint" } }
        }
    };
    let shell = Shell { console: &console, section: Section::Realms, title: "Signing secret rotated" };
    Ok(shell.answer(StatusCode::OK, content))
}

/// Removes the endpoint.
pub async fn delete(State(state): State<AppState>, console: Console, Path(at): Path<EndpointAt>, body: Bytes) -> Page {
    let (operation, path) = at.operation("DELETE", "");
    console
        .act(&state, &form(&body), (&operation, &path), &at.at.page(), async |caller| {
            admin::delete_endpoint(&state.admin(), caller, at.parts()).await
        })
        .await
}

/// Sends a client endpoint's attempt again, then shows the deliveries.
pub async fn replay(State(state): State<AppState>, console: Console, Path(at): Path<DeliveryAt>, body: Bytes) -> Page {
    let endpoint = &at.endpoint;
    let here = format!("{}/{}?view=deliveries", endpoint.at.page(), encode(&endpoint.id));
    let verb = format!("/deliveries/{}/replay", encode(&at.delivery));
    let (_, path) = endpoint.operation("POST", &verb);
    let operation = format!("POST {}/{{webhookId}}/deliveries/{{deliveryId}}/replay", endpoint.at.route());
    console
        .act(&state, &form(&body), (&operation, &path), &here, async |caller| {
            admin::replay(&state.admin(), &state.webhooks, caller, endpoint.parts(), &at.delivery).await
        })
        .await
}
