//! A realm's organizations in the console: listing, creating, renaming, turning one off and on,
//! and removing one.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use maud::html;
use serde::Deserialize;
use serde_json::json;

use super::page::{self, Section, Shell, csrf};
use super::{Console, Listed, Page, encode, form, value};
use crate::authz::{Resource, permission};
use crate::http::AppState;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Organization {
    id: String,
    name: String,
    description: Option<String>,
    #[serde(default)]
    domains: Vec<String>,
    status: String,
}

/// `/console/realms/{realm}/organizations`.
pub async fn organizations(State(state): State<AppState>, console: Console, Path(realm): Path<String>) -> Page {
    let at = format!("/realms/{}/organizations", encode(&realm));
    let listed: Listed<Organization> =
        console.read(&format!("{at}?pageSize=200")).await?.page().map_err(|error| page::failure(&error))?;
    let resource = || Resource::Realm { id: realm.clone(), owner: Some(console.caller.account_id().clone()) };
    let may_create =
        console.may(&state, "POST /realms/{realm}/organizations", permission::ORGANIZATION_CREATE, resource());
    let may_change = console.may(
        &state,
        "PUT /realms/{realm}/organizations/{organizationId}",
        permission::ORGANIZATION_UPDATE,
        resource(),
    );
    let may_delete = console.may(
        &state,
        "DELETE /realms/{realm}/organizations/{organizationId}",
        permission::ORGANIZATION_DELETE,
        resource(),
    );
    let here = format!("/console{at}");
    let content = html! {
        @if listed.items.is_empty() { p.panel { "No organization." } } @else {
            div.panel { table {
                caption { (listed.total_items) " organizations" }
                thead { tr { th scope="col" { "Name" } th scope="col" { "Domains" } th scope="col" { "Status" }
                             @if may_change || may_delete { th scope="col" { "Actions" } } } }
                tbody { @for organization in &listed.items {
                    tr {
                        td { (organization.name) @if let Some(text) = &organization.description { br; small { (text) } } }
                        td { (organization.domains.join(", ")) } td { (organization.status) }
                        @if may_change || may_delete { td {
                            @if may_change {
                                (page::switch(&console, &format!("{here}/{}", encode(&organization.id)), &organization.status, &organization.name))
                            }
                            @if may_delete {
                                (page::remove(&console, &format!("{here}/{}/delete", encode(&organization.id)), &organization.name))
                            }
                        } }
                    }
                } }
            } }
        }
        @if may_create {
            section aria-labelledby="create" {
                h2 #create { "Create an organization" }
                form method="post" action=(here) {
                    (csrf(&console))
                    div { label for="name" { "Name" } input #name name="name" required maxlength="128"; }
                    div { label for="description" { "Description" } input #description name="description" size="60"; }
                    div { label for="domains" { "E-mail domains, separated by spaces" } input #domains name="domains" size="60"; }
                    button type="submit" { "Create" }
                }
            }
        }
    };
    let title = format!("Organizations of realm {realm}");
    Ok(Shell { console: &console, section: Section::Realms, title: &title }.answer(StatusCode::OK, content))
}

/// Creates an organization.
pub async fn create(console: Console, Path(realm): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    let domains: Vec<&str> = value(&form, "domains").unwrap_or_default().split_whitespace().collect();
    let mut organization = json!({ "name": value(&form, "name").unwrap_or_default(), "domains": domains });
    if let Some(description) = value(&form, "description") {
        organization["description"] = json!(description);
    }
    let path = format!("/realms/{}/organizations", encode(&realm));
    console.act(&form, &path, Some(&organization), &format!("/console{path}")).await
}

/// Turns an organization off or on.
pub async fn update(console: Console, Path((realm, id)): Path<(String, String)>, body: Bytes) -> Page {
    let form = form(&body);
    let at = format!("/realms/{}/organizations", encode(&realm));
    let change = json!({ "status": value(&form, "status").unwrap_or_default() });
    console.send(&form, Method::PUT, &format!("{at}/{}", encode(&id)), Some(&change), &format!("/console{at}")).await
}

/// Removes an organization.
pub async fn delete(console: Console, Path((realm, id)): Path<(String, String)>, body: Bytes) -> Page {
    let at = format!("/realms/{}/organizations", encode(&realm));
    console.send(&form(&body), Method::DELETE, &format!("{at}/{}", encode(&id)), None, &format!("/console{at}")).await
}
