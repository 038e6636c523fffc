//! The admin operations on a realm's identity providers, and on those its clients and
//! organizations offer.

use crate::authz::caller::Caller;
use crate::directory::identity_providers;
use crate::directory::identity_providers::{
    ClaimsView, IdentityProviderInput, IdentityProviderView, OfferedProvidersInput,
};
use crate::directory::listing::ListQuery;
use crate::directory::reach::{
    Admin, ClientRead, ClientUpdate, Found, InClient, InRealm, OrganizationRead, OrganizationUpdate, RealmRead,
    RealmUpdate,
};
use crate::kernel::ids::IdentityProviderId;
use crate::kernel::validate::{Body, Rule, one_of, parsed};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::identity_providers::{self as provider_store, IdentityProvider, Offer, Protocol};
use crate::store::organizations::Organization;
use crate::store::trail::Placed;
use serde_json::json;

/// `POST /realms/{realm}/identity-providers`: the created provider (its secret never shown).
pub async fn create(
    admin: &Admin<'_>,
    InRealm { realm, caller, .. }: InRealm<RealmUpdate>,
    mut body: Body,
) -> Result<Answer<IdentityProviderView>, Error> {
    let now = admin.clock.now();
    let id = body.required("id", parsed(IdentityProviderId::parse));
    let protocol = body.required("protocol", one_of(Protocol::NAMES));
    let client_required = !body.has("clientId");
    let protocol = protocol.unwrap_or(Protocol::OpenIdConnect);
    let mut provider = IdentityProvider {
        realm_id: realm.id.clone(),
        id: IdentityProviderId::known(""),
        display_name: String::new(),
        protocol,
        status: Status::Active,
        discovery_url: None,
        authorization_url: None,
        token_url: None,
        userinfo_url: None,
        client_id: String::new(),
        client_secret: None,
        client_secret_last_four: None,
        scopes: match protocol {
            Protocol::OpenIdConnect => ["openid", "profile", "email"].map(str::to_owned).to_vec(),
            Protocol::OAuth2 => Vec::new(),
        },
        claims: json!(ClaimsView::default_for(protocol)).to_string(),
        trust_verified_email: false,
        role_mappings: "[]".into(),
        created_at: now,
        updated_at: now,
    };
    if client_required {
        body.refuse("clientId", Rule::Required, "clientId is required");
    }
    let input = IdentityProviderInput { id, ..IdentityProviderInput::read(admin, &mut body) };
    provider.id = input.id.clone().unwrap_or(provider.id);
    input.apply(&mut provider, &mut body);
    body.finish()?;
    if provider.display_name.is_empty() {
        provider.display_name = provider.id.to_string();
    }
    let describe = |provider: &IdentityProvider| IdentityProviderView::of(admin, provider);
    let provider = identity_providers::create(admin, provider, caller.author()).await?;
    Ok(Answer::Created(describe(&provider)))
}

/// `GET /realms/{realm}/identity-providers`: a page of the realm's identity providers.
pub async fn list(
    admin: &Admin<'_>,
    InRealm { realm, .. }: InRealm<RealmRead>,
    query: Option<String>,
) -> Result<Answer<IdentityProviderView>, Error> {
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::Status::NAMES)?;
    let found = provider_store::page(&admin.store, &realm.id, &list.page).await?;
    Ok(Answer::Paged(found.map(|provider| IdentityProviderView::of(admin, &provider))))
}

/// `PUT /realms/{realm}/identity-providers/{providerId}`.
pub async fn update(
    admin: &Admin<'_>,
    Found { item: before, caller, .. }: Found<IdentityProvider, RealmUpdate>,
    mut body: Body,
) -> Result<Answer<IdentityProviderView>, Error> {
    let mut provider = before.clone();
    body.unchanged("id", &provider.id);
    body.unchanged("protocol", provider.protocol.as_str());
    IdentityProviderInput::read(admin, &mut body).apply(&mut provider, &mut body);
    body.finish()?;
    let describe = |provider: &IdentityProvider| IdentityProviderView::of(admin, provider);
    let provider = identity_providers::update(admin, &before, provider, caller.author()).await?;
    Ok(Answer::Ok(describe(&provider)))
}

/// `DELETE /realms/{realm}/identity-providers/{providerId}`: deleted.
pub async fn delete(
    admin: &Admin<'_>,
    Found { item: provider, caller, .. }: Found<IdentityProvider, RealmUpdate>,
) -> Result<Answer<()>, Error> {
    identity_providers::delete(admin, &provider, caller.author()).await?;
    Ok(Answer::Done)
}

/// `GET /realms/{realm}/clients/{client}/identity-providers`: the ids of the providers the client's
/// login page offers, in order.
pub async fn client_providers(
    admin: &Admin<'_>,
    InClient { client, .. }: InClient<ClientRead>,
) -> Result<Answer<Vec<String>>, Error> {
    let offer = Offer::Client { realm_id: &client.realm_id, client_id: &client.id };
    Ok(Answer::Ok(provider_store::offered(admin.store.pool(), offer).await?))
}

/// `PUT /realms/{realm}/clients/{client}/identity-providers`: the providers now offered.
pub async fn offer_client_providers(
    admin: &Admin<'_>,
    InClient { client, caller, .. }: InClient<ClientUpdate>,
    body: Body,
) -> Result<Answer<Vec<String>>, Error> {
    let offer = Offer::Client { realm_id: &client.realm_id, client_id: &client.id };
    replace_offer(admin, &caller, offer, client.place(), body).await
}

/// `GET /realms/{realm}/organizations/{organizationId}/identity-providers`: the ids of the
/// organization's providers, in order.
pub async fn organization_providers(
    admin: &Admin<'_>,
    Found { item: organization, .. }: Found<Organization, OrganizationRead>,
) -> Result<Answer<Vec<String>>, Error> {
    let offer = Offer::Organization { realm_id: &organization.realm_id, organization_id: &organization.id };
    Ok(Answer::Ok(provider_store::offered(admin.store.pool(), offer).await?))
}

/// `PUT /realms/{realm}/organizations/{organizationId}/identity-providers`: the organization's
/// providers now.
pub async fn offer_organization_providers(
    admin: &Admin<'_>,
    Found { item: organization, caller, .. }: Found<Organization, OrganizationUpdate>,
    body: Body,
) -> Result<Answer<Vec<String>>, Error> {
    let offer = Offer::Organization { realm_id: &organization.realm_id, organization_id: &organization.id };
    replace_offer(admin, &caller, offer, organization.place(), body).await
}

/// Replaces what `offer` offers with the body's providers, each one of the realm's; trailed as a
/// change of `place`.
pub(crate) async fn replace_offer(
    admin: &Admin<'_>,
    caller: &Caller,
    offer: Offer<'_>,
    place: crate::store::trail::Place,
    mut body: Body,
) -> Result<Answer<Vec<String>>, Error> {
    let OfferedProvidersInput { identity_providers: providers } = OfferedProvidersInput::read(&mut body);
    body.finish()?;
    identity_providers::offer(admin, offer, place, &providers, caller.author()).await?;
    Ok(Answer::Ok(providers))
}

/// `GET /realms/{realm}/identity-providers/{providerId}`.
pub async fn read(
    admin: &Admin<'_>,
    Found { item: provider, .. }: Found<IdentityProvider, RealmRead>,
) -> Result<Answer<IdentityProviderView>, Error> {
    Ok(Answer::Ok(IdentityProviderView::of(admin, &provider)))
}
