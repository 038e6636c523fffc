//! A realm's identity providers in the console: the upstream OpenID Connect and OAuth 2.0
//! providers people may sign in through, registered, turned off and on, and removed.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use maud::html;
use serde_json::{Map, json};

use super::page::{self, Section, Shell, csrf};
use super::{Console, Page, encode, form, listed, value};
use crate::authz::{Resource, permission};
use crate::directory::admin::identity_providers;
use crate::directory::reach::{Found, InRealm};
use crate::http::AppState;
use crate::kernel::validate::Body;

/// The address fields of the registration form: the API's field and its label.
const ADDRESSES: [(&str, &str); 4] = [
    ("discoveryUrl", "Discovery address (OpenID Connect)"),
    ("authorizationUrl", "Authorization address (OAuth 2.0)"),
    ("tokenUrl", "Token address (OAuth 2.0)"),
    ("userinfoUrl", "User-info address (OAuth 2.0)"),
];

/// `/console/realms/{realm}/identity-providers`.
pub async fn providers(State(state): State<AppState>, console: Console, Path(realm): Path<String>) -> Page {
    let at = format!("/realms/{}/identity-providers", encode(&realm));
    let caller = console.acting("GET /realms/{realm}/identity-providers");
    let reached = InRealm::reach(&state.admin(), &caller, &realm).await.map_err(|error| page::refused(&error))?;
    let query = Some("pageSize=200".to_owned());
    let listed = listed(identity_providers::list(&state.admin(), reached, query).await)?;
    let resource = Resource::Realm { id: realm.clone(), owner: Some(console.caller.account_id().clone()) };
    // Providers are part of the realm's settings.
    let may_change =
        console.may(&state, "PUT /realms/{realm}/identity-providers/{providerId}", permission::REALM_UPDATE, resource);
    let here = format!("/console{at}");
    let content = html! {
        @if listed.items.is_empty() { p.panel { "No identity provider." } } @else {
            div.panel { table {
                caption { (listed.total_items) " identity providers" }
                thead { tr { th scope="col" { "Provider" } th scope="col" { "Protocol" } th scope="col" { "Address" } th scope="col" { "Status" }
                             @if may_change { th scope="col" { "Actions" } } } }
                tbody { @for provider in &listed.items {
                    tr {
                        td { (provider.display_name) br; small { code { (provider.id) } } } td { (provider.protocol.as_str()) }
                        td { (provider.discovery_url.as_deref().or(provider.authorization_url.as_deref()).unwrap_or("—")) }
                        td { (provider.status.as_str()) }
                        @if may_change { td {
                            (page::switch(&console, &format!("{here}/{}", encode(&provider.id)), provider.status.as_str(), &provider.display_name))
                            (page::remove(&console, &format!("{here}/{}/delete", encode(&provider.id)), &provider.display_name))
                        } }
                    }
                } }
            } }
        }
        @if may_change {
            section aria-labelledby="register" {
                h2 #register { "Register a provider" }
                form method="post" action=(here) {
                    (csrf(&console))
                    div { label for="id" { "Id (in the realm's addresses)" } input #id name="id" required; }
                    div { label for="displayName" { "Name on the login page" } input #displayName name="displayName" required; }
                    div { label for="protocol" { "Protocol" } select #protocol name="protocol" {
                        option value="OpenIdConnect" { "OpenID Connect" } option value="OAuth2" { "OAuth 2.0" } } }
                    div { label for="clientId" { "Client id at the provider" } input #clientId name="clientId" required; }
                    div { label for="clientSecret" { "Client secret at the provider" } input #clientSecret name="clientSecret" type="password" autocomplete="off"; }
                    @for (field, label) in ADDRESSES {
                        div { label for=(field) { (label) } input id=(field) name=(field) type="url" size="60"; }
                    }
                    div { label for="scopes" { "Scopes, separated by spaces" } input #scopes name="scopes" size="40"; }
                    button type="submit" { "Register" }
                }
            }
        }
    };
    let title = format!("Identity providers of realm {realm}");
    Ok(Shell { console: &console, section: Section::Realms, title: &title }.answer(StatusCode::OK, content))
}

/// Registers a provider from the form.
pub async fn create(State(state): State<AppState>, console: Console, Path(realm): Path<String>, body: Bytes) -> Page {
    let form = form(&body);
    let mut provider = Map::new();
    for field in ["id", "displayName", "protocol", "clientId", "clientSecret"] {
        if let Some(text) = value(&form, field) {
            provider.insert(field.into(), json!(text));
        }
    }
    for (field, _) in ADDRESSES {
        if let Some(url) = value(&form, field) {
            provider.insert(field.into(), json!(url));
        }
    }
    if let Some(scopes) = value(&form, "scopes") {
        provider.insert("scopes".into(), json!(scopes.split_whitespace().collect::<Vec<_>>()));
    }
    let path = format!("/realms/{}/identity-providers", encode(&realm));
    let then = format!("/console{path}");
    console
        .act(&state, &form, ("POST /realms/{realm}/identity-providers", &path), &then, async |caller| {
            let reached = InRealm::reach(&state.admin(), &caller, &realm).await?;
            identity_providers::create(&state.admin(), reached, Body::from_map(provider)).await
        })
        .await
}

/// Turns a provider off or on.
pub async fn update(
    State(state): State<AppState>,
    console: Console,
    Path((realm, id)): Path<(String, String)>,
    body: Bytes,
) -> Page {
    let form = form(&body);
    let at = format!("/realms/{}/identity-providers", encode(&realm));
    let change = Map::from_iter([("status".to_owned(), json!(value(&form, "status").unwrap_or_default()))]);
    let path = format!("{at}/{}", encode(&id));
    let operation = ("PUT /realms/{realm}/identity-providers/{providerId}", path.as_str());
    console
        .act(&state, &form, operation, &format!("/console{at}"), async |caller| {
            let found = Found::reach(&state.admin(), &caller, &realm, &id).await?;
            identity_providers::update(&state.admin(), found, Body::from_map(change)).await
        })
        .await
}

/// Removes a provider.
pub async fn delete(
    State(state): State<AppState>,
    console: Console,
    Path((realm, id)): Path<(String, String)>,
    body: Bytes,
) -> Page {
    let at = format!("/realms/{}/identity-providers", encode(&realm));
    let path = format!("{at}/{}", encode(&id));
    let operation = ("DELETE /realms/{realm}/identity-providers/{providerId}", path.as_str());
    console
        .act(&state, &form(&body), operation, &format!("/console{at}"), async |caller| {
            identity_providers::delete(&state.admin(), Found::reach(&state.admin(), &caller, &realm, &id).await?).await
        })
        .await
}
