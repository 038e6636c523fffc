//! `/realms/{realm}/identity-providers`: the external providers people of a realm may sign in
//! through. Reading needs `realm:read`, changing `realm:update`. The client secret is write-only:
//! sealed at rest, shown by its last four characters. Which providers a client's login page offers
//! (`client:*`) and an organization's people use (`organization:*`) are lists of their ids.

use axum::extract::{RawQuery, State};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::ToSchema;

use super::ListQuery;
use super::reach::{
    ClientRead, ClientUpdate, Found, InClient, InRealm, OrganizationRead, OrganizationUpdate, RealmRead, RealmUpdate,
};
use crate::directory::identity_providers;
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::clock::iso;
use crate::kernel::crypto::last_four;
use crate::kernel::ids::IdentityProviderId;
use crate::kernel::validate::{Body, Notification, Refusals, Rule, boolean, list_of, one_of, parsed, text};
use crate::oauth::federation::sign_in::{SEALING_PURPOSE, callback_address};
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::identity_providers::{self as provider_store, IdentityProvider, Offer, Protocol};
use crate::store::organizations::Organization;
use crate::store::trail::Placed;

/// The upstream claims a person's fields are read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClaimsView {
    pub username: String,
    pub email: String,
    /// Absent for a provider that says nothing of it (the address is then never taken as verified).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email_verified: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub given_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family_name: Option<String>,
}

impl ClaimsView {
    /// OpenID Connect's standard claims; for OAuth 2.0, the names GitHub's user-info uses.
    fn default_for(protocol: Protocol) -> Self {
        match protocol {
            Protocol::OpenIdConnect => Self {
                username: "preferred_username".into(),
                email: "email".into(),
                email_verified: Some("email_verified".into()),
                given_name: Some("given_name".into()),
                family_name: Some("family_name".into()),
            },
            Protocol::OAuth2 => Self {
                username: "login".into(),
                email: "email".into(),
                email_verified: None,
                given_name: None,
                family_name: None,
            },
        }
    }
}

/// Roles and groups given at every sign-in to a person whose upstream `claim` holds `value` (or,
/// for a list claim, contains it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleMappingView {
    pub claim: String,
    pub value: String,
    /// Realm roles, by name.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// Groups of the realm, by name.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IdentityProviderView {
    /// What `idp_hint` names.
    pub id: String,
    pub realm_id: String,
    pub display_name: String,
    /// OpenIdConnect or OAuth2.
    pub protocol: Protocol,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discovery_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorization_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub userinfo_url: Option<String>,
    pub client_id: String,
    /// The secret itself is never shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_last_four: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    pub claims: ClaimsView,
    /// An upstream e-mail address said to be verified may link to a person of the realm who has it.
    pub trust_verified_email: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub role_mappings: Vec<RoleMappingView>,
    /// Where the provider sends people back: the redirect URI to register at the provider.
    pub redirect_uri: String,
    pub created_at: String,
    pub updated_at: String,
}

impl IdentityProviderView {
    fn of(state: &AppState, provider: &IdentityProvider) -> Self {
        Self {
            redirect_uri: callback_address(state, &provider.realm_id, provider.id.as_str()),
            id: provider.id.to_string(),
            realm_id: provider.realm_id.to_string(),
            display_name: provider.display_name.clone(),
            protocol: provider.protocol,
            status: provider.status,
            discovery_url: provider.discovery_url.clone(),
            authorization_url: provider.authorization_url.clone(),
            token_url: provider.token_url.clone(),
            userinfo_url: provider.userinfo_url.clone(),
            client_id: provider.client_id.clone(),
            client_secret_last_four: provider.client_secret_last_four.clone(),
            scopes: provider.scopes.clone(),
            claims: serde_json::from_str(&provider.claims)
                .unwrap_or_else(|_| ClaimsView::default_for(provider.protocol)),
            trust_verified_email: provider.trust_verified_email,
            role_mappings: serde_json::from_str(&provider.role_mappings).unwrap_or_default(),
            created_at: iso(provider.created_at),
            updated_at: iso(provider.updated_at),
        }
    }
}

/// The body of a creation. An update takes the same fields but `id` and `protocol`, each optional.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct IdentityProviderInput {
    /// 1–64 lowercase letters, digits, `-`, `_`; unique in the realm. Required at creation.
    #[schema(value_type = String, required = true)]
    id: Option<IdentityProviderId>,
    /// Up to 128 characters, on the login page's button; defaults to the id.
    display_name: Option<String>,
    /// OpenIdConnect or OAuth2; required at creation, cannot change.
    #[schema(value_type = Protocol, required = true)]
    protocol: Option<Protocol>,
    status: Option<Status>,
    /// OpenIdConnect: the provider's discovery address (`…/.well-known/openid-configuration`), https.
    /// Required for OpenID Connect.
    #[schema(value_type = Option<String>)]
    discovery_url: Option<Option<String>>,
    /// OAuth2: the authorization, token and user-info addresses, each required.
    #[schema(value_type = Option<String>)]
    authorization_url: Option<Option<String>>,
    #[schema(value_type = Option<String>)]
    token_url: Option<Option<String>>,
    #[schema(value_type = Option<String>)]
    userinfo_url: Option<Option<String>>,
    /// The client id registered at the provider. Required at creation.
    #[schema(value_type = String, required = true)]
    client_id: Option<String>,
    /// Write-only; null removes it.
    #[schema(value_type = Option<String>)]
    client_secret: Option<(Option<String>, Option<String>)>,
    /// Up to 50; by default `openid profile email` for OpenID Connect, none for OAuth 2.0.
    scopes: Option<Vec<String>>,
    /// The upstream claims read for `username`, `email`, `emailVerified`, `givenName`, `familyName`.
    #[schema(value_type = Option<ClaimsView>)]
    claims: Option<ClaimsInput>,
    /// Default false: an upstream e-mail never links to an existing person.
    trust_verified_email: Option<bool>,
    /// Up to 50.
    role_mappings: Option<Vec<RoleMappingView>>,
}

/// The claims a body names, each optional; those it does not name keep their value.
#[derive(Debug)]
struct ClaimsInput {
    username: Option<String>,
    email: Option<String>,
    email_verified: Option<Option<String>>,
    given_name: Option<Option<String>>,
    family_name: Option<Option<String>>,
}

impl ClaimsInput {
    fn read(body: &mut Body) -> Option<Self> {
        let mut claims = body.nested("claims")?;
        let read = Self {
            username: claims.optional("username", claim_name),
            email: claims.optional("email", claim_name),
            email_verified: claims.nullable("emailVerified", claim_name),
            given_name: claims.nullable("givenName", claim_name),
            family_name: claims.nullable("familyName", claim_name),
        };
        body.absorb(claims);
        Some(read)
    }

    /// `current` with the claims named changed.
    fn apply(self, mut current: ClaimsView) -> ClaimsView {
        current.username = self.username.unwrap_or(current.username);
        current.email = self.email.unwrap_or(current.email);
        current.email_verified = self.email_verified.unwrap_or(current.email_verified);
        current.given_name = self.given_name.unwrap_or(current.given_name);
        current.family_name = self.family_name.unwrap_or(current.family_name);
        current
    }
}

impl IdentityProviderInput {
    /// The changeable fields `body` gives (not the id and the protocol, which only a creation
    /// reads); a new client secret is sealed at once.
    fn read(state: &AppState, body: &mut Body) -> Self {
        Self {
            id: None,
            protocol: None,
            display_name: body.optional("displayName", text(1, 128)),
            status: body.optional("status", one_of(Status::NAMES)),
            discovery_url: body.nullable("discoveryUrl", parsed(provider_address)),
            authorization_url: body.nullable("authorizationUrl", parsed(provider_address)),
            token_url: body.nullable("tokenUrl", parsed(provider_address)),
            userinfo_url: body.nullable("userinfoUrl", parsed(provider_address)),
            client_id: body.optional("clientId", text(1, 255)),
            client_secret: client_secret(state, body),
            scopes: body.optional("scopes", list_of(50, super::clients::scope_token)),
            claims: ClaimsInput::read(body),
            trust_verified_email: body.optional("trustVerifiedEmail", boolean),
            role_mappings: body.optional("roleMappings", list_of(50, role_mapping)),
        }
    }

    /// Changes the fields given on `provider`, which must then have the addresses its protocol
    /// needs (refused on `body` otherwise).
    fn apply(self, provider: &mut IdentityProvider, body: &mut Body) {
        provider.protocol = self.protocol.unwrap_or(provider.protocol);
        provider.display_name = self.display_name.unwrap_or(std::mem::take(&mut provider.display_name));
        provider.status = self.status.unwrap_or(provider.status);
        provider.discovery_url = self.discovery_url.unwrap_or(provider.discovery_url.take());
        provider.authorization_url = self.authorization_url.unwrap_or(provider.authorization_url.take());
        provider.token_url = self.token_url.unwrap_or(provider.token_url.take());
        provider.userinfo_url = self.userinfo_url.unwrap_or(provider.userinfo_url.take());
        provider.client_id = self.client_id.unwrap_or(std::mem::take(&mut provider.client_id));
        if let Some((sealed, four)) = self.client_secret {
            (provider.client_secret, provider.client_secret_last_four) = (sealed, four);
        }
        provider.scopes = self.scopes.unwrap_or(std::mem::take(&mut provider.scopes));
        if let Some(claims) = self.claims {
            let current: ClaimsView =
                serde_json::from_str(&provider.claims).unwrap_or_else(|_| ClaimsView::default_for(provider.protocol));
            provider.claims = json!(claims.apply(current)).to_string();
        }
        provider.trust_verified_email = self.trust_verified_email.unwrap_or(provider.trust_verified_email);
        if let Some(mappings) = self.role_mappings {
            provider.role_mappings = json!(mappings).to_string();
        }
        let (which, addresses) = match provider.protocol {
            Protocol::OpenIdConnect => ("an OpenID Connect provider", vec![("discoveryUrl", &provider.discovery_url)]),
            Protocol::OAuth2 => (
                "an OAuth 2.0 provider",
                vec![
                    ("authorizationUrl", &provider.authorization_url),
                    ("tokenUrl", &provider.token_url),
                    ("userinfoUrl", &provider.userinfo_url),
                ],
            ),
        };
        let missing: Vec<&str> =
            addresses.into_iter().filter(|(_, url)| url.is_none()).map(|(field, _)| field).collect();
        for field in missing {
            body.refuse(field, Rule::Required, format!("{field} is required for {which}"));
        }
    }
}

/// A provider's address: https, as the service reaches providers over https only.
pub(super) fn provider_address(text_value: &str) -> Result<String, (Rule, String)> {
    match url::Url::parse(text_value) {
        Ok(uri) if uri.scheme() == "https" && uri.host_str().is_some() && uri.fragment().is_none() => {
            Ok(text_value.to_owned())
        }
        _ => Err((Rule::Format, "the address must be an absolute https URI without fragment".into())),
    }
}

/// A provider's `clientSecret` when the body sets it: sealed at once, with its last four characters
/// (both `None` when the body removes it with null).
pub(super) fn client_secret(state: &AppState, body: &mut Body) -> Option<(Option<String>, Option<String>)> {
    let secret = body.nullable("clientSecret", text(1, 1024))?;
    let sealer = state.hasher.sealer(SEALING_PURPOSE);
    Some((secret.as_deref().map(|secret| sealer.seal(secret.as_bytes())), secret.as_deref().map(last_four)))
}

fn claim_name(path: &str, value: &Value) -> Result<String, Refusals> {
    text(1, 128)(path, value)
}

fn role_mapping(path: &str, value: &Value) -> Result<RoleMappingView, Refusals> {
    let Value::Object(fields) = value else {
        return Err(vec![Notification::new(path, Rule::Type, format!("{path} must be an object"))]);
    };
    let mut body = Body::from_map(fields.clone());
    let claim = body.required("claim", claim_name);
    let value = body.required("value", text(1, 512));
    let roles = body.optional("roles", list_of(50, text(1, 128))).unwrap_or_default();
    let groups = body.optional("groups", list_of(50, text(1, 128))).unwrap_or_default();
    if roles.is_empty() && groups.is_empty() {
        body.refuse("roles", Rule::Required, "a mapping gives at least one role or group");
    }
    let prefixed = |problems: Vec<Notification>| {
        problems.into_iter().map(|n| Notification::new(format!("{path}.{}", n.field), n.code, n.message)).collect()
    };
    match body.finish() {
        Ok(()) => {
            Ok(RoleMappingView { claim: claim.unwrap_or_default(), value: value.unwrap_or_default(), roles, groups })
        }
        Err(crate::kernel::validate::Refused(problems)) => Err(prefixed(problems)),
    }
}

#[utoipa::path(post, path = "/realms/{realm}/identity-providers", tag = "Identity providers", params(("realm" = String, Path)),
    request_body = IdentityProviderInput,
    responses((status = 201, description = "The created provider, in `data` (its secret never shown)", body = IdentityProviderView),
              (status = 400), (status = 403), (status = 409, description = "AlreadyExists: the id is taken in the realm")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    InRealm { realm, caller, .. }: InRealm<RealmUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<IdentityProviderView>, Error> {
    let now = state.clock.now();
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
    let input = IdentityProviderInput { id, ..IdentityProviderInput::read(&state, &mut body) };
    provider.id = input.id.clone().unwrap_or(provider.id);
    input.apply(&mut provider, &mut body);
    body.finish()?;
    if provider.display_name.is_empty() {
        provider.display_name = provider.id.to_string();
    }
    let describe = |provider: &IdentityProvider| IdentityProviderView::of(&state, provider);
    let provider = identity_providers::create(&state, provider, caller.author(), describe).await?;
    Ok(Answer::Created(describe(&provider)))
}

#[utoipa::path(get, path = "/realms/{realm}/identity-providers", tag = "Identity providers",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query), ("status" = Option<String>, Query),
           ("sortBy" = Option<String>, Query, description = "id, displayName, createdAt, updatedAt"), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's identity providers, in `pagination`", body = [IdentityProviderView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<RealmRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<IdentityProviderView>, Error> {
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::Status::NAMES)?;
    let found = provider_store::page(&state.store, &realm.id, &list.page).await?;
    Ok(Answer::Paged(found.map(|provider| IdentityProviderView::of(&state, &provider))))
}

#[utoipa::path(get, path = "/realms/{realm}/identity-providers/{providerId}", tag = "Identity providers",
    params(("realm" = String, Path), ("providerId" = String, Path)),
    responses((status = 200, body = IdentityProviderView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    Found { item: provider, .. }: Found<IdentityProvider, RealmRead>,
) -> Result<Response, Error> {
    Ok(envelope::ok(IdentityProviderView::of(&state, &provider)))
}

#[utoipa::path(put, path = "/realms/{realm}/identity-providers/{providerId}", tag = "Identity providers",
    params(("realm" = String, Path), ("providerId" = String, Path)), request_body = IdentityProviderInput,
    responses((status = 200, body = IdentityProviderView), (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    Found { item: before, caller, .. }: Found<IdentityProvider, RealmUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<IdentityProviderView>, Error> {
    let mut provider = before.clone();
    body.unchanged("id", &provider.id);
    body.unchanged("protocol", provider.protocol.as_str());
    IdentityProviderInput::read(&state, &mut body).apply(&mut provider, &mut body);
    body.finish()?;
    let describe = |provider: &IdentityProvider| IdentityProviderView::of(&state, provider);
    let provider = identity_providers::update(&state, &before, provider, caller.author(), describe).await?;
    Ok(Answer::Ok(describe(&provider)))
}

#[utoipa::path(delete, path = "/realms/{realm}/identity-providers/{providerId}", tag = "Identity providers",
    params(("realm" = String, Path), ("providerId" = String, Path)),
    responses((status = 200, description = "Deleted"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    Found { item: provider, caller, .. }: Found<IdentityProvider, RealmUpdate>,
) -> Result<Answer<()>, Error> {
    let describe = |provider: &IdentityProvider| IdentityProviderView::of(&state, provider);
    identity_providers::delete(&state, &provider, caller.author(), describe).await?;
    Ok(Answer::Done)
}

/// The providers a client's login page offers, or an organization's people sign in through.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct OfferedProvidersInput {
    /// Ids of the realm's identity providers, up to 20, in the order their buttons are shown.
    identity_providers: Vec<String>,
}

impl OfferedProvidersInput {
    fn read(body: &mut Body) -> Self {
        let identity_providers = body.required("identityProviders", list_of(20, text(1, 64)));
        Self { identity_providers: identity_providers.unwrap_or_default() }
    }
}

/// Replaces what `offer` offers with the body's providers, each one of the realm's; trailed as a
/// change of `place`.
async fn replace_offer(
    state: &AppState,
    caller: &crate::http::auth::Caller,
    offer: Offer<'_>,
    place: crate::store::trail::Place,
    mut body: Body,
) -> Result<Answer<Vec<String>>, Error> {
    let OfferedProvidersInput { identity_providers: providers } = OfferedProvidersInput::read(&mut body);
    body.finish()?;
    identity_providers::offer(state, offer, place, &providers, caller.author()).await?;
    Ok(Answer::Ok(providers))
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/identity-providers", tag = "Identity providers",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "The ids of the providers the client's login page offers, in order, in `data`", body = [String]),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn client_providers(
    State(state): State<AppState>,
    InClient { client, .. }: InClient<ClientRead>,
) -> Result<Answer<Vec<String>>, Error> {
    let offer = Offer::Client { realm_id: &client.realm_id, client_id: &client.id };
    Ok(Answer::Ok(provider_store::offered(state.store.pool(), offer).await?))
}

#[utoipa::path(put, path = "/realms/{realm}/clients/{client}/identity-providers", tag = "Identity providers",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = OfferedProvidersInput,
    responses((status = 200, description = "The providers now offered, in `data`", body = [String]),
              (status = 400, description = "ValidationFailed: a provider the realm does not have"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn offer_client_providers(
    State(state): State<AppState>,
    InClient { client, caller, .. }: InClient<ClientUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<Vec<String>>, Error> {
    let offer = Offer::Client { realm_id: &client.realm_id, client_id: &client.id };
    replace_offer(&state, &caller, offer, client.place(), body).await
}

#[utoipa::path(get, path = "/realms/{realm}/organizations/{organizationId}/identity-providers", tag = "Identity providers",
    params(("realm" = String, Path), ("organizationId" = String, Path)),
    responses((status = 200, description = "The ids of the organization's providers, in order, in `data`", body = [String]),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn organization_providers(
    State(state): State<AppState>,
    Found { item: organization, .. }: Found<Organization, OrganizationRead>,
) -> Result<Answer<Vec<String>>, Error> {
    let offer = Offer::Organization { realm_id: &organization.realm_id, organization_id: &organization.id };
    Ok(Answer::Ok(provider_store::offered(state.store.pool(), offer).await?))
}

#[utoipa::path(put, path = "/realms/{realm}/organizations/{organizationId}/identity-providers", tag = "Identity providers",
    params(("realm" = String, Path), ("organizationId" = String, Path)), request_body = OfferedProvidersInput,
    responses((status = 200, description = "The organization's providers now, in `data`", body = [String]),
              (status = 400, description = "ValidationFailed: a provider the realm does not have"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn offer_organization_providers(
    State(state): State<AppState>,
    Found { item: organization, caller, .. }: Found<Organization, OrganizationUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<Vec<String>>, Error> {
    let offer = Offer::Organization { realm_id: &organization.realm_id, organization_id: &organization.id };
    replace_offer(&state, &caller, offer, organization.place(), body).await
}
