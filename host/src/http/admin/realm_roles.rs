//! Realm roles (`/realms/{realm}/roles`), client roles (`/realms/{realm}/clients/{client}/roles`),
//! and the grants of roles to people, groups and clients.

use axum::extract::{Path, RawQuery, State};

use crate::authz::permission;
use crate::directory::admin::roles::{create, delete, list, role_in_reach, update};
use crate::directory::roles::{RoleInput, RoleView};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::runtime::error::Error;

#[utoipa::path(post, path = "/realms/{realm}/roles", tag = "Roles", params(("realm" = String, Path)),
    request_body = RoleInput,
    responses((status = 201, description = "The created realm role, in `data`", body = RoleView), (status = 400), (status = 403),
              (status = 409, description = "AlreadyExists: the name is taken among the realm roles")),
    security(("apiKey" = [])))]
pub async fn create_realm_role(
    State(state): State<AppState>,
    caller: Caller,
    Path(realm_id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    create(&state.admin(), &caller, &realm_id, None, body).await
}

#[utoipa::path(get, path = "/realms/{realm}/roles", tag = "Roles",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query), ("sortBy" = Option<String>, Query, description = "name, createdAt, updatedAt"),
           ("sortDirection" = Option<String>, Query), ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm roles, in `pagination`", body = [RoleView])),
    security(("apiKey" = [])))]
pub async fn list_realm_roles(
    State(state): State<AppState>,
    caller: Caller,
    Path(realm_id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Answer<RoleView>, Error> {
    list(&state.admin(), &caller, &realm_id, None, query).await
}

#[utoipa::path(get, path = "/realms/{realm}/roles/{roleId}", tag = "Roles",
    params(("realm" = String, Path), ("roleId" = String, Path)),
    responses((status = 200, description = "The role, in `data`", body = RoleView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read_realm_role(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, role_id)): Path<(String, String)>,
) -> Result<Answer<RoleView>, Error> {
    let role = role_in_reach(&state.admin(), &caller, &realm_id, None, &role_id, permission::ROLE_READ).await?;
    Ok(Answer::Ok(RoleView::of(&role)))
}

#[utoipa::path(put, path = "/realms/{realm}/roles/{roleId}", tag = "Roles",
    params(("realm" = String, Path), ("roleId" = String, Path)), request_body = RoleInput,
    responses((status = 200, description = "The updated role, in `data`", body = RoleView), (status = 400), (status = 403), (status = 404), (status = 409)),
    security(("apiKey" = [])))]
pub async fn update_realm_role(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, role_id)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    update(&state.admin(), &caller, &realm_id, None, &role_id, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/roles/{roleId}", tag = "Roles",
    params(("realm" = String, Path), ("roleId" = String, Path)),
    responses((status = 200, description = "Deleted, and withdrawn from everyone who held it"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete_realm_role(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, role_id)): Path<(String, String)>,
) -> Result<Answer<()>, Error> {
    delete(&state.admin(), &caller, &realm_id, None, &role_id).await
}

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/roles", tag = "Roles",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = RoleInput,
    responses((status = 201, description = "The created client role, in `data`", body = RoleView), (status = 400), (status = 403), (status = 404),
              (status = 409, description = "AlreadyExists: the name is taken among the client's roles")),
    security(("apiKey" = [])))]
pub async fn create_client_role(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, client_id)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    create(&state.admin(), &caller, &realm_id, Some(&client_id), body).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/roles", tag = "Roles",
    params(("realm" = String, Path), ("client" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query), ("sortBy" = Option<String>, Query), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the client's roles, in `pagination`", body = [RoleView])),
    security(("apiKey" = [])))]
pub async fn list_client_roles(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, client_id)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> Result<Answer<RoleView>, Error> {
    list(&state.admin(), &caller, &realm_id, Some(&client_id), query).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/roles/{roleId}", tag = "Roles",
    params(("realm" = String, Path), ("client" = String, Path), ("roleId" = String, Path)),
    responses((status = 200, description = "The role, in `data`", body = RoleView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read_client_role(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, client_id, role_id)): Path<(String, String, String)>,
) -> Result<Answer<RoleView>, Error> {
    let role =
        role_in_reach(&state.admin(), &caller, &realm_id, Some(&client_id), &role_id, permission::ROLE_READ).await?;
    Ok(Answer::Ok(RoleView::of(&role)))
}

#[utoipa::path(put, path = "/realms/{realm}/clients/{client}/roles/{roleId}", tag = "Roles",
    params(("realm" = String, Path), ("client" = String, Path), ("roleId" = String, Path)), request_body = RoleInput,
    responses((status = 200, description = "The updated role, in `data`", body = RoleView), (status = 400), (status = 403), (status = 404), (status = 409)),
    security(("apiKey" = [])))]
pub async fn update_client_role(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, client_id, role_id)): Path<(String, String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    update(&state.admin(), &caller, &realm_id, Some(&client_id), &role_id, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/clients/{client}/roles/{roleId}", tag = "Roles",
    params(("realm" = String, Path), ("client" = String, Path), ("roleId" = String, Path)),
    responses((status = 200, description = "Deleted"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete_client_role(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, client_id, role_id)): Path<(String, String, String)>,
) -> Result<Answer<()>, Error> {
    delete(&state.admin(), &caller, &realm_id, Some(&client_id), &role_id).await
}
