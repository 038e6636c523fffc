//! Scopes: the account's catalogue, usable in each of its realms, and scopes exclusive to one
//! realm; and the scopes a client may request. Each change is written, trailed and announced here.

use serde::Serialize;

use crate::kernel::validate::{Notification, Rule};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients::{self as client_store, Client};
use crate::store::scopes::{self as scope_store, Scope};
use crate::store::trail::{Change, ChangeAction, Place, Placed, ResourceKind};

/// Scopes of OpenID Connect that exist in every realm without being created.
pub const STANDARD_SCOPES: &[&str] = &["openid", "profile", "email"];

/// Refuses every scope that is neither standard nor in the catalogue or the realm; `field` names
/// the list in the notifications.
pub async fn check_exist(
    context: &Context,
    account_id: &str,
    realm_id: &str,
    scopes: &[String],
    field: &str,
) -> Result<(), Error> {
    let known = scope_store::names_in_realm(context.store.pool(), account_id, realm_id).await?;
    let refused: Vec<Notification> = scopes
        .iter()
        .enumerate()
        .filter(|(_, s)| !STANDARD_SCOPES.contains(&s.as_str()) && !known.contains(s))
        .map(|(i, s)| {
            Notification::new(
                format!("{field}[{i}]"),
                Rule::NotFound,
                format!("no scope named {s} in the catalogue or the realm"),
            )
        })
        .collect();
    if refused.is_empty() { Ok(()) } else { Err(Error::Validation(refused)) }
}

/// Creates `scope`; its name must be free in the catalogue, or in its realm.
pub async fn create<View: Serialize>(
    context: &Context,
    scope: Scope,
    by: Author<'_>,
    describe: impl Fn(&Scope) -> View,
) -> Result<Scope, Error> {
    let mut tx = context.store.begin().await?;
    if !scope_store::insert(&mut *tx, &scope).await? {
        return Err(Error::AlreadyExists("scope"));
    }
    let change = Change::of(ChangeAction::Create, scope.place(), 201).after(describe(&scope));
    changes::commit(context, by, tx, change).await?;
    Ok(scope)
}

/// Changes `before` into `scope` (its name never changes).
pub async fn update<View: Serialize>(
    context: &Context,
    before: &Scope,
    mut scope: Scope,
    by: Author<'_>,
    describe: impl Fn(&Scope) -> View,
) -> Result<Scope, Error> {
    scope.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    scope_store::update(&mut *tx, &scope).await?;
    let change = Change::of(ChangeAction::Update, scope.place(), 200).before(describe(before)).after(describe(&scope));
    changes::commit(context, by, tx, change).await?;
    Ok(scope)
}

/// Deletes `scope`.
pub async fn delete<View: Serialize>(
    context: &Context,
    scope: &Scope,
    by: Author<'_>,
    describe: impl Fn(&Scope) -> View,
) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    scope_store::delete(&mut *tx, &scope.id).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Delete, scope.place(), 200).before(describe(scope))).await
}

/// Replaces the scopes `before` (a client of a realm of `account_id`) may request with `scopes`,
/// each of which must exist.
pub async fn allow(
    context: &Context,
    account_id: &str,
    before: &Client,
    scopes: Vec<String>,
    by: Author<'_>,
) -> Result<Client, Error> {
    check_exist(context, account_id, &before.realm_id, &scopes, "scopes").await?;
    let mut client = before.clone();
    client.allowed_scopes = scopes;
    client.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    client_store::update(&mut *tx, &client).await?;
    let place = Place::in_realm(ResourceKind::ClientScopes, &client.id, &client.realm_id).of_client(&client.id);
    let change =
        Change::of(ChangeAction::Update, place, 200).before(&before.allowed_scopes).after(&client.allowed_scopes);
    changes::commit(context, by, tx, change).await?;
    Ok(client)
}
