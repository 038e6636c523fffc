//! The account's operational notifications in the console, and where they are sent.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode};
use maud::html;
use serde::Deserialize;
use serde_json::{Value, json};

use super::page::{self, Section, Shell, csrf};
use super::{Console, Listed, Page, form, value, when};
use crate::authz::{Resource, permission};
use crate::http::AppState;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Notification {
    #[serde(rename = "type")]
    kind: String,
    severity: String,
    title: String,
    description: String,
    created_at: String,
    webhook_post: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Preferences {
    webhook_url: Option<String>,
    attacks_detected: String,
}

const ATTACKS: [(&str, &str); 3] = [
    ("InConsole", "In the console only"),
    ("EmailAndWebhook", "By e-mail and to the webhook too"),
    ("Off", "Not at all"),
];

/// `/console/notifications`.
pub async fn notifications(State(state): State<AppState>, console: Console) -> Page {
    let listed: Listed<Notification> =
        console.read("/account/notifications?pageSize=100").await?.page().map_err(|error| page::failure(&error))?;
    let preferences: Preferences =
        console.read("/account/notification-preferences").await?.data().map_err(|error| page::failure(&error))?;
    let account = Resource::Account(console.caller.account_id().to_string());
    let may_change = console.may(&state, "PUT /account/notification-preferences", permission::ACCOUNT_UPDATE, account);
    let content = html! {
        @if listed.items.is_empty() { p.panel { "No notification." } } @else {
            div.panel { table {
                caption { (listed.total_items) " notifications, newest first" }
                thead { tr { th scope="col" { "At" } th scope="col" { "Severity" } th scope="col" { "What" } th scope="col" { "Posted" } } }
                tbody { @for notification in &listed.items {
                    tr { td { (when(&notification.created_at)) } td { (notification.severity) }
                         td { strong { (notification.title) } br; (notification.description) br; small { (notification.kind) } }
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
                            div { input type="radio" id={ "attacks-" (choice) } name="attacksDetected" value=(choice) checked[preferences.attacks_detected == choice];
                                  " " label.inline for={ "attacks-" (choice) } { (label) } }
                        }
                    }
                    button type="submit" { "Save" }
                }
            } @else {
                p { "Webhook: " (preferences.webhook_url.as_deref().unwrap_or("none")) "; attacks detected: " (preferences.attacks_detected) "." }
            }
        }
    };
    let shell = Shell { console: &console, section: Section::Account, title: "Notifications" };
    Ok(shell.answer(StatusCode::OK, content))
}

/// Saves where notifications go.
pub async fn preferences(console: Console, body: Bytes) -> Page {
    let form = form(&body);
    let preferences = json!({
        "webhookUrl": value(&form, "webhookUrl").map_or(Value::Null, |url| json!(url)),
        "attacksDetected": value(&form, "attacksDetected").unwrap_or("InConsole"),
    });
    console
        .send(&form, Method::PUT, "/account/notification-preferences", Some(&preferences), "/console/notifications")
        .await
}
