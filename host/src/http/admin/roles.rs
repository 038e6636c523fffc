//! `/roles`: custom account roles, beside the built-in Owner, Admin, Developer and Auditor.

use super::reach::{Owned, RoleDelete, RoleRead, RoleUpdate};
use axum::extract::{RawQuery, State};

use crate::directory::account_roles::{PermissionsView, RoleInput, RoleView};
use crate::directory::admin::account_roles as admin;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::runtime::error::Error;
use crate::store::roles::AccountRole;

#[utoipa::path(post, path = "/roles", tag = "Roles", request_body = RoleInput,
    responses((status = 201, description = "The created role, in `data`", body = RoleView), (status = 400),
              (status = 409, description = "AlreadyExists: the name is taken")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    admin::create(&state.admin(), caller, body).await
}

#[utoipa::path(get, path = "/roles", tag = "Roles",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("searchTerm" = Option<String>, Query),
           ("sortBy" = Option<String>, Query), ("sortDirection" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query)),
    responses((status = 200, description = "A page of custom roles, in `pagination`", body = [RoleView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<RoleView>, Error> {
    admin::list(&state.admin(), caller, query).await
}

#[utoipa::path(get, path = "/roles/permissions", tag = "Roles",
    responses((status = 200, description = "The built-in roles and every permission a role or scope may list", body = PermissionsView)),
    security(("apiKey" = [])))]
pub async fn permissions(State(state): State<AppState>, caller: Caller) -> Result<Answer<PermissionsView>, Error> {
    admin::permissions(&state.admin(), caller).await
}

#[utoipa::path(get, path = "/roles/{roleId}", tag = "Roles", params(("roleId" = String, Path)),
    responses((status = 200, description = "The role, in `data`", body = RoleView), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(reached: Owned<AccountRole, RoleRead>) -> Result<Answer<RoleView>, Error> {
    admin::read(reached)
}

#[utoipa::path(put, path = "/roles/{roleId}", tag = "Roles", params(("roleId" = String, Path)), request_body = RoleInput,
    responses((status = 200, description = "The updated role, in `data`", body = RoleView), (status = 400), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    reached: Owned<AccountRole, RoleUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    admin::update(&state.admin(), reached, body).await
}

#[utoipa::path(delete, path = "/roles/{roleId}", tag = "Roles", params(("roleId" = String, Path)),
    responses((status = 200, description = "Deleted; credentials holding it lose what it granted"), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    reached: Owned<AccountRole, RoleDelete>,
) -> Result<Answer<()>, Error> {
    admin::delete(&state.admin(), reached).await
}
