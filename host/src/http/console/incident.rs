//! An incident in the console: its figures and measures, the analyst's readings with their
//! recommendations and the post-incident report; dismissing it, lifting a measure, applying a
//! recommendation and reverting it, and asking again for a reading that failed.

use crate::protection::analyst::AnalysisView;
use crate::protection::incident_views::MeasureView;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use maud::{Markup, html};
use serde_json::Value;

use super::page::{self, Section, Shell, csrf};
use super::{Console, Page, data, encode, form, pairs, value, when};
use crate::authz::{Resource, permission};
use crate::http::AppState;
use crate::http::protocol::login_page::secure;
use crate::protection::admin::analyses;
use crate::protection::admin::threats;
use crate::protection::analyst::Language;
use crate::protection::report::Format;
use crate::store::threats::{IncidentStatus, MeasureType, Standing};

/// `/console/attack-protection/incidents/{id}`: the incident, its measures, and what may be done.
pub async fn page(State(state): State<AppState>, console: Console, Path(id): Path<String>) -> Page {
    let caller = console.acting("GET /threat-incidents/{incidentId}");
    let incident = data(threats::read(&state.admin(), &state.protection, caller, id.clone()).await)?;
    let realm = Resource::Realm { id: incident.realm_id.clone(), owner: Some(console.caller.account_id().clone()) };
    let may_act = console.may(&state, "POST /threat-incidents/{incidentId}/dismiss", permission::REALM_UPDATE, realm);
    let readings = readings_of(&state, &console, &incident.id).await;
    let content = html! {
        dl.figures {
            div { dt { "Status" } dd { (incident.status.as_str()) } }
            div { dt { "Severity" } dd { (incident.severity.as_str()) } }
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
            @if may_act && incident.status == IncidentStatus::Active {
                form method="post" action={ "/console/attack-protection/incidents/" (encode(&incident.id)) "/dismiss" } {
                    (csrf(&console))
                    p { "Dismissing lifts every measure in force and forgets what its sources did. Exposed passwords must still be changed." }
                    button.danger type="submit" { "Dismiss this incident" }
                }
            }
        }
        section aria-labelledby="measures" {
            h2 #measures { "Measures" }
            (measures(&console, Some(&incident.id), incident.measures.as_deref().unwrap_or_default(), may_act))
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

/// The table of `measures`; with a lift button on each in force when `may_act`, which comes back to
/// the incident `back_to`.
pub(super) fn measures(console: &Console, back_to: Option<&str>, measures: &[MeasureView], may_act: bool) -> Markup {
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
                            td { (measure.kind.as_str()) }
                            td {
                                (measure.target_address.as_deref().or(measure.target_user_id.as_deref()).unwrap_or("—"))
                                @if let Some(country) = &measure.country { " (" (country) ")" }
                                @if let Some(network) = &measure.network { br; small { (network) } }
                                br; small { "realm " (measure.realm_id) }
                            }
                            td { (measure.reasons.join("; ")) }
                            td { (measure.standing.as_str()) }
                            td { (when(&measure.created_at)) }
                            td { (measure.lapses_at.as_deref().map(when).unwrap_or_else(|| "—".to_owned())) }
                            @if may_act {
                                td {
                                    @if measure.standing == Standing::InForce && measure.kind != MeasureType::PasswordExposed {
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

/// The language the person reads the analyst's words in.
fn language(console: &Console) -> Language {
    Language::preferred(console.language.as_ref().and_then(|value| value.to_str().ok()))
}

/// The incident's readings, newest first; `None` when the person may not read them.
async fn readings_of(state: &AppState, console: &Console, incident: &str) -> Option<Vec<AnalysisView>> {
    let caller = console.acting("GET /threat-incidents/{incidentId}/analyses");
    analyses::readings(&state.admin(), &caller, incident, language(console)).await.ok()
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

fn readings_section(console: &Console, incident: &str, readings: Option<&[AnalysisView]>, may_act: bool) -> Markup {
    let back = |form: Markup| html! { (csrf(console)) input type="hidden" name="incident" value=(incident); (form) };
    html! {
        @match readings {
            None => { p { "The readings are not yours to see." } }
            Some([]) => { p { "No reading yet: the analyst reads an incident once it has run five minutes." } }
            Some(readings) => { @for reading in readings {
                article.panel aria-labelledby={ "reading-" (reading.id) } {
                    h3 id={ "reading-" (reading.id) } { (reading.moment.as_str()) " reading, " (when(&reading.ran_at)) " (" (reading.status.as_str()) ")" }
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

/// Dismisses the incident, then shows it again.
pub async fn dismiss(State(state): State<AppState>, console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    let then = format!("/console/attack-protection/incidents/{}", encode(&id));
    let path = format!("/threat-incidents/{}/dismiss", encode(&id));
    let operation = ("POST /threat-incidents/{incidentId}/dismiss", path.as_str());
    console
        .act(&state, &form(&body), operation, &then, async |caller| {
            threats::dismiss(&state.admin(), &state.protection, caller, id.clone()).await
        })
        .await
}

/// Lifts the measure, then shows its incident again.
pub async fn lift(State(state): State<AppState>, console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    let path = format!("/threat-incidents/mitigations/{}/revoke", encode(&id));
    let operation = ("POST /threat-incidents/mitigations/{mitigationId}/revoke", path.as_str());
    console
        .act(&state, &form, operation, &back_to(&form), async |caller| {
            threats::revoke(&state.admin(), &state.protection, caller, id.clone()).await
        })
        .await
}

/// Asks again for a reading that failed.
pub async fn retry(State(state): State<AppState>, console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    let path = format!("/threat-incidents/analyses/{}/retry", encode(&id));
    let operation = ("POST /threat-incidents/analyses/{analysisId}/retry", path.as_str());
    let language = language(&console);
    console
        .act(&state, &form, operation, &back_to(&form), async |caller| {
            analyses::retried(&state.admin(), &state.analyst, &caller, &id, language).await
        })
        .await
}

/// Applies a reading's recommendation to the realm.
pub async fn apply(
    State(state): State<AppState>,
    console: Console,
    Path((id, index)): Path<(String, usize)>,
    body: Bytes,
) -> Page {
    let form = form(&body);
    let path = format!("/threat-incidents/analyses/{}/recommendations/{index}/apply", encode(&id));
    let operation =
        ("POST /threat-incidents/analyses/{analysisId}/recommendations/{recommendation}/apply", path.as_str());
    console
        .act(&state, &form, operation, &back_to(&form), async |caller| {
            analyses::apply(&state.admin(), caller, (id.clone(), index.to_string())).await
        })
        .await
}

/// Reverts an applied recommendation.
pub async fn revert(State(state): State<AppState>, console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    let path = format!("/threat-incidents/analysis-actions/{}/revert", encode(&id));
    let operation = ("POST /threat-incidents/analysis-actions/{actionId}/revert", path.as_str());
    console
        .act(&state, &form, operation, &back_to(&form), async |caller| {
            analyses::revert(&state.admin(), caller, id.clone()).await
        })
        .await
}

/// The post-incident report of a closing reading, as the admin API prints it: a page, or a PDF.
pub async fn report(
    State(state): State<AppState>,
    console: Console,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Page {
    let format = if value(&pairs(query), "format") == Some("pdf") { Format::Pdf } else { Format::Html };
    let caller = console.acting("GET /threat-incidents/analyses/{analysisId}/report");
    let printed = analyses::printed(&state.admin(), &caller, &id, format, language(&console)).await;
    let (content_type, bytes) = printed.map_err(|error| page::refused(&error))?;
    let mut response = (StatusCode::OK, [(header::CONTENT_TYPE, content_type)], bytes).into_response();
    let headers = response.headers_mut();
    secure(headers);
    // The printed page carries its own style and no script.
    let policy = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(policy));
    Ok(response)
}
