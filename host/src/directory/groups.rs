//! Groups of people in a realm: created, renamed and deleted here, each change trailed and
//! announced. Deleting a group takes from its members the roles it gave them.

use serde::Serialize;

use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::realm_roles::{self as role_store, Group};
use crate::store::trail::{Change, ChangeAction, Placed};

/// Creates `group`; its name must be free in the realm. The change is trailed with `describe`'s
/// view of the group.
pub async fn create<View: Serialize>(
    context: &Context,
    group: Group,
    by: Author<'_>,
    describe: impl Fn(&Group) -> View,
) -> Result<Group, Error> {
    let mut tx = context.store.begin().await?;
    if !role_store::insert_group(&mut *tx, &group).await? {
        return Err(Error::AlreadyExists("group"));
    }
    let change = Change::of(ChangeAction::Create, group.place(), 201).after(describe(&group));
    changes::commit(context, by, tx, change).await?;
    Ok(group)
}

/// Changes `before` into `group`; a new name must be free in the realm.
pub async fn update<View: Serialize>(
    context: &Context,
    before: &Group,
    mut group: Group,
    by: Author<'_>,
    describe: impl Fn(&Group) -> View,
) -> Result<Group, Error> {
    group.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    if !role_store::update_group(&mut *tx, &group).await? {
        return Err(Error::AlreadyExists("group"));
    }
    let change = Change::of(ChangeAction::Update, group.place(), 200).before(describe(before)).after(describe(&group));
    changes::commit(context, by, tx, change).await?;
    Ok(group)
}

/// Deletes `group`, with its memberships and the roles it gave.
pub async fn delete<View: Serialize>(
    context: &Context,
    group: &Group,
    by: Author<'_>,
    describe: impl Fn(&Group) -> View,
) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    role_store::delete_group(&mut *tx, &group.id).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Delete, group.place(), 200).before(describe(group))).await
}
