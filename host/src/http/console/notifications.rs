//! The account's operational notifications in the console, and where they are sent.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use maud::html;
use serde_json::{Map, Value, json};

use super::page::{Section, Shell, csrf};
use super::{Console, Page, data, form, listed, value, when};
use crate::authz::{Resource, permission};
use crate::http::AppState;
use crate::kernel::validate::Body;
use crate::operations::admin::notifications;

const ATTACKS: [(&str, &str); 3] = [
    ("InConsole", "In the console only"),
    ("EmailAndWebhook", "By e-mail and to the webhook too"),
    ("Off", "Not at all"),
];

/// `/console/notifications`.
pub async fn notifications(State(state): State<AppState>, console: Console) -> Page {
    let caller = console.acting("GET /account/notifications");
    let query = Some("pageSize=100".to_owned());
    let listed = listed(notifications::notifications(&state.admin(), caller, query).await)?;
    let caller = console.acting("GET /account/notification-preferences");
    let preferences = data(notifications::preferences(&state.admin(), caller).await)?;
    let account = Resource::Account(console.caller.account_id().to_string());
    let may_change = console.may(&state, "PUT /account/notification-preferences", permission::ACCOUNT_UPDATE, account);
    let content = html! {
        @if listed.items.is_empty() { p.panel { "No notification." } } @else {
            div.panel { table {
                caption { (listed.total_items) " notifications, newest first" }
                thead { tr { th scope="col" { "At" } th scope="col" { "Severity" } th scope="col" { "What" } th scope="col" { "Posted" } } }
                tbody { @for notification in &listed.items {
                    tr { td { (when(&notification.created_at)) } td { (notification.severity) }
                         td { strong { (notification.title) } br; (notification.description) br; small { (notification.notification_type) } }
                         td { (notification.webhook_post) } }
                } }
            } }
        }
        section aria-labelledby="preferences" {
            h2 #preferences { "Where notifications go" }
            @if may_change {
                form method="post" action="/console/notifications" {
                    (csrf(&console))
                    div { label for="webhookUrl" { "Webhook address (https://; empty: none)" }
                          input #webhookUrl name="webhookUrl" type="url" size="60" value=[preferences.webhook_url.as_deref()]; }
                    fieldset { legend { "Attacks detected" }
                        @for (choice, label) in ATTACKS {
                            div { input type="radio" id={ "attacks-" (choice) } name="attacksDetected" value=(choice) checked[preferences.attacks_detected.as_str() == choice];
                                  " " label.inline for={ "attacks-" (choice) } { (label) } }
                        }
                    }
                    button type="submit" { "Save" }
                }
            } @else {
                p { "Webhook: " (preferences.webhook_url.as_deref().unwrap_or("none")) "; attacks detected: " (preferences.attacks_detected.as_str()) "." }
            }
        }
    };
    let shell = Shell { console: &console, section: Section::Account, title: "Notifications" };
    Ok(shell.answer(StatusCode::OK, content))
}

/// Saves where notifications go.
pub async fn preferences(State(state): State<AppState>, console: Console, body: Bytes) -> Page {
    let form = form(&body);
    let mut preferences = Map::new();
    preferences.insert("webhookUrl".into(), value(&form, "webhookUrl").map_or(Value::Null, |url| json!(url)));
    preferences.insert("attacksDetected".into(), json!(value(&form, "attacksDetected").unwrap_or("InConsole")));
    let operation = ("PUT /account/notification-preferences", "/account/notification-preferences");
    console
        .act(&state, &form, operation, "/console/notifications", async |caller| {
            notifications::update_preferences(&state.admin(), caller, Body::from_map(preferences)).await
        })
        .await
}
