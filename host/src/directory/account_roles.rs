//! The account's own roles, beside the built-in Owner, Admin, Developer and Auditor: named sets
//! of permissions that people of the team and credentials hold. Their names are unique in the
//! account and never change.

use serde::Serialize;

use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::roles::{self as role_store, AccountRole};
use crate::store::trail::{Change, ChangeAction, Placed};

/// Creates `role`; its name must be free in the account.
pub async fn create<View: Serialize>(
    context: &Context,
    role: AccountRole,
    by: Author<'_>,
    describe: impl Fn(&AccountRole) -> View,
) -> Result<AccountRole, Error> {
    let mut tx = context.store.begin().await?;
    if !role_store::insert(&mut *tx, &role).await? {
        return Err(Error::AlreadyExists("role"));
    }
    let change = Change::of(ChangeAction::Create, role.place(), 201).after(describe(&role));
    changes::commit(context, by, tx, change).await?;
    Ok(role)
}

/// Changes `before` into `role` (its description and permissions).
pub async fn update<View: Serialize>(
    context: &Context,
    before: &AccountRole,
    mut role: AccountRole,
    by: Author<'_>,
    describe: impl Fn(&AccountRole) -> View,
) -> Result<AccountRole, Error> {
    role.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    role_store::update(&mut *tx, &role).await?;
    let change = Change::of(ChangeAction::Update, role.place(), 200).before(describe(before)).after(describe(&role));
    changes::commit(context, by, tx, change).await?;
    Ok(role)
}

/// Deletes `role`: the people and credentials that held it lose what it granted.
pub async fn delete<View: Serialize>(
    context: &Context,
    role: &AccountRole,
    by: Author<'_>,
    describe: impl Fn(&AccountRole) -> View,
) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    role_store::delete(&mut *tx, &role.account_id, &role.id).await?;
    let change = Change::of(ChangeAction::Delete, role.place(), 200).before(describe(role));
    changes::commit(context, by, tx, change).await
}
