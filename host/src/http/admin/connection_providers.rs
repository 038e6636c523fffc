//! `/realms/{realm}/connection-providers`: the OAuth 2.0 authorization servers people of a realm
//! connect accounts at (a calendar, a code host), and which resource servers may exchange tokens
//! for theirs. Reading needs `realm:read`, changing `realm:update`. The client secret is
//! write-only: sealed at rest, shown by its last four characters.

use axum::extract::{RawQuery, State};
use axum::response::Response;

use super::ListQuery;
use super::reach::{Found, InRealm, RealmRead, RealmUpdate};
use crate::directory::connection_providers;
use crate::directory::connection_providers::{ConnectionProviderInput, ConnectionProviderView};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::ids::ConnectionProviderId;
use crate::kernel::validate::{Rule, parsed};
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::connections::{self as store, ConnectionProvider};

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
    let provider = connection_providers::create(&state, provider, caller.author()).await?;
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
    let provider = connection_providers::update(&state, &before, provider, caller.author()).await?;
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
    connection_providers::delete(&state, &provider, caller.author()).await?;
    Ok(envelope::done())
}
