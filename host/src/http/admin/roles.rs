//! `/roles`: custom account roles, beside the built-in Owner, Admin, Developer and Auditor.

use super::reach::{Owned, RoleDelete, RoleRead, RoleUpdate};
use axum::extract::{RawQuery, State};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::ListQuery;
use crate::authz::{BUILTIN_ROLES, permission};
use crate::directory::account_roles;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::kernel::clock::iso;
use crate::kernel::ids::AccountRoleId;
use crate::kernel::validate::{Body, Notification, Refusals, Rule, list_of, text};
use crate::runtime::error::Error;
use crate::store::roles::{self as role_store, AccountRole};

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

/// The body of a role's creation. An update takes the same fields, each optional, and cannot change
/// the name.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct RoleInput {
    /// 1–64 characters, unique in the account, not a built-in role name; cannot change.
    #[schema(value_type = String, required = true)]
    name: Option<String>,
    /// Up to 1024 characters; empty removes it.
    #[schema(value_type = Option<String>)]
    description: Option<Option<String>>,
    /// At least one permission name.
    #[schema(value_type = Vec<String>, required = true)]
    permissions: Option<Vec<String>>,
}

impl RoleInput {
    /// The fields `body` gives (a creation must give the name and the permissions); permissions
    /// are names the policies know.
    fn read(state: &AppState, body: &mut Body, creating: bool) -> Self {
        let known = state.authz.permissions().clone();
        let permission_name = move |path: &str, value: &Value| -> Result<String, Refusals> {
            let name = text(1, 64)(path, value)?;
            if known.contains(&name) {
                Ok(name)
            } else {
                Err(vec![Notification::new(path, Rule::OneOf, format!("{path}: unknown permission {name}"))])
            }
        };
        let permissions = |path: &str, value: &Value| {
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
        let (name, permissions) = if creating {
            (body.required("name", text(1, 64)), body.required("permissions", permissions))
        } else {
            (body.optional("name", text(1, 64)), body.optional("permissions", permissions))
        };
        let description =
            body.has("description").then(|| body.optional("description", text(0, 1024)).filter(|d| !d.is_empty()));
        Self { name, permissions, description }
    }

    /// Changes the fields given on `role`, but its name.
    fn apply(self, role: &mut AccountRole) {
        role.permissions = self.permissions.unwrap_or(std::mem::take(&mut role.permissions));
        role.description = self.description.unwrap_or(role.description.take());
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionsView {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub built_in_roles: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub permissions: Vec<String>,
}

#[utoipa::path(post, path = "/roles", tag = "Roles", request_body = RoleInput,
    responses((status = 201, description = "The created role, in `data`", body = RoleView), (status = 400),
              (status = 409, description = "AlreadyExists: the name is taken")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    caller.require_account(&state, permission::ROLE_CREATE)?;
    let now = state.clock.now();
    let input = RoleInput::read(&state, &mut body, true);
    if input.name.as_deref().is_some_and(|n| BUILTIN_ROLES.contains(&n)) {
        body.refuse("name", Rule::Duplicate, "name is a built-in role");
    }
    body.finish()?;
    let Some(name) = input.name.clone() else {
        return Err(Error::invalid("name", Rule::Required, "name is required"));
    };
    let mut role = AccountRole {
        id: AccountRoleId::fresh(),
        account_id: caller.account_id().clone(),
        name,
        description: None,
        permissions: Vec::new(),
        created_at: now,
        updated_at: now,
    };
    input.apply(&mut role);
    let role = account_roles::create(&state, role, caller.author(), |role: &AccountRole| RoleView::from(role)).await?;
    Ok(Answer::Created(RoleView::from(&role)))
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
    caller.require_account(&state, permission::ROLE_READ)?;
    let list = ListQuery::parse(query, &[])?;
    let found = role_store::page(&state.store, caller.account_id(), &list.page).await?;
    Ok(Answer::Paged(found.map(|role| RoleView::from(&role))))
}

#[utoipa::path(get, path = "/roles/permissions", tag = "Roles",
    responses((status = 200, description = "The built-in roles and every permission a role or scope may list", body = PermissionsView)),
    security(("apiKey" = [])))]
pub async fn permissions(State(state): State<AppState>, caller: Caller) -> Result<Answer<PermissionsView>, Error> {
    caller.require_account(&state, permission::ROLE_READ)?;
    Ok(Answer::Ok(PermissionsView {
        built_in_roles: BUILTIN_ROLES.iter().map(|r| (*r).to_owned()).collect(),
        permissions: state.authz.permissions().iter().cloned().collect(),
    }))
}

#[utoipa::path(get, path = "/roles/{roleId}", tag = "Roles", params(("roleId" = String, Path)),
    responses((status = 200, description = "The role, in `data`", body = RoleView), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(Owned { item: role, .. }: Owned<AccountRole, RoleRead>) -> Result<Answer<RoleView>, Error> {
    Ok(Answer::Ok(RoleView::from(&role)))
}

#[utoipa::path(put, path = "/roles/{roleId}", tag = "Roles", params(("roleId" = String, Path)), request_body = RoleInput,
    responses((status = 200, description = "The updated role, in `data`", body = RoleView), (status = 400), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    Owned { item: before, caller, .. }: Owned<AccountRole, RoleUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    let mut role = before.clone();
    body.unchanged("name", &role.name);
    let input = RoleInput::read(&state, &mut body, false);
    body.finish()?;
    input.apply(&mut role);
    let role = account_roles::update(&state, &before, role, caller.author(), |role: &AccountRole| RoleView::from(role))
        .await?;
    Ok(Answer::Ok(RoleView::from(&role)))
}

#[utoipa::path(delete, path = "/roles/{roleId}", tag = "Roles", params(("roleId" = String, Path)),
    responses((status = 200, description = "Deleted; credentials holding it lose what it granted"), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    Owned { item: role, caller, .. }: Owned<AccountRole, RoleDelete>,
) -> Result<Answer<()>, Error> {
    account_roles::delete(&state, &role, caller.author(), |role: &AccountRole| RoleView::from(role)).await?;
    Ok(Answer::Done)
}
