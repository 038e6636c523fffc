//! `/realms/{realm}/groups`: groups of people, their members and roles; and the role grants of
//! people (`/users/{userId}/roles`) and of clients themselves (`/clients/{client}/granted-roles`).

use super::reach::{Found, InRealm, UserCreate, UserDelete, UserRead, UserUpdate};
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use serde::Serialize;
use utoipa::ToSchema;

use super::ListQuery;
use super::members;
use super::realm_roles::{RoleGrantInput, RoleView, UserRolesView, grant, grants_of, held_by, withdraw};
use crate::directory::groups;
use crate::directory::members::Owner;
use crate::directory::roles::Grantee;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::clock::iso;
use crate::kernel::ids::GroupId;
use crate::kernel::validate::{Body, Rule, text};
use crate::runtime::error::Error;
use crate::store::memberships::Membership;
use crate::store::realm_roles::{self as role_store, Group};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupView {
    pub id: String,
    pub realm_id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl GroupView {
    fn of(group: &Group) -> Self {
        Self {
            id: group.id.clone().into(),
            realm_id: group.realm_id.to_string(),
            name: group.name.clone(),
            description: group.description.clone(),
            created_at: iso(group.created_at),
            updated_at: iso(group.updated_at),
        }
    }
}

/// The body of a group creation or update: at creation the name is required; in an update each
/// field is optional, and a null description removes it.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct GroupInput {
    /// 1–128 characters, unique in the realm. Required at creation.
    #[schema(value_type = String, required = true)]
    name: Option<String>,
    /// Up to 1024 characters.
    #[schema(value_type = Option<String>)]
    description: Option<Option<String>>,
}

impl GroupInput {
    fn read(body: &mut Body, creating: bool) -> Self {
        let name = if creating { body.required("name", text(1, 128)) } else { body.optional("name", text(1, 128)) };
        let description = body.nullable("description", text(0, 1024)).map(|d| d.filter(|d| !d.is_empty()));
        Self { name, description }
    }
}

fn owner(group: &Group) -> Owner<'_> {
    Owner { kind: Membership::Group, id: &group.id, realm_id: &group.realm_id }
}

#[utoipa::path(post, path = "/realms/{realm}/groups", tag = "Realm users", params(("realm" = String, Path)),
    request_body = GroupInput,
    responses((status = 201, description = "The created group, in `data`", body = GroupView), (status = 400), (status = 403),
              (status = 409, description = "AlreadyExists: the name is taken in the realm")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    InRealm { realm, caller, .. }: InRealm<UserCreate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<GroupView>, Error> {
    let GroupInput { name, description } = GroupInput::read(&mut body, true);
    body.finish()?;
    let Some(name) = name else { return Err(Error::invalid("name", Rule::Required, "name is required")) };
    let now = state.clock.now();
    let description = description.flatten();
    let group =
        Group { id: GroupId::fresh(), realm_id: realm.id.clone(), name, description, created_at: now, updated_at: now };
    let group = groups::create(&state, group, caller.author(), GroupView::of).await?;
    Ok(Answer::Created(GroupView::of(&group)))
}

#[utoipa::path(get, path = "/realms/{realm}/groups", tag = "Realm users",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query), ("sortBy" = Option<String>, Query, description = "name, createdAt, updatedAt"),
           ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's groups, in `pagination`", body = [GroupView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<UserRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<GroupView>, Error> {
    let list = ListQuery::parse(query, &[])?;
    let found = role_store::group_page(&state.store, &realm.id, &list.page).await?;
    Ok(Answer::Paged(found.map(|group| GroupView::of(&group))))
}

#[utoipa::path(get, path = "/realms/{realm}/groups/{groupId}", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path)),
    responses((status = 200, description = "The group, in `data`", body = GroupView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(Found { item: group, .. }: Found<Group, UserRead>) -> Result<Answer<GroupView>, Error> {
    Ok(Answer::Ok(GroupView::of(&group)))
}

#[utoipa::path(put, path = "/realms/{realm}/groups/{groupId}", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path)), request_body = GroupInput,
    responses((status = 200, description = "The updated group, in `data`", body = GroupView), (status = 400), (status = 403), (status = 404), (status = 409)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    Found { item: before, caller, .. }: Found<Group, UserUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<GroupView>, Error> {
    let mut group = before.clone();
    body.unchanged("id", &group.id);
    let GroupInput { name, description } = GroupInput::read(&mut body, false);
    body.finish()?;
    if let Some(name) = name {
        group.name = name;
    }
    if let Some(description) = description {
        group.description = description;
    }
    let group = groups::update(&state, &before, group, caller.author(), GroupView::of).await?;
    Ok(Answer::Ok(GroupView::of(&group)))
}

#[utoipa::path(delete, path = "/realms/{realm}/groups/{groupId}", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path)),
    responses((status = 200, description = "Deleted; its members lose the roles it gave"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    Found { item: group, caller, .. }: Found<Group, UserDelete>,
) -> Result<Answer<()>, Error> {
    groups::delete(&state, &group, caller.author(), GroupView::of).await?;
    Ok(Answer::Done)
}

#[utoipa::path(get, path = "/realms/{realm}/groups/{groupId}/members", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path)),
    responses((status = 200, description = "The ids of the group's members, in `data`", body = [String]), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn members(
    State(state): State<AppState>,
    Found { item: group, .. }: Found<Group, UserRead>,
) -> Result<Response, Error> {
    members::list(&state, owner(&group)).await
}

/// What adding a member answers.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupMembership {
    group_id: String,
    user_id: String,
}

#[utoipa::path(post, path = "/realms/{realm}/groups/{groupId}/members", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path)), request_body = members::MembershipInput,
    responses((status = 201, description = "Added: `groupId` and `userId`, in `data`", body = GroupMembership), (status = 400, description = "ValidationFailed: no such user in the realm"),
              (status = 403), (status = 404), (status = 409, description = "Conflict: already a member")),
    security(("apiKey" = [])))]
pub async fn add_member(
    State(state): State<AppState>,
    Found { item: group, caller, .. }: Found<Group, UserUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Response, Error> {
    let user_id = members::add(&state, &caller, owner(&group), body).await?;
    Ok(envelope::created(GroupMembership { group_id: group.id.into(), user_id }))
}

#[utoipa::path(delete, path = "/realms/{realm}/groups/{groupId}/members/{userId}", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "Removed"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn remove_member(
    State(state): State<AppState>,
    Found { item: group, caller, .. }: Found<Group, UserUpdate>,
    Path((_, _, user_id)): Path<(String, String, String)>,
) -> Result<Response, Error> {
    members::remove(&state, &caller, owner(&group), &user_id).await
}

#[utoipa::path(get, path = "/realms/{realm}/users/{userId}/roles", tag = "Realm users",
    params(("realm" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "`direct` roles and `effective` roles (direct and through groups), in `data`", body = UserRolesView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn user_roles(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, user_id)): Path<(String, String)>,
) -> Result<Answer<UserRolesView>, Error> {
    held_by(&state, &caller, &realm_id, user_id).await
}

#[utoipa::path(post, path = "/realms/{realm}/users/{userId}/roles", tag = "Realm users",
    params(("realm" = String, Path), ("userId" = String, Path)), request_body = RoleGrantInput,
    responses((status = 201, description = "Granted; the role, in `data`", body = RoleView), (status = 400), (status = 403), (status = 404), (status = 409)),
    security(("apiKey" = [])))]
pub async fn grant_user_role(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, user_id)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    grant(&state, &caller, &realm_id, Grantee::User(user_id), body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/users/{userId}/roles/{roleId}", tag = "Realm users",
    params(("realm" = String, Path), ("userId" = String, Path), ("roleId" = String, Path)),
    responses((status = 200, description = "Withdrawn"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn withdraw_user_role(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, user_id, role_id)): Path<(String, String, String)>,
) -> Result<Answer<()>, Error> {
    withdraw(&state, &caller, &realm_id, Grantee::User(user_id), &role_id).await
}

#[utoipa::path(get, path = "/realms/{realm}/groups/{groupId}/roles", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path)),
    responses((status = 200, description = "The group's roles, in `data`", body = [RoleView]), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn group_roles(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, group_id)): Path<(String, String)>,
) -> Result<Answer<Vec<RoleView>>, Error> {
    grants_of(&state, &caller, &realm_id, Grantee::Group(group_id)).await
}

#[utoipa::path(post, path = "/realms/{realm}/groups/{groupId}/roles", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path)), request_body = RoleGrantInput,
    responses((status = 201, description = "Granted to every member; the role, in `data`", body = RoleView), (status = 400), (status = 403), (status = 404), (status = 409)),
    security(("apiKey" = [])))]
pub async fn grant_group_role(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, group_id)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    grant(&state, &caller, &realm_id, Grantee::Group(group_id), body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/groups/{groupId}/roles/{roleId}", tag = "Realm users",
    params(("realm" = String, Path), ("groupId" = String, Path), ("roleId" = String, Path)),
    responses((status = 200, description = "Withdrawn"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn withdraw_group_role(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, group_id, role_id)): Path<(String, String, String)>,
) -> Result<Answer<()>, Error> {
    withdraw(&state, &caller, &realm_id, Grantee::Group(group_id), &role_id).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/granted-roles", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "The roles granted to the client itself (its client-credentials tokens carry them), in `data`", body = [RoleView]),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn client_roles(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, client_id)): Path<(String, String)>,
) -> Result<Answer<Vec<RoleView>>, Error> {
    grants_of(&state, &caller, &realm_id, Grantee::Client(client_id)).await
}

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/granted-roles", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = RoleGrantInput,
    responses((status = 201, description = "Granted; the role, in `data`", body = RoleView), (status = 400), (status = 403), (status = 404), (status = 409)),
    security(("apiKey" = [])))]
pub async fn grant_client_role(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, client_id)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    grant(&state, &caller, &realm_id, Grantee::Client(client_id), body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/clients/{client}/granted-roles/{roleId}", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path), ("roleId" = String, Path)),
    responses((status = 200, description = "Withdrawn"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn withdraw_client_role(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, client_id, role_id)): Path<(String, String, String)>,
) -> Result<Answer<()>, Error> {
    withdraw(&state, &caller, &realm_id, Grantee::Client(client_id), &role_id).await
}
