//! Clients of a realm: the one way a client comes to be, whoever creates it (an administrator, the
//! client itself through registration, or the service reading the client's metadata document);
//! and an administrator's changes: its settings (with what they do to its signing keys), a new
//! secret, its deletion.

use super::client_fields::{color, https_address, jwk_set, redirect_uri, scope_token, web_origin};
use crate::directory::keys;
use crate::directory::rotation::{Rotation, RotationView};
use crate::kernel::address_lists;
use crate::kernel::clock::iso;
use crate::kernel::crypto::{generate_secret, last_four};
use crate::kernel::ids::{ClientId, PLATFORM_REALM};
use crate::kernel::validate::{Body, Rule, boolean, integer, list_of, one_of, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
pub use crate::store::clients::CLIENT_SECRET_PREFIX;
use crate::store::clients::{self as client_store, Client, ClientType, GrantType, Registration, SigningKeys};
use crate::store::realms::SecondFactor;
use crate::store::signing_keys::{self as key_store, Owner, SigningKey};
use crate::store::trail::{Change, ChangeAction, Place, Placed, ResourceKind};
use crate::store::{Status, Transaction};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// A client just created, with the secret it was given, if any: shown once, kept only hashed.
#[derive(Debug)]
pub struct Created {
    pub client: Client,
    pub secret: Option<String>,
}

/// Creates `client` inside `tx`, which may already hold what the creation rests on (an initial
/// access token spent). A confidential client that does not authenticate with keys is given a
/// secret. A client that signs with keys of its own has its first one published; one on the
/// realm's keys has the realm's keys of its algorithm published ahead of their use. The change is
/// trailed with `describe`'s view of the client, announced and committed by `by`.
///
/// Refused with `AlreadyExists` when the realm has a client of that id.
pub async fn create<View: Serialize>(
    context: &Context,
    mut tx: Transaction,
    mut client: Client,
    by: Author<'_>,
    describe: impl FnOnce(&Client) -> View,
) -> Result<Created, Error> {
    let now = context.clock.now();
    let secret = (client.client_type == ClientType::Confidential && !client.uses_keys())
        .then(|| generate_secret(CLIENT_SECRET_PREFIX));
    if let Some(secret) = &secret {
        client.secret_hash = Some(context.hasher.hash(secret));
        client.secret_last_four = Some(last_four(secret));
        client.secret_rotated_at = Some(now);
    }
    let first_key =
        (client.signing_keys == SigningKeys::Own).then(|| keys::first_own_key(context, &client, now)).transpose()?;
    if !client_store::insert(&mut *tx, &client).await? {
        return Err(Error::AlreadyExists("client"));
    }
    match &first_key {
        Some(key) => key_store::insert(&mut *tx, key).await?,
        None => keys::publish_realm_family(context, &mut tx, &client.realm_id, &client.key_algorithm, now).await?,
    }
    let change = Change::of(ChangeAction::Create, client.place(), 201).after(describe(&client));
    changes::commit(context, by, tx, change).await?;
    Ok(Created { client, secret })
}

/// What a change of a client's settings does to its own signing keys.
enum KeysChange {
    /// Given keys of its own: the first is published now and signs once verifiers hold it.
    First(SigningKey),
    /// Back to the realm's: its own stop signing now and stay published until their tokens expire.
    Retire,
    /// Its own keys change algorithm: a key of the new one replaces them.
    Rotate(SigningKey),
}

/// Changes `before` into `client` as an administrator asked (`by`), with what the change does to
/// the client's signing keys and to the realm's published keys.
pub async fn update<View: Serialize>(
    context: &Context,
    before: &Client,
    mut client: Client,
    by: Author<'_>,
    describe: impl Fn(&Client) -> View,
) -> Result<Client, Error> {
    let now = context.clock.now();
    client.updated_at = now;
    let own = Owner::Client(&client.realm_id, &client.id);
    let keys_change = match (before.signing_keys, client.signing_keys) {
        (SigningKeys::Realm, SigningKeys::Own) => Some(KeysChange::First(keys::first_own_key(context, &client, now)?)),
        (SigningKeys::Own, SigningKeys::Realm) => Some(KeysChange::Retire),
        (SigningKeys::Own, SigningKeys::Own) if client.key_algorithm != before.key_algorithm => {
            Some(KeysChange::Rotate(keys::fresh(context, own, &client.key_algorithm, now)?))
        }
        _ => None,
    };
    let mut tx = context.store.begin().await?;
    client_store::update(&mut *tx, &client).await?;
    match keys_change {
        Some(KeysChange::First(key)) => key_store::insert(&mut *tx, &key).await?,
        Some(KeysChange::Retire) => {
            keys::retire_own(context, &mut tx, &client, now).await?;
        }
        Some(KeysChange::Rotate(key)) => {
            keys::rotate(context, &mut tx, own, keys::Rotation::Manual { revoke: false }, vec![key]).await?;
        }
        None => {}
    }
    if client.signing_keys == SigningKeys::Realm && client.key_algorithm != before.key_algorithm {
        keys::publish_realm_family(context, &mut tx, &client.realm_id, &client.key_algorithm, now).await?;
    }
    let change =
        Change::of(ChangeAction::Update, client.place(), 200).before(describe(before)).after(describe(&client));
    changes::commit(context, by, tx, change).await?;
    Ok(client)
}

/// Whether `client` is the platform's own client, which signs people in to the console.
fn is_platform(client: &Client) -> bool {
    client.realm_id == PLATFORM_REALM && client.id == PLATFORM_REALM
}

/// Deletes `client` and the consents people gave it; never the platform's client.
pub async fn delete<View: Serialize>(
    context: &Context,
    client: &Client,
    by: Author<'_>,
    describe: impl Fn(&Client) -> View,
) -> Result<(), Error> {
    if is_platform(client) {
        return Err(Error::Conflict("the platform client cannot be deleted".into()));
    }
    let mut tx = context.store.begin().await?;
    client_store::delete(&mut *tx, &client.realm_id, &client.id).await?;
    crate::store::consents::forget_client(&mut *tx, &client.realm_id, &client.id).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Delete, client.place(), 200).before(describe(client)))
        .await
}

/// Gives `before` a new secret, the previous one treated as `rotation` says; the new secret, shown
/// once. Only a confidential client that authenticates with a secret has one to rotate.
pub async fn rotate_secret<View: Serialize>(
    context: &Context,
    before: &Client,
    rotation: &Rotation,
    by: Author<'_>,
    describe: impl Fn(&Client) -> View,
) -> Result<(Client, String), Error> {
    if before.client_type != ClientType::Confidential {
        return Err(Error::Conflict("a public client has no secret to rotate".into()));
    }
    if before.uses_keys() {
        return Err(Error::Conflict("a client that holds keys authenticates with them, never with a secret".into()));
    }
    if is_platform(before) {
        return Err(Error::Conflict("the platform client authenticates with account client secrets (/secrets)".into()));
    }
    let now = context.clock.now();
    let secret = generate_secret(CLIENT_SECRET_PREFIX);
    let mut client = before.clone();
    client.secret_hash = Some(context.hasher.hash(&secret));
    client.secret_last_four = Some(last_four(&secret));
    client.secret_rotated_at = Some(now);
    client.previous_secret_hash = rotation.previous_hash(before.secret_hash.as_deref());
    client.previous_secret_valid_until = rotation.previous_value_valid_until;
    client.issued_tokens_revoked_before = rotation.revoked_before(before.issued_tokens_revoked_before);
    client.updated_at = now;
    let mut tx = context.store.begin().await?;
    client_store::rotate_secret(&mut *tx, &client).await?;
    let change = Change::of(ChangeAction::Update, client.place(), 200)
        .before(describe(before))
        .after(describe(&client))
        .announced_details(rotation.details());
    changes::commit(context, by, tx, change).await?;
    Ok((client, secret))
}

/// Grant types a client may enable (Token Exchange has its own switch).
pub(crate) const GRANT_TYPES: &[(&str, &str)] = &[
    (GrantType::AuthorizationCode.as_str(), GrantType::AuthorizationCode.as_str()),
    (GrantType::ClientCredentials.as_str(), GrantType::ClientCredentials.as_str()),
    (GrantType::Password.as_str(), GrantType::Password.as_str()),
    (GrantType::RefreshToken.as_str(), GrantType::RefreshToken.as_str()),
    (GrantType::DeviceCode.as_str(), GrantType::DeviceCode.as_str()),
];

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientConfigurationView {
    /// Whether the client may act for people through OAuth 2.0 Token Exchange (RFC 8693).
    pub token_exchange_enabled: bool,
    /// The scopes the client may request.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_scopes: Vec<String>,
    /// authorization_code, client_credentials, password, refresh_token,
    /// urn:ietf:params:oauth:grant-type:device_code.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub grant_types: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redirect_uris: Vec<String>,
    /// Where the client may send a browser after signing it out (RP-Initiated Logout).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub post_logout_redirect_uris: Vec<String>,
    /// The web origins whose browser code may call the token and revocation endpoints (CORS).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_origins: Vec<String>,
    /// The client's public keys for `private_key_jwt`, when it holds keys instead of a secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub jwks: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// Filled only while the previous secret still authenticates; compare with the current time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_client_secret_valid_until: Option<String>,
    /// Tokens issued with an earlier secret before this instant are revoked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issued_tokens_revoked_before: Option<String>,
    /// When the client's sign-ins ask for a second factor, where it asks more than its realm's
    /// `secondFactor` (the stricter of the two applies); absent: the realm's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub second_factor: Option<SecondFactor>,
}

/// How the client's tokens are signed.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SigningKeySettingsView {
    /// Whose keys sign the client's tokens: Realm (the default: the realm's keys, shared by its
    /// clients) or Own (keys of its own, published five minutes before they sign, rotated and
    /// revoked without touching any other client; the realm's keys sign meanwhile).
    pub keys: SigningKeys,
    /// ES256 (default) or RS256. Changing it for a client with its own keys rotates them.
    pub algorithm: String,
    /// Days between scheduled rotations of a client's own keys; absent when they rotate only by hand.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotation_days: Option<i64>,
}

/// How the login page looks for the client: its name, and these when set.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BrandingView {
    /// The address of a logo (https), shown above the form.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logo_uri: Option<String>,
    /// The colour of the page's button and focus rings, `#rrggbb`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primary_color: Option<String>,
}

/// A client as the admin API shows it. `clientSecret` appears once, in the creation response.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientView {
    pub id: String,
    pub realm_id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(rename = "type")]
    pub client_type: ClientType,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_last_four: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_rotated_at: Option<String>,
    pub client_configuration: ClientConfigurationView,
    pub signing_key: SigningKeySettingsView,
    pub branding: BrandingView,
    /// Admin (created through this API), Dynamic (registered itself, RFC 7591) or
    /// MetadataDocument (its id is the https address of its metadata document, which the service
    /// reads). The last two are third parties whose sign-ins ask the person's consent. Read-only.
    pub registration: Registration,
    /// What a self-registered client said of itself (`client_uri`, `contacts`, `software_id`,
    /// `software_version`, and for a metadata document its `application_type`); absent for the
    /// realm's own clients.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub registered_metadata: Option<Value>,
    pub created_at: String,
    pub updated_at: String,
}

impl ClientView {
    pub(crate) fn of(client: &Client, now: DateTime<Utc>) -> Self {
        let instant = |at: Option<DateTime<Utc>>| at.map(iso);
        Self {
            id: client.id.to_string(),
            realm_id: client.realm_id.to_string(),
            name: client.name.clone(),
            description: client.description.clone(),
            client_type: client.client_type,
            status: client.status,
            client_secret: None,
            client_secret_last_four: client.secret_last_four.clone(),
            client_secret_rotated_at: instant(client.secret_rotated_at),
            client_configuration: ClientConfigurationView {
                token_exchange_enabled: client.token_exchange_enabled,
                allowed_scopes: client.allowed_scopes.clone(),
                grant_types: client.grant_types.iter().map(|grant| grant.as_str().to_owned()).collect(),
                redirect_uris: client.redirect_uris.clone(),
                post_logout_redirect_uris: client.post_logout_redirect_uris.clone(),
                allowed_origins: client.allowed_origins.clone(),
                jwks: client.jwks.as_deref().and_then(|text| serde_json::from_str(text).ok()),
                jwks_uri: client.jwks_uri.clone(),
                previous_client_secret_valid_until: instant(
                    client.previous_secret_valid_until.filter(|until| *until > now),
                ),
                issued_tokens_revoked_before: instant(client.issued_tokens_revoked_before),
                second_factor: client.second_factor,
            },
            signing_key: SigningKeySettingsView {
                keys: client.signing_keys,
                algorithm: client.key_algorithm.clone(),
                rotation_days: client.key_rotation_days,
            },
            branding: BrandingView { logo_uri: client.logo_uri.clone(), primary_color: client.brand_color.clone() },
            registration: client.registration,
            registered_metadata: client
                .third_party()
                .then(|| serde_json::from_str(&client.registered_metadata).unwrap_or(Value::Null)),
            created_at: iso(client.created_at),
            updated_at: iso(client.updated_at),
        }
    }
}

/// How the client takes part in the protocols; each field omitted keeps its value.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ClientConfigurationInput {
    pub(crate) token_exchange_enabled: Option<bool>,
    /// Scope tokens (RFC 6749 §3.3), up to 100.
    pub(crate) allowed_scopes: Option<Vec<String>>,
    /// Default: authorization_code and refresh_token; also client_credentials, password and
    /// urn:ietf:params:oauth:grant-type:device_code (RFC 8628). A public client cannot use
    /// client_credentials.
    #[schema(value_type = Option<Vec<String>>)]
    pub(crate) grant_types: Option<Vec<GrantType>>,
    /// Absolute, no fragment: https, http on a loopback host, or a private-use scheme (RFC 8252).
    pub(crate) redirect_uris: Option<Vec<String>>,
    /// Where the client may send a browser after signing it out; the same rules, compared exactly.
    pub(crate) post_logout_redirect_uris: Option<Vec<String>>,
    /// Up to 20 web origins, `https://host[:port]` (http on a loopback host), whose browser code may
    /// call the token and revocation endpoints as this client (CORS).
    pub(crate) allowed_origins: Option<Vec<String>>,
    /// The public keys (a JWK Set, up to 20 keys, no private part) the client signs its assertions
    /// with: it then authenticates with `private_key_jwt` only, never with its secret. Null removes it.
    #[schema(value_type = Option<Object>)]
    pub(crate) jwks: Option<Option<String>>,
    /// Where the client publishes that JWK Set (https), instead of `jwks`. Null removes it.
    #[schema(value_type = Option<String>)]
    pub(crate) jwks_uri: Option<Option<String>>,
    /// Never, WhenEnrolled, Always or PhishingResistant: the stricter of this and the realm's
    /// `secondFactor` applies to the client's sign-ins. Null: the realm's alone.
    #[schema(value_type = Option<SecondFactor>)]
    pub(crate) second_factor: Option<Option<SecondFactor>>,
}

impl ClientConfigurationInput {
    /// The fields `config` gives, checked against what `client` would become: keys by value or
    /// by address, never both, and neither keys nor client credentials for a public client.
    pub(crate) fn read(config: &mut Body, client: &Client) -> Self {
        let read = Self {
            token_exchange_enabled: config.optional("tokenExchangeEnabled", boolean),
            allowed_scopes: config.optional("allowedScopes", list_of(100, scope_token)),
            grant_types: config
                .optional("grantTypes", list_of(GRANT_TYPES.len(), one_of(GRANT_TYPES)))
                .map(|names| names.into_iter().filter_map(GrantType::named).collect()),
            redirect_uris: config.optional("redirectUris", list_of(50, redirect_uri)),
            post_logout_redirect_uris: config.optional("postLogoutRedirectUris", list_of(50, redirect_uri)),
            allowed_origins: config.optional("allowedOrigins", list_of(20, web_origin)),
            jwks: config.nullable("jwks", jwk_set),
            jwks_uri: config.nullable("jwksUri", https_address),
            second_factor: config.nullable("secondFactor", one_of(SecondFactor::NAMES)),
        };
        let by_value = read.jwks.as_ref().map_or(client.jwks.is_some(), Option::is_some);
        let by_address = read.jwks_uri.as_ref().map_or(client.jwks_uri.is_some(), Option::is_some);
        if by_value && by_address {
            config.refuse("jwksUri", Rule::OneOf, "give the keys by value (jwks) or by address (jwksUri), not both");
        }
        let public = client.client_type == ClientType::Public;
        if public && (by_value || by_address) {
            config.refuse("jwks", Rule::OneOf, "a public client holds no keys");
        }
        let grants = read.grant_types.as_ref().unwrap_or(&client.grant_types);
        if public && grants.contains(&GrantType::ClientCredentials) {
            config.refuse("grantTypes", Rule::OneOf, "a public client cannot use client_credentials");
        }
        read
    }

    pub(crate) fn apply(self, client: &mut Client) {
        client.token_exchange_enabled = self.token_exchange_enabled.unwrap_or(client.token_exchange_enabled);
        client.allowed_scopes = self.allowed_scopes.unwrap_or(std::mem::take(&mut client.allowed_scopes));
        client.grant_types = self.grant_types.unwrap_or(std::mem::take(&mut client.grant_types));
        client.redirect_uris = self.redirect_uris.unwrap_or(std::mem::take(&mut client.redirect_uris));
        client.post_logout_redirect_uris =
            self.post_logout_redirect_uris.unwrap_or(std::mem::take(&mut client.post_logout_redirect_uris));
        client.allowed_origins = self.allowed_origins.unwrap_or(std::mem::take(&mut client.allowed_origins));
        client.jwks = self.jwks.unwrap_or(client.jwks.take());
        client.jwks_uri = self.jwks_uri.unwrap_or(client.jwks_uri.take());
        client.second_factor = self.second_factor.unwrap_or(client.second_factor);
    }
}

/// The body of a client creation. An update takes the same fields but `id` and `type`, each
/// optional; omitted fields keep their value.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ClientInput {
    /// 1–128 letters, digits, `-`, `_`, `.`, `:`; unique in the realm. Required at creation.
    #[schema(value_type = String, required = true)]
    pub(crate) id: Option<ClientId>,
    /// Up to 128 characters; defaults to the id.
    pub(crate) name: Option<String>,
    /// Up to 1024 characters.
    #[schema(value_type = Option<String>)]
    pub(crate) description: Option<Option<String>>,
    /// Confidential (default) or Public; cannot change.
    #[schema(rename = "type")]
    pub(crate) client_type: Option<ClientType>,
    pub(crate) status: Option<Status>,
    pub(crate) client_configuration: Option<ClientConfigurationInput>,
    pub(crate) signing_key: Option<SigningKeyInput>,
    pub(crate) branding: Option<BrandingInput>,
}

impl ClientInput {
    /// The changeable fields `body` gives (not the id and the type, which only a creation reads),
    /// checked against what `client` would become.
    pub(crate) fn read(body: &mut Body, client: &Client) -> Self {
        let name = body.optional("name", text(1, 128));
        let description =
            body.has("description").then(|| body.optional("description", text(0, 1024)).filter(|d| !d.is_empty()));
        let status = body.optional("status", one_of(Status::NAMES));
        let client_configuration = body.nested("clientConfiguration").map(|mut config| {
            let read = ClientConfigurationInput::read(&mut config, client);
            body.absorb(config);
            read
        });
        let branding = body.nested("branding").map(|mut branding| {
            let read = BrandingInput::read(&mut branding);
            body.absorb(branding);
            read
        });
        let signing_key = body.nested("signingKey").map(|mut key| {
            let read = SigningKeyInput::read(&mut key, client);
            body.absorb(key);
            read
        });
        Self { id: None, name, description, client_type: None, status, client_configuration, signing_key, branding }
    }

    /// Changes the fields given on `client`.
    pub(crate) fn apply(self, client: &mut Client) {
        client.client_type = self.client_type.unwrap_or(client.client_type);
        client.name = self.name.unwrap_or(std::mem::take(&mut client.name));
        client.description = self.description.unwrap_or(client.description.take());
        client.status = self.status.unwrap_or(client.status);
        if let Some(config) = self.client_configuration {
            config.apply(client);
        }
        if let Some(branding) = self.branding {
            client.logo_uri = branding.logo_uri.unwrap_or(client.logo_uri.take());
            client.brand_color = branding.primary_color.unwrap_or(client.brand_color.take());
        }
        if let Some(key) = self.signing_key {
            client.signing_keys = key.keys.unwrap_or(client.signing_keys);
            client.key_algorithm = key.algorithm.unwrap_or(std::mem::take(&mut client.key_algorithm));
            client.key_rotation_days = key.rotation_days.unwrap_or(client.key_rotation_days);
        }
    }
}

/// The client's brand on the sign-in pages; each field omitted keeps its value.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct BrandingInput {
    /// An https address of at most 2048 characters; null removes it.
    #[schema(value_type = Option<String>)]
    pub(crate) logo_uri: Option<Option<String>>,
    /// `#rrggbb`; null removes it.
    #[schema(value_type = Option<String>)]
    pub(crate) primary_color: Option<Option<String>>,
}

impl BrandingInput {
    pub(crate) fn read(branding: &mut Body) -> Self {
        Self {
            logo_uri: branding.nullable("logoUri", https_address),
            primary_color: branding.nullable("primaryColor", color),
        }
    }
}

/// The keys the client's tokens are signed with; each field omitted keeps its value.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct SigningKeyInput {
    /// Realm or Own.
    pub(crate) keys: Option<SigningKeys>,
    /// ES256 or RS256.
    pub(crate) algorithm: Option<String>,
    /// 1–365 days between scheduled rotations of the client's own keys; null stops them.
    #[schema(value_type = Option<i64>)]
    pub(crate) rotation_days: Option<Option<i64>>,
}

impl SigningKeyInput {
    /// The fields `key` gives; a rotation period only for keys of the client's own.
    pub(crate) fn read(key: &mut Body, client: &Client) -> Self {
        let read = Self {
            keys: key.optional("keys", one_of(SigningKeys::NAMES)),
            algorithm: key.optional("algorithm", one_of(crate::directory::keys::ALGORITHMS)).map(str::to_owned),
            rotation_days: key.nullable("rotationDays", integer(1, 365)),
        };
        let keys = read.keys.unwrap_or(client.signing_keys);
        let rotating = read.rotation_days.unwrap_or(client.key_rotation_days).is_some();
        if keys == SigningKeys::Realm && rotating {
            let why = "signingKey.rotationDays rotates a client's own keys: the realm's rotate on their own";
            key.refuse("rotationDays", Rule::Conflict, why);
        }
        read
    }
}

/// The answer to a client secret rotation.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RotatedClientSecret {
    /// The new secret, shown once.
    pub client_secret: String,
    pub client_secret_last_four: String,
    pub client_secret_rotated_at: String,
    pub rotation: RotationView,
}

/// A client's allowed IPs.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AllowedIpsView {
    /// Addresses (`203.0.113.7`, `2001:db8::1`) and networks in CIDR notation (`203.0.113.0/24`);
    /// empty: every address.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_ips: Vec<String>,
}

/// The body of a replacement.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct AllowedIpsInput {
    /// Up to 100 addresses or CIDR networks; `[]` allows every address.
    pub(crate) allowed_ips: Vec<String>,
}

impl AllowedIpsInput {
    pub(crate) fn read(body: &mut Body) -> Self {
        let allowed = body.required("allowedIps", list_of(MAX_ALLOWED_IPS, address_lists::entry));
        Self { allowed_ips: allowed.unwrap_or_default() }
    }
}

/// The most entries a client's list holds.
pub const MAX_ALLOWED_IPS: usize = 100;

/// Replaces the addresses and networks `client` may ask the token endpoint from with `allowed`
/// (none: any).
pub async fn allow_addresses(
    context: &Context,
    client: &Client,
    allowed: Vec<String>,
    by: Author<'_>,
) -> Result<AllowedIpsView, Error> {
    let mut tx = context.store.begin().await?;
    client_store::set_allowed_ips(&mut *tx, client, &allowed, context.clock.now()).await?;
    let place = Place::in_realm(ResourceKind::ClientAllowedIps, &client.id, &client.realm_id).of_client(&client.id);
    let before = AllowedIpsView { allowed_ips: client.allowed_ips.clone() };
    let after = AllowedIpsView { allowed_ips: allowed };
    changes::commit(context, by, tx, Change::of(ChangeAction::Update, place, 200).before(&before).after(&after))
        .await?;
    Ok(after)
}
