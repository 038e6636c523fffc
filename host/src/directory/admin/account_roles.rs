//! The admin operations on the account's own roles: the permissions each gives.

use crate::authz::caller::Caller;
use crate::authz::{BUILTIN_ROLES, permission};
use crate::directory::account_roles;
use crate::directory::account_roles::{PermissionsView, RoleInput, RoleView};
use crate::directory::listing::ListQuery;
use crate::directory::reach::Admin;
use crate::directory::reach::{Owned, RoleDelete, RoleRead, RoleUpdate};
use crate::kernel::ids::AccountRoleId;
use crate::kernel::validate::Body;
use crate::kernel::validate::Rule;
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::roles::{self as role_store, AccountRole};

/// `POST /roles`: the created role.
pub async fn create(admin: &Admin<'_>, caller: Caller, mut body: Body) -> Result<Answer<RoleView>, Error> {
    caller.require_account(admin.authz, permission::ROLE_CREATE)?;
    let now = admin.clock.now();
    let input = RoleInput::read(admin.authz, &mut body, true);
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
    let role = account_roles::create(admin, role, caller.author()).await?;
    Ok(Answer::Created(RoleView::from(&role)))
}

/// `GET /roles`: a page of custom roles.
pub async fn list(admin: &Admin<'_>, caller: Caller, query: Option<String>) -> Result<Answer<RoleView>, Error> {
    caller.require_account(admin.authz, permission::ROLE_READ)?;
    let list = ListQuery::parse(query, &[])?;
    let found = role_store::page(&admin.store, caller.account_id(), &list.page).await?;
    Ok(Answer::Paged(found.map(|role| RoleView::from(&role))))
}

/// `GET /roles/permissions`: the built-in roles and every permission a role or scope may list.
pub async fn permissions(admin: &Admin<'_>, caller: Caller) -> Result<Answer<PermissionsView>, Error> {
    caller.require_account(admin.authz, permission::ROLE_READ)?;
    Ok(Answer::Ok(PermissionsView {
        built_in_roles: BUILTIN_ROLES.iter().map(|r| (*r).to_owned()).collect(),
        permissions: admin.authz.permissions().iter().cloned().collect(),
    }))
}

/// `GET /roles/{roleId}`: the role.
pub fn read(Owned { item: role, .. }: Owned<AccountRole, RoleRead>) -> Result<Answer<RoleView>, Error> {
    Ok(Answer::Ok(RoleView::from(&role)))
}

/// `PUT /roles/{roleId}`: the updated role.
pub async fn update(
    admin: &Admin<'_>,
    Owned { item: before, caller, .. }: Owned<AccountRole, RoleUpdate>,
    mut body: Body,
) -> Result<Answer<RoleView>, Error> {
    let mut role = before.clone();
    body.unchanged("name", &role.name);
    let input = RoleInput::read(admin.authz, &mut body, false);
    body.finish()?;
    input.apply(&mut role);
    let role = account_roles::update(admin, &before, role, caller.author()).await?;
    Ok(Answer::Ok(RoleView::from(&role)))
}

/// `DELETE /roles/{roleId}`: deleted; credentials holding it lose what it granted.
pub async fn delete(
    admin: &Admin<'_>,
    Owned { item: role, caller, .. }: Owned<AccountRole, RoleDelete>,
) -> Result<Answer<()>, Error> {
    account_roles::delete(admin, &role, caller.author()).await?;
    Ok(Answer::Done)
}
