//! `/realms/{realm}/connection-providers`: the OAuth 2.0 authorization servers people of a realm
//! connect accounts at (a calendar, a code host), and which resource servers may exchange tokens
//! for theirs. Reading needs `realm:read`, changing `realm:update`. The client secret is
//! write-only: sealed at rest, shown by its last four characters.

use axum::extract::{RawQuery, State};
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::ListQuery;
use super::identity_providers::{client_secret, provider_address};
use super::reach::{Found, InRealm, RealmRead, RealmUpdate};
use crate::directory::connection_providers;
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::clock::iso;
use crate::kernel::ids::ConnectionProviderId;
use crate::kernel::validate::{Body, Refusals, Rule, list_of, one_of, parsed, text};
use crate::oauth::federation::connections::callback_address;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::connections::{self as store, ConnectionProvider};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionProviderView {
    /// What the token exchange's `connection` parameter names.
    pub id: String,
    pub realm_id: String,
    pub display_name: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discovery_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorization_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
    pub client_id: String,
    /// The secret itself is never shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_last_four: Option<String>,
    /// The scopes asked for when a person connects an account.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// Ids of the resource servers that may exchange tokens they receive for this provider's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resource_servers: Vec<String>,
    /// Where the provider sends people back: the redirect URI to register at the provider.
    pub redirect_uri: String,
    pub created_at: String,
    pub updated_at: String,
}

impl ConnectionProviderView {
    fn of(state: &AppState, provider: &ConnectionProvider) -> Self {
        Self {
            id: provider.id.to_string(),
            realm_id: provider.realm_id.to_string(),
            display_name: provider.display_name.clone(),
            status: provider.status,
            discovery_url: provider.discovery_url.clone(),
            authorization_url: provider.authorization_url.clone(),
            token_url: provider.token_url.clone(),
            client_id: provider.client_id.clone(),
            client_secret_last_four: provider.client_secret_last_four.clone(),
            scopes: provider.scopes.clone(),
            resource_servers: provider.resource_servers.clone(),
            redirect_uri: callback_address(state, &provider.realm_id, provider.id.as_str()),
            created_at: iso(provider.created_at),
            updated_at: iso(provider.updated_at),
        }
    }
}

/// The body of a creation; an update takes the same fields but `id`, each optional.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ConnectionProviderInput {
    /// 1–64 lowercase letters, digits, `-`, `_`; unique in the realm. Required at creation.
    #[schema(value_type = String, required = true)]
    id: Option<ConnectionProviderId>,
    /// Up to 128 characters; defaults to the id.
    display_name: Option<String>,
    status: Option<Status>,
    /// The provider's discovery address (`…/.well-known/openid-configuration`); or else both
    /// `authorizationUrl` and `tokenUrl`. Every address is https.
    #[schema(value_type = Option<String>)]
    discovery_url: Option<Option<String>>,
    #[schema(value_type = Option<String>)]
    authorization_url: Option<Option<String>>,
    #[schema(value_type = Option<String>)]
    token_url: Option<Option<String>>,
    /// The client id registered at the provider. Required at creation.
    #[schema(value_type = String, required = true)]
    client_id: Option<String>,
    /// Write-only; null removes it.
    #[schema(value_type = Option<String>)]
    client_secret: Option<(Option<String>, Option<String>)>,
    /// Up to 50.
    scopes: Option<Vec<String>>,
    /// Ids of the realm's resource servers allowed to exchange for this provider's tokens, up to 50.
    resource_servers: Option<Vec<String>>,
}

fn server_reference(path: &str, value: &Value) -> Result<String, Refusals> {
    text(1, 64)(path, value)
}

impl ConnectionProviderInput {
    /// The changeable fields `body` gives (not the id, which only a creation reads); a new client
    /// secret is sealed at once.
    fn read(state: &AppState, body: &mut Body) -> Self {
        Self {
            id: None,
            display_name: body.optional("displayName", text(1, 128)),
            status: body.optional("status", one_of(Status::NAMES)),
            discovery_url: body.nullable("discoveryUrl", parsed(provider_address)),
            authorization_url: body.nullable("authorizationUrl", parsed(provider_address)),
            token_url: body.nullable("tokenUrl", parsed(provider_address)),
            client_id: body.optional("clientId", text(1, 255)),
            client_secret: client_secret(state, body),
            scopes: body.optional("scopes", list_of(50, super::clients::scope_token)),
            resource_servers: body.optional("resourceServers", list_of(50, server_reference)),
        }
    }

    /// Changes the fields given on `provider`, which must then have its addresses: a discovery
    /// address, or both the authorization and the token address (refused on `body` otherwise).
    fn apply(self, provider: &mut ConnectionProvider, body: &mut Body) {
        provider.display_name = self.display_name.unwrap_or(std::mem::take(&mut provider.display_name));
        provider.status = self.status.unwrap_or(provider.status);
        provider.discovery_url = self.discovery_url.unwrap_or(provider.discovery_url.take());
        provider.authorization_url = self.authorization_url.unwrap_or(provider.authorization_url.take());
        provider.token_url = self.token_url.unwrap_or(provider.token_url.take());
        provider.client_id = self.client_id.unwrap_or(std::mem::take(&mut provider.client_id));
        if let Some((sealed, four)) = self.client_secret {
            (provider.client_secret, provider.client_secret_last_four) = (sealed, four);
        }
        provider.scopes = self.scopes.unwrap_or(std::mem::take(&mut provider.scopes));
        provider.resource_servers = self.resource_servers.unwrap_or(std::mem::take(&mut provider.resource_servers));
        if provider.discovery_url.is_none() {
            for (field, url) in [("authorizationUrl", &provider.authorization_url), ("tokenUrl", &provider.token_url)] {
                if url.is_none() {
                    body.refuse(field, Rule::Required, format!("{field} is required without a discoveryUrl"));
                }
            }
        }
    }
}

#[utoipa::path(post, path = "/realms/{realm}/connection-providers", tag = "Connected accounts", params(("realm" = String, Path)),
    request_body = ConnectionProviderInput,
    responses((status = 201, description = "The created provider, in `data` (its secret never shown)", body = ConnectionProviderView),
              (status = 400), (status = 403), (status = 409, description = "AlreadyExists: the id is taken in the realm")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    InRealm { realm, caller, .. }: InRealm<RealmUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let now = state.clock.now();
    let id = body.required("id", parsed(ConnectionProviderId::parse));
    if !body.has("clientId") {
        body.refuse("clientId", Rule::Required, "clientId is required");
    }
    let input = ConnectionProviderInput { id, ..ConnectionProviderInput::read(&state, &mut body) };
    let mut provider = ConnectionProvider {
        realm_id: realm.id.clone(),
        id: input.id.clone().unwrap_or_else(|| ConnectionProviderId::known("")),
        display_name: String::new(),
        status: Status::Active,
        discovery_url: None,
        authorization_url: None,
        token_url: None,
        client_id: String::new(),
        client_secret: None,
        client_secret_last_four: None,
        scopes: Vec::new(),
        resource_servers: Vec::new(),
        created_at: now,
        updated_at: now,
    };
    input.apply(&mut provider, &mut body);
    body.finish()?;
    if provider.display_name.is_empty() {
        provider.display_name = provider.id.to_string();
    }
    let describe = |provider: &ConnectionProvider| ConnectionProviderView::of(&state, provider);
    let provider = connection_providers::create(&state, provider, caller.author(), describe).await?;
    Ok(envelope::created(describe(&provider)))
}

#[utoipa::path(get, path = "/realms/{realm}/connection-providers", tag = "Connected accounts",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query), ("status" = Option<String>, Query),
           ("sortBy" = Option<String>, Query, description = "id, displayName, createdAt, updatedAt"), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's connection providers, in `pagination`", body = [ConnectionProviderView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<RealmRead>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::Status::NAMES)?;
    let found = store::page_providers(&state.store, &realm.id, &list.page).await?;
    Ok(envelope::paged(found.map(|provider| ConnectionProviderView::of(&state, &provider))))
}

#[utoipa::path(get, path = "/realms/{realm}/connection-providers/{providerId}", tag = "Connected accounts",
    params(("realm" = String, Path), ("providerId" = String, Path)),
    responses((status = 200, body = ConnectionProviderView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    Found { item: provider, .. }: Found<ConnectionProvider, RealmRead>,
) -> Result<Response, Error> {
    Ok(envelope::ok(ConnectionProviderView::of(&state, &provider)))
}

#[utoipa::path(put, path = "/realms/{realm}/connection-providers/{providerId}", tag = "Connected accounts",
    params(("realm" = String, Path), ("providerId" = String, Path)), request_body = ConnectionProviderInput,
    responses((status = 200, body = ConnectionProviderView), (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    Found { item: before, caller, .. }: Found<ConnectionProvider, RealmUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let mut provider = before.clone();
    body.unchanged("id", &provider.id);
    ConnectionProviderInput::read(&state, &mut body).apply(&mut provider, &mut body);
    body.finish()?;
    let describe = |provider: &ConnectionProvider| ConnectionProviderView::of(&state, provider);
    let provider = connection_providers::update(&state, &before, provider, caller.author(), describe).await?;
    Ok(envelope::ok(describe(&provider)))
}

#[utoipa::path(delete, path = "/realms/{realm}/connection-providers/{providerId}", tag = "Connected accounts",
    params(("realm" = String, Path), ("providerId" = String, Path)),
    responses((status = 200, description = "Deleted, with every connection made at it"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    Found { item: provider, caller, .. }: Found<ConnectionProvider, RealmUpdate>,
) -> Result<Response, Error> {
    let describe = |provider: &ConnectionProvider| ConnectionProviderView::of(&state, provider);
    connection_providers::delete(&state, &provider, caller.author(), describe).await?;
    Ok(envelope::done())
}
