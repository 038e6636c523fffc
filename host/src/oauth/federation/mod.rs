//! Signing in through a realm's external identity providers. [`upstream`]: a provider's metadata
//! and keys, read from its discovery address; [`id_token`]: what its ID token must be before the
//! person it names is taken; [`person`]: that person as a person of the realm, found by their
//! link, linked by a vouched-for e-mail address, or created; [`sign_in`]: the realm as the
//! provider's relying party, from the request sent upstream to the claims read back;
//! [`connections`]: accounts people connect at connection providers, and the exchange of a token
//! a resource server received for the token of the person's connected account.

pub mod connections;
pub mod id_token;
pub mod person;
pub mod sign_in;
pub mod upstream;

use std::sync::Arc;

use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::identity_providers::{self as provider_store, IdentityProvider, Offer};
use crate::store::realms::Realm;

/// The Active providers a client's login page offers, in the order of their buttons.
pub async fn offered_by_client(
    context: &Context,
    realm: &Realm,
    client_id: &str,
) -> Result<Arc<Vec<IdentityProvider>>, Error> {
    if let Some(offered) = context.caches.offered_providers(&realm.id, client_id) {
        return Ok(offered);
    }
    let offer = Offer::Client { realm_id: &realm.id, client_id };
    let offered = Arc::new(provider_store::offered_active(context.store.pool(), offer).await?);
    context.caches.keep_offered_providers(&realm.id, client_id, offered.clone());
    Ok(offered)
}

/// The provider of the organization whose domain the address `typed` is at (home-realm discovery):
/// the first Active one the organization uses. `None` for anything but an e-mail address.
pub async fn for_address(context: &Context, realm: &Realm, typed: &str) -> Result<Option<IdentityProvider>, Error> {
    let Some((local, domain)) = typed.trim().rsplit_once('@') else { return Ok(None) };
    if local.is_empty() || domain.is_empty() {
        return Ok(None);
    }
    let pool = context.store.pool();
    let domain = domain.to_ascii_lowercase();
    let Some(organization_id) = provider_store::organization_of_domain(pool, &realm.id, &domain).await? else {
        return Ok(None);
    };
    let offer = Offer::Organization { realm_id: &realm.id, organization_id: &organization_id };
    Ok(provider_store::offered_active(pool, offer).await?.into_iter().next())
}

/// The realm's Active provider `id`, when it has one.
pub async fn active(context: &Context, realm: &Realm, id: &str) -> Result<Option<IdentityProvider>, Error> {
    let found = provider_store::find(context.store.pool(), &realm.id, id).await?;
    Ok(found.filter(|provider| provider.status == crate::store::Status::Active))
}
