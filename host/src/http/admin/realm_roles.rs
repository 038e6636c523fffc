//! Realm roles (`/realms/{realm}/roles`), client roles (`/realms/{realm}/clients/{client}/roles`),
//! and the grants of roles to people, groups and clients.

use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::{ListQuery, realm_in_reach};
use crate::authz::{Resource, permission};
use crate::directory::roles::{self, Grantee};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::kernel::clock::iso;
use crate::kernel::ids::{ClientId, RoleId};
use crate::kernel::validate::{Body, Notification, Refusals, Rule, parsed, text};
use crate::runtime::error::Error;
use crate::store::realm_roles::{self as role_store, Role};
use crate::store::realms::Realm;
use crate::store::{clients as client_store, users as user_store};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleView {
    pub id: String,
    pub realm_id: String,
    /// The client the role is exclusive to; null for a realm role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl RoleView {
    pub fn of(role: &Role) -> Self {
        Self {
            id: role.id.clone().into(),
            realm_id: role.realm_id.to_string(),
            client_id: role.client_id.clone().map(String::from),
            name: role.name.clone(),
            description: role.description.clone(),
            created_at: iso(role.created_at),
            updated_at: iso(role.updated_at),
        }
    }
}

/// The body of a role creation or update: at creation the name is required; in an update each
/// field is optional, and a null description removes it.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct RoleInput {
    /// 1–128 letters, digits, `-`, `_`, `.`, `:`; unique among the realm roles, or among the
    /// client's roles. Required at creation.
    #[schema(value_type = String, required = true)]
    name: Option<String>,
    /// Up to 1024 characters.
    #[schema(value_type = Option<String>)]
    description: Option<Option<String>>,
}

impl RoleInput {
    fn read(body: &mut Body, creating: bool) -> Self {
        let name = match creating {
            true => body.required("name", parsed(role_name)),
            false => body.optional("name", parsed(role_name)),
        };
        let description = body.nullable("description", text(0, 1024)).map(|d| d.filter(|d| !d.is_empty()));
        Self { name, description }
    }
}

/// A role to grant.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct RoleGrantInput {
    /// A realm role or a client role of the realm.
    role_id: String,
}

impl RoleGrantInput {
    fn read(body: &mut Body) -> Option<Self> {
        Some(Self { role_id: body.required("roleId", role_id_field)? })
    }
}

fn role_name(text_value: &str) -> Result<String, (Rule, String)> {
    let valid = !text_value.is_empty()
        && text_value.chars().count() <= 128
        && text_value.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c));
    if valid {
        Ok(text_value.to_owned())
    } else {
        Err((Rule::Pattern, "name must be 1–128 letters, digits, '-', '_', '.' or ':'".into()))
    }
}

/// Where a role lives: the realm, or one of its clients.
async fn role_home(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    client_id: Option<&str>,
    permission: &str,
) -> Result<Arc<Realm>, Error> {
    let realm = realm_in_reach(state, caller, realm_id, permission).await?;
    if let Some(client_id) = client_id {
        client_store::find(state.store.pool(), &realm.id, client_id).await?.ok_or(Error::unreached())?;
    }
    Ok(realm)
}

pub(crate) async fn create(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    client_id: Option<&str>,
    mut body: Body,
) -> Result<Answer<RoleView>, Error> {
    let realm = role_home(state, caller, realm_id, client_id, permission::ROLE_CREATE).await?;
    let RoleInput { name, description } = RoleInput::read(&mut body, true);
    body.finish()?;
    let Some(name) = name else { return Err(Error::invalid("name", Rule::Required, "name is required")) };
    let now = state.clock.now();
    let role = Role {
        id: RoleId::fresh(),
        realm_id: realm.id.clone(),
        client_id: client_id.map(ClientId::known),
        name,
        description: description.flatten(),
        created_at: now,
        updated_at: now,
    };
    let role = roles::create(state, role, caller.author(), RoleView::of).await?;
    Ok(Answer::Created(RoleView::of(&role)))
}

pub(crate) async fn list(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    client_id: Option<&str>,
    query: Option<String>,
) -> Result<Answer<RoleView>, Error> {
    let realm = role_home(state, caller, realm_id, client_id, permission::ROLE_READ).await?;
    let list = ListQuery::parse(query, &[])?;
    let found = role_store::page(&state.store, &realm.id, client_id, &list.page).await?;
    Ok(Answer::Paged(found.map(|role| RoleView::of(&role))))
}

async fn role_in_reach(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    client_id: Option<&str>,
    role_id: &str,
    permission: &str,
) -> Result<Role, Error> {
    let realm = role_home(state, caller, realm_id, client_id, permission).await?;
    role_store::find(state.store.pool(), &realm.id, role_id)
        .await?
        .filter(|role| role.client_id.as_deref() == client_id)
        .ok_or(Error::unreached())
}

pub(crate) async fn update(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    client_id: Option<&str>,
    role_id: &str,
    mut body: Body,
) -> Result<Answer<RoleView>, Error> {
    let before = role_in_reach(state, caller, realm_id, client_id, role_id, permission::ROLE_UPDATE).await?;
    let mut role = before.clone();
    body.unchanged("id", &role.id);
    let RoleInput { name, description } = RoleInput::read(&mut body, false);
    body.finish()?;
    if let Some(name) = name {
        role.name = name;
    }
    if let Some(description) = description {
        role.description = description;
    }
    let role = roles::update(state, &before, role, caller.author(), RoleView::of).await?;
    Ok(Answer::Ok(RoleView::of(&role)))
}

async fn delete(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    client_id: Option<&str>,
    role_id: &str,
) -> Result<Answer<()>, Error> {
    let role = role_in_reach(state, caller, realm_id, client_id, role_id, permission::ROLE_DELETE).await?;
    roles::delete(state, &role, caller.author(), RoleView::of).await?;
    Ok(Answer::Done)
}

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
    create(&state, &caller, &realm_id, None, body).await
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
    list(&state, &caller, &realm_id, None, query).await
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
    let role = role_in_reach(&state, &caller, &realm_id, None, &role_id, permission::ROLE_READ).await?;
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
    update(&state, &caller, &realm_id, None, &role_id, body).await
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
    delete(&state, &caller, &realm_id, None, &role_id).await
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
    create(&state, &caller, &realm_id, Some(&client_id), body).await
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
    list(&state, &caller, &realm_id, Some(&client_id), query).await
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
    let role = role_in_reach(&state, &caller, &realm_id, Some(&client_id), &role_id, permission::ROLE_READ).await?;
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
    update(&state, &caller, &realm_id, Some(&client_id), &role_id, body).await
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
    delete(&state, &caller, &realm_id, Some(&client_id), &role_id).await
}

/// Checks the caller may read (or, with `write`, change) the grantee's roles, and that the grantee
/// exists in the realm.
async fn grantee_in_reach(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    grantee: &Grantee,
    write: bool,
) -> Result<Arc<Realm>, Error> {
    let pool = state.store.pool();
    match grantee {
        Grantee::Client(client_id) => {
            let realm = super::find_realm(state, realm_id).await?;
            let owner = realm.as_ref().map(|r| r.account_id.clone());
            let wanted = if write { permission::CLIENT_UPDATE } else { permission::CLIENT_READ };
            let resource = Resource::Client { realm_id: realm_id.to_owned(), id: client_id.clone(), owner };
            caller.require(state, wanted, resource)?;
            let realm = realm.ok_or(Error::Forbidden(crate::kernel::error_code::ErrorCode::Forbidden))?;
            client_store::find(pool, &realm.id, client_id).await?.ok_or(Error::unreached())?;
            Ok(realm)
        }
        Grantee::User(user_id) => {
            let wanted = if write { permission::USER_UPDATE } else { permission::USER_READ };
            let realm = realm_in_reach(state, caller, realm_id, wanted).await?;
            user_store::find(pool, &realm.id, user_id).await?.ok_or(Error::NotFound("user"))?;
            Ok(realm)
        }
        Grantee::Group(group_id) => {
            let wanted = if write { permission::USER_UPDATE } else { permission::USER_READ };
            let realm = realm_in_reach(state, caller, realm_id, wanted).await?;
            role_store::find_group(pool, &realm.id, group_id).await?.ok_or(Error::NotFound("group"))?;
            Ok(realm)
        }
    }
}

fn role_id_field(path: &str, value: &Value) -> Result<String, Refusals> {
    let id = text(1, 64)(path, value)?;
    if uuid::Uuid::parse_str(&id).is_err() {
        return Err(vec![Notification::new(path, Rule::Format, format!("{path} must be a role id (GUID)"))]);
    }
    Ok(id)
}

/// A person's roles: those granted to them, and all they hold (through their groups too).
#[derive(Debug, Serialize, ToSchema)]
pub struct UserRolesView {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub direct: Vec<RoleView>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub effective: Vec<RoleView>,
}

/// The roles granted to a grantee directly.
pub async fn grants_of(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    grantee: Grantee,
) -> Result<Answer<Vec<RoleView>>, Error> {
    let realm = grantee_in_reach(state, caller, realm_id, &grantee, false).await?;
    let pool = state.store.pool();
    let roles = match &grantee {
        Grantee::User(id) => role_store::of_user(pool, id).await?,
        Grantee::Group(id) => role_store::of_group(pool, id).await?,
        Grantee::Client(id) => role_store::of_client(pool, &realm.id, id).await?,
    };
    Ok(Answer::Ok(roles.iter().map(RoleView::of).collect()))
}

/// The roles granted to a person, and all they hold (through their groups too).
pub async fn held_by(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    user_id: String,
) -> Result<Answer<UserRolesView>, Error> {
    let Answer::Ok(direct) = grants_of(state, caller, realm_id, Grantee::User(user_id.clone())).await? else {
        return Err(Error::Internal(anyhow::anyhow!("a person's roles are answered as one list")));
    };
    let effective = role_store::effective_of_user(state.store.pool(), &user_id).await?;
    Ok(Answer::Ok(UserRolesView { direct, effective: effective.iter().map(RoleView::of).collect() }))
}

/// Grants a role of the realm (a realm role or any client's role) to the grantee.
pub async fn grant(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    grantee: Grantee,
    mut body: Body,
) -> Result<Answer<RoleView>, Error> {
    let realm = grantee_in_reach(state, caller, realm_id, &grantee, true).await?;
    let input = RoleGrantInput::read(&mut body);
    body.finish()?;
    let Some(RoleGrantInput { role_id }) = input else {
        return Err(Error::invalid("roleId", Rule::Required, "roleId is required"));
    };
    let Some(role) = role_store::find(state.store.pool(), &realm.id, &role_id).await? else {
        return Err(Error::invalid("roleId", Rule::NotFound, "no role with this id in the realm"));
    };
    roles::grant(state, &grantee, &role, caller.author()).await?;
    Ok(Answer::Created(RoleView::of(&role)))
}

/// Withdraws a role from the grantee.
pub async fn withdraw(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    grantee: Grantee,
    role_id: &str,
) -> Result<Answer<()>, Error> {
    let realm = grantee_in_reach(state, caller, realm_id, &grantee, true).await?;
    let role = role_store::find(state.store.pool(), &realm.id, role_id).await?.ok_or(Error::unreached())?;
    roles::withdraw(state, &grantee, &role, caller.author()).await?;
    Ok(Answer::Done)
}
