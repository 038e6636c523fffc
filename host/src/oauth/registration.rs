//! Clients that register themselves (OAuth 2.0 Dynamic Client Registration, RFC 7591) and manage
//! their registration afterwards (RFC 7592): an MCP client meeting a server it has never seen.
//!
//! A realm takes registrations only when its `clientRegistration` setting says so: from anyone,
//! or from whoever presents an initial access token an administrator created. A registered client
//! is an ordinary client of the realm marked `Dynamic`: administrators list it, read it and may
//! disable it; its scopes are capped by the realm's `registrationScopes`; each person it signs in
//! is asked for consent; and it reaches only resource servers that accept self-registered
//! clients. It manages its own registration with the registration access token it was given.

use crate::directory;
use crate::kernel::crypto::generate_secret;
use crate::kernel::ids::{ClientId, new_guid};
use crate::oauth::tokens::issuer;
use crate::runtime::changes::Author;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::clients::{self as client_store, Client, ClientType, GrantType, Registration};
use crate::store::realms::{ClientRegistration, Realm};
use crate::store::registration::{self as token_store};
use crate::store::trail::{Actor, ActorType, Change, ChangeAction, Placed, Request};
use serde_json::{Map, Value, json};

/// Prefix of registration access tokens (RFC 7592).
pub const REGISTRATION_TOKEN_PREFIX: &str = "cstl_rat_";
/// Prefix of initial access tokens.
pub const INITIAL_ACCESS_TOKEN_PREFIX: &str = "cstl_iat_";
/// The most redirect URIs (and contacts) one registration may name.
const MAX_LISTED: usize = 20;
/// Scopes every client may ask for in a person's sign-in, whatever the realm allows.
pub const OIDC_SCOPES: [&str; 3] = ["openid", "profile", "email"];

/// Why a registration, or a registration's management, was refused; each maps to an error of
/// RFC 7591 §3.2.2 or RFC 6750 at the endpoint.
#[derive(Debug)]
pub enum RegistrationError {
    /// The realm takes no registrations.
    Closed,
    /// An initial access token is required and none valid was presented, or the registration
    /// access token does not name an active client of the realm.
    InvalidToken,
    InvalidRedirectUri(String),
    InvalidMetadata(String),
    /// The realm took as many clients from anyone as its settings allow, this minute or in all.
    Full(Full),
    Failed(Error),
}

/// The realm takes no more clients from anyone for now: why, and when to ask again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Full {
    pub why: String,
    pub retry_after_seconds: u64,
}

/// Whether the realm takes one more client from anyone now (a registration, or a metadata
/// document's first use): within its `selfRegisteredClientsPerMinute` and
/// `maxSelfRegisteredClients`. Counted in the database, so every host counts alike; hosts adding
/// clients at the same instant may pass the bound by the few they add together.
pub async fn room_for_one_more(context: &Context, realm: &Realm) -> Result<Result<(), Full>, Error> {
    let now = context.clock.now();
    let minute_ago = now - chrono::TimeDelta::minutes(1);
    let (total, last_minute) =
        client_store::self_registered_counts(context.store.pool(), &realm.id, minute_ago).await?;
    let settings = &realm.settings;
    Ok(if total >= settings.max_self_registered_clients {
        Err(Full {
            why: format!(
                "the realm holds the {} clients it takes from anyone; an administrator removes some or raises the bound",
                settings.max_self_registered_clients
            ),
            retry_after_seconds: 3600,
        })
    } else if last_minute >= settings.self_registered_clients_per_minute {
        Err(Full {
            why: format!(
                "the realm took the {} clients it takes from anyone in a minute",
                settings.self_registered_clients_per_minute
            ),
            retry_after_seconds: 60,
        })
    } else {
        Ok(())
    })
}

impl From<Error> for RegistrationError {
    fn from(error: Error) -> Self {
        Self::Failed(error)
    }
}

impl From<crate::store::Error> for RegistrationError {
    fn from(error: crate::store::Error) -> Self {
        Self::Failed(error.into())
    }
}

/// How a client authenticates at the token endpoint, as it registered (`token_endpoint_auth_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    None,
    ClientSecretBasic,
    ClientSecretPost,
    /// Keys instead of a secret (RFC 7523): the client registers its `jwks` or `jwks_uri`.
    PrivateKeyJwt,
}

impl AuthMethod {
    const ALL: [Self; 4] = [Self::None, Self::ClientSecretBasic, Self::ClientSecretPost, Self::PrivateKeyJwt];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
            Self::PrivateKeyJwt => "private_key_jwt",
        }
    }

    pub fn client_type(self) -> ClientType {
        if self == Self::None { ClientType::Public } else { ClientType::Confidential }
    }

    /// What the client proves itself with: nothing, a secret, or keys.
    fn holds(self) -> &'static str {
        match self {
            Self::None => "nothing",
            Self::ClientSecretBasic | Self::ClientSecretPost => "a secret",
            Self::PrivateKeyJwt => "keys",
        }
    }
}

/// The client metadata of RFC 7591 §2 the service takes, checked. Metadata it does not know is
/// ignored, as §2 requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    pub redirect_uris: Vec<String>,
    pub auth_method: AuthMethod,
    pub grant_types: Vec<GrantType>,
    pub client_name: Option<String>,
    pub logo_uri: Option<String>,
    /// The scopes named, each checked to be one the realm lets such clients have.
    pub scopes: Option<Vec<String>>,
    /// The public keys of a `private_key_jwt` client, by value or by address.
    pub jwks: Option<String>,
    pub jwks_uri: Option<String>,
    /// `client_uri`, `contacts`, `software_id`, `software_version`: kept to be shown back.
    pub described: Map<String, Value>,
}

impl Metadata {
    /// Reads a registration request's JSON object.
    pub fn read(body: &Value) -> Result<Self, RegistrationError> {
        let invalid = |why: String| RegistrationError::InvalidMetadata(why);
        let Some(object) = body.as_object() else {
            return Err(invalid("the body must be a JSON object of client metadata".into()));
        };
        let text = |name: &str, max: usize| -> Result<Option<String>, RegistrationError> {
            match object.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(text)) if !text.is_empty() && text.chars().count() <= max => Ok(Some(text.clone())),
                Some(_) => Err(invalid(format!("{name} must be a string of 1 to {max} characters"))),
            }
        };
        let texts = |name: &str| -> Result<Option<Vec<String>>, RegistrationError> {
            match object.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Array(items)) if items.len() <= MAX_LISTED => items
                    .iter()
                    .map(|item| match item {
                        Value::String(text) if !text.is_empty() && text.len() <= 2048 => Ok(text.clone()),
                        _ => Err(invalid(format!("{name} must hold strings of 1 to 2048 characters"))),
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(Some),
                Some(_) => Err(invalid(format!("{name} must be an array of at most {MAX_LISTED} strings"))),
            }
        };

        let auth_method = match text("token_endpoint_auth_method", 64)? {
            // RFC 7591 §2: client_secret_basic when none is named.
            None => AuthMethod::ClientSecretBasic,
            Some(name) => AuthMethod::ALL.into_iter().find(|method| method.as_str() == name).ok_or_else(|| {
                invalid(format!(
                    "token_endpoint_auth_method {name} is not supported: none, client_secret_basic, \
                     client_secret_post or private_key_jwt"
                ))
            })?,
        };
        let grant_names = texts("grant_types")?.unwrap_or_else(|| vec!["authorization_code".to_owned()]);
        let mut grant_types = Vec::new();
        for name in &grant_names {
            let grant = match GrantType::named(name) {
                Some(grant @ (GrantType::AuthorizationCode | GrantType::RefreshToken)) => grant,
                _ => {
                    return Err(invalid(format!(
                        "grant type {name} is not open to self-registered clients: authorization_code and refresh_token are"
                    )));
                }
            };
            if !grant_types.contains(&grant) {
                grant_types.push(grant);
            }
        }
        let response_types = texts("response_types")?.unwrap_or_else(|| vec!["code".to_owned()]);
        if response_types.iter().any(|kind| kind != "code") {
            return Err(invalid("only the response type code is supported".into()));
        }
        let signs_in = grant_types.contains(&GrantType::AuthorizationCode);
        if signs_in != response_types.contains(&"code".to_owned()) {
            return Err(invalid("grant type authorization_code goes with response type code".into()));
        }
        let redirect_uris = texts("redirect_uris")?.unwrap_or_default();
        if signs_in && redirect_uris.is_empty() {
            return Err(RegistrationError::InvalidRedirectUri("redirect_uris is required".into()));
        }
        for uri in &redirect_uris {
            check_redirect_uri(uri).map_err(RegistrationError::InvalidRedirectUri)?;
        }
        let logo_uri = text("logo_uri", 2048)?;
        if let Some(logo) = &logo_uri {
            https_address("logo_uri", logo).map_err(invalid)?;
        }
        let scopes = text("scope", 4096)?.map(|text| {
            let mut scopes: Vec<String> = Vec::new();
            for scope in text.split(' ').filter(|s| !s.is_empty()) {
                if !scopes.iter().any(|seen| seen == scope) {
                    scopes.push(scope.to_owned());
                }
            }
            scopes
        });
        let jwks = match object.get("jwks") {
            None | Some(Value::Null) => None,
            Some(value) => {
                Some(crate::oauth::client_keys::check_jwks(value).map_err(|why| invalid(format!("jwks {why}")))?)
            }
        };
        let jwks_uri = text("jwks_uri", 2048)?;
        if let Some(uri) = &jwks_uri {
            https_address("jwks_uri", uri).map_err(invalid)?;
        }
        match (auth_method, jwks.is_some(), jwks_uri.is_some()) {
            (AuthMethod::PrivateKeyJwt, true, true) => return Err(invalid("give jwks or jwks_uri, not both".into())),
            (AuthMethod::PrivateKeyJwt, false, false) => {
                return Err(invalid("private_key_jwt needs the client's public keys: jwks or jwks_uri".into()));
            }
            (AuthMethod::PrivateKeyJwt, _, _) | (_, false, false) => {}
            _ => return Err(invalid("jwks and jwks_uri go with token_endpoint_auth_method private_key_jwt".into())),
        }
        let mut described = Map::new();
        if let Some(uri) = text("client_uri", 2048)? {
            https_address("client_uri", &uri).map_err(invalid)?;
            described.insert("client_uri".into(), Value::String(uri));
        }
        if let Some(contacts) = texts("contacts")? {
            described.insert("contacts".into(), Value::from(contacts));
        }
        for name in ["software_id", "software_version"] {
            if let Some(value) = text(name, 128)? {
                described.insert(name.into(), Value::String(value));
            }
        }
        Ok(Self {
            redirect_uris,
            auth_method,
            grant_types,
            client_name: text("client_name", 128)?,
            logo_uri,
            scopes,
            jwks,
            jwks_uri,
            described,
        })
    }

    /// The metadata a stored client was registered with.
    fn of(client: &Client) -> Self {
        let auth_method = match client.client_type {
            ClientType::Public => AuthMethod::None,
            ClientType::Confidential if client.uses_keys() => AuthMethod::PrivateKeyJwt,
            ClientType::Confidential => AuthMethod::ClientSecretBasic,
        };
        Self {
            redirect_uris: client.redirect_uris.clone(),
            auth_method,
            grant_types: client.grant_types.clone(),
            client_name: Some(client.name.clone()),
            logo_uri: client.logo_uri.clone(),
            scopes: Some(client.allowed_scopes.clone()),
            jwks: client.jwks.clone(),
            jwks_uri: client.jwks_uri.clone(),
            described: serde_json::from_str(&client.registered_metadata).unwrap_or_default(),
        }
    }

    /// Writes the metadata onto `client`. A scope the realm does not let such clients have is
    /// refused; the client may then ask for every scope the realm lets them have, each with the
    /// person's consent: MCP clients register with the first scope they need and ask for more
    /// later (RFC 7591 §3.2.1 lets the server replace what was asked).
    pub fn apply(&self, realm: &Realm, client: &mut Client) -> Result<(), RegistrationError> {
        let allowed = &realm.settings.registration_scopes;
        let excess: Vec<&str> = self
            .scopes
            .iter()
            .flatten()
            .map(String::as_str)
            .filter(|scope| !allowed.iter().any(|a| a == scope) && !OIDC_SCOPES.contains(scope))
            .collect();
        if !excess.is_empty() {
            return Err(RegistrationError::InvalidMetadata(format!(
                "the realm does not let self-registered clients have these scopes: {}",
                excess.join(" ")
            )));
        }
        client.name = self.client_name.clone().unwrap_or_else(|| client.id.to_string());
        client.redirect_uris = self.redirect_uris.clone();
        client.grant_types = self.grant_types.clone();
        client.allowed_scopes = allowed.clone();
        client.logo_uri = self.logo_uri.clone();
        client.jwks = self.jwks.clone();
        client.jwks_uri = self.jwks_uri.clone();
        client.registered_metadata = Value::Object(self.described.clone()).to_string();
        Ok(())
    }
}

/// A redirect URI a self-registered client may use, by the rules of every client.
fn check_redirect_uri(text: &str) -> Result<(), String> {
    crate::kernel::addresses::redirect_uri_problem(text).map_or(Ok(()), |why| Err(format!("{text} {why}")))
}

fn https_address(name: &str, text: &str) -> Result<(), String> {
    if crate::kernel::addresses::is_https_address(text) {
        Ok(())
    } else {
        Err(format!("{name} must be an https address"))
    }
}

/// Where a registration came from, for the trail.
#[derive(Debug, Clone)]
pub struct Asker {
    pub ip_address: String,
    pub request: Request,
}

/// A client just registered or read back: what the endpoint answers.
#[derive(Debug)]
pub struct Registered {
    pub client: Client,
    /// The client secret, only in the answer to the registration.
    pub secret: Option<String>,
    /// The registration access token, only in the answer to the registration.
    pub registration_token: Option<String>,
}

/// Registers a client at `realm`, when the realm takes registrations (with `initial_token` when it
/// asks for one).
pub async fn register(
    context: &Context,
    realm: &Realm,
    initial_token: Option<&str>,
    metadata: &Metadata,
    asker: &Asker,
) -> Result<Registered, RegistrationError> {
    if realm.settings.client_registration == ClientRegistration::Closed {
        return Err(RegistrationError::Closed);
    }
    room_for_one_more(context, realm).await?.map_err(RegistrationError::Full)?;
    let now = context.clock.now();
    let client_type = metadata.auth_method.client_type();
    let mut client = Client::new(&realm.id, &new_guid(), client_type, now);
    client.registration = Registration::Dynamic;
    metadata.apply(realm, &mut client)?;
    let registration_token = generate_secret(REGISTRATION_TOKEN_PREFIX);
    client.registration_token_hash = Some(context.hasher.hash(&registration_token));
    let mut tx = context.store.begin().await?;
    match realm.settings.client_registration {
        ClientRegistration::Closed => return Err(RegistrationError::Closed),
        ClientRegistration::Open => {}
        ClientRegistration::InitialAccessToken => {
            let spent = match initial_token {
                Some(token) => token_store::spend(&mut *tx, &realm.id, &context.hasher.hash(token), now).await?,
                None => false,
            };
            if !spent {
                return Err(RegistrationError::InvalidToken);
            }
        }
    }
    let author = author(realm, &client, asker);
    let created =
        directory::clients::create(context, tx, client, author.as_author(), |client| described(context, realm, client))
            .await?;
    Ok(Registered { client: created.client, secret: created.secret, registration_token: Some(registration_token) })
}

/// The active self-registered client of `realm` that `registration_token` belongs to, named
/// `client_id` in the path (RFC 7592 §3: the token, not the path, decides).
pub async fn registered(
    context: &Context,
    realm: &Realm,
    client_id: &str,
    registration_token: Option<&str>,
) -> Result<Client, RegistrationError> {
    let Some(token) = registration_token else { return Err(RegistrationError::InvalidToken) };
    let client = client_store::find(context.store.pool(), &realm.id, client_id)
        .await?
        .filter(|client| client.status == Status::Active && client.registration == Registration::Dynamic)
        .ok_or(RegistrationError::InvalidToken)?;
    let matches = client.registration_token_hash.as_deref().is_some_and(|hash| context.hasher.matches(token, hash));
    if matches { Ok(client) } else { Err(RegistrationError::InvalidToken) }
}

/// Replaces the client's metadata with `metadata` (RFC 7592 §2.2). The way it authenticates cannot
/// change: a client with a secret keeps it, a public client stays public.
pub async fn update(
    context: &Context,
    realm: &Realm,
    before: &Client,
    metadata: &Metadata,
    asker: &Asker,
) -> Result<Client, RegistrationError> {
    if metadata.auth_method.holds() != Metadata::of(before).auth_method.holds() {
        return Err(RegistrationError::InvalidMetadata(
            "token_endpoint_auth_method cannot change between none, a client secret and keys".into(),
        ));
    }
    let mut client = before.clone();
    metadata.apply(realm, &mut client)?;
    client.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    client_store::update(&mut *tx, &client).await?;
    let change = Change::of(ChangeAction::Update, client.place(), 200)
        .before(described(context, realm, before))
        .after(described(context, realm, &client));
    crate::runtime::changes::commit(context, author(realm, &client, asker).as_author(), tx, change).await?;
    Ok(client)
}

/// Deletes the client at its own request (RFC 7592 §2.3).
pub async fn delete(context: &Context, realm: &Realm, client: &Client, asker: &Asker) -> Result<(), RegistrationError> {
    let mut tx = context.store.begin().await?;
    client_store::delete(&mut *tx, &client.realm_id, &client.id).await?;
    crate::store::consents::forget_client(&mut *tx, &client.realm_id, &client.id).await?;
    let change = Change::of(ChangeAction::Delete, client.place(), 204).before(described(context, realm, client));
    crate::runtime::changes::commit(context, author(realm, client, asker).as_author(), tx, change).await?;
    Ok(())
}

/// The client's registration as the endpoint shows it (RFC 7591 §3.2.1, RFC 7592 §3): its
/// metadata, its id and, when given, its secret and registration access token. A client known
/// by its metadata document is shown the same way, without a management address.
pub fn described(context: &Context, realm: &Realm, client: &Client) -> Value {
    let metadata = Metadata::of(client);
    let mut document = json!({
        "client_id": client.id,
        "client_id_issued_at": client.created_at.timestamp(),
        "client_name": client.name,
        "redirect_uris": client.redirect_uris,
        "grant_types": client.grant_types.iter().map(|grant| grant.as_str()).collect::<Vec<_>>(),
        "response_types": if client.allows(GrantType::AuthorizationCode) { vec!["code"] } else { vec![] },
        "token_endpoint_auth_method": metadata.auth_method.as_str(),
        "scope": client.allowed_scopes.join(" "),
    });
    if let Value::Object(fields) = &mut document {
        if client.registration == Registration::Dynamic {
            let uri = registration_client_uri(context, &realm.id, &client.id);
            fields.insert("registration_client_uri".into(), Value::String(uri));
        }
        if client.client_type == ClientType::Confidential && !client.uses_keys() {
            // The secret never expires by itself: it is rotated (RFC 7591 §3.2.1: 0).
            fields.insert("client_secret_expires_at".into(), Value::from(0));
        }
        if let Some(jwks) = client.jwks.as_deref().and_then(|text| serde_json::from_str::<Value>(text).ok()) {
            fields.insert("jwks".into(), jwks);
        }
        if let Some(uri) = &client.jwks_uri {
            fields.insert("jwks_uri".into(), Value::String(uri.clone()));
        }
        if let Some(logo) = &client.logo_uri {
            fields.insert("logo_uri".into(), Value::String(logo.clone()));
        }
        fields.extend(metadata.described);
    }
    document
}

/// Where a registered client manages its registration.
pub fn registration_client_uri(context: &Context, realm_id: &str, client_id: &ClientId) -> String {
    format!("{}/protocol/openid-connect/register/{client_id}", issuer(context, realm_id))
}

/// The self-registered client as the author of its own registration's changes.
pub struct ClientAuthor {
    actor: Actor,
    request: Request,
}

impl ClientAuthor {
    pub fn as_author(&self) -> Author<'_> {
        Author { actor: &self.actor, request: &self.request }
    }
}

pub fn author(realm: &Realm, client: &Client, asker: &Asker) -> ClientAuthor {
    ClientAuthor {
        actor: Actor {
            account_id: realm.account_id.clone(),
            actor_type: ActorType::Client,
            user_id: None,
            username: None,
            email: None,
            credential_id: None,
            credential_name: Some(client.id.to_string()),
            ip_address: asker.ip_address.clone(),
        },
        request: asker.request.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_defaults_follow_rfc_7591() {
        let metadata = Metadata::read(&json!({"redirect_uris": ["https://agent.example/cb"]})).unwrap();
        assert_eq!(metadata.auth_method, AuthMethod::ClientSecretBasic);
        assert_eq!(metadata.grant_types, vec![GrantType::AuthorizationCode]);
        assert_eq!(metadata.scopes, None);
        let refused = Metadata::read(&json!({"grant_types": ["client_credentials"]}));
        assert!(matches!(refused, Err(RegistrationError::InvalidMetadata(_))));
        let refused = Metadata::read(&json!({"grant_types": ["authorization_code"]}));
        assert!(matches!(refused, Err(RegistrationError::InvalidRedirectUri(_))));
        let public = Metadata::read(&json!({
            "redirect_uris": ["http://127.0.0.1:9/cb"], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "scope": "openid mcp:tools mcp:tools",
            "software_id": "agent", "unknown_field": true,
        }))
        .unwrap();
        assert_eq!(public.auth_method.client_type(), ClientType::Public);
        assert_eq!(public.scopes, Some(vec!["openid".to_owned(), "mcp:tools".to_owned()]));
        assert_eq!(public.described.get("software_id"), Some(&Value::from("agent")));
    }
}
