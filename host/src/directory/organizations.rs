//! Organizations of a realm (a customer company, say): created, changed and deleted here, their
//! names and e-mail domains each unique in the realm.

use serde::Serialize;

use crate::kernel::validate::Rule;
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::organizations::{self as org_store, Organization, Taken};
use crate::store::trail::{Change, ChangeAction, Placed};

fn taken(conflict: Taken) -> Error {
    match conflict {
        Taken::Name => Error::AlreadyExists("organization"),
        Taken::Domain(domain) => {
            Error::invalid("domains", Rule::Duplicate, format!("{domain} belongs to another organization of the realm"))
        }
    }
}

/// Creates `organization`; its name and domains must be free in the realm.
pub async fn create<View: Serialize>(
    context: &Context,
    organization: Organization,
    by: Author<'_>,
    describe: impl Fn(&Organization) -> View,
) -> Result<Organization, Error> {
    let mut tx = context.store.begin().await?;
    if let Some(conflict) = org_store::insert(&mut tx, &organization).await? {
        return Err(taken(conflict));
    }
    let change = Change::of(ChangeAction::Create, organization.place(), 201).after(describe(&organization));
    changes::commit(context, by, tx, change).await?;
    Ok(organization)
}

/// Changes `before` into `organization`; a new name or domain must be free in the realm.
pub async fn update<View: Serialize>(
    context: &Context,
    before: &Organization,
    mut organization: Organization,
    by: Author<'_>,
    describe: impl Fn(&Organization) -> View,
) -> Result<Organization, Error> {
    organization.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    if let Some(conflict) = org_store::update(&mut tx, &organization).await? {
        return Err(taken(conflict));
    }
    let change = Change::of(ChangeAction::Update, organization.place(), 200)
        .before(describe(before))
        .after(describe(&organization));
    changes::commit(context, by, tx, change).await?;
    Ok(organization)
}

/// Deletes `organization` with its domains and memberships.
pub async fn delete<View: Serialize>(
    context: &Context,
    organization: &Organization,
    by: Author<'_>,
    describe: impl Fn(&Organization) -> View,
) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    org_store::delete(&mut *tx, &organization.id).await?;
    let change = Change::of(ChangeAction::Delete, organization.place(), 200).before(describe(organization));
    changes::commit(context, by, tx, change).await
}
