//! Exposed passwords in the console: the accounts whose password arrived from an attack, and one
//! account's standing (its exposures and the measures in force on it).

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use maud::html;

use super::incident::measures;
use super::page::{Section, Shell};
use super::{Console, Page, data, encode, listed, pairs, value, when};
use crate::http::AppState;
use crate::protection::admin::threats;

/// `/console/attack-protection/exposures?realmId=…&unresolvedOnly=true`.
pub async fn list(State(state): State<AppState>, console: Console, RawQuery(query): RawQuery) -> Page {
    let pairs = pairs(query);
    let realm = value(&pairs, "realmId");
    let unresolved = value(&pairs, "unresolvedOnly") == Some("true");
    let mut query = format!("pageSize=100&unresolvedOnly={unresolved}");
    if let Some(realm) = realm {
        query.push_str(&format!("&realmId={}", encode(realm)));
    }
    let caller = console.acting("GET /threat-incidents/exposures");
    let listed = listed(threats::exposures(&state.admin(), caller, Some(query)).await)?;
    let content = html! {
        form.filters method="get" action="/console/attack-protection/exposures" {
            div { label for="realmId" { "Realm" } input #realmId name="realmId" value=(realm.unwrap_or_default()) placeholder="Every realm"; }
            div { input #unresolvedOnly type="checkbox" name="unresolvedOnly" value="true" checked[unresolved];
                  " " label.inline for="unresolvedOnly" { "Only passwords not changed since" } }
            button type="submit" { "Show" }
        }
        @if listed.items.is_empty() { p.panel { "No exposed password." } } @else {
            div.panel { table {
                caption { (listed.total_items) " accounts, latest exposure first" }
                thead { tr { th scope="col" { "Account" } th scope="col" { "Realm" } th scope="col" { "Client" }
                             th scope="col" { "Latest exposure" } th.n scope="col" { "Exposures" } th scope="col" { "Password" } } }
                tbody { @for exposure in &listed.items {
                    tr {
                        td { a href={ "/console/realms/" (encode(&exposure.realm_id)) "/users/" (encode(&exposure.user_id)) "/threat-standing" } { code { (exposure.user_id) } } }
                        td { (exposure.realm_id) } td { (exposure.client_id.as_deref().unwrap_or("—")) }
                        td { a href={ "/console/attack-protection/incidents/" (encode(&exposure.incident_id)) } { (when(&exposure.exposed_at)) } }
                        td.n { (exposure.exposures) }
                        td { @if exposure.resolved { "changed since" } @else { strong { "not changed" } } }
                    }
                } }
            } }
        }
    };
    let shell = Shell { console: &console, section: Section::Exposures, title: "Exposed passwords" };
    Ok(shell.answer(StatusCode::OK, content))
}

/// `/console/realms/{realm}/users/{userId}/threat-standing`.
pub async fn standing(
    State(state): State<AppState>,
    console: Console,
    Path((realm, user)): Path<(String, String)>,
) -> Page {
    let caller = console.acting("GET /realms/{realm}/users/{userId}/threat-standing");
    let standing = data(threats::standing(&state.admin(), caller, (realm.clone(), user.clone())).await)?;
    let content = html! {
        p.panel {
            @if standing.password_exposed {
                strong { "The password is exposed" } " since " (standing.exposed_since.as_deref().map(when).unwrap_or_default())
                ": it arrived from an attack and was not changed since. Sign-ins with it are refused until it is."
            } @else { "The current password is not known to any attack." }
        }
        section aria-labelledby="in-force" {
            h2 #in-force { "Measures in force on the account" }
            (measures(&console, None, &standing.measures_in_force, false))
        }
        section aria-labelledby="exposures" {
            h2 #exposures { "Exposures" }
            (measures(&console, None, &standing.exposures, false))
        }
    };
    let title = format!("Standing of account {user} in realm {realm}");
    Ok(Shell { console: &console, section: Section::Exposures, title: &title }.answer(StatusCode::OK, content))
}
