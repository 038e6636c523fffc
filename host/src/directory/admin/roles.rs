//! The admin operations on a realm's roles and its clients' roles, and on the grants of roles to
//! people, groups and clients.

use crate::authz::caller::Caller;
use crate::authz::{Resource, permission};
use crate::directory::listing::ListQuery;
use crate::directory::reach::{Admin, realm_in_reach};
use crate::directory::roles::{self, Grantee, RoleGrantInput, RoleInput, RoleView, UserRolesView};
use crate::kernel::ids::{ClientId, RoleId};
use crate::kernel::validate::{Body, Rule};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::realm_roles::{self as role_store, Role};
use crate::store::realms::Realm;
use crate::store::{clients as client_store, users as user_store};
use std::sync::Arc;

/// Where a role lives: the realm, or one of its clients.
pub(crate) async fn role_home(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    client_id: Option<&str>,
    permission: &str,
) -> Result<Arc<Realm>, Error> {
    let realm = realm_in_reach(admin, caller, realm_id, permission).await?;
    if let Some(client_id) = client_id {
        client_store::find(admin.store.pool(), &realm.id, client_id).await?.ok_or(Error::unreached())?;
    }
    Ok(realm)
}

/// Creates a role of the realm, or of one of its clients, from the body.
pub(crate) async fn create(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    client_id: Option<&str>,
    mut body: Body,
) -> Result<Answer<RoleView>, Error> {
    let realm = role_home(admin, caller, realm_id, client_id, permission::ROLE_CREATE).await?;
    let RoleInput { name, description } = RoleInput::read(&mut body, true);
    body.finish()?;
    let Some(name) = name else { return Err(Error::invalid("name", Rule::Required, "name is required")) };
    let now = admin.clock.now();
    let role = Role {
        id: RoleId::fresh(),
        realm_id: realm.id.clone(),
        client_id: client_id.map(ClientId::known),
        name,
        description: description.flatten(),
        created_at: now,
        updated_at: now,
    };
    let role = roles::create(admin, role, caller.author()).await?;
    Ok(Answer::Created(RoleView::of(&role)))
}

/// A page of the realm's roles, or of one of its clients'.
pub(crate) async fn list(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    client_id: Option<&str>,
    query: Option<String>,
) -> Result<Answer<RoleView>, Error> {
    let realm = role_home(admin, caller, realm_id, client_id, permission::ROLE_READ).await?;
    let list = ListQuery::parse(query, &[])?;
    let found = role_store::page(&admin.store, &realm.id, client_id, &list.page).await?;
    Ok(Answer::Paged(found.map(|role| RoleView::of(&role))))
}

/// The role `role_id` of the realm (or of its client), in the caller's reach for `permission`.
pub(crate) async fn role_in_reach(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    client_id: Option<&str>,
    role_id: &str,
    permission: &str,
) -> Result<Role, Error> {
    let realm = role_home(admin, caller, realm_id, client_id, permission).await?;
    role_store::find(admin.store.pool(), &realm.id, role_id)
        .await?
        .filter(|role| role.client_id.as_deref() == client_id)
        .ok_or(Error::unreached())
}

/// Changes the role as the body says; its id never changes.
pub(crate) async fn update(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    client_id: Option<&str>,
    role_id: &str,
    mut body: Body,
) -> Result<Answer<RoleView>, Error> {
    let before = role_in_reach(admin, caller, realm_id, client_id, role_id, permission::ROLE_UPDATE).await?;
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
    let role = roles::update(admin, &before, role, caller.author()).await?;
    Ok(Answer::Ok(RoleView::of(&role)))
}

/// Deletes the role.
pub(crate) async fn delete(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    client_id: Option<&str>,
    role_id: &str,
) -> Result<Answer<()>, Error> {
    let role = role_in_reach(admin, caller, realm_id, client_id, role_id, permission::ROLE_DELETE).await?;
    roles::delete(admin, &role, caller.author()).await?;
    Ok(Answer::Done)
}

/// Checks the caller may read (or, with `write`, change) the grantee's roles, and that the grantee
/// exists in the realm.
pub(crate) async fn grantee_in_reach(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    grantee: &Grantee,
    write: bool,
) -> Result<Arc<Realm>, Error> {
    let pool = admin.store.pool();
    match grantee {
        Grantee::Client(client_id) => {
            let realm = crate::directory::realms::find(admin, realm_id).await?;
            let owner = realm.as_ref().map(|r| r.account_id.clone());
            let wanted = if write { permission::CLIENT_UPDATE } else { permission::CLIENT_READ };
            let resource = Resource::Client { realm_id: realm_id.to_owned(), id: client_id.clone(), owner };
            caller.require(admin.authz, wanted, resource)?;
            let realm = realm.ok_or(Error::Forbidden(crate::kernel::error_code::ErrorCode::Forbidden))?;
            client_store::find(pool, &realm.id, client_id).await?.ok_or(Error::unreached())?;
            Ok(realm)
        }
        Grantee::User(user_id) => {
            let wanted = if write { permission::USER_UPDATE } else { permission::USER_READ };
            let realm = realm_in_reach(admin, caller, realm_id, wanted).await?;
            user_store::find(pool, &realm.id, user_id).await?.ok_or(Error::NotFound("user"))?;
            Ok(realm)
        }
        Grantee::Group(group_id) => {
            let wanted = if write { permission::USER_UPDATE } else { permission::USER_READ };
            let realm = realm_in_reach(admin, caller, realm_id, wanted).await?;
            role_store::find_group(pool, &realm.id, group_id).await?.ok_or(Error::NotFound("group"))?;
            Ok(realm)
        }
    }
}

/// The roles granted to a grantee directly.
pub async fn grants_of(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    grantee: Grantee,
) -> Result<Answer<Vec<RoleView>>, Error> {
    let realm = grantee_in_reach(admin, caller, realm_id, &grantee, false).await?;
    let pool = admin.store.pool();
    let roles = match &grantee {
        Grantee::User(id) => role_store::of_user(pool, id).await?,
        Grantee::Group(id) => role_store::of_group(pool, id).await?,
        Grantee::Client(id) => role_store::of_client(pool, &realm.id, id).await?,
    };
    Ok(Answer::Ok(roles.iter().map(RoleView::of).collect()))
}

/// The roles granted to a person, and all they hold (through their groups too).
pub async fn held_by(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    user_id: String,
) -> Result<Answer<UserRolesView>, Error> {
    let Answer::Ok(direct) = grants_of(admin, caller, realm_id, Grantee::User(user_id.clone())).await? else {
        return Err(Error::Internal(anyhow::anyhow!("a person's roles are answered as one list")));
    };
    let effective = role_store::effective_of_user(admin.store.pool(), &user_id).await?;
    Ok(Answer::Ok(UserRolesView { direct, effective: effective.iter().map(RoleView::of).collect() }))
}

/// Grants a role of the realm (a realm role or any client's role) to the grantee.
pub async fn grant(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    grantee: Grantee,
    mut body: Body,
) -> Result<Answer<RoleView>, Error> {
    let realm = grantee_in_reach(admin, caller, realm_id, &grantee, true).await?;
    let input = RoleGrantInput::read(&mut body);
    body.finish()?;
    let Some(RoleGrantInput { role_id }) = input else {
        return Err(Error::invalid("roleId", Rule::Required, "roleId is required"));
    };
    let Some(role) = role_store::find(admin.store.pool(), &realm.id, &role_id).await? else {
        return Err(Error::invalid("roleId", Rule::NotFound, "no role with this id in the realm"));
    };
    roles::grant(admin, &grantee, &role, caller.author()).await?;
    Ok(Answer::Created(RoleView::of(&role)))
}

/// Withdraws a role from the grantee.
pub async fn withdraw(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    grantee: Grantee,
    role_id: &str,
) -> Result<Answer<()>, Error> {
    let realm = grantee_in_reach(admin, caller, realm_id, &grantee, true).await?;
    let role = role_store::find(admin.store.pool(), &realm.id, role_id).await?.ok_or(Error::unreached())?;
    roles::withdraw(admin, &grantee, &role, caller.author()).await?;
    Ok(Answer::Done)
}
