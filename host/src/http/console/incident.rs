//! An incident in the console: its figures and measures, the analyst's readings with their
//! recommendations and the post-incident report; dismissing it, lifting a measure, applying a
//! recommendation and reverting it, and asking again for a reading that failed.

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::IntoResponse;
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::Value;

use super::page::{self, Section, Shell, csrf};
use super::{Console, Page, encode, form, pairs, value, when};
use crate::authz::{Resource, permission};
use crate::http::AppState;
use crate::http::protocol::login_page::secure;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Incident {
    id: String,
    realm_id: String,
    client_id: Option<String>,
    title: String,
    severity: String,
    status: String,
    started_at: String,
    last_activity_at: String,
    closed_at: Option<String>,
    detections: i64,
    refused_attempts: i64,
    blocked_sources: i64,
    protected_accounts: i64,
    exposed_passwords: i64,
    #[serde(default)]
    measures: Vec<Measure>,
}

/// `/console/attack-protection/incidents/{id}`: the incident, its measures, and what may be done.
pub async fn page(State(state): State<AppState>, console: Console, Path(id): Path<String>) -> Page {
    let incident: Incident = console
        .read(&format!("/threat-incidents/{}", encode(&id)))
        .await?
        .data()
        .map_err(|error| page::failure(&error))?;
    let realm = Resource::Realm { id: incident.realm_id.clone(), owner: Some(console.caller.account_id().clone()) };
    let may_act = console.may(&state, "POST /threat-incidents/{incidentId}/dismiss", permission::REALM_UPDATE, realm);
    let readings = readings_of(&console, &incident.id).await;
    let content = html! {
        dl.figures {
            div { dt { "Status" } dd { (incident.status) } }
            div { dt { "Severity" } dd { (incident.severity) } }
            div { dt { "Detections" } dd { (incident.detections) } }
            div { dt { "Refused attempts" } dd { (incident.refused_attempts) } }
            div { dt { "Blocked sources" } dd { (incident.blocked_sources) } }
            div { dt { "Protected accounts" } dd { (incident.protected_accounts) } }
            div { dt { "Exposed passwords" } dd { (incident.exposed_passwords) } }
        }
        section aria-labelledby="about" {
            h2 #about { "About" }
            table {
                tbody {
                    tr { th scope="row" { "Realm" } td { (incident.realm_id) } }
                    tr { th scope="row" { "Client of the first detection" } td { (incident.client_id.as_deref().unwrap_or("—")) } }
                    tr { th scope="row" { "Started" } td { (when(&incident.started_at)) } }
                    tr { th scope="row" { "Latest activity" } td { (when(&incident.last_activity_at)) } }
                    @if let Some(closed) = &incident.closed_at { tr { th scope="row" { "Closed" } td { (when(closed)) } } }
                }
            }
            @if may_act && incident.status == "Active" {
                form method="post" action={ "/console/attack-protection/incidents/" (encode(&incident.id)) "/dismiss" } {
                    (csrf(&console))
                    p { "Dismissing lifts every measure in force and forgets what its sources did. Exposed passwords must still be changed." }
                    button.danger type="submit" { "Dismiss this incident" }
                }
            }
        }
        section aria-labelledby="measures" {
            h2 #measures { "Measures" }
            (measures(&console, Some(&incident.id), &incident.measures, may_act))
        }
        section aria-labelledby="readings" {
            h2 #readings { "The analyst's readings" }
            (readings_section(&console, &incident.id, readings.as_deref(), may_act))
        }
        p { a href="/console/attack-protection/incidents" { "All incidents" } }
    };
    let title = format!("{}: {}", incident.title, when(&incident.started_at));
    Ok(Shell { console: &console, section: Section::Incidents, title: &title }.answer(StatusCode::OK, content))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Measure {
    id: String,
    realm_id: String,
    #[serde(rename = "type")]
    kind: String,
    target_address: Option<String>,
    target_user_id: Option<String>,
    country: Option<String>,
    network: Option<String>,
    #[serde(default)]
    reasons: Vec<String>,
    standing: String,
    created_at: String,
    lapses_at: Option<String>,
}

/// The table of `measures`; with a lift button on each in force when `may_act`, which comes back to
/// the incident `back_to`.
pub(super) fn measures(console: &Console, back_to: Option<&str>, measures: &[Measure], may_act: bool) -> Markup {
    html! {
        @if measures.is_empty() {
            p { "None." }
        } @else {
            table {
                thead { tr {
                    th scope="col" { "Measure" } th scope="col" { "On" } th scope="col" { "Why" }
                    th scope="col" { "Standing" } th scope="col" { "Since" } th scope="col" { "Until" }
                    @if may_act { th scope="col" { span { "Action" } } }
                } }
                tbody {
                    @for measure in measures {
                        tr {
                            td { (measure.kind) }
                            td {
                                (measure.target_address.as_deref().or(measure.target_user_id.as_deref()).unwrap_or("—"))
                                @if let Some(country) = &measure.country { " (" (country) ")" }
                                @if let Some(network) = &measure.network { br; small { (network) } }
                                br; small { "realm " (measure.realm_id) }
                            }
                            td { (measure.reasons.join("; ")) }
                            td { (measure.standing) }
                            td { (when(&measure.created_at)) }
                            td { (measure.lapses_at.as_deref().map(when).unwrap_or_else(|| "—".to_owned())) }
                            @if may_act {
                                td {
                                    @if measure.standing == "InForce" && measure.kind != "PasswordExposed" {
                                        form method="post" action={ "/console/attack-protection/measures/" (encode(&measure.id)) "/lift" } {
                                            (csrf(console))
                                            @if let Some(incident) = back_to { input type="hidden" name="incident" value=(incident); }
                                            button.quiet type="submit" { "Lift" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A reading of the incident analyst.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Reading {
    id: String,
    moment: String,
    status: String,
    classification: Option<String>,
    confidence: Option<i64>,
    what_happened: Option<String>,
    what_was_done: Option<String>,
    exposed_passwords: Option<String>,
    #[serde(default)]
    recommendations: Vec<Recommendation>,
    report: Option<Value>,
    failure: Option<String>,
    ran_at: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Recommendation {
    index: usize,
    title: String,
    setting: String,
    value: Value,
    current_value: Value,
    tightens: bool,
    noticed: String,
    why: String,
    applied_action_id: Option<String>,
}

/// The incident's readings, newest first; `None` when the person may not read them.
async fn readings_of(console: &Console, incident: &str) -> Option<Vec<Reading>> {
    let answer = console.call(Method::GET, &format!("/threat-incidents/{}/analyses", encode(incident)), None).await;
    let answer = answer.ok().filter(|answer| answer.status.is_success())?;
    answer.data().ok()
}

/// A setting's value as people read it.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Bool(true) => "on".to_owned(),
        Value::Bool(false) => "off".to_owned(),
        other => other.to_string(),
    }
}

fn readings_section(console: &Console, incident: &str, readings: Option<&[Reading]>, may_act: bool) -> Markup {
    let back = |form: Markup| html! { (csrf(console)) input type="hidden" name="incident" value=(incident); (form) };
    html! {
        @match readings {
            None => { p { "The readings are not yours to see." } }
            Some([]) => { p { "No reading yet: the analyst reads an incident once it has run five minutes." } }
            Some(readings) => { @for reading in readings {
                article.panel aria-labelledby={ "reading-" (reading.id) } {
                    h3 id={ "reading-" (reading.id) } { (reading.moment) " reading, " (when(&reading.ran_at)) " (" (reading.status) ")" }
                    @if let Some(failure) = &reading.failure {
                        p.notice { (failure) }
                        @if may_act {
                            form method="post" action={ "/console/attack-protection/readings/" (encode(&reading.id)) "/retry" } {
                                (back(html! {}))
                                button.quiet type="submit" { "Ask for this reading again" }
                            }
                        }
                    }
                    @if let Some(classification) = &reading.classification {
                        p { "Classified as " strong { (classification) }
                            @if let Some(confidence) = reading.confidence { " (" (confidence) "% sure)" } }
                    }
                    @if let Some(text) = &reading.what_happened { h4 { "What happened" } p { (text) } }
                    @if let Some(text) = &reading.what_was_done { h4 { "What was done" } p { (text) } }
                    @if let Some(text) = &reading.exposed_passwords { h4 { "Exposed passwords" } p { (text) } }
                    @if !reading.recommendations.is_empty() {
                        h4 { "Recommendations" }
                        ul {
                            @for recommendation in &reading.recommendations {
                                li {
                                    strong { (recommendation.title) } ": " (recommendation.setting) " "
                                    (shown(&recommendation.current_value)) " → " (shown(&recommendation.value)) ". "
                                    (recommendation.why) " " em { (recommendation.noticed) }
                                    @if may_act {
                                        @if let Some(action) = &recommendation.applied_action_id {
                                            form method="post" action={ "/console/attack-protection/actions/" (encode(action)) "/revert" } {
                                                (back(html! {}))
                                                button.quiet type="submit" { "Revert: " (recommendation.title) }
                                            }
                                        } @else if recommendation.tightens {
                                            form method="post" action={ "/console/attack-protection/readings/" (encode(&reading.id)) "/recommendations/" (recommendation.index) "/apply" } {
                                                (back(html! {}))
                                                button type="submit" { "Apply: " (recommendation.title) }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    @if reading.report.is_some() {
                        p {
                            "Post-incident report: "
                            a href={ "/console/attack-protection/readings/" (encode(&reading.id)) "/report" } { "page" }
                            " · "
                            a href={ "/console/attack-protection/readings/" (encode(&reading.id)) "/report?format=pdf" } { "PDF" }
                        }
                    }
                }
            } }
        }
    }
}

/// Where an action on the incident comes back to: the incident a form names, or the summary.
fn back_to(form: &[(String, String)]) -> String {
    match value(form, "incident") {
        Some(incident) => format!("/console/attack-protection/incidents/{}", encode(incident)),
        None => "/console/attack-protection".to_owned(),
    }
}

/// Dismisses the incident through the admin API, then shows it again.
pub async fn dismiss(console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    let then = format!("/console/attack-protection/incidents/{}", encode(&id));
    console.act(&form(&body), &format!("/threat-incidents/{}/dismiss", encode(&id)), None, &then).await
}

/// Lifts the measure through the admin API, then shows its incident again.
pub async fn lift(console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    let path = format!("/threat-incidents/mitigations/{}/revoke", encode(&id));
    console.act(&form, &path, None, &back_to(&form)).await
}

/// Asks again for a reading that failed.
pub async fn retry(console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    let path = format!("/threat-incidents/analyses/{}/retry", encode(&id));
    console.act(&form, &path, None, &back_to(&form)).await
}

/// Applies a reading's recommendation to the realm.
pub async fn apply(console: Console, Path((id, index)): Path<(String, usize)>, body: Bytes) -> Page {
    let form = form(&body);
    let path = format!("/threat-incidents/analyses/{}/recommendations/{index}/apply", encode(&id));
    console.act(&form, &path, None, &back_to(&form)).await
}

/// Reverts an applied recommendation.
pub async fn revert(console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    let path = format!("/threat-incidents/analysis-actions/{}/revert", encode(&id));
    console.act(&form, &path, None, &back_to(&form)).await
}

/// The post-incident report of a closing reading, as the admin API prints it: a page, or a PDF.
pub async fn report(console: Console, Path(id): Path<String>, RawQuery(query): RawQuery) -> Page {
    let format = if value(&pairs(query), "format") == Some("pdf") { "pdf" } else { "html" };
    let answer = console.read(&format!("/threat-incidents/analyses/{}/report?format={format}", encode(&id))).await?;
    let mut response = (StatusCode::OK, answer.bytes.clone()).into_response();
    let headers = response.headers_mut();
    if let Some(content_type) = answer.content_type.clone() {
        headers.insert(header::CONTENT_TYPE, content_type);
    }
    secure(headers);
    // The printed page carries its own style and no script.
    let policy = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(policy));
    Ok(response)
}
