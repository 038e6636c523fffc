//! Resource servers of a realm: the APIs and MCP servers tokens are addressed to. Each change is
//! checked against the realm (its scopes exist, its clients are the realm's), written, trailed
//! and announced here.

use serde::Serialize;

use crate::kernel::validate::{Notification, Rule};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients as client_store;
use crate::store::realms::Realm;
use crate::store::resource_servers::{self as server_store, ResourceServer};
use crate::store::trail::{Change, ChangeAction, Placed};

/// The scopes must exist and the clients must be clients of the realm.
async fn check_references(context: &Context, realm: &Realm, server: &ResourceServer) -> Result<(), Error> {
    super::scopes::check_exist(context, &realm.account_id, &realm.id, &server.scopes, "scopes").await?;
    let pool = context.store.pool();
    let found = |client: String| async move { Ok(client_store::find(pool, &realm.id, &client).await?.is_some()) };
    let message = |client: &str| format!("no client {client} in the realm");
    let mut refused = super::missing("allowedClients", &server.allowed_clients, found, message).await?;
    if let Some(client) = &server.client_id
        && client_store::find(pool, &realm.id, client).await?.is_none()
    {
        refused.push(Notification::new("clientId", Rule::NotFound, format!("no client {client} in the realm")));
    }
    if refused.is_empty() { Ok(()) } else { Err(Error::Validation(refused)) }
}

/// Creates `server` in `realm`; its address must be free in the realm.
pub async fn create<View: Serialize>(
    context: &Context,
    realm: &Realm,
    server: ResourceServer,
    by: Author<'_>,
    describe: impl Fn(&ResourceServer) -> View,
) -> Result<ResourceServer, Error> {
    check_references(context, realm, &server).await?;
    let mut tx = context.store.begin().await?;
    if !server_store::insert(&mut *tx, &server).await? {
        return Err(Error::AlreadyExists("resource server"));
    }
    let change = Change::of(ChangeAction::Create, server.place(), 201).after(describe(&server));
    changes::commit(context, by, tx, change).await?;
    Ok(server)
}

/// Changes `before` into `server`; a new address must be free in the realm.
pub async fn update<View: Serialize>(
    context: &Context,
    realm: &Realm,
    before: &ResourceServer,
    mut server: ResourceServer,
    by: Author<'_>,
    describe: impl Fn(&ResourceServer) -> View,
) -> Result<ResourceServer, Error> {
    check_references(context, realm, &server).await?;
    server.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    if !server_store::update(&mut *tx, &server).await? {
        return Err(Error::AlreadyExists("resource server"));
    }
    let change =
        Change::of(ChangeAction::Update, server.place(), 200).before(describe(before)).after(describe(&server));
    changes::commit(context, by, tx, change).await?;
    Ok(server)
}

/// Deletes `server`.
pub async fn delete<View: Serialize>(
    context: &Context,
    server: &ResourceServer,
    by: Author<'_>,
    describe: impl Fn(&ResourceServer) -> View,
) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    server_store::delete(&mut *tx, &server.id).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Delete, server.place(), 200).before(describe(server)))
        .await
}
