//! `/realms/{realm}/clients`: applications of a realm.

use super::reach::{ClientCreate, ClientDelete, ClientRead, ClientUpdate, InClient, InRealm};
use axum::extract::{RawQuery, State};
use axum::response::Response;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::ListQuery;
use crate::authz::Resource;
use crate::directory;
use crate::directory::rotation::{Rotation, RotationInput, RotationView};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::clock::iso;
use crate::kernel::crypto::last_four;
use crate::kernel::ids::ClientId;
use crate::kernel::validate::{Body, Rule, boolean, integer, list_of, one_of, parsed, text};
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::clients::{self as client_store, Client, ClientType, GrantType, Registration, SigningKeys};

pub use super::client_fields::scope_token;
use super::client_fields::{color, https_address, jwk_set, redirect_uri, web_origin};
pub use crate::store::clients::CLIENT_SECRET_PREFIX;

/// Grant types a client may enable (Token Exchange has its own switch).
const GRANT_TYPES: &[(&str, &str)] = &[
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
    fn of(client: &Client, now: DateTime<Utc>) -> Self {
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
    token_exchange_enabled: Option<bool>,
    /// Scope tokens (RFC 6749 §3.3), up to 100.
    allowed_scopes: Option<Vec<String>>,
    /// Default: authorization_code and refresh_token; also client_credentials, password and
    /// urn:ietf:params:oauth:grant-type:device_code (RFC 8628). A public client cannot use
    /// client_credentials.
    #[schema(value_type = Option<Vec<String>>)]
    grant_types: Option<Vec<GrantType>>,
    /// Absolute, no fragment: https, http on a loopback host, or a private-use scheme (RFC 8252).
    redirect_uris: Option<Vec<String>>,
    /// Where the client may send a browser after signing it out; the same rules, compared exactly.
    post_logout_redirect_uris: Option<Vec<String>>,
    /// Up to 20 web origins, `https://host[:port]` (http on a loopback host), whose browser code may
    /// call the token and revocation endpoints as this client (CORS).
    allowed_origins: Option<Vec<String>>,
    /// The public keys (a JWK Set, up to 20 keys, no private part) the client signs its assertions
    /// with: it then authenticates with `private_key_jwt` only, never with its secret. Null removes it.
    #[schema(value_type = Option<Object>)]
    jwks: Option<Option<String>>,
    /// Where the client publishes that JWK Set (https), instead of `jwks`. Null removes it.
    #[schema(value_type = Option<String>)]
    jwks_uri: Option<Option<String>>,
}

impl ClientConfigurationInput {
    /// The fields `config` gives, checked against what `client` would become: keys by value or
    /// by address, never both, and neither keys nor client credentials for a public client.
    fn read(config: &mut Body, client: &Client) -> Self {
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

    fn apply(self, client: &mut Client) {
        client.token_exchange_enabled = self.token_exchange_enabled.unwrap_or(client.token_exchange_enabled);
        client.allowed_scopes = self.allowed_scopes.unwrap_or(std::mem::take(&mut client.allowed_scopes));
        client.grant_types = self.grant_types.unwrap_or(std::mem::take(&mut client.grant_types));
        client.redirect_uris = self.redirect_uris.unwrap_or(std::mem::take(&mut client.redirect_uris));
        client.post_logout_redirect_uris =
            self.post_logout_redirect_uris.unwrap_or(std::mem::take(&mut client.post_logout_redirect_uris));
        client.allowed_origins = self.allowed_origins.unwrap_or(std::mem::take(&mut client.allowed_origins));
        client.jwks = self.jwks.unwrap_or(client.jwks.take());
        client.jwks_uri = self.jwks_uri.unwrap_or(client.jwks_uri.take());
    }
}

/// The body of a client creation. An update takes the same fields but `id` and `type`, each
/// optional; omitted fields keep their value.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ClientInput {
    /// 1–128 letters, digits, `-`, `_`, `.`, `:`; unique in the realm. Required at creation.
    #[schema(value_type = String, required = true)]
    id: Option<ClientId>,
    /// Up to 128 characters; defaults to the id.
    name: Option<String>,
    /// Up to 1024 characters.
    #[schema(value_type = Option<String>)]
    description: Option<Option<String>>,
    /// Confidential (default) or Public; cannot change.
    #[schema(rename = "type")]
    client_type: Option<ClientType>,
    status: Option<Status>,
    client_configuration: Option<ClientConfigurationInput>,
    signing_key: Option<SigningKeyInput>,
    branding: Option<BrandingInput>,
}

impl ClientInput {
    /// The changeable fields `body` gives (not the id and the type, which only a creation reads),
    /// checked against what `client` would become.
    fn read(body: &mut Body, client: &Client) -> Self {
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
    fn apply(self, client: &mut Client) {
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
    logo_uri: Option<Option<String>>,
    /// `#rrggbb`; null removes it.
    #[schema(value_type = Option<String>)]
    primary_color: Option<Option<String>>,
}

impl BrandingInput {
    fn read(branding: &mut Body) -> Self {
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
    keys: Option<SigningKeys>,
    /// ES256 or RS256.
    algorithm: Option<String>,
    /// 1–365 days between scheduled rotations of the client's own keys; null stops them.
    #[schema(value_type = Option<i64>)]
    rotation_days: Option<Option<i64>>,
}

impl SigningKeyInput {
    /// The fields `key` gives; a rotation period only for keys of the client's own.
    fn read(key: &mut Body, client: &Client) -> Self {
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

pub(super) async fn client_in_reach(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    client_id: &str,
    permission: &str,
) -> Result<Client, Error> {
    let realm = super::find_realm(state, realm_id).await?;
    let owner = realm.as_ref().map(|r| r.account_id.clone());
    caller.require(
        state,
        permission,
        Resource::Client { realm_id: realm_id.to_owned(), id: client_id.to_owned(), owner },
    )?;
    client_store::find(state.store.pool(), realm_id, client_id).await?.ok_or(Error::unreached())
}

#[utoipa::path(post, path = "/realms/{realm}/clients", tag = "Clients", params(("realm" = String, Path)),
    request_body = ClientInput,
    responses((status = 201, description = "The created client with `clientSecret` (shown once), in `data`", body = ClientView),
              (status = 400), (status = 403), (status = 409, description = "AlreadyExists: the id is taken in the realm")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    InRealm { realm, caller, .. }: InRealm<ClientCreate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<ClientView>, Error> {
    let now = state.clock.now();
    let id = body.required("id", parsed(ClientId::parse));
    let client_type = body.optional("type", one_of(ClientType::NAMES));
    let mut client = Client::new(&realm.id, "", client_type.unwrap_or(ClientType::Confidential), now);
    client.name = String::new();
    let input = ClientInput { id, client_type, ..ClientInput::read(&mut body, &client) };
    body.finish()?;
    let Some(id) = input.id.clone() else { return Err(Error::invalid("id", Rule::Required, "id is required")) };
    input.apply(&mut client);
    let scopes = client.allowed_scopes.clone();
    crate::directory::scopes::check_exist(
        &state,
        &realm.account_id,
        &realm.id,
        &scopes,
        "clientConfiguration.allowedScopes",
    )
    .await?;
    client.id = id;
    if client.name.is_empty() {
        client.name = client.id.to_string();
    }
    let tx = state.store.begin().await?;
    let created =
        directory::clients::create(&state, tx, client, caller.author(), |client| ClientView::of(client, now)).await?;
    let mut view = ClientView::of(&created.client, now);
    view.client_secret = created.secret;
    Ok(Answer::Created(view))
}

#[utoipa::path(get, path = "/realms/{realm}/clients", tag = "Clients",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query), ("status" = Option<String>, Query),
           ("sortBy" = Option<String>, Query, description = "id, name, createdAt, updatedAt"), ("sortDirection" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query),
           ("registration" = Option<String>, Query, description = "Admin, Dynamic or MetadataDocument: only the clients that came to be this way")),
    responses((status = 200, description = "A page of the realm's clients, in `pagination`", body = [ClientView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<ClientRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<ClientView>, Error> {
    let list = ListQuery::parse(query, &["registration"])?;
    list.status_in(crate::store::Status::NAMES)?;
    let registration = match list.filter("registration") {
        None => None,
        Some(name) => match Registration::NAMES.iter().find(|(known, _)| *known == name) {
            Some((_, registration)) => Some(*registration),
            None => {
                return Err(Error::invalid(
                    "registration",
                    Rule::OneOf,
                    "registration must be Admin, Dynamic or MetadataDocument",
                ));
            }
        },
    };
    let now = state.clock.now();
    let found = client_store::page(&state.store, &realm.id, registration, &list.page).await?;
    Ok(Answer::Paged(found.map(|client| ClientView::of(&client, now))))
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "The client, in `data`", body = ClientView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    InClient { client, .. }: InClient<ClientRead>,
) -> Result<Answer<ClientView>, Error> {
    Ok(Answer::Ok(ClientView::of(&client, state.clock.now())))
}

#[utoipa::path(put, path = "/realms/{realm}/clients/{client}", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = ClientInput,
    responses((status = 200, description = "The updated client, in `data`", body = ClientView), (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    InClient { client: before, caller, .. }: InClient<ClientUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<ClientView>, Error> {
    let mut client = before.clone();
    body.unchanged("id", &client.id);
    body.unchanged("type", client.client_type.as_str());
    body.unchanged("registration", client.registration.as_str());
    let input = ClientInput::read(&mut body, &client);
    body.finish()?;
    input.apply(&mut client);
    if client.allowed_scopes != before.allowed_scopes {
        let account = caller.account_id().to_owned();
        let scopes = client.allowed_scopes.clone();
        crate::directory::scopes::check_exist(
            &state,
            &account,
            &client.realm_id,
            &scopes,
            "clientConfiguration.allowedScopes",
        )
        .await?;
    }
    let now = state.clock.now();
    let client =
        directory::clients::update(&state, &before, client, caller.author(), |c| ClientView::of(c, now)).await?;
    Ok(Answer::Ok(ClientView::of(&client, now)))
}

#[utoipa::path(delete, path = "/realms/{realm}/clients/{client}", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "Deleted"), (status = 403), (status = 404),
              (status = 409, description = "Conflict: the platform client cannot be deleted")),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    InClient { client, caller, .. }: InClient<ClientDelete>,
) -> Result<Response, Error> {
    let now = state.clock.now();
    directory::clients::delete(&state, &client, caller.author(), |c| ClientView::of(c, now)).await?;
    Ok(envelope::done())
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

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/client-secret/rotate", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)),
    request_body(content = RotationInput, description = "Optional; an empty body rotates immediately"),
    responses((status = 200, description = "The new secret (shown once) and `rotation`, in `data`", body = RotatedClientSecret),
              (status = 400), (status = 403), (status = 404), (status = 409, description = "The client has no secret")),
    security(("apiKey" = [])))]
pub async fn rotate_secret(
    State(state): State<AppState>,
    InClient { client: before, caller, .. }: InClient<ClientUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RotatedClientSecret>, Error> {
    let now = state.clock.now();
    let rotation = Rotation::read(body, now)?;
    let describe = |client: &Client| ClientView::of(client, now);
    let (_, secret) = directory::clients::rotate_secret(&state, &before, &rotation, caller.author(), describe).await?;
    Ok(Answer::Ok(RotatedClientSecret {
        client_secret_last_four: last_four(&secret),
        client_secret: secret,
        client_secret_rotated_at: iso(now),
        rotation: rotation.view(),
    }))
}
