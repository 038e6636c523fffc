//! `/roles`: custom account roles, beside the built-in Owner, Admin, Developer and Auditor.

use super::reach::{Owned, RoleDelete, RoleRead, RoleUpdate};
use axum::extract::{RawQuery, State};

use super::ListQuery;
use crate::authz::{BUILTIN_ROLES, permission};
use crate::directory::account_roles;
use crate::directory::account_roles::{PermissionsView, RoleInput, RoleView};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::kernel::ids::AccountRoleId;
use crate::kernel::validate::Rule;
use crate::runtime::error::Error;
use crate::store::roles::{self as role_store, AccountRole};

#[utoipa::path(post, path = "/roles", tag = "Roles", request_body = RoleInput,
    responses((status = 201, description = "The created role, in `data`", body = RoleView), (status = 400),
              (status = 409, description = "AlreadyExists: the name is taken")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<RoleView>, Error> {
    caller.require_account(&state.authz, permission::ROLE_CREATE)?;
    let now = state.clock.now();
    let input = RoleInput::read(&state.authz, &mut body, true);
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
    let role = account_roles::create(&state, role, caller.author()).await?;
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
    caller.require_account(&state.authz, permission::ROLE_READ)?;
    let list = ListQuery::parse(query, &[])?;
    let found = role_store::page(&state.store, caller.account_id(), &list.page).await?;
    Ok(Answer::Paged(found.map(|role| RoleView::from(&role))))
}

#[utoipa::path(get, path = "/roles/permissions", tag = "Roles",
    responses((status = 200, description = "The built-in roles and every permission a role or scope may list", body = PermissionsView)),
    security(("apiKey" = [])))]
pub async fn permissions(State(state): State<AppState>, caller: Caller) -> Result<Answer<PermissionsView>, Error> {
    caller.require_account(&state.authz, permission::ROLE_READ)?;
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
    let input = RoleInput::read(&state.authz, &mut body, false);
    body.finish()?;
    input.apply(&mut role);
    let role = account_roles::update(&state, &before, role, caller.author()).await?;
    Ok(Answer::Ok(RoleView::from(&role)))
}

#[utoipa::path(delete, path = "/roles/{roleId}", tag = "Roles", params(("roleId" = String, Path)),
    responses((status = 200, description = "Deleted; credentials holding it lose what it granted"), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    Owned { item: role, caller, .. }: Owned<AccountRole, RoleDelete>,
) -> Result<Answer<()>, Error> {
    account_roles::delete(&state, &role, caller.author()).await?;
    Ok(Answer::Done)
}
