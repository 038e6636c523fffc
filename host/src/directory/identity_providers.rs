//! Identity providers of a realm, the external providers its people may sign in through, and
//! which of them a client's login page or an organization's people use. Each change is checked
//! against the realm (the roles and groups its mappings name, the providers an offer lists),
//! written, trailed and announced here.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::identity_providers::{self as provider_store, IdentityProvider, Offer};
use crate::store::trail::{Change, ChangeAction, Place, Placed};

/// What a role mapping grants, as the provider's stored mappings hold it.
#[derive(Debug, Default, Deserialize)]
struct Granted {
    #[serde(default)]
    roles: Vec<String>,
    #[serde(default)]
    groups: Vec<String>,
}

/// The roles and groups the mappings name must be the realm's.
async fn check_mappings(context: &Context, provider: &IdentityProvider) -> Result<(), Error> {
    let mappings: Vec<Granted> = serde_json::from_str(&provider.role_mappings).unwrap_or_default();
    if mappings.is_empty() {
        return Ok(());
    }
    let names = crate::store::imports::names(context.store.pool(), &provider.realm_id).await?;
    let known = |kind: &str| -> HashSet<String> {
        names.iter().filter(|(k, _, _)| k == kind).map(|(_, name, _)| name.clone()).collect()
    };
    let (roles, groups) = (known("realm_role"), known("group"));
    let mut refused = Vec::new();
    for (index, mapping) in mappings.iter().enumerate() {
        for (list, known, field, what) in
            [(&mapping.roles, &roles, "roles", "realm role"), (&mapping.groups, &groups, "groups", "group")]
        {
            let field = format!("roleMappings[{index}].{field}");
            let found = |name: String| async move { Ok(known.contains(&name)) };
            let message = |name: &str| format!("the realm has no {what} named {name}");
            refused.extend(super::missing(&field, list, found, message).await?);
        }
    }
    if refused.is_empty() { Ok(()) } else { Err(Error::Validation(refused)) }
}

/// Creates `provider`; its id must be free in the realm.
pub async fn create<View: Serialize>(
    context: &Context,
    provider: IdentityProvider,
    by: Author<'_>,
    describe: impl Fn(&IdentityProvider) -> View,
) -> Result<IdentityProvider, Error> {
    check_mappings(context, &provider).await?;
    let mut tx = context.store.begin().await?;
    if !provider_store::insert(&mut *tx, &provider).await? {
        return Err(Error::AlreadyExists("identity provider"));
    }
    let change = Change::of(ChangeAction::Create, provider.place(), 201).after(describe(&provider));
    changes::commit(context, by, tx, change).await?;
    Ok(provider)
}

/// Changes `before` into `provider`.
pub async fn update<View: Serialize>(
    context: &Context,
    before: &IdentityProvider,
    mut provider: IdentityProvider,
    by: Author<'_>,
    describe: impl Fn(&IdentityProvider) -> View,
) -> Result<IdentityProvider, Error> {
    check_mappings(context, &provider).await?;
    provider.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    provider_store::update(&mut *tx, &provider).await?;
    let change =
        Change::of(ChangeAction::Update, provider.place(), 200).before(describe(before)).after(describe(&provider));
    changes::commit(context, by, tx, change).await?;
    Ok(provider)
}

/// Deletes `provider`.
pub async fn delete<View: Serialize>(
    context: &Context,
    provider: &IdentityProvider,
    by: Author<'_>,
    describe: impl Fn(&IdentityProvider) -> View,
) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    provider_store::delete(&mut *tx, &provider.realm_id, &provider.id).await?;
    let change = Change::of(ChangeAction::Delete, provider.place(), 200).before(describe(provider));
    changes::commit(context, by, tx, change).await
}

/// Replaces what `offer` offers with `providers`, each one of the realm's, in their order; trailed
/// as a change of `place`.
pub async fn offer(
    context: &Context,
    offer: Offer<'_>,
    place: Place,
    providers: &[String],
    by: Author<'_>,
) -> Result<(), Error> {
    let pool = context.store.pool();
    let found = |id: String| async move { Ok(provider_store::find(pool, offer.realm_id(), &id).await?.is_some()) };
    let message = |id: &str| format!("the realm has no identity provider {id}");
    let refused = super::missing("identityProviders", providers, found, message).await?;
    if !refused.is_empty() {
        return Err(Error::Validation(refused));
    }
    let before = provider_store::offered(context.store.pool(), offer).await?;
    let mut tx = context.store.begin().await?;
    provider_store::offer(&mut tx, offer, providers).await?;
    let change = Change::of(ChangeAction::Update, place, 200)
        .before(json!({ "identityProviders": before }))
        .after(json!({ "identityProviders": providers }));
    changes::commit(context, by, tx, change).await
}
