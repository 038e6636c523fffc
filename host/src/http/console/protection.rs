//! Attack protection in the console: the period's summary with its charts, and the incident list.

use crate::protection::summary::Share;
use crate::protection::summary::SourceShare;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use maud::html;

use super::chart::{self, Mark};
use super::incident::measures;
use super::page::{Section, Shell};
use super::{Console, Page, data, encode, listed, page_number, pairs, value, when};
use crate::directory::admin::realms;
use crate::http::AppState;
use crate::protection::admin::threats;
use crate::protection::summary::Figures;

/// The page sizes the incident list offers; the first is the default.
const PAGE_SIZES: [u32; 3] = [24, 48, 96];
/// The periods the summary offers, in days; 30 is the default.
const PERIODS: [i64; 3] = [7, 30, 90];
const STATUSES: [&str; 3] = ["Active", "Resolved", "Dismissed"];

/// `/console/attack-protection?days=7|30|90`: the period in figures and charts.
pub async fn summary(State(state): State<AppState>, console: Console, RawQuery(query): RawQuery) -> Page {
    let pairs = pairs(query);
    let days = value(&pairs, "days").and_then(|d| d.parse().ok()).filter(|d| PERIODS.contains(d)).unwrap_or(30);
    let caller = console.acting("GET /threat-incidents/summary");
    let query = Some(format!("days={days}"));
    let summary = data(threats::summary(&state.admin(), &state.protection, caller, query).await)?;
    let marks = |pick: fn(&Figures) -> i64| -> Vec<Mark> {
        summary.by_day.iter().map(|day| Mark { label: day.date.clone(), value: pick(&day.figures) }).collect()
    };
    let shares = |shares: &[Share]| -> Vec<Mark> {
        shares.iter().map(|share| Mark { label: share.name.clone(), value: share.figures.incidents }).collect()
    };
    let sources = |shares: &[SourceShare]| -> Vec<Mark> {
        shares.iter().map(|share| Mark { label: share.name.clone(), value: share.blocked_sources }).collect()
    };
    let content = html! {
        nav aria-label="Period" {
            p {
                "Period: "
                @for period in PERIODS {
                    a href={ "?days=" (period) } aria-current=[(period == summary.days).then_some("page")] { (period) " days" }
                    " "
                }
            }
        }
        dl.figures {
            div { dt { "Open incidents" } dd { (summary.open_incidents) } }
            div { dt { "Measures in force" } dd { (summary.measures_in_force) } }
            div { dt { "Incidents in the period" } dd { (summary.totals.incidents) } }
            div { dt { "Refused attempts" } dd { (summary.totals.refused_attempts) } }
            div { dt { "Blocked sources" } dd { (summary.totals.blocked_sources) } }
            div { dt { "Protected accounts" } dd { (summary.totals.protected_accounts) } }
            div { dt { "Exposed passwords" } dd { (summary.totals.exposed_passwords) } }
        }
        section aria-labelledby="by-day" {
            h2 #by-day { "Day by day" }
            (chart::columns("refused-by-day", "Refused attempts by day", &marks(|f| f.refused_attempts)))
            (chart::columns("exposed-by-day", "Exposed passwords by day", &marks(|f| f.exposed_passwords)))
        }
        section aria-labelledby="by-kind" {
            h2 #by-kind { "Incidents by kind and by severity" }
            (chart::rows("kinds", "Incidents by kind", &shares(&summary.by_kind)))
            (chart::rows("severities", "Incidents by severity", &shares(&summary.by_severity)))
        }
        section aria-labelledby="sources" {
            h2 #sources { "Where blocked sources came from" }
            (chart::rows("countries", "Blocked sources by country", &sources(&summary.countries)))
            (chart::rows("networks", "Blocked sources by network", &sources(&summary.networks)))
        }
        section aria-labelledby="latest" {
            h2 #latest { "Latest measures" }
            (measures(&console, None, &summary.latest_measures, false))
        }
        p { a href="/console/attack-protection/incidents" { "All incidents" } }
    };
    let title = format!("Attack protection: the last {days} days");
    Ok(Shell { console: &console, section: Section::Summary, title: &title }.answer(StatusCode::OK, content))
}

/// `/console/attack-protection/incidents`: the list, filtered by realm, client and status, 24, 48
/// or 96 to a page.
pub async fn incidents(State(state): State<AppState>, console: Console, RawQuery(query): RawQuery) -> Page {
    let pairs = pairs(query);
    let size = value(&pairs, "pageSize").and_then(|s| s.parse().ok()).filter(|s| PAGE_SIZES.contains(s));
    let size = size.unwrap_or(PAGE_SIZES[0]);
    let number = page_number(&pairs);
    let (realm, client, status) =
        (value(&pairs, "realmId"), value(&pairs, "clientId"), value(&pairs, "incidentStatus"));
    // The filters as the list's own address carries them, for its links.
    let mut kept = String::new();
    for (name, value) in [("realmId", realm), ("clientId", client), ("incidentStatus", status)] {
        if let Some(value) = value {
            kept.push_str(&format!("&{name}={}", encode(value)));
        }
    }
    let caller = console.acting("GET /threat-incidents");
    let query = Some(format!("pageNumber={number}&pageSize={size}{kept}"));
    let listed = listed(threats::list(&state.admin(), &state.protection, caller, query).await)?;
    let realms = realm_choices(&state, &console).await;
    let link = |number: u32| format!("?pageNumber={number}&pageSize={size}{kept}");
    let content = html! {
        form.filters method="get" action="/console/attack-protection/incidents" {
            div {
                label for="realmId" { "Realm" }
                @if let Some(realms) = &realms {
                    select #realmId name="realmId" {
                        option value="" { "Every realm" }
                        @for each in realms {
                            option value=(each) selected[realm == Some(each.as_str())] { (each) }
                        }
                    }
                } @else {
                    input #realmId name="realmId" value=(realm.unwrap_or_default()) placeholder="Every realm";
                }
            }
            div {
                label for="clientId" { "Client" }
                input #clientId name="clientId" value=(client.unwrap_or_default()) placeholder="Any client";
            }
            div {
                label for="incidentStatus" { "Status" }
                select #incidentStatus name="incidentStatus" {
                    option value="" { "Any status" }
                    @for each in STATUSES {
                        option value=(each) selected[status == Some(each)] { (each) }
                    }
                }
            }
            div {
                label for="pageSize" { "Per page" }
                select #pageSize name="pageSize" {
                    @for each in PAGE_SIZES {
                        option value=(each) selected[each == size] { (each) }
                    }
                }
            }
            button type="submit" { "Show" }
        }
        @if listed.items.is_empty() {
            p.panel { "No incident matches." }
        } @else {
            div.panel {
                table {
                    caption { (listed.total_items) " incidents, newest first" }
                    thead { tr {
                        th scope="col" { "Incident" } th scope="col" { "Realm" } th scope="col" { "Client" }
                        th scope="col" { "Severity" } th scope="col" { "Status" } th scope="col" { "Started" }
                        th.n scope="col" { "Refused attempts" } th.n scope="col" { "Blocked sources" }
                    } }
                    tbody {
                        @for incident in &listed.items {
                            tr {
                                td { a href={ "/console/attack-protection/incidents/" (encode(&incident.id)) } { (incident.title) } }
                                td { (incident.realm_id) }
                                td { (incident.client_id.as_deref().unwrap_or("—")) }
                                td { (incident.severity.as_str()) }
                                td { span.tag { (incident.status.as_str()) } }
                                td { (when(&incident.started_at)) }
                                td.n { (incident.refused_attempts) }
                                td.n { (incident.blocked_sources) }
                            }
                        }
                    }
                }
            }
        }
        nav.pages aria-label="Pages" {
            @if listed.page_number > 1 { a href=(link(listed.page_number - 1)) rel="prev" { "Previous page" } }
            span { "Page " (listed.page_number) " of " (listed.total_pages().max(1)) }
            @if i64::from(listed.page_number) < listed.total_pages() {
                a href=(link(listed.page_number + 1)) rel="next" { "Next page" }
            }
        }
    };
    let shell = Shell { console: &console, section: Section::Incidents, title: "Incidents" };
    Ok(shell.answer(StatusCode::OK, content))
}

/// The realms to choose from, when the person may list them and they fit one list; otherwise the
/// realm filter is typed.
async fn realm_choices(state: &AppState, console: &Console) -> Option<Vec<String>> {
    let query = Some("pageSize=200".to_owned());
    let listed = realms::list(&state.admin(), console.acting("GET /realms"), query).await.ok()?.page()?;
    let whole = listed.total_items <= i64::try_from(listed.items.len()).unwrap_or(i64::MAX);
    whole.then(|| listed.items.into_iter().map(|realm| realm.id).collect())
}
