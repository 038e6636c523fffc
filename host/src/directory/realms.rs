//! Realms: created, changed and deleted here, each change checked (the platform realm stays
//! active, joined by invitation only, and is never deleted; registration scopes exist), written,
//! trailed and announced.

use std::sync::Arc;

use serde::Serialize;

use crate::kernel::ids::PLATFORM_REALM;
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::realms::{self as realm_store, Realm};
use crate::store::trail::{Change, ChangeAction, Placed};

/// The registration scopes must be scopes the realm has.
async fn check_registration_scopes(context: &Context, realm: &Realm) -> Result<(), Error> {
    let scopes = &realm.settings.registration_scopes;
    super::scopes::check_exist(context, &realm.account_id, &realm.id, scopes, "registrationScopes").await
}

/// The realm `id`, from this host's cache when it holds it (kept there once read).
pub async fn find(context: &Context, id: &str) -> Result<Option<Arc<Realm>>, Error> {
    if let Some(realm) = context.caches.realm(id) {
        return Ok(Some(realm));
    }
    let found = realm_store::find(context.store.pool(), id).await?.map(Arc::new);
    if let Some(realm) = &found {
        context.caches.keep_realm(realm.clone());
    }
    Ok(found)
}

/// Creates `realm`; its id must be free.
pub async fn create<View: Serialize>(
    context: &Context,
    realm: Realm,
    by: Author<'_>,
    describe: impl Fn(&Realm) -> View,
) -> Result<Realm, Error> {
    check_registration_scopes(context, &realm).await?;
    let mut tx = context.store.begin().await?;
    if !realm_store::insert(&mut *tx, &realm).await? {
        return Err(Error::AlreadyExists("realm"));
    }
    changes::commit(context, by, tx, Change::of(ChangeAction::Create, realm.place(), 201).after(describe(&realm)))
        .await?;
    Ok(realm)
}

/// Changes `before` into `realm`.
pub async fn update<View: Serialize>(
    context: &Context,
    before: &Realm,
    mut realm: Realm,
    by: Author<'_>,
    describe: impl Fn(&Realm) -> View,
) -> Result<Realm, Error> {
    if realm.id == PLATFORM_REALM && realm.status != Status::Active {
        return Err(Error::Conflict("the platform realm cannot be disabled".into()));
    }
    if realm.id == PLATFORM_REALM && realm.settings.self_sign_up {
        return Err(Error::Conflict("people join the platform realm by invitation, never by sign-up".into()));
    }
    if realm.settings.registration_scopes != before.settings.registration_scopes {
        check_registration_scopes(context, &realm).await?;
    }
    realm.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    realm_store::update(&mut *tx, &realm).await?;
    let change = Change::of(ChangeAction::Update, realm.place(), 200).before(describe(before)).after(describe(&realm));
    changes::commit(context, by, tx, change).await?;
    Ok(realm)
}

/// Deletes `realm`, with its clients and people; never the platform realm.
pub async fn delete<View: Serialize>(
    context: &Context,
    realm: &Realm,
    by: Author<'_>,
    describe: impl Fn(&Realm) -> View,
) -> Result<(), Error> {
    if realm.id == PLATFORM_REALM {
        return Err(Error::Conflict("the platform realm cannot be deleted".into()));
    }
    let mut tx = context.store.begin().await?;
    realm_store::delete(&mut *tx, &realm.id).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Delete, realm.place(), 200).before(describe(realm))).await
}
