//! `/roles`: custom account roles, beside the built-in Owner, Admin, Developer and Auditor.

use super::reach::{Owned, RoleDelete, RoleRead, RoleUpdate};
use axum::extract::{RawQuery, State};
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::{ListQuery, commit};
use crate::authz::{BUILTIN_ROLES, permission};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::clock::iso;
use crate::kernel::ids::AccountRoleId;
use crate::kernel::validate::{Body, Notification, Refusals, Rule, list_of, text};
use crate::runtime::error::Error;
use crate::store::roles::{self as role_store, AccountRole};
use crate::store::trail::{Change, ChangeAction, Placed};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleView {
    pub id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Permission names (`realm:read`, `client:write`, …); see `GET /roles/permissions`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub permissions: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&AccountRole> for RoleView {
    fn from(role: &AccountRole) -> Self {
        Self {
            id: role.id.clone().into(),
            name: role.name.clone(),
            description: role.description.clone(),
            permissions: role.permissions.clone(),
            created_at: iso(role.created_at),
            updated_at: iso(role.updated_at),
        }
    }
}

#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct RoleInput {
    /// 1–64 characters, unique in the account, not a built-in role name; cannot change.
    name: String,
    description: Option<String>,
    /// At least one permission name.
    permissions: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionsView {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub built_in_roles: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub permissions: Vec<String>,
}

fn read_permissions(state: &AppState, body: &mut Body, required: bool) -> Option<Vec<String>> {
    let known = state.authz.permissions().clone();
    let permission_name = move |path: &str, value: &Value| -> Result<String, Refusals> {
        let name = text(1, 64)(path, value)?;
        if known.contains(&name) {
            Ok(name)
        } else {
            Err(vec![Notification::new(path, Rule::OneOf, format!("{path}: unknown permission {name}"))])
        }
    };
    let parse = |path: &str, value: &Value| {
        let names = list_of(200, &permission_name)(path, value)?;
        if names.is_empty() {
            return Err(vec![Notification::new(
                path,
                Rule::MinLength,
                format!("{path} must list at least one permission"),
            )]);
        }
        Ok(names)
    };
    if required { body.required("permissions", parse) } else { body.optional("permissions", parse) }
}

fn description(body: &mut Body, role: &mut AccountRole) {
    if body.has("description") {
        role.description = body.optional("description", text(0, 1024)).filter(|d| !d.is_empty());
    }
}

#[utoipa::path(post, path = "/roles", tag = "Roles", request_body = RoleInput,
    responses((status = 201, description = "The created role, in `data`", body = RoleView), (status = 400),
              (status = 409, description = "AlreadyExists: the name is taken")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    caller.require_account(&state, permission::ROLE_CREATE)?;
    let now = state.clock.now();
    let name = body.required("name", text(1, 64));
    let permissions = read_permissions(&state, &mut body, true);
    let mut role = AccountRole {
        id: AccountRoleId::fresh(),
        account_id: caller.account_id().clone(),
        name: String::new(),
        description: None,
        permissions: Vec::new(),
        created_at: now,
        updated_at: now,
    };
    description(&mut body, &mut role);
    if name.as_deref().is_some_and(|n| BUILTIN_ROLES.contains(&n)) {
        body.refuse("name", Rule::Duplicate, "name is a built-in role");
    }
    body.finish()?;
    let (Some(name), Some(permissions)) = (name, permissions) else {
        return Err(Error::invalid("", Rule::Required, "name and permissions are required"));
    };
    role.name = name;
    role.permissions = permissions.clone();

    let mut tx = state.store.begin().await?;
    if !role_store::insert(&mut *tx, &role).await? {
        return Err(Error::AlreadyExists("role"));
    }
    let view = RoleView::from(&role);
    commit(&state, &caller, tx, Change::of(ChangeAction::Create, role.place(), 201).after(&view)).await?;
    Ok(envelope::created(view))
}

#[utoipa::path(get, path = "/roles", tag = "Roles",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("searchTerm" = Option<String>, Query),
           ("sortBy" = Option<String>, Query), ("sortDirection" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query)),
    responses((status = 200, description = "A page of custom roles, in `pagination`", body = [RoleView])),
    security(("apiKey" = [])))]
pub async fn list(State(state): State<AppState>, caller: Caller, RawQuery(query): RawQuery) -> Result<Response, Error> {
    caller.require_account(&state, permission::ROLE_READ)?;
    let list = ListQuery::parse(query, &[])?;
    let found = role_store::page(&state.store, caller.account_id(), &list.page).await?;
    Ok(envelope::paged(found.map(|role| RoleView::from(&role))))
}

#[utoipa::path(get, path = "/roles/permissions", tag = "Roles",
    responses((status = 200, description = "The built-in roles and every permission a role or scope may list", body = PermissionsView)),
    security(("apiKey" = [])))]
pub async fn permissions(State(state): State<AppState>, caller: Caller) -> Result<Response, Error> {
    caller.require_account(&state, permission::ROLE_READ)?;
    Ok(envelope::ok(PermissionsView {
        built_in_roles: BUILTIN_ROLES.iter().map(|r| (*r).to_owned()).collect(),
        permissions: state.authz.permissions().iter().cloned().collect(),
    }))
}

#[utoipa::path(get, path = "/roles/{roleId}", tag = "Roles", params(("roleId" = String, Path)),
    responses((status = 200, description = "The role, in `data`", body = RoleView), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(Owned { item: role, .. }: Owned<AccountRole, RoleRead>) -> Result<Response, Error> {
    Ok(envelope::ok(RoleView::from(&role)))
}

#[utoipa::path(put, path = "/roles/{roleId}", tag = "Roles", params(("roleId" = String, Path)), request_body = RoleInput,
    responses((status = 200, description = "The updated role, in `data`", body = RoleView), (status = 400), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    Owned { item: before, caller, .. }: Owned<AccountRole, RoleUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let mut role = before.clone();
    body.unchanged("name", &role.name);
    if let Some(permissions) = read_permissions(&state, &mut body, false) {
        role.permissions = permissions.clone();
    }
    description(&mut body, &mut role);
    body.finish()?;
    role.updated_at = state.clock.now();

    let mut tx = state.store.begin().await?;
    role_store::update(&mut *tx, &role).await?;
    let view = RoleView::from(&role);
    let record = Change::of(ChangeAction::Update, role.place(), 200).before(RoleView::from(&before)).after(&view);
    commit(&state, &caller, tx, record).await?;
    Ok(envelope::ok(view))
}

#[utoipa::path(delete, path = "/roles/{roleId}", tag = "Roles", params(("roleId" = String, Path)),
    responses((status = 200, description = "Deleted; credentials holding it lose what it granted"), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    Owned { item: role, caller, .. }: Owned<AccountRole, RoleDelete>,
) -> Result<Response, Error> {
    let mut tx = state.store.begin().await?;
    role_store::delete(&mut *tx, &role.account_id, &role.id).await?;
    commit(&state, &caller, tx, Change::of(ChangeAction::Delete, role.place(), 200).before(RoleView::from(&role)))
        .await?;
    Ok(envelope::done())
}
