//! Roles of a realm (realm roles, and roles exclusive to one client) and their grants to people,
//! groups and clients themselves: each change checked, written, trailed and announced here.

use serde::Serialize;
use serde_json::json;

use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::realm_roles::{self as role_store, Holder, Role};
use crate::store::trail::{Change, ChangeAction, Place, Placed, ResourceKind};

/// Creates `role`; its name must be free among the realm roles, or among its client's roles.
pub async fn create<View: Serialize>(
    context: &Context,
    role: Role,
    by: Author<'_>,
    describe: impl Fn(&Role) -> View,
) -> Result<Role, Error> {
    let mut tx = context.store.begin().await?;
    if !role_store::insert(&mut *tx, &role).await? {
        return Err(Error::AlreadyExists("role"));
    }
    changes::commit(context, by, tx, Change::of(ChangeAction::Create, role.place(), 201).after(describe(&role)))
        .await?;
    Ok(role)
}

/// Changes `before` into `role`; a new name must be free where the role lives.
pub async fn update<View: Serialize>(
    context: &Context,
    before: &Role,
    mut role: Role,
    by: Author<'_>,
    describe: impl Fn(&Role) -> View,
) -> Result<Role, Error> {
    role.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    if !role_store::update(&mut *tx, &role).await? {
        return Err(Error::AlreadyExists("role"));
    }
    let change = Change::of(ChangeAction::Update, role.place(), 200).before(describe(before)).after(describe(&role));
    changes::commit(context, by, tx, change).await?;
    Ok(role)
}

/// Deletes `role`, withdrawn from everyone who held it.
pub async fn delete<View: Serialize>(
    context: &Context,
    role: &Role,
    by: Author<'_>,
    describe: impl Fn(&Role) -> View,
) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    role_store::delete(&mut *tx, &role.id).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Delete, role.place(), 200).before(describe(role))).await
}

/// Who holds a grant: a person, a group (and so each of its members), or a client itself (its
/// client-credentials tokens carry the role).
#[derive(Debug, Clone)]
pub enum Grantee {
    User(String),
    Group(String),
    Client(String),
}

impl Grantee {
    fn holder<'a>(&'a self, realm_id: &'a str) -> Holder<'a> {
        match self {
            Self::User(id) => Holder::User(id),
            Self::Group(id) => Holder::Group(id),
            Self::Client(id) => Holder::Client { realm_id, client_id: id },
        }
    }

    fn resource_type(&self) -> ResourceKind {
        match self {
            Self::User(_) => ResourceKind::UserRole,
            Self::Group(_) => ResourceKind::GroupRole,
            Self::Client(_) => ResourceKind::ClientRoleGrant,
        }
    }

    pub fn id(&self) -> &str {
        match self {
            Self::User(id) | Self::Group(id) | Self::Client(id) => id,
        }
    }

    fn change(&self, role: &Role, action: ChangeAction, status: u16) -> Change {
        let recorded = json!({ "roleId": role.id, "roleName": role.name, "roleClientId": role.client_id });
        let mut place = Place::in_realm(self.resource_type(), &role.id, &role.realm_id).under(self.id());
        place.client = match self {
            Self::Client(id) => Some(id.clone()),
            Self::User(_) | Self::Group(_) => None,
        };
        let change = Change::of(action, place, status);
        match action {
            ChangeAction::Delete => change.before(recorded),
            _ => change.after(recorded),
        }
    }
}

/// Grants `role` (a role of the grantee's realm) to the grantee.
pub async fn grant(context: &Context, grantee: &Grantee, role: &Role, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    if !role_store::grant(&mut *tx, grantee.holder(&role.realm_id), &role.id, context.clock.now()).await? {
        return Err(Error::Conflict("the role is already held".into()));
    }
    changes::commit(context, by, tx, grantee.change(role, ChangeAction::Create, 201)).await
}

/// Withdraws `role` from the grantee.
pub async fn withdraw(context: &Context, grantee: &Grantee, role: &Role, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    if !role_store::withdraw(&mut *tx, grantee.holder(&role.realm_id), &role.id).await? {
        return Err(Error::NotFound("role grant"));
    }
    changes::commit(context, by, tx, grantee.change(role, ChangeAction::Delete, 200)).await
}
