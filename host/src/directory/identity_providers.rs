//! Identity providers of a realm, the external providers its people may sign in through, and
//! which of them a client's login page or an organization's people use. Each change is checked
//! against the realm (the roles and groups its mappings name, the providers an offer lists),
//! written, trailed and announced here.

use crate::kernel::clock::iso;
use crate::kernel::crypto::last_four;
use crate::kernel::ids::IdentityProviderId;
use crate::kernel::validate::{Body, Notification, Refusals, Rule, boolean, list_of, one_of, parsed, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::identity_providers::{self as provider_store, IdentityProvider, Offer, Protocol};
use crate::store::trail::{Change, ChangeAction, Place, Placed};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashSet;
use utoipa::ToSchema;

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
pub async fn create(context: &Context, provider: IdentityProvider, by: Author<'_>) -> Result<IdentityProvider, Error> {
    check_mappings(context, &provider).await?;
    let mut tx = context.store.begin().await?;
    if !provider_store::insert(&mut *tx, &provider).await? {
        return Err(Error::AlreadyExists("identity provider"));
    }
    let change =
        Change::of(ChangeAction::Create, provider.place(), 201).after(IdentityProviderView::of(context, &provider));
    changes::commit(context, by, tx, change).await?;
    Ok(provider)
}

/// Changes `before` into `provider`.
pub async fn update(
    context: &Context,
    before: &IdentityProvider,
    mut provider: IdentityProvider,
    by: Author<'_>,
) -> Result<IdentityProvider, Error> {
    check_mappings(context, &provider).await?;
    provider.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    provider_store::update(&mut *tx, &provider).await?;
    let change = Change::of(ChangeAction::Update, provider.place(), 200)
        .before(IdentityProviderView::of(context, before))
        .after(IdentityProviderView::of(context, &provider));
    changes::commit(context, by, tx, change).await?;
    Ok(provider)
}

/// Deletes `provider`.
pub async fn delete(context: &Context, provider: &IdentityProvider, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    provider_store::delete(&mut *tx, &provider.realm_id, &provider.id).await?;
    let change =
        Change::of(ChangeAction::Delete, provider.place(), 200).before(IdentityProviderView::of(context, provider));
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
    pub(crate) fn default_for(protocol: Protocol) -> Self {
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
    pub(crate) fn of(context: &Context, provider: &IdentityProvider) -> Self {
        Self {
            redirect_uri: callback_address(context, &provider.realm_id, provider.id.as_str()),
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
    pub(crate) id: Option<IdentityProviderId>,
    /// Up to 128 characters, on the login page's button; defaults to the id.
    pub(crate) display_name: Option<String>,
    /// OpenIdConnect or OAuth2; required at creation, cannot change.
    #[schema(value_type = Protocol, required = true)]
    pub(crate) protocol: Option<Protocol>,
    pub(crate) status: Option<Status>,
    /// OpenIdConnect: the provider's discovery address (`…/.well-known/openid-configuration`), https.
    /// Required for OpenID Connect.
    #[schema(value_type = Option<String>)]
    pub(crate) discovery_url: Option<Option<String>>,
    /// OAuth2: the authorization, token and user-info addresses, each required.
    #[schema(value_type = Option<String>)]
    pub(crate) authorization_url: Option<Option<String>>,
    #[schema(value_type = Option<String>)]
    pub(crate) token_url: Option<Option<String>>,
    #[schema(value_type = Option<String>)]
    pub(crate) userinfo_url: Option<Option<String>>,
    /// The client id registered at the provider. Required at creation.
    #[schema(value_type = String, required = true)]
    pub(crate) client_id: Option<String>,
    /// Write-only; null removes it.
    #[schema(value_type = Option<String>)]
    pub(crate) client_secret: Option<(Option<String>, Option<String>)>,
    /// Up to 50; by default `openid profile email` for OpenID Connect, none for OAuth 2.0.
    pub(crate) scopes: Option<Vec<String>>,
    /// The upstream claims read for `username`, `email`, `emailVerified`, `givenName`, `familyName`.
    #[schema(value_type = Option<ClaimsView>)]
    pub(crate) claims: Option<ClaimsInput>,
    /// Default false: an upstream e-mail never links to an existing person.
    pub(crate) trust_verified_email: Option<bool>,
    /// Up to 50.
    pub(crate) role_mappings: Option<Vec<RoleMappingView>>,
}

/// The claims a body names, each optional; those it does not name keep their value.
#[derive(Debug)]
pub(crate) struct ClaimsInput {
    pub(crate) username: Option<String>,
    pub(crate) email: Option<String>,
    pub(crate) email_verified: Option<Option<String>>,
    pub(crate) given_name: Option<Option<String>>,
    pub(crate) family_name: Option<Option<String>>,
}

impl ClaimsInput {
    pub(crate) fn read(body: &mut Body) -> Option<Self> {
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
    pub(crate) fn apply(self, mut current: ClaimsView) -> ClaimsView {
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
    pub(crate) fn read(context: &Context, body: &mut Body) -> Self {
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
            client_secret: client_secret(context, body),
            scopes: body.optional("scopes", list_of(50, crate::directory::client_fields::scope_token)),
            claims: ClaimsInput::read(body),
            trust_verified_email: body.optional("trustVerifiedEmail", boolean),
            role_mappings: body.optional("roleMappings", list_of(50, role_mapping)),
        }
    }

    /// Changes the fields given on `provider`, which must then have the addresses its protocol
    /// needs (refused on `body` otherwise).
    pub(crate) fn apply(self, provider: &mut IdentityProvider, body: &mut Body) {
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

/// The providers a client's login page offers, or an organization's people sign in through.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct OfferedProvidersInput {
    /// Ids of the realm's identity providers, up to 20, in the order their buttons are shown.
    pub(crate) identity_providers: Vec<String>,
}

impl OfferedProvidersInput {
    pub(crate) fn read(body: &mut Body) -> Self {
        let identity_providers = body.required("identityProviders", list_of(20, text(1, 64)));
        Self { identity_providers: identity_providers.unwrap_or_default() }
    }
}
/// What a provider's client secret and a waiting sign-in's PKCE verifier are sealed for.
pub const SEALING_PURPOSE: &str = "identity provider secrets";

/// Where the provider sends the person back: the address registered at the provider.
pub fn callback_address(context: &Context, realm_id: &str, provider_id: &str) -> String {
    format!("{}/broker/{provider_id}/callback", super::realms::issuer(context, realm_id))
}

/// A provider's address: https, as the service reaches providers over https only.
pub(crate) fn provider_address(text_value: &str) -> Result<String, (Rule, String)> {
    match url::Url::parse(text_value) {
        Ok(uri) if uri.scheme() == "https" && uri.host_str().is_some() && uri.fragment().is_none() => {
            Ok(text_value.to_owned())
        }
        _ => Err((Rule::Format, "the address must be an absolute https URI without fragment".into())),
    }
}

/// A provider's `clientSecret` when the body sets it: sealed at once, with its last four characters
/// (both `None` when the body removes it with null).
pub(crate) fn client_secret(context: &Context, body: &mut Body) -> Option<(Option<String>, Option<String>)> {
    let secret = body.nullable("clientSecret", text(1, 1024))?;
    let sealer = context.hasher.sealer(SEALING_PURPOSE);
    Some((secret.as_deref().map(|secret| sealer.seal(secret.as_bytes())), secret.as_deref().map(last_four)))
}

pub(crate) fn claim_name(path: &str, value: &Value) -> Result<String, Refusals> {
    text(1, 128)(path, value)
}

pub(crate) fn role_mapping(path: &str, value: &Value) -> Result<RoleMappingView, Refusals> {
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
