//! The admin operations on a realm's groups: their members and the roles they hold, and the roles
//! each person of the realm holds.

use crate::authz::caller::Caller;
use crate::directory::admin::members;
use crate::directory::admin::roles::{grant, grants_of, held_by, withdraw};
use crate::directory::groups;
use crate::directory::groups::{GroupInput, GroupMembership, GroupView};
use crate::directory::listing::ListQuery;
use crate::directory::members::Owner;
use crate::directory::reach::{Admin, Found, InRealm, UserCreate, UserDelete, UserRead, UserUpdate};
use crate::directory::roles::{Grantee, RoleView, UserRolesView};
use crate::kernel::ids::GroupId;
use crate::kernel::validate::{Body, Rule};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::memberships::Membership;
use crate::store::realm_roles::{self as role_store, Group};

/// `POST /realms/{realm}/groups`: the created group.
pub async fn create(
    admin: &Admin<'_>,
    InRealm { realm, caller, .. }: InRealm<UserCreate>,
    mut body: Body,
) -> Result<Answer<GroupView>, Error> {
    let GroupInput { name, description } = GroupInput::read(&mut body, true);
    body.finish()?;
    let Some(name) = name else { return Err(Error::invalid("name", Rule::Required, "name is required")) };
    let now = admin.clock.now();
    let description = description.flatten();
    let group =
        Group { id: GroupId::fresh(), realm_id: realm.id.clone(), name, description, created_at: now, updated_at: now };
    let group = groups::create(admin, group, caller.author()).await?;
    Ok(Answer::Created(GroupView::of(&group)))
}

/// `GET /realms/{realm}/groups`: a page of the realm's groups.
pub async fn list(
    admin: &Admin<'_>,
    InRealm { realm, .. }: InRealm<UserRead>,
    query: Option<String>,
) -> Result<Answer<GroupView>, Error> {
    let list = ListQuery::parse(query, &[])?;
    let found = role_store::group_page(&admin.store, &realm.id, &list.page).await?;
    Ok(Answer::Paged(found.map(|group| GroupView::of(&group))))
}

/// `PUT /realms/{realm}/groups/{groupId}`: the updated group.
pub async fn update(
    admin: &Admin<'_>,
    Found { item: before, caller, .. }: Found<Group, UserUpdate>,
    mut body: Body,
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
    let group = groups::update(admin, &before, group, caller.author()).await?;
    Ok(Answer::Ok(GroupView::of(&group)))
}

/// `DELETE /realms/{realm}/groups/{groupId}`: deleted; its members lose the roles it gave.
pub async fn delete(
    admin: &Admin<'_>,
    Found { item: group, caller, .. }: Found<Group, UserDelete>,
) -> Result<Answer<()>, Error> {
    groups::delete(admin, &group, caller.author()).await?;
    Ok(Answer::Done)
}

/// `GET /realms/{realm}/users/{userId}/roles`: `direct` roles and `effective` roles (direct and
/// through groups).
pub async fn user_roles(
    admin: &Admin<'_>,
    caller: Caller,
    (realm_id, user_id): (String, String),
) -> Result<Answer<UserRolesView>, Error> {
    held_by(admin, &caller, &realm_id, user_id).await
}

/// `POST /realms/{realm}/users/{userId}/roles`: granted; the role.
pub async fn grant_user_role(
    admin: &Admin<'_>,
    caller: Caller,
    (realm_id, user_id): (String, String),
    body: Body,
) -> Result<Answer<RoleView>, Error> {
    grant(admin, &caller, &realm_id, Grantee::User(user_id), body).await
}

/// `DELETE /realms/{realm}/users/{userId}/roles/{roleId}`: withdrawn.
pub async fn withdraw_user_role(
    admin: &Admin<'_>,
    caller: Caller,
    (realm_id, user_id, role_id): (String, String, String),
) -> Result<Answer<()>, Error> {
    withdraw(admin, &caller, &realm_id, Grantee::User(user_id), &role_id).await
}

/// `GET /realms/{realm}/groups/{groupId}/roles`: the group's roles.
pub async fn group_roles(
    admin: &Admin<'_>,
    caller: Caller,
    (realm_id, group_id): (String, String),
) -> Result<Answer<Vec<RoleView>>, Error> {
    grants_of(admin, &caller, &realm_id, Grantee::Group(group_id)).await
}

/// `POST /realms/{realm}/groups/{groupId}/roles`: granted to every member; the role.
pub async fn grant_group_role(
    admin: &Admin<'_>,
    caller: Caller,
    (realm_id, group_id): (String, String),
    body: Body,
) -> Result<Answer<RoleView>, Error> {
    grant(admin, &caller, &realm_id, Grantee::Group(group_id), body).await
}

/// `DELETE /realms/{realm}/groups/{groupId}/roles/{roleId}`: withdrawn.
pub async fn withdraw_group_role(
    admin: &Admin<'_>,
    caller: Caller,
    (realm_id, group_id, role_id): (String, String, String),
) -> Result<Answer<()>, Error> {
    withdraw(admin, &caller, &realm_id, Grantee::Group(group_id), &role_id).await
}

/// `GET /realms/{realm}/clients/{client}/granted-roles`: the roles granted to the client itself
/// (its client-credentials tokens carry them).
pub async fn client_roles(
    admin: &Admin<'_>,
    caller: Caller,
    (realm_id, client_id): (String, String),
) -> Result<Answer<Vec<RoleView>>, Error> {
    grants_of(admin, &caller, &realm_id, Grantee::Client(client_id)).await
}

/// `POST /realms/{realm}/clients/{client}/granted-roles`: granted; the role.
pub async fn grant_client_role(
    admin: &Admin<'_>,
    caller: Caller,
    (realm_id, client_id): (String, String),
    body: Body,
) -> Result<Answer<RoleView>, Error> {
    grant(admin, &caller, &realm_id, Grantee::Client(client_id), body).await
}

/// `DELETE /realms/{realm}/clients/{client}/granted-roles/{roleId}`: withdrawn.
pub async fn withdraw_client_role(
    admin: &Admin<'_>,
    caller: Caller,
    (realm_id, client_id, role_id): (String, String, String),
) -> Result<Answer<()>, Error> {
    withdraw(admin, &caller, &realm_id, Grantee::Client(client_id), &role_id).await
}

/// The group as an owner of members.
pub(crate) fn owner(group: &Group) -> Owner<'_> {
    Owner { kind: Membership::Group, id: &group.id, realm_id: &group.realm_id }
}

/// `GET /realms/{realm}/groups/{groupId}`: the group.
pub fn read(Found { item: group, .. }: Found<Group, UserRead>) -> Result<Answer<GroupView>, Error> {
    Ok(Answer::Ok(GroupView::of(&group)))
}

/// `GET /realms/{realm}/groups/{groupId}/members`: the ids of the group's members.
pub async fn members(
    admin: &Admin<'_>,
    Found { item: group, .. }: Found<Group, UserRead>,
) -> Result<Answer<Vec<String>>, Error> {
    members::list(admin, owner(&group)).await
}

/// `POST /realms/{realm}/groups/{groupId}/members`: added: `groupId` and `userId`.
pub async fn add_member(
    admin: &Admin<'_>,
    Found { item: group, caller, .. }: Found<Group, UserUpdate>,
    body: Body,
) -> Result<Answer<GroupMembership>, Error> {
    let user_id = members::add(admin, &caller, owner(&group), body).await?;
    Ok(Answer::Created(GroupMembership { group_id: group.id.into(), user_id }))
}

/// `DELETE /realms/{realm}/groups/{groupId}/members/{userId}`: removed.
pub async fn remove_member(
    admin: &Admin<'_>,
    Found { item: group, caller, .. }: Found<Group, UserUpdate>,
    (_, _, user_id): (String, String, String),
) -> Result<Answer<()>, Error> {
    members::remove(admin, &caller, owner(&group), &user_id).await
}
