//! A realm's identity providers in the console: the upstream OpenID Connect and OAuth 2.0
//! providers people may sign in through, registered, turned off and on, and removed.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use maud::html;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::page::{self, Section, Shell, csrf};
use super::{Console, Listed, Page, encode, form, value};
use crate::authz::{Resource, permission};
use crate::http::AppState;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Provider {
    id: String,
    display_name: String,
    protocol: String,
    status: String,
    discovery_url: Option<String>,
    authorization_url: Option<String>,
}

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
    let listed: Listed<Provider> =
        console.read(&format!("{at}?pageSize=200")).await?.page().map_err(|error| page::failure(&error))?;
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
                        td { (provider.display_name) br; small { code { (provider.id) } } } td { (provider.protocol) }
                        td { (provider.discovery_url.as_deref().or(provider.authorization_url.as_deref()).unwrap_or("—")) }
                        td { (provider.status) }
                        @if may_change { td {
                            (page::switch(&console, &format!("{here}/{}", encode(&provider.id)), &provider.status, &provider.display_name))
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
pub async fn create(console: Console, Path(realm): Path<String>, body: Bytes) -> Page {
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
    console.act(&form, &path, Some(&Value::Object(provider)), &format!("/console{path}")).await
}

/// Turns a provider off or on.
pub async fn update(console: Console, Path((realm, id)): Path<(String, String)>, body: Bytes) -> Page {
    let form = form(&body);
    let at = format!("/realms/{}/identity-providers", encode(&realm));
    let change = json!({ "status": value(&form, "status").unwrap_or_default() });
    console.send(&form, Method::PUT, &format!("{at}/{}", encode(&id)), Some(&change), &format!("/console{at}")).await
}

/// Removes a provider.
pub async fn delete(console: Console, Path((realm, id)): Path<(String, String)>, body: Bytes) -> Page {
    let at = format!("/realms/{}/identity-providers", encode(&realm));
    console.send(&form(&body), Method::DELETE, &format!("{at}/{}", encode(&id)), None, &format!("/console{at}")).await
}
