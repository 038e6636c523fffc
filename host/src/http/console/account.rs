//! The account in the console: its API secrets (each value shown once, at creation and at each
//! rotation, in the three ways a secret can be rotated) and its team (members and their roles,
//! invitations).

use crate::directory::secrets::SecretView;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};
use serde_json::{Map, Value, json};

use super::page::{Section, Shell, csrf};
use super::{Console, Page, data, encode, form, listed, one, value, when};
use crate::authz::{BUILTIN_ROLES, Resource, permission};
use crate::directory::admin::account_roles as roles;
use crate::directory::admin::secrets;
use crate::directory::admin::{invitations, team};
use crate::directory::reach::Owned;
use crate::http::AppState;
use crate::kernel::validate::Body;

/// The roles to choose from: the built-in ones and the account's own.
async fn role_names(state: &AppState, console: &Console) -> Vec<String> {
    let mut names: Vec<String> = BUILTIN_ROLES.iter().map(|role| (*role).to_owned()).collect();
    let query = Some("pageSize=200".to_owned());
    if let Ok(custom) = roles::list(&state.admin(), console.acting("GET /roles"), query).await
        && let Some(custom) = custom.page()
    {
        for role in custom.items {
            if !names.contains(&role.name) {
                names.push(role.name);
            }
        }
    }
    names
}

/// The object `value` holds.
fn object(value: Value) -> Body {
    match value {
        Value::Object(fields) => Body::from_map(fields),
        _ => Body::from_map(Map::new()),
    }
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

fn account_of(console: &Console) -> Resource {
    Resource::Account(console.caller.account_id().to_string())
}

/// `/console/secrets`.
pub async fn secrets(State(state): State<AppState>, console: Console) -> Page {
    let query = Some("pageSize=200".to_owned());
    let listed = listed(secrets::list(&state.admin(), console.acting("GET /secrets"), query).await)?;
    let may_create = console.may(&state, "POST /secrets", permission::SECRET_CREATE, account_of(&console));
    let may_rotate = console.may(&state, "POST /secrets/{id}/rotate", permission::SECRET_UPDATE, account_of(&console));
    let roles = role_names(&state, &console).await;
    let content = html! {
        p { a href="/console/team" { "The team" } }
        div.panel { table {
            caption { (listed.total_items) " API secrets" }
            thead { tr { th scope="col" { "Name" } th scope="col" { "Type" } th scope="col" { "Roles" } th scope="col" { "Ends in" }
                         th scope="col" { "Created" } th scope="col" { "Expires" } @if may_rotate { th scope="col" { "Rotate" } } } }
            tbody { @for secret in &listed.items {
                tr {
                    td { (secret.name) } td { (secret.secret_type.as_str()) } td { (secret.roles.join(", ")) } td { code { (secret.value_last_four) } }
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

/// The rotation the form's mode asks for.
pub(super) fn rotation_body(form: &[(String, String)]) -> Body {
    object(match value(form, "mode") {
        Some("overlap") => {
            let minutes = value(form, "minutes").unwrap_or_default();
            json!({ "previousValueValidForMinutes": minutes.parse::<i64>().map_or_else(|_| json!(minutes), |m| json!(m)) })
        }
        Some("compromised") => json!({ "previousValueValidForMinutes": 0, "revokeIssuedTokens": true }),
        _ => json!({}),
    })
}

/// A value shown once.
fn shown_once(console: &Console, title: &str, secret: &SecretView, back: &str) -> Response {
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
pub async fn create_secret(State(state): State<AppState>, console: Console, body: Bytes) -> Page {
    let form = form(&body);
    let roles: Vec<&str> = form.iter().filter(|(name, _)| name == "roles").map(|(_, v)| v.as_str()).collect();
    let mut secret = json!({ "name": value(&form, "name").unwrap_or_default(), "roles": roles,
                             "type": value(&form, "type").unwrap_or("ApiKey") });
    if let Some(local) = value(&form, "expiresAt") {
        secret["expiresAt"] =
            Value::String(if local.len() == 16 { format!("{local}:00Z") } else { format!("{local}Z") });
    }
    let created = console.acted(&state, &form, ("POST /secrets", "/secrets"), async |caller| {
        secrets::create(&state.admin(), caller, object(secret)).await
    });
    let created = one(created.await?)?;
    Ok(shown_once(&console, "API secret created", &created, "/console/secrets"))
}

/// Rotates an API secret as the form asks and shows the new value once.
pub async fn rotate_secret(
    State(state): State<AppState>,
    console: Console,
    Path(id): Path<String>,
    body: Bytes,
) -> Page {
    let form = form(&body);
    let path = format!("/secrets/{}/rotate", encode(&id));
    let rotated = console.acted(&state, &form, ("POST /secrets/{id}/rotate", &path), async |caller| {
        let owned = Owned::reach(&state.admin(), &caller, &id).await?;
        secrets::rotate(&state.admin(), owned, rotation_body(&form)).await
    });
    // The rotated secret, its new value with it.
    let rotated = one(rotated.await?)?;
    Ok(shown_once(&console, "API secret rotated", &rotated.secret, "/console/secrets"))
}

/// `/console/team`: the members with their roles, and the invitations.
pub async fn team(State(state): State<AppState>, console: Console) -> Page {
    // The team is one list, not a page: an account's team is small.
    let members = data(team::members(&state.admin(), console.acting("GET /account/members")).await)?;
    let caller = console.acting("GET /account/invitations");
    let query = Some("pageSize=100".to_owned());
    let invitations = invitations::invitations(&state.admin(), caller, query).await.ok().and_then(|a| a.page());
    let may_change =
        console.may(&state, "PUT /account/members/{userId}", permission::ACCOUNT_UPDATE, account_of(&console));
    let roles = role_names(&state, &console).await;
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
pub async fn member_roles(
    State(state): State<AppState>,
    console: Console,
    Path(user): Path<String>,
    body: Bytes,
) -> Page {
    let form = form(&body);
    let roles: Vec<&str> = form.iter().filter(|(name, _)| name == "roles").map(|(_, v)| v.as_str()).collect();
    let change = object(json!({ "roles": roles }));
    let path = format!("/account/members/{}", encode(&user));
    console
        .act(&state, &form, ("PUT /account/members/{userId}", &path), "/console/team", async |caller| {
            team::update_member(&state.admin(), caller, user.clone(), change).await
        })
        .await
}

/// Invites a person by e-mail.
pub async fn invite(State(state): State<AppState>, console: Console, body: Bytes) -> Page {
    let form = form(&body);
    let roles: Vec<&str> = form.iter().filter(|(name, _)| name == "roles").map(|(_, v)| v.as_str()).collect();
    let invitation = object(json!({ "email": value(&form, "email").unwrap_or_default(), "roles": roles }));
    let operation = ("POST /account/invitations", "/account/invitations");
    console
        .act(&state, &form, operation, "/console/team", async |caller| {
            invitations::invite(&state.admin(), caller, invitation).await
        })
        .await
}

/// Revokes a pending invitation.
pub async fn revoke_invitation(
    State(state): State<AppState>,
    console: Console,
    Path(id): Path<String>,
    body: Bytes,
) -> Page {
    let path = format!("/account/invitations/{}", encode(&id));
    let operation = ("DELETE /account/invitations/{invitationId}", path.as_str());
    console
        .act(&state, &form(&body), operation, "/console/team", async |caller| {
            invitations::revoke_invitation(&state.admin(), caller, id.clone()).await
        })
        .await
}
