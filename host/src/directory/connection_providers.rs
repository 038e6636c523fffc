//! Connection providers of a realm: where people connect accounts whose tokens the realm's
//! resource servers may exchange for. Each change is checked against the realm (the resource
//! servers it names), written, trailed and announced here.

use serde::Serialize;

use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::connections::{self as store, ConnectionProvider};
use crate::store::trail::{Change, ChangeAction, Placed};

/// The resource servers named must be the realm's.
async fn check_servers(context: &Context, provider: &ConnectionProvider) -> Result<(), Error> {
    let pool = context.store.pool();
    let found = |id: String| async move {
        Ok(crate::store::resource_servers::find(pool, &provider.realm_id, &id).await?.is_some())
    };
    let message = |id: &str| format!("the realm has no resource server {id}");
    let refused = super::missing("resourceServers", &provider.resource_servers, found, message).await?;
    if refused.is_empty() { Ok(()) } else { Err(Error::Validation(refused)) }
}

/// Creates `provider`; its id must be free in the realm.
pub async fn create<View: Serialize>(
    context: &Context,
    provider: ConnectionProvider,
    by: Author<'_>,
    describe: impl Fn(&ConnectionProvider) -> View,
) -> Result<ConnectionProvider, Error> {
    check_servers(context, &provider).await?;
    let mut tx = context.store.begin().await?;
    if !store::insert_provider(&mut *tx, &provider).await? {
        return Err(Error::AlreadyExists("connection provider"));
    }
    let change = Change::of(ChangeAction::Create, provider.place(), 201).after(describe(&provider));
    changes::commit(context, by, tx, change).await?;
    Ok(provider)
}

/// Changes `before` into `provider`.
pub async fn update<View: Serialize>(
    context: &Context,
    before: &ConnectionProvider,
    mut provider: ConnectionProvider,
    by: Author<'_>,
    describe: impl Fn(&ConnectionProvider) -> View,
) -> Result<ConnectionProvider, Error> {
    check_servers(context, &provider).await?;
    provider.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    store::update_provider(&mut *tx, &provider).await?;
    let change =
        Change::of(ChangeAction::Update, provider.place(), 200).before(describe(before)).after(describe(&provider));
    changes::commit(context, by, tx, change).await?;
    Ok(provider)
}

/// Deletes `provider`, with every connection made at it.
pub async fn delete<View: Serialize>(
    context: &Context,
    provider: &ConnectionProvider,
    by: Author<'_>,
    describe: impl Fn(&ConnectionProvider) -> View,
) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    store::delete_provider(&mut *tx, &provider.realm_id, &provider.id).await?;
    let change = Change::of(ChangeAction::Delete, provider.place(), 200).before(describe(provider));
    changes::commit(context, by, tx, change).await
}
