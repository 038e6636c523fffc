//! The change trail and the access log in the console, with the admin API's own filters: each
//! filter is part of the page's address, so a filtered view can be shared as a link.

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use maud::{Markup, html};

use super::page::{self, Section, Shell};
use super::{Console, Page, encode, listed, page_number, pairs, value, when};
use crate::http::AppState;
use crate::operations::admin::audit;

/// A filter field: its parameter, its label, and what it holds now.
fn filter(name: &str, label: &str, pairs: &[(String, String)]) -> Markup {
    html! { div { label for=(name) { (label) } input id=(name) name=(name) value=(value(pairs, name).unwrap_or_default()); } }
}

/// The query kept for the operation: the `allowed` parameters of the page's address.
fn kept(pairs: &[(String, String)], allowed: &[&str]) -> String {
    pairs
        .iter()
        .filter(|(name, _)| allowed.contains(&name.as_str()))
        .map(|(name, value)| format!("&{name}={}", encode(value)))
        .collect()
}

const TRAIL_FILTERS: &[&str] =
    &["realmId", "resourceType", "action", "actorUserId", "actorCredentialId", "status", "createdFrom", "createdTo"];

/// `/console/audit-trail`: every change, refused ones too, newest first.
pub async fn trail(State(state): State<AppState>, console: Console, RawQuery(query): RawQuery) -> Page {
    let pairs = pairs(query);
    let number = page_number(&pairs);
    let kept = kept(&pairs, TRAIL_FILTERS);
    let query = Some(format!("pageSize=50&pageNumber={number}{kept}"));
    let listed = listed(audit::trail(&state.admin(), console.acting("GET /audit-trail"), query).await)?;
    let content = html! {
        p { a href="/console/access-logs" { "The access log" } }
        form.filters method="get" action="/console/audit-trail" {
            (filter("realmId", "Realm", &pairs))
            (filter("resourceType", "Resource type", &pairs))
            (filter("action", "Action (Create, Update, Delete…)", &pairs))
            (filter("actorUserId", "Person (user id)", &pairs))
            (filter("status", "Outcome (Succeeded, Refused)", &pairs))
            button type="submit" { "Show" }
        }
        div.panel { table {
            caption { (listed.total_items) " changes, newest first" }
            thead { tr { th scope="col" { "At" } th scope="col" { "Change" } th scope="col" { "By" } th scope="col" { "Outcome" } } }
            tbody { @for change in &listed.items {
                tr {
                    td { (when(&change.occurred_at)) }
                    td { (change.action) " " (change.resource_type) @if let Some(id) = &change.resource_id { " " code { (id) } }
                         @if let Some(realm) = &change.realm_id { br; small { "realm " (realm) } }
                         @if change.before.is_some() || change.after.is_some() {
                             details { summary { "Before and after" }
                                 pre { code { (change.before.as_ref().map(|v| serde_json::to_string_pretty(v).unwrap_or_default()).unwrap_or_default()) } }
                                 pre { code { (change.after.as_ref().map(|v| serde_json::to_string_pretty(v).unwrap_or_default()).unwrap_or_default()) } } } } }
                    td { (change.actor_username.as_deref().or(change.actor_credential_name.as_deref()).unwrap_or(&change.actor_type))
                         br; small { (change.ip_address) } }
                    td { (change.outcome) " (" (change.status) ")" @if let Some(code) = &change.error_code { br; small { (code) } } }
                }
            } }
        } }
        (page::pages(&listed, &kept))
    };
    Ok(Shell { console: &console, section: Section::Trail, title: "Change trail" }.answer(StatusCode::OK, content))
}

const ACCESS_FILTERS: &[&str] = &["credentialId", "actorUserId", "status", "createdFrom", "createdTo"];

/// `/console/access-logs`: every use of the account's credentials and people, newest first.
pub async fn access_logs(State(state): State<AppState>, console: Console, RawQuery(query): RawQuery) -> Page {
    let pairs = pairs(query);
    let number = page_number(&pairs);
    let kept = kept(&pairs, ACCESS_FILTERS);
    let query = Some(format!("pageSize=50&pageNumber={number}{kept}"));
    let listed =
        listed(audit::access_logs(&state.admin(), &state.access_log, console.acting("GET /access-logs"), query).await)?;
    let content = html! {
        p { a href="/console/audit-trail" { "The change trail" } }
        form.filters method="get" action="/console/access-logs" {
            (filter("credentialId", "Credential (id)", &pairs))
            (filter("actorUserId", "Person (user id)", &pairs))
            (filter("status", "Outcome (Accepted, Refused)", &pairs))
            button type="submit" { "Show" }
        }
        div.panel { table {
            caption { (listed.total_items) " uses, newest first" }
            thead { tr { th scope="col" { "At" } th scope="col" { "Request" } th scope="col" { "By" } th scope="col" { "Answer" } } }
            tbody { @for access in &listed.items {
                tr {
                    td { (when(&access.occurred_at)) }
                    td { (access.method) " " (access.path) br; small { (access.ip_address) } }
                    td { (access.credential_name.as_deref().or(access.actor_user_id.as_deref()).unwrap_or("—")) }
                    td { (access.outcome.as_str()) " (" (access.status) ")" @if let Some(reason) = &access.reason { br; small { (reason) } } }
                }
            } }
        } }
        (page::pages(&listed, &kept))
    };
    Ok(Shell { console: &console, section: Section::Trail, title: "Access log" }.answer(StatusCode::OK, content))
}
