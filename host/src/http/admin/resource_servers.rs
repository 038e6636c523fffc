//! `/realms/{realm}/resource-servers`: the APIs and MCP servers tokens are issued for. A client
//! asks for a token addressed to one with RFC 8707 `resource`; the token's `aud` is its address.
//! Resource servers are part of the realm's configuration (`realm:read`, `realm:update`).

use super::reach::{Found, InRealm, RealmRead, RealmUpdate};
use axum::extract::{RawQuery, State};

use crate::directory::admin::resource_servers as admin;
use crate::directory::resource_servers::{ResourceServerInput, ResourceServerView};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::runtime::error::Error;
use crate::store::resource_servers::ResourceServer;

#[utoipa::path(post, path = "/realms/{realm}/resource-servers", tag = "Resource servers", params(("realm" = String, Path)),
    request_body = ResourceServerInput,
    responses((status = 201, description = "The created resource server, in `data`", body = ResourceServerView), (status = 400), (status = 403),
              (status = 409, description = "AlreadyExists: the address is taken in the realm")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    reached: InRealm<RealmUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<ResourceServerView>, Error> {
    admin::create(&state.admin(), reached, body).await
}

#[utoipa::path(get, path = "/realms/{realm}/resource-servers", tag = "Resource servers",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query), ("status" = Option<String>, Query),
           ("sortBy" = Option<String>, Query, description = "name, address, createdAt, updatedAt"), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's resource servers, in `pagination`", body = [ResourceServerView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    reached: InRealm<RealmRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<ResourceServerView>, Error> {
    admin::list(&state.admin(), reached, query).await
}

#[utoipa::path(get, path = "/realms/{realm}/resource-servers/{serverId}", tag = "Resource servers",
    params(("realm" = String, Path), ("serverId" = String, Path)),
    responses((status = 200, body = ResourceServerView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(reached: Found<ResourceServer, RealmRead>) -> Result<Answer<ResourceServerView>, Error> {
    admin::read(reached)
}

#[utoipa::path(put, path = "/realms/{realm}/resource-servers/{serverId}", tag = "Resource servers",
    params(("realm" = String, Path), ("serverId" = String, Path)), request_body = ResourceServerInput,
    responses((status = 200, body = ResourceServerView), (status = 400), (status = 403), (status = 404), (status = 409)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    reached: Found<ResourceServer, RealmUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<ResourceServerView>, Error> {
    admin::update(&state.admin(), reached, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/resource-servers/{serverId}", tag = "Resource servers",
    params(("realm" = String, Path), ("serverId" = String, Path)),
    responses((status = 200, description = "Deleted"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    reached: Found<ResourceServer, RealmUpdate>,
) -> Result<Answer<()>, Error> {
    admin::delete(&state.admin(), reached).await
}
