//! The account's own roles in the console: each a name and the permissions it grants, given to
//! members and credentials beside the built-in roles.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use maud::{Markup, html};
use serde_json::{Map, json};

use super::page::{Section, Shell, csrf};
use super::{Console, Page, data, encode, form, listed, value};
use crate::authz::{Resource, permission};
use crate::directory::admin::account_roles as roles;
use crate::directory::reach::Owned;
use crate::http::AppState;
use crate::kernel::validate::Body;

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
    let query = Some("pageSize=200".to_owned());
    let listed = listed(roles::list(&state.admin(), console.acting("GET /roles"), query).await)?;
    let caller = console.acting("GET /roles/permissions");
    let catalogue = data(roles::permissions(&state.admin(), caller).await)?;
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
pub async fn create(State(state): State<AppState>, console: Console, body: Bytes) -> Page {
    let form = form(&body);
    let mut role = Map::new();
    role.insert("name".into(), json!(value(&form, "name").unwrap_or_default()));
    role.insert("permissions".into(), json!(checked(&form)));
    if let Some(description) = value(&form, "description") {
        role.insert("description".into(), json!(description));
    }
    console
        .act(&state, &form, ("POST /roles", "/roles"), "/console/roles", async |caller| {
            roles::create(&state.admin(), caller, Body::from_map(role)).await
        })
        .await
}

/// Sets a role's permissions.
pub async fn update(State(state): State<AppState>, console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    let role = Map::from_iter([("permissions".to_owned(), json!(checked(&form)))]);
    let path = format!("/roles/{}", encode(&id));
    console
        .act(&state, &form, ("PUT /roles/{roleId}", &path), "/console/roles", async |caller| {
            let owned = Owned::reach(&state.admin(), &caller, &id).await?;
            roles::update(&state.admin(), owned, Body::from_map(role)).await
        })
        .await
}

/// Removes a role.
pub async fn delete(State(state): State<AppState>, console: Console, Path(id): Path<String>, body: Bytes) -> Page {
    let path = format!("/roles/{}", encode(&id));
    console
        .act(&state, &form(&body), ("DELETE /roles/{roleId}", &path), "/console/roles", async |caller| {
            roles::delete(&state.admin(), Owned::reach(&state.admin(), &caller, &id).await?).await
        })
        .await
}
