//! Scopes: the account's catalogue (`/scopes`), scopes exclusive to a realm
//! (`/realms/{realm}/scopes`), and the scopes a client may request
//! (`/realms/{realm}/clients/{client}/scopes`).

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;

use crate::authz::permission;
use crate::directory::admin::scopes::{client_for_scopes, create, delete, list, update};
use crate::directory::scopes::{self};
use crate::directory::scopes::{ClientScopesInput, ScopeInput, ScopeView};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::runtime::error::Error;

#[utoipa::path(post, path = "/scopes", tag = "Scopes", request_body = ScopeInput,
    responses((status = 201, description = "The created catalogue scope, usable in every realm of the account", body = ScopeView),
              (status = 400), (status = 403), (status = 409)),
    security(("apiKey" = [])))]
pub async fn create_catalogue_scope(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Answer<ScopeView>, Error> {
    create(&state.admin(), &caller, None, body).await
}

#[utoipa::path(get, path = "/scopes", tag = "Scopes",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("searchTerm" = Option<String>, Query),
           ("sortBy" = Option<String>, Query), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the catalogue, in `pagination`", body = [ScopeView])),
    security(("apiKey" = [])))]
pub async fn list_catalogue(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<ScopeView>, Error> {
    list(&state.admin(), &caller, None, query).await
}

#[utoipa::path(put, path = "/scopes/{scopeId}", tag = "Scopes", params(("scopeId" = String, Path)), request_body = ScopeInput,
    responses((status = 200, body = ScopeView), (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update_catalogue_scope(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Answer<ScopeView>, Error> {
    update(&state.admin(), &caller, None, &id, body).await
}

#[utoipa::path(delete, path = "/scopes/{scopeId}", tag = "Scopes", params(("scopeId" = String, Path)),
    responses((status = 200, description = "Deleted"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete_catalogue_scope(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Answer<()>, Error> {
    delete(&state.admin(), &caller, None, &id).await
}

#[utoipa::path(post, path = "/realms/{realm}/scopes", tag = "Scopes", params(("realm" = String, Path)), request_body = ScopeInput,
    responses((status = 201, description = "The created realm-exclusive scope", body = ScopeView), (status = 400), (status = 403), (status = 409)),
    security(("apiKey" = [])))]
pub async fn create_realm_scope(
    State(state): State<AppState>,
    caller: Caller,
    Path(realm_id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Answer<ScopeView>, Error> {
    create(&state.admin(), &caller, Some(&realm_id), body).await
}

#[utoipa::path(get, path = "/realms/{realm}/scopes", tag = "Scopes",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query), ("sortBy" = Option<String>, Query), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's own scopes, in `pagination`", body = [ScopeView])),
    security(("apiKey" = [])))]
pub async fn list_realm_scopes(
    State(state): State<AppState>,
    caller: Caller,
    Path(realm_id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Answer<ScopeView>, Error> {
    list(&state.admin(), &caller, Some(&realm_id), query).await
}

#[utoipa::path(put, path = "/realms/{realm}/scopes/{scopeId}", tag = "Scopes",
    params(("realm" = String, Path), ("scopeId" = String, Path)), request_body = ScopeInput,
    responses((status = 200, body = ScopeView), (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update_realm_scope(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, id)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Answer<ScopeView>, Error> {
    update(&state.admin(), &caller, Some(&realm_id), &id, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/scopes/{scopeId}", tag = "Scopes",
    params(("realm" = String, Path), ("scopeId" = String, Path)),
    responses((status = 200, description = "Deleted"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete_realm_scope(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, id)): Path<(String, String)>,
) -> Result<Answer<()>, Error> {
    delete(&state.admin(), &caller, Some(&realm_id), &id).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/scopes", tag = "Scopes",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "The scopes the client may request, in `data`", body = [String]), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn client_scopes(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, client_id)): Path<(String, String)>,
) -> Result<Response, Error> {
    let (_, client) =
        client_for_scopes(&state.admin(), &caller, &realm_id, &client_id, permission::CLIENT_READ).await?;
    Ok(envelope::ok(client.allowed_scopes.clone()))
}

#[utoipa::path(put, path = "/realms/{realm}/clients/{client}/scopes", tag = "Scopes",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = ClientScopesInput,
    responses((status = 200, description = "The scopes the client may now request, in `data`", body = [String]),
              (status = 400, description = "ValidationFailed: a scope that does not exist"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn replace_client_scopes(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, client_id)): Path<(String, String)>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let (account, before) =
        client_for_scopes(&state.admin(), &caller, &realm_id, &client_id, permission::CLIENT_UPDATE).await?;
    let ClientScopesInput { scopes } = ClientScopesInput::read(&mut body);
    body.finish()?;
    let client = scopes::allow(&state, &account, &before, scopes, caller.author()).await?;
    Ok(envelope::ok(client.allowed_scopes))
}
