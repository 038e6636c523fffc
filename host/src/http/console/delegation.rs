//! Delegation in the console: a realm's grants, the form that creates one (client, person, scopes,
//! depth and expiry; allowed resources and the organization stay with the API), withdrawing one
//! with a reason, and the trail of token exchanges.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use maud::html;
use serde_json::{Map, Value, json};

use super::page::{self, Section, Shell, csrf};
use super::{Console, Page, encode, form, listed, value, when};
use crate::authz::{Resource, permission};
use crate::directory::admin::people as users;
use crate::directory::reach::{Found, InRealm};
use crate::http::AppState;
use crate::kernel::validate::Body;
use crate::oauth::admin::delegation;
use crate::store::delegation::GrantState;

/// `/console/realms/{realm}/delegation-grants`: the grants, newest first, with the form and the
/// latest exchanges.
pub async fn grants(State(state): State<AppState>, console: Console, Path(realm): Path<String>) -> Page {
    let at = format!("/realms/{}", encode(&realm));
    let refused = |error| page::refused(&error);
    let caller = console.acting("GET /realms/{realm}/delegation-grants");
    let reached = InRealm::reach(&state.admin(), &caller, &realm).await.map_err(refused)?;
    let query = Some("pageSize=100".to_owned());
    let grants = listed(delegation::list(&state.admin(), reached, query).await)?;
    let caller = console.acting("GET /realms/{realm}/delegation-exchanges");
    let reached = InRealm::reach(&state.admin(), &caller, &realm).await.map_err(refused)?;
    let query = Some("pageSize=50".to_owned());
    let exchanges = listed(delegation::exchanges(&state.admin(), reached, query).await)?;
    let owner = Some(console.caller.account_id().clone());
    let may_act = console.may(
        &state,
        "POST /realms/{realm}/delegation-grants",
        permission::REALM_UPDATE,
        Resource::Realm { id: realm.clone(), owner },
    );
    let here = format!("/console{at}/delegation-grants");
    let content = html! {
        @if grants.items.is_empty() { p.panel { "No grant yet." } } @else {
            div.panel { table {
                caption { (grants.total_items) " grants, newest first" }
                thead { tr {
                    th scope="col" { "Client" } th scope="col" { "Person" } th scope="col" { "Scopes" } th.n scope="col" { "Depth" }
                    th scope="col" { "Expires" } th scope="col" { "State" } th scope="col" { "Created" }
                    @if may_act { th scope="col" { "Withdraw" } }
                } }
                tbody { @for grant in &grants.items {
                    tr {
                        td { (grant.client_id) } td { code { (grant.subject_user_id) } } td { (grant.scopes.join(" ")) }
                        td.n { (grant.max_depth) }
                        td { (grant.expires_at.as_deref().map(when).unwrap_or_else(|| "never".to_owned())) }
                        td { span.tag { (grant.state.as_str()) }
                             @if let Some(withdrawal) = &grant.withdrawal { br; small { (when(&withdrawal.withdrawn_at)) ": " (withdrawal.reason) } } }
                        td { (when(&grant.created_at)) }
                        @if may_act { td {
                            @if grant.state == GrantState::Live {
                                form method="post" action={ (here) "/" (encode(&grant.id)) "/withdraw" } {
                                    (csrf(&console))
                                    label for={ "reason-" (grant.id) } { "Reason" }
                                    input id={ "reason-" (grant.id) } name="reason" required maxlength="1024";
                                    " " button.danger type="submit" { "Withdraw" }
                                }
                            }
                        } }
                    }
                } }
            } }
        }
        @if may_act {
            section aria-labelledby="create" {
                h2 #create { "Create a grant" }
                form method="post" action=(here) {
                    (csrf(&console))
                    div { label for="clientId" { "Client (the agent)" } input #clientId name="clientId" required; }
                    div { label for="person" { "Person (user id or username)" } input #person name="person" required; }
                    div { label for="scopes" { "Scopes, separated by spaces" } input #scopes name="scopes" required size="50"; }
                    div { label for="maxDepth" { "Depth (0–3)" } input #maxDepth name="maxDepth" type="number" min="0" max="3" value="0"; }
                    div { label for="expiresAt" { "Expires at (UTC; empty: never)" } input #expiresAt name="expiresAt" type="datetime-local"; }
                    button type="submit" { "Create the grant" }
                }
            }
        }
        section aria-labelledby="exchanges" {
            h2 #exchanges { "Token exchanges" }
            @if exchanges.items.is_empty() { p { "No exchange yet." } } @else {
                table {
                    caption { "The latest " (exchanges.items.len()) " of " (exchanges.total_items) }
                    thead { tr { th scope="col" { "At" } th scope="col" { "Client" } th scope="col" { "Person" } th scope="col" { "Grant" }
                                 th scope="col" { "Outcome" } th scope="col" { "Scopes" } th.n scope="col" { "Depth" } } }
                    tbody { @for exchange in &exchanges.items {
                        tr { td { (when(&exchange.occurred_at)) } td { (exchange.client_id) }
                             td { (exchange.subject_user_id.as_deref().unwrap_or("—")) } td { (exchange.grant_id.as_deref().unwrap_or("—")) }
                             td { (exchange.outcome.as_str()) @if let Some(code) = &exchange.error_code { " (" (code) ")" } }
                             td { (exchange.scopes.join(" ")) } td.n { (exchange.depth.map_or_else(|| "—".to_owned(), |d| d.to_string())) } }
                    } }
                }
            }
        }
    };
    let title = format!("Delegation grants of realm {realm}");
    Ok(Shell { console: &console, section: Section::Realms, title: &title }.answer(StatusCode::OK, content))
}

/// The person a form names, by id or by username; `None` when the realm has no such person.
async fn person(state: &AppState, console: &Console, realm: &str, named: &str) -> Page<Option<String>> {
    let caller = console.acting("GET /realms/{realm}/users/{userId}");
    if let Ok(found) = Found::reach(&state.admin(), &caller, realm, named).await
        && let Ok(user) = users::read(found)
    {
        return Ok(user.data().map(|user| user.id));
    }
    let caller = console.acting("GET /realms/{realm}/users");
    let reached = InRealm::reach(&state.admin(), &caller, realm).await.map_err(|error| page::refused(&error))?;
    let query = Some(format!("searchTerm={}&pageSize=50", encode(named)));
    let found = listed(users::list(&state.admin(), reached, query).await)?;
    Ok(found.items.into_iter().find(|user| user.username == named).map(|user| user.id))
}

/// Creates a grant from the form.
pub async fn create(State(state): State<AppState>, console: Console, Path(realm): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    if !console.genuine(&form) {
        return Err(super::session::forged());
    }
    let named = value(&form, "person").unwrap_or_default().trim();
    // A person the realm does not have goes to the operation as typed, which refuses it on
    // subjectUserId.
    let subject = person(&state, &console, &realm, named).await?.unwrap_or_else(|| named.to_owned());
    let scopes: Vec<&str> = value(&form, "scopes").unwrap_or_default().split_whitespace().collect();
    let mut grant = Map::new();
    grant.insert("clientId".into(), json!(value(&form, "clientId").unwrap_or_default().trim()));
    grant.insert("subjectUserId".into(), json!(subject));
    grant.insert("scopes".into(), json!(scopes));
    if let Some(depth) = value(&form, "maxDepth") {
        grant.insert("maxDepth".into(), depth.trim().parse::<i64>().map_or_else(|_| json!(depth), |d| json!(d)));
    }
    if let Some(local) = value(&form, "expiresAt").map(str::trim).filter(|v| !v.is_empty()) {
        // A datetime-local field answers minutes (`2026-12-01T09:30`), read as UTC.
        let instant = if local.len() == 16 { format!("{local}:00Z") } else { format!("{local}Z") };
        grant.insert("expiresAt".into(), Value::String(instant));
    }
    let here = format!("/console/realms/{}/delegation-grants", encode(&realm));
    let path = format!("/realms/{}/delegation-grants", encode(&realm));
    console
        .act(&state, &form, ("POST /realms/{realm}/delegation-grants", &path), &here, async |caller| {
            let reached = InRealm::reach(&state.admin(), &caller, &realm).await?;
            delegation::create(&state.admin(), reached, Body::from_map(grant)).await
        })
        .await
}

/// Withdraws a grant with the form's reason.
pub async fn withdraw(
    State(state): State<AppState>,
    console: Console,
    Path((realm, grant)): Path<(String, String)>,
    body: Bytes,
) -> Page {
    let form = form(&body);
    let reason = Map::from_iter([("reason".to_owned(), json!(value(&form, "reason").unwrap_or_default()))]);
    let here = format!("/console/realms/{}/delegation-grants", encode(&realm));
    let path = format!("/realms/{}/delegation-grants/{}/withdraw", encode(&realm), encode(&grant));
    let operation = ("POST /realms/{realm}/delegation-grants/{grantId}/withdraw", path.as_str());
    console
        .act(&state, &form, operation, &here, async |caller| {
            let found = Found::reach(&state.admin(), &caller, &realm, &grant).await?;
            delegation::withdraw(&state.admin(), found, Body::from_map(reason)).await
        })
        .await
}
