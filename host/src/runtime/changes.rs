//! Administrative changes: each is committed with its trail row (and, inside a realm, its
//! `admin_resource_*` event) in the transaction that made it, announced to the other hosts, and
//! answered once every host has dropped what it made stale from its caches.

use crate::kernel::ids::RealmId;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::changes::Invalidation;
use crate::store::trail::{self, Actor, Change, Request, Stale};
use crate::store::{Transaction, changes};

/// Who asked for a change, and how.
#[derive(Debug, Clone, Copy)]
pub struct Author<'a> {
    pub actor: &'a Actor,
    pub request: &'a Request,
}

/// Writes the change's trail row (and event, inside a realm), announces what it makes stale to
/// the other hosts, commits, and drops the stale entries from this host's caches.
pub async fn commit(context: &Context, by: Author<'_>, mut tx: Transaction, change: Change) -> Result<(), Error> {
    let at = context.clock.now();
    trail::record_change(&mut tx, by.actor, by.request, &change, at).await?;
    let stale = match (change.resource_type.makes_stale(), &change.resource_id, &change.realm_id, &change.client_id) {
        (Stale::Realm, Some(id), _, _) => Some(Invalidation::Realm(RealmId::known(id.as_str()))),
        (Stale::RealmRoles, _, Some(realm), _) => Some(Invalidation::Realm(realm.clone())),
        (Stale::Account, _, _, _) => Some(Invalidation::Account(by.actor.account_id.clone())),
        (Stale::Delegation, _, Some(realm), _) => Some(Invalidation::Delegation(realm.clone())),
        (Stale::Suspensions, _, Some(realm), _) => Some(Invalidation::Suspensions(realm.clone())),
        (Stale::Providers, _, Some(realm), _) => Some(Invalidation::Providers(realm.clone())),
        (Stale::Client | Stale::Keys, _, Some(realm), Some(client)) => {
            Some(Invalidation::Client(realm.clone(), client.clone()))
        }
        (Stale::Keys, _, Some(realm), None) => Some(Invalidation::Keys(realm.clone())),
        _ => None,
    };
    match stale {
        Some(stale) => publish(context, tx, &stale).await,
        None => Ok(tx.commit().await?),
    }
}

/// Commits `tx`, which made `stale` out of date: drops it from this host's caches and returns
/// once every other host has dropped it too, so the change is in force wherever the next request
/// lands.
pub async fn publish(context: &Context, mut tx: Transaction, stale: &Invalidation) -> Result<(), Error> {
    let fence = changes::announce(&context.store, &mut tx, stale).await?;
    tx.commit().await?;
    context.caches.apply(stale);
    changes::settled(&context.store, fence).await;
    Ok(())
}
