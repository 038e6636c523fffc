//! A realm's organizations in the console: listing, creating, renaming, turning one off and on,
//! and removing one.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use maud::html;
use serde_json::{Map, json};

use super::page::{self, Section, Shell, csrf};
use super::{Console, Page, encode, form, listed, value};
use crate::authz::{Resource, permission};
use crate::directory::admin::organizations;
use crate::directory::reach::{Found, InRealm};
use crate::http::AppState;
use crate::kernel::validate::Body;

/// `/console/realms/{realm}/organizations`.
pub async fn organizations(State(state): State<AppState>, console: Console, Path(realm): Path<String>) -> Page {
    let at = format!("/realms/{}/organizations", encode(&realm));
    let caller = console.acting("GET /realms/{realm}/organizations");
    let reached = InRealm::reach(&state.admin(), &caller, &realm).await.map_err(|error| page::refused(&error))?;
    let query = Some("pageSize=200".to_owned());
    let listed = listed(organizations::list(&state.admin(), reached, query).await)?;
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
                        td { (organization.domains.join(", ")) } td { (organization.status.as_str()) }
                        @if may_change || may_delete { td {
                            @if may_change {
                                (page::switch(&console, &format!("{here}/{}", encode(&organization.id)), organization.status.as_str(), &organization.name))
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
pub async fn create(State(state): State<AppState>, console: Console, Path(realm): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    let domains: Vec<&str> = value(&form, "domains").unwrap_or_default().split_whitespace().collect();
    let mut organization = Map::new();
    organization.insert("name".into(), json!(value(&form, "name").unwrap_or_default()));
    organization.insert("domains".into(), json!(domains));
    if let Some(description) = value(&form, "description") {
        organization.insert("description".into(), json!(description));
    }
    let path = format!("/realms/{}/organizations", encode(&realm));
    let then = format!("/console{path}");
    console
        .act(&state, &form, ("POST /realms/{realm}/organizations", &path), &then, async |caller| {
            let reached = InRealm::reach(&state.admin(), &caller, &realm).await?;
            organizations::create(&state.admin(), reached, Body::from_map(organization)).await
        })
        .await
}

/// Turns an organization off or on.
pub async fn update(
    State(state): State<AppState>,
    console: Console,
    Path((realm, id)): Path<(String, String)>,
    body: Bytes,
) -> Page {
    let form = form(&body);
    let at = format!("/realms/{}/organizations", encode(&realm));
    let change = Map::from_iter([("status".to_owned(), json!(value(&form, "status").unwrap_or_default()))]);
    let path = format!("{at}/{}", encode(&id));
    let operation = ("PUT /realms/{realm}/organizations/{organizationId}", path.as_str());
    console
        .act(&state, &form, operation, &format!("/console{at}"), async |caller| {
            let found = Found::reach(&state.admin(), &caller, &realm, &id).await?;
            organizations::update(&state.admin(), found, Body::from_map(change)).await
        })
        .await
}

/// Removes an organization.
pub async fn delete(
    State(state): State<AppState>,
    console: Console,
    Path((realm, id)): Path<(String, String)>,
    body: Bytes,
) -> Page {
    let at = format!("/realms/{}/organizations", encode(&realm));
    let path = format!("{at}/{}", encode(&id));
    let operation = ("DELETE /realms/{realm}/organizations/{organizationId}", path.as_str());
    console
        .act(&state, &form(&body), operation, &format!("/console{at}"), async |caller| {
            organizations::delete(&state.admin(), Found::reach(&state.admin(), &caller, &realm, &id).await?).await
        })
        .await
}
