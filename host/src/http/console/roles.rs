//! The account's own roles in the console: each a name and the permissions it grants, given to
//! members and credentials beside the built-in roles.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::json;

use super::page::{self, Section, Shell, csrf};
use super::{Console, Listed, Page, encode, form, value};
use crate::authz::{Resource, permission};
use crate::http::AppState;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Role {
    id: String,
    name: String,
    description: Option<String>,
    #[serde(default)]
    permissions: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Catalogue {
    #[serde(default)]
    built_in_roles: Vec<String>,
    #[serde(default)]
    permissions: Vec<String>,
}

/// Checkboxes of every permission, those of `held` checked; ids start with `prefix`.
fn permission_boxes(prefix: &str, all: &[String], held: &[String]) -> Markup {
    html! {
        fieldset { legend { "Permissions" }
            @for name in all {
                div { input type="checkbox" id={ (prefix) "-" (name) } name="permissions" value=(name) checked[held.contains(name)];
                      " " label.inline for={ (prefix) "-" (name) } { code { (name) } } }
            }
        }
    }
}

/// `/console/roles`.
pub async fn roles(State(state): State<AppState>, console: Console) -> Page {
    let listed: Listed<Role> =
        console.read("/roles?pageSize=200").await?.page().map_err(|error| page::failure(&error))?;
    let catalogue: Catalogue =
        console.read("/roles/permissions").await?.data().map_err(|error| page::failure(&error))?;
    let account = || Resource::Account(console.caller.account_id().to_string());
    let may_create = console.may(&state, "POST /roles", permission::ROLE_CREATE, account());
    let may_change = console.may(&state, "PUT /roles/{roleId}", permission::ROLE_UPDATE, account());
    let may_delete = console.may(&state, "DELETE /roles/{roleId}", permission::ROLE_DELETE, account());
    let content = html! {
        p { "Built-in roles: " (catalogue.built_in_roles.join(", ")) "." }
        @if listed.items.is_empty() { p.panel { "The account has no role of its own." } }
        @for role in &listed.items {
            section aria-labelledby={ "role-" (role.id) } {
                h2 id={ "role-" (role.id) } { (role.name) }
                @if let Some(description) = &role.description { p { (description) } }
                @if may_change {
                    form method="post" action={ "/console/roles/" (encode(&role.id)) } {
                        (csrf(&console))
                        (permission_boxes(&format!("role-{}", role.id), &catalogue.permissions, &role.permissions))
                        button.quiet type="submit" { "Save the permissions of " (role.name) }
                    }
                } @else { p { code { (role.permissions.join(" ")) } } }
                @if may_delete {
                    form method="post" action={ "/console/roles/" (encode(&role.id)) "/delete" } {
                        (csrf(&console)) button.danger type="submit" { "Remove " (role.name) }
                    }
                }
            }
        }
        @if may_create {
            section aria-labelledby="create" {
                h2 #create { "Create a role" }
                form method="post" action="/console/roles" {
                    (csrf(&console))
                    div { label for="name" { "Name" } input #name name="name" required maxlength="64"; }
                    div { label for="description" { "Description" } input #description name="description" maxlength="1024" size="60"; }
                    (permission_boxes("new", &catalogue.permissions, &[]))
                    button type="submit" { "Create" }
                }
            }
        }
    };
    Ok(Shell { console: &console, section: Section::Account, title: "Roles" }.answer(StatusCode::OK, content))
}

fn checked(form: &[(String, String)]) -> Vec<&str> {
    form.iter().filter(|(name, _)| name == "permissions").map(|(_, value)| value.as_str()).collect()
}

/// Creates a role.
pub async fn create(console: Console, body: Bytes) -> Page {
    let form = form(&body);
    let mut role = json!({ "name": value(&form, "name").unwrap_or_default(), "permissions": checked(&form) });
    if let Some(description) = value(&form, "description") {
        role["description"] = json!(description);
    }
    console.act(&form, "/roles", Some(&role), "/console/roles").await
}

/// Sets a role's permissions.
pub async fn update(console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    let role = json!({ "permissions": checked(&form) });
    console.send(&form, Method::PUT, &format!("/roles/{}", encode(&id)), Some(&role), "/console/roles").await
}

/// Removes a role.
pub async fn delete(console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    console.send(&form(&body), Method::DELETE, &format!("/roles/{}", encode(&id)), None, "/console/roles").await
}
