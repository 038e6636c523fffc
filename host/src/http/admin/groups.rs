//! `/realms/{realm}/groups`: groups of people, their members and roles; and the role grants of
//! people (`/users/{userId}/roles`) and of clients themselves (`/clients/{client}/granted-roles`).

use super::reach::{Found, InRealm, UserCreate, UserDelete, UserRead, UserUpdate};
use crate::directory::members::MembershipInput;
use axum::extract::{Path, RawQuery, State};

use crate::directory::admin::groups as admin;
use crate::directory::groups::{GroupInput, GroupMembership, GroupView};
use crate::directory::roles::{RoleGrantInput, RoleView, UserRolesView};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::runtime::error::Error;
use crate::store::realm_roles::Group;

#[utoipa::path(post, path = "/realms/{realm}/groups", tag = "Realm users", params(("realm" = String, Path)),
    request_body = GroupInput,
    responses((status = 201, description = "The created group, in `data`", body = GroupView), (status = 400), (status = 403),
              (status = 409, description = "AlreadyExists: the name is taken in the realm")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    reached: InRealm<UserCreate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<GroupView>, Error> {
    admin::create(&state.admin(), reached, body).await
}

#[utoipa::path(get, path = "/realms/{realm}/groups", tag = "Realm users",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query), ("sortBy" = Option<String>, Query, description = "name, createdAt, updatedAt"),
           ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's groups, in `pagination`", body = [GroupView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    reached: InRealm<UserRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<GroupView>, Error> {
    admin::list(&state.admin(), reached, query).await
}

#[utoipa::path(get, path = "/realms/{realm}/groups/{groupId}", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path)),
    responses((status = 200, description = "The group, in `data`", body = GroupView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(reached: Found<Group, UserRead>) -> Result<Answer<GroupView>, Error> {
    admin::read(reached)
}

#[utoipa::path(put, path = "/realms/{realm}/groups/{groupId}", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path)), request_body = GroupInput,
    responses((status = 200, description = "The updated group, in `data`", body = GroupView), (status = 400), (status = 403), (status = 404), (status = 409)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    reached: Found<Group, UserUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<GroupView>, Error> {
    admin::update(&state.admin(), reached, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/groups/{groupId}", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path)),
    responses((status = 200, description = "Deleted; its members lose the roles it gave"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(State(state): State<AppState>, reached: Found<Group, UserDelete>) -> Result<Answer<()>, Error> {
    admin::delete(&state.admin(), reached).await
}

#[utoipa::path(get, path = "/realms/{realm}/groups/{groupId}/members", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path)),
    responses((status = 200, description = "The ids of the group's members, in `data`", body = [String]), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn members(
    State(state): State<AppState>,
    reached: Found<Group, UserRead>,
) -> Result<Answer<Vec<String>>, Error> {
    admin::members(&state.admin(), reached).await
}

#[utoipa::path(post, path = "/realms/{realm}/groups/{groupId}/members", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path)), request_body = MembershipInput,
    responses((status = 201, description = "Added: `groupId` and `userId`, in `data`", body = GroupMembership), (status = 400, description = "ValidationFailed: no such user in the realm"),
              (status = 403), (status = 404), (status = 409, description = "Conflict: already a member")),
    security(("apiKey" = [])))]
pub async fn add_member(
    State(state): State<AppState>,
    reached: Found<Group, UserUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<GroupMembership>, Error> {
    admin::add_member(&state.admin(), reached, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/groups/{groupId}/members/{userId}", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "Removed"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn remove_member(
    State(state): State<AppState>,
    reached: Found<Group, UserUpdate>,
    Path(path): Path<(String, String, String)>,
) -> Result<Answer<()>, Error> {
    admin::remove_member(&state.admin(), reached, path).await
}

#[utoipa::path(get, path = "/realms/{realm}/users/{userId}/roles", tag = "Realm users",
    params(("realm" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "`direct` roles and `effective` roles (direct and through groups), in `data`", body = UserRolesView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn user_roles(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<(String, String)>,
) -> Result<Answer<UserRolesView>, Error> {
    admin::user_roles(&state.admin(), caller, path).await
}

#[utoipa::path(post, path = "/realms/{realm}/users/{userId}/roles", tag = "Realm users",
    params(("realm" = String, Path), ("userId" = String, Path)), request_body = RoleGrantInput,
    responses((status = 201, description = "Granted; the role, in `data`", body = RoleView), (status = 400), (status = 403), (status = 404), (status = 409)),
    security(("apiKey" = [])))]
pub async fn grant_user_role(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    admin::grant_user_role(&state.admin(), caller, path, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/users/{userId}/roles/{roleId}", tag = "Realm users",
    params(("realm" = String, Path), ("userId" = String, Path), ("roleId" = String, Path)),
    responses((status = 200, description = "Withdrawn"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn withdraw_user_role(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<(String, String, String)>,
) -> Result<Answer<()>, Error> {
    admin::withdraw_user_role(&state.admin(), caller, path).await
}

#[utoipa::path(get, path = "/realms/{realm}/groups/{groupId}/roles", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path)),
    responses((status = 200, description = "The group's roles, in `data`", body = [RoleView]), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn group_roles(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<(String, String)>,
) -> Result<Answer<Vec<RoleView>>, Error> {
    admin::group_roles(&state.admin(), caller, path).await
}

#[utoipa::path(post, path = "/realms/{realm}/groups/{groupId}/roles", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path)), request_body = RoleGrantInput,
    responses((status = 201, description = "Granted to every member; the role, in `data`", body = RoleView), (status = 400), (status = 403), (status = 404), (status = 409)),
    security(("apiKey" = [])))]
pub async fn grant_group_role(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    admin::grant_group_role(&state.admin(), caller, path, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/groups/{groupId}/roles/{roleId}", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path), ("roleId" = String, Path)),
    responses((status = 200, description = "Withdrawn"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn withdraw_group_role(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<(String, String, String)>,
) -> Result<Answer<()>, Error> {
    admin::withdraw_group_role(&state.admin(), caller, path).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/granted-roles", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "The roles granted to the client itself (its client-credentials tokens carry them), in `data`", body = [RoleView]),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn client_roles(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<(String, String)>,
) -> Result<Answer<Vec<RoleView>>, Error> {
    admin::client_roles(&state.admin(), caller, path).await
}

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/granted-roles", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = RoleGrantInput,
    responses((status = 201, description = "Granted; the role, in `data`", body = RoleView), (status = 400), (status = 403), (status = 404), (status = 409)),
    security(("apiKey" = [])))]
pub async fn grant_client_role(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    admin::grant_client_role(&state.admin(), caller, path, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/clients/{client}/granted-roles/{roleId}", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path), ("roleId" = String, Path)),
    responses((status = 200, description = "Withdrawn"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn withdraw_client_role(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<(String, String, String)>,
) -> Result<Answer<()>, Error> {
    admin::withdraw_client_role(&state.admin(), caller, path).await
}
