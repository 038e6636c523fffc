//! The realms of the account, and a realm's page: its settings (lockout, password rules, the AI
//! advisor's consent), and where its webhooks, its clients' webhooks and its delegation grants are.

use crate::directory::realms::RealmView;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use maud::{Markup, html};
use serde_json::{Map, json};

use super::page::{self, Section, Shell, csrf};
use super::{Console, Page, data, encode, form, listed, value};
use crate::authz::{Resource, permission};
use crate::directory::admin::{clients, realms};
use crate::directory::reach::InRealm;
use crate::http::AppState;
use crate::kernel::validate::Body;

/// The switches of the settings form: the API's field and its label.
const SWITCHES: [(&str, &str); 5] = [
    ("lockoutEnabled", "Lock accounts out after failed sign-ins"),
    ("blockBreachedPasswords", "Refuse passwords found in breaches"),
    ("selfSignUp", "People may sign themselves up"),
    ("passkeySignUp", "They may sign up with a passkey and no password"),
    ("aiAdvisor", "The AI advisor may read this realm's incidents (consent)"),
];
/// The numbers of the settings form: the API's field, its label and its bounds.
const NUMBERS: [(&str, &str, i64, i64); 3] = [
    ("maxFailedAttempts", "Failed sign-ins before a lockout", 1, 100),
    ("lockoutDurationMinutes", "Minutes a lockout lasts", 1, 1440),
    ("minimumPasswordLength", "Shortest password", 8, 64),
];

fn settings_form(console: &Console, at: &str, settings: &RealmView) -> Markup {
    let on = |field: &str| match field {
        "lockoutEnabled" => settings.lockout_enabled,
        "blockBreachedPasswords" => settings.block_breached_passwords,
        "selfSignUp" => settings.self_sign_up,
        "passkeySignUp" => settings.passkey_sign_up,
        _ => settings.ai_advisor,
    };
    let number = |field: &str| match field {
        "maxFailedAttempts" => settings.max_failed_attempts,
        "lockoutDurationMinutes" => settings.lockout_duration_minutes,
        _ => settings.minimum_password_length,
    };
    html! {
        form method="post" action=(at) {
            (csrf(console))
            div { label for="displayName" { "Name" } input #displayName name="displayName" required value=(settings.display_name); }
            @for (field, label, low, high) in NUMBERS {
                div { label for=(field) { (label) " (" (low) "–" (high) ")" }
                      input id=(field) name=(field) type="number" min=(low) max=(high) value=(number(field)); }
            }
            @for (field, label) in SWITCHES {
                div { input type="checkbox" id=(field) name=(field) value="true" checked[on(field)]; " " label.inline for=(field) { (label) } }
            }
            button type="submit" { "Save the settings" }
        }
    }
}

/// `/console/realms`.
pub async fn list(State(state): State<AppState>, console: Console) -> Page {
    let query = Some("pageSize=200".to_owned());
    let realms = listed(realms::list(&state.admin(), console.acting("GET /realms"), query).await)?;
    let content = html! {
        div.panel { table {
            caption { (realms.total_items) " realms" }
            thead { tr { th scope="col" { "Realm" } th scope="col" { "Name" } th scope="col" { "Status" } } }
            tbody { @for realm in &realms.items {
                tr { td { a href={ "/console/realms/" (encode(&realm.id)) } { (realm.id) } } td { (realm.display_name) } td { (realm.status.as_str()) } }
            } }
        } }
    };
    Ok(Shell { console: &console, section: Section::Realms, title: "Realms" }.answer(StatusCode::OK, content))
}

/// `/console/realms/{realm}`.
pub async fn realm(State(state): State<AppState>, console: Console, Path(id): Path<String>) -> Page {
    let reached = InRealm::reach(&state.admin(), &console.acting("GET /realms/{realm}"), &id).await;
    let realm = data(realms::read(reached.map_err(|error| page::refused(&error))?))?;
    let at = format!("/console/realms/{}", encode(&realm.id));
    let caller = console.acting("GET /realms/{realm}/clients");
    let reached = InRealm::reach(&state.admin(), &caller, &id).await.map_err(|error| page::refused(&error))?;
    let query = Some("pageSize=200".to_owned());
    let clients = listed(clients::list(&state.admin(), reached, query).await)?;
    let owner = Some(console.caller.account_id().clone());
    let may_change = console.may(
        &state,
        "PUT /realms/{realm}",
        permission::REALM_UPDATE,
        Resource::Realm { id: realm.id.clone(), owner },
    );
    let content = html! {
        ul {
            li { a href={ (at) "/webhooks" } { "Webhooks of the realm" } " (administrative changes and attacks)" }
            li { a href={ (at) "/users" } { "People" } }
            li { a href={ (at) "/organizations" } { "Organizations" } }
            li { a href={ (at) "/identity-providers" } { "Identity providers" } }
            li { a href={ (at) "/delegation-grants" } { "Delegation grants" } }
        }
        div.panel { table {
            caption { (clients.total_items) " clients" }
            thead { tr { th scope="col" { "Client" } th scope="col" { "Name" } th scope="col" { "Status" } th scope="col" { "Webhooks" } } }
            tbody { @for client in &clients.items {
                tr {
                    td { a href={ (at) "/clients/" (encode(&client.id)) } { (client.id) } } td { (client.name) } td { (client.status.as_str()) }
                    td { a href={ (at) "/clients/" (encode(&client.id)) "/webhooks" } { "Webhooks of " (client.id) } }
                }
            } }
        } }
        @if may_change {
            section aria-labelledby="settings" { h2 #settings { "Settings" } (settings_form(&console, &at, &realm)) }
        }
    };
    let title = format!("Realm {}", realm.display_name);
    Ok(Shell { console: &console, section: Section::Realms, title: &title }.answer(StatusCode::OK, content))
}

/// Saves the realm's settings form: unchecked switches are off.
pub async fn update(State(state): State<AppState>, console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    let mut settings = Map::new();
    settings.insert("displayName".into(), json!(value(&form, "displayName").unwrap_or_default()));
    for (field, ..) in NUMBERS {
        if let Some(number) = value(&form, field) {
            settings.insert(field.into(), number.trim().parse::<i64>().map_or_else(|_| json!(number), |n| json!(n)));
        }
    }
    for (field, _) in SWITCHES {
        settings.insert(field.into(), json!(value(&form, field).is_some()));
    }
    let at = format!("/console/realms/{}", encode(&id));
    let path = format!("/realms/{}", encode(&id));
    let operation = ("PUT /realms/{realm}", path.as_str());
    console
        .act(&state, &form, operation, &at, async |caller| {
            let reached = InRealm::reach(&state.admin(), &caller, &id).await?;
            realms::update(&state.admin(), reached, Body::from_map(settings)).await
        })
        .await
}
