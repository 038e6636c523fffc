//! The account in the console: its API secrets (each value shown once, at creation and at each
//! rotation, in the three ways a secret can be rotated) and its team (members and their roles,
//! invitations).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use axum::response::Response;
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::{Value, json};

use super::page::{self, Section, Shell, csrf};
use super::{Console, Listed, Page, encode, form, value, when};
use crate::authz::{BUILTIN_ROLES, Resource, permission};
use crate::http::AppState;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Secret {
    id: String,
    name: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    roles: Vec<String>,
    expires_at: Option<String>,
    value: Option<String>,
    value_last_four: String,
    rotated_at: Option<String>,
    created_at: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Member {
    user_id: String,
    username: String,
    email: Option<String>,
    #[serde(default)]
    roles: Vec<String>,
    joined_at: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Invitation {
    id: String,
    email: String,
    #[serde(default)]
    roles: Vec<String>,
    status: String,
    expires_at: String,
}

#[derive(Debug, Deserialize)]
struct Role {
    name: String,
}

/// The roles to choose from: the built-in ones and the account's own.
async fn role_names(console: &Console) -> Vec<String> {
    let mut names: Vec<String> = BUILTIN_ROLES.iter().map(|role| (*role).to_owned()).collect();
    if let Ok(answer) = console.call(Method::GET, "/roles?pageSize=200", None).await
        && let Ok(custom) = answer.page::<Role>()
    {
        for role in custom.items {
            if !names.contains(&role.name) {
                names.push(role.name);
            }
        }
    }
    names
}

/// Checkboxes of `roles`, those of `held` checked; ids start with `prefix`.
fn role_boxes(prefix: &str, roles: &[String], held: &[String]) -> Markup {
    html! {
        fieldset { legend { "Roles" }
            @for role in roles {
                div { input type="checkbox" id={ (prefix) "-" (role) } name="roles" value=(role) checked[held.contains(role)];
                      " " label.inline for={ (prefix) "-" (role) } { (role) } }
            }
        }
    }
}

fn account(console: &Console) -> Resource {
    Resource::Account(console.caller.account_id().to_string())
}

/// `/console/secrets`.
pub async fn secrets(State(state): State<AppState>, console: Console) -> Page {
    let listed: Listed<Secret> =
        console.read("/secrets?pageSize=200").await?.page().map_err(|error| page::failure(&error))?;
    let may_create = console.may(&state, "POST /secrets", permission::SECRET_CREATE, account(&console));
    let may_rotate = console.may(&state, "POST /secrets/{id}/rotate", permission::SECRET_UPDATE, account(&console));
    let roles = role_names(&console).await;
    let content = html! {
        p { a href="/console/team" { "The team" } }
        div.panel { table {
            caption { (listed.total_items) " API secrets" }
            thead { tr { th scope="col" { "Name" } th scope="col" { "Type" } th scope="col" { "Roles" } th scope="col" { "Ends in" }
                         th scope="col" { "Created" } th scope="col" { "Expires" } @if may_rotate { th scope="col" { "Rotate" } } } }
            tbody { @for secret in &listed.items {
                tr {
                    td { (secret.name) } td { (secret.kind) } td { (secret.roles.join(", ")) } td { code { (secret.value_last_four) } }
                    td { (when(&secret.created_at)) @if let Some(at) = &secret.rotated_at { br; small { "rotated " (when(at)) } } }
                    td { (secret.expires_at.as_deref().map(when).unwrap_or_else(|| "never".to_owned())) }
                    @if may_rotate { td { (rotation_form(&console, &format!("/console/secrets/{}/rotate", encode(&secret.id)), &secret.id)) } }
                }
            } }
        } }
        @if may_create {
            section aria-labelledby="create" {
                h2 #create { "Create an API secret" }
                form method="post" action="/console/secrets" {
                    (csrf(&console))
                    div { label for="name" { "Name" } input #name name="name" required maxlength="128"; }
                    div { label for="type" { "Type" } select #type name="type" {
                        option value="ApiKey" { "API key" } option value="PersonalAccessToken" { "Personal access token (acts for you)" } } }
                    (role_boxes("role", &roles, &[]))
                    div { label for="expiresAt" { "Expires at (UTC; empty: never)" } input #expiresAt name="expiresAt" type="datetime-local"; }
                    button type="submit" { "Create" }
                }
            }
        }
    };
    Ok(Shell { console: &console, section: Section::Account, title: "API secrets" }.answer(StatusCode::OK, content))
}

/// The three ways to rotate: at once, with the previous value still accepted for a while, or as a
/// compromise (the previous value stops and every token it bought is revoked).
pub(super) fn rotation_form(console: &Console, action: &str, id: &str) -> Markup {
    html! {
        form method="post" action=(action) {
            (csrf(console))
            fieldset { legend { "How" }
                div { input type="radio" id={ "now-" (id) } name="mode" value="now" checked; " " label.inline for={ "now-" (id) } { "At once" } }
                div { input type="radio" id={ "overlap-" (id) } name="mode" value="overlap"; " " label.inline for={ "overlap-" (id) } { "Keep the previous value for" }
                      " " input id={ "minutes-" (id) } name="minutes" type="number" min="1" max="10080" value="60" aria-label="minutes"; " minutes" }
                div { input type="radio" id={ "compromised-" (id) } name="mode" value="compromised"; " " label.inline for={ "compromised-" (id) } { "Compromised: revoke what it issued" } }
            }
            button.quiet type="submit" { "Rotate" }
        }
    }
}

/// The admin API's rotation body for the form's mode.
pub(super) fn rotation_body(form: &[(String, String)]) -> Value {
    match value(form, "mode") {
        Some("overlap") => {
            let minutes = value(form, "minutes").unwrap_or_default();
            json!({ "previousValueValidForMinutes": minutes.parse::<i64>().map_or_else(|_| json!(minutes), |m| json!(m)) })
        }
        Some("compromised") => json!({ "previousValueValidForMinutes": 0, "revokeIssuedTokens": true }),
        _ => json!({}),
    }
}

/// A value shown once.
fn shown_once(console: &Console, title: &str, secret: &Secret, back: &str) -> Response {
    let content = html! {
        div.panel role="status" {
            @if let Some(value) = &secret.value {
                p { "The value of " strong { (secret.name) } ", shown this once — store it now:" }
                p { code #secret-value { (value) } }
            }
            p { a href=(back) { "Back" } }
        }
    };
    Shell { console, section: Section::Account, title }.answer(StatusCode::OK, content)
}

/// Creates an API secret and shows its value once.
pub async fn create_secret(console: Console, body: Bytes) -> Page {
    let form = form(&body);
    if !console.genuine(&form) {
        return Err(super::session::forged());
    }
    let roles: Vec<&str> = form.iter().filter(|(name, _)| name == "roles").map(|(_, v)| v.as_str()).collect();
    let mut secret = json!({ "name": value(&form, "name").unwrap_or_default(), "roles": roles,
                             "type": value(&form, "type").unwrap_or("ApiKey") });
    if let Some(local) = value(&form, "expiresAt") {
        secret["expiresAt"] =
            Value::String(if local.len() == 16 { format!("{local}:00Z") } else { format!("{local}Z") });
    }
    let answer = console.call(Method::POST, "/secrets", Some(&secret)).await.map_err(|error| page::failure(&error))?;
    if !answer.status.is_success() {
        return Err(page::refused(&answer));
    }
    let created: Secret = answer.data().map_err(|error| page::failure(&error))?;
    Ok(shown_once(&console, "API secret created", &created, "/console/secrets"))
}

/// Rotates an API secret as the form asks and shows the new value once.
pub async fn rotate_secret(console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    if !console.genuine(&form) {
        return Err(super::session::forged());
    }
    let path = format!("/secrets/{}/rotate", encode(&id));
    let answer = console.call(Method::POST, &path, Some(&rotation_body(&form))).await;
    let answer = answer.map_err(|error| page::failure(&error))?;
    if !answer.status.is_success() {
        return Err(page::refused(&answer));
    }
    // The rotated secret, its new value with it.
    let rotated: Secret = answer.data().map_err(|error| page::failure(&error))?;
    Ok(shown_once(&console, "API secret rotated", &rotated, "/console/secrets"))
}

/// `/console/team`: the members with their roles, and the invitations.
pub async fn team(State(state): State<AppState>, console: Console) -> Page {
    // The team is one list, not a page: an account's team is small.
    let members: Vec<Member> = console.read("/account/members").await?.data().map_err(|error| page::failure(&error))?;
    let invitations: Option<Listed<Invitation>> =
        match console.call(Method::GET, "/account/invitations?pageSize=100", None).await {
            Ok(answer) if answer.status.is_success() => answer.page().ok(),
            _ => None,
        };
    let may_change =
        console.may(&state, "PUT /account/members/{userId}", permission::ACCOUNT_UPDATE, account(&console));
    let roles = role_names(&console).await;
    let content = html! {
        p { a href="/console/secrets" { "API secrets" } " · " a href="/console/roles" { "Roles" } " · "
            a href="/console/notifications" { "Notifications" } }
        div.panel { table {
            caption { (members.len()) @if members.len() == 1 { " member" } @else { " members" } }
            thead { tr { th scope="col" { "Person" } th scope="col" { "E-mail" } th scope="col" { "Roles" } th scope="col" { "Joined" } } }
            tbody { @for member in &members {
                tr {
                    td { (member.username) } td { (member.email.as_deref().unwrap_or("—")) }
                    td {
                        @if may_change {
                            form method="post" action={ "/console/team/members/" (encode(&member.user_id)) } {
                                (csrf(&console)) (role_boxes(&format!("member-{}", member.user_id), &roles, &member.roles))
                                button.quiet type="submit" { "Save the roles of " (member.username) }
                            }
                        } @else { (member.roles.join(", ")) }
                    }
                    td { (when(&member.joined_at)) }
                }
            } }
        } }
        @if let Some(invitations) = &invitations {
            section aria-labelledby="invitations" {
                h2 #invitations { "Invitations" }
                @if invitations.items.is_empty() { p { "None." } } @else {
                    table {
                        thead { tr { th scope="col" { "E-mail" } th scope="col" { "Roles" } th scope="col" { "Status" } th scope="col" { "Until" } } }
                        tbody { @for invitation in &invitations.items {
                            tr { td { (invitation.email) } td { (invitation.roles.join(", ")) }
                                 td { (invitation.status)
                                      @if may_change && invitation.status == "Pending" {
                                          form method="post" action={ "/console/team/invitations/" (encode(&invitation.id)) "/revoke" } {
                                              (csrf(&console)) button.quiet type="submit" { "Revoke" } } } }
                                 td { (when(&invitation.expires_at)) } }
                        } }
                    }
                }
                @if may_change {
                    form method="post" action="/console/team/invitations" {
                        (csrf(&console))
                        div { label for="email" { "E-mail" } input #email name="email" type="email" required; }
                        (role_boxes("invite", &roles, &[]))
                        button type="submit" { "Invite" }
                    }
                }
            }
        }
    };
    Ok(Shell { console: &console, section: Section::Account, title: "Team" }.answer(StatusCode::OK, content))
}

/// Sets a member's roles.
pub async fn member_roles(console: Console, Path(user): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    let roles: Vec<&str> = form.iter().filter(|(name, _)| name == "roles").map(|(_, v)| v.as_str()).collect();
    let path = format!("/account/members/{}", encode(&user));
    console.send(&form, Method::PUT, &path, Some(&json!({ "roles": roles })), "/console/team").await
}

/// Invites a person by e-mail.
pub async fn invite(console: Console, body: Bytes) -> Page {
    let form = form(&body);
    let roles: Vec<&str> = form.iter().filter(|(name, _)| name == "roles").map(|(_, v)| v.as_str()).collect();
    let invitation = json!({ "email": value(&form, "email").unwrap_or_default(), "roles": roles });
    console.act(&form, "/account/invitations", Some(&invitation), "/console/team").await
}

/// Revokes a pending invitation.
pub async fn revoke_invitation(console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    let path = format!("/account/invitations/{}", encode(&id));
    console.send(&form(&body), Method::DELETE, &path, None, "/console/team").await
}
