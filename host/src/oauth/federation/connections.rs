//! Accounts people connect at a realm's connection providers, and the token vault exchange.
//!
//! A person signed in connects an account through the browser: the realm, a client of the
//! provider, sends them there (code flow with PKCE, the `state` bound to the browser), and keeps
//! the provider's access and refresh tokens sealed. A resource server acting for the person then
//! exchanges an access token it received (addressed to it) for the access token of the person's
//! connection (RFC 8693), refreshed first when it has expired; the upstream refresh token never
//! leaves the service. Each exchange, given or refused, is in the realm's token exchange trail and
//! raises no sign-in event.

use super::sign_in::{self, Answer, Authority, Endpoints, Failure, SEALING_PURPOSE, Started, Waiting};
use crate::kernel::clock::iso;
use crate::kernel::ids::{ConnectionId, ExchangeId, UserId};
use crate::oauth::delegation::ACCESS_TOKEN_TYPE;
use crate::oauth::signin::Origin;
use crate::oauth::tokens::{self};
use crate::runtime::changes::Author;
use crate::runtime::context::Context;
use crate::runtime::error::{Error, OAuthCode};
use crate::store::clients::Client;
use crate::store::connections::{self as store, Connection, ConnectionProvider, ConnectionStatus};
use crate::store::delegation::{self as trail, Exchange, ExchangeOutcome};
use crate::store::realms::Realm;
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::users::User;
use crate::store::{Status, resource_servers};
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// The `requested_token_type` of an exchange for a connected account's access token.
pub const CONNECTION_TOKEN_TYPE: &str = "urn:castellan:params:oauth:token-type:connection-access-token";
/// How long before its expiry an upstream token is refreshed rather than handed out.
const REFRESH_AHEAD: TimeDelta = TimeDelta::seconds(30);

pub use crate::directory::connection_providers::callback_address;

/// The realm's Active connection provider `id`, when it has one.
pub async fn active_provider(context: &Context, realm_id: &str, id: &str) -> Result<Option<ConnectionProvider>, Error> {
    let found = store::find_provider(context.store.pool(), realm_id, id).await?;
    Ok(found.filter(|provider| provider.status == Status::Active))
}

async fn authority<'a>(
    context: &Context,
    realm_id: &str,
    provider: &'a ConnectionProvider,
) -> Result<Authority<'a>, Failure> {
    let endpoints = match &provider.discovery_url {
        Some(address) => Endpoints::discovered(context, address).await?,
        None => Endpoints::configured(provider.authorization_url.as_deref(), provider.token_url.as_deref(), None)?,
    };
    Ok(Authority {
        id: provider.id.as_str(),
        client_id: &provider.client_id,
        client_secret: provider.client_secret.as_deref(),
        scopes: &provider.scopes,
        callback: callback_address(context, realm_id, provider.id.as_str()),
        endpoints,
        openid: false,
    })
}

/// Sends the person `user_id` to `provider` to connect their account there, keeping `request`
/// (the client's authorization request) to answer once they are back.
pub async fn start(
    context: &Context,
    realm: &Realm,
    provider: &ConnectionProvider,
    user_id: &str,
    request: &[(&str, &str)],
) -> Result<Started, Failure> {
    let authority = authority(context, &realm.id, provider).await?;
    sign_in::start_at(context, realm, &authority, request, None, Some(user_id)).await
}

/// The provider's answer: the person's connection, made or renewed with the tokens it gave.
pub async fn finish(
    context: &Context,
    realm: &Realm,
    provider: &ConnectionProvider,
    waiting: &Waiting,
    answer: Answer<'_>,
) -> Result<Connection, Failure> {
    let user_id = waiting.user_id().ok_or_else(|| Error::Internal(anyhow::anyhow!("a connection names no person")))?;
    let authority = authority(context, &realm.id, provider).await?;
    let tokens = sign_in::answered(context, &authority, waiting, answer).await?;
    let now = context.clock.now();
    let mut connection = Connection {
        id: ConnectionId::fresh(),
        realm_id: realm.id.clone(),
        user_id: UserId::known(user_id),
        provider_id: provider.id.to_string(),
        scopes: provider.scopes.clone(),
        access_token: String::new(),
        refresh_token: None,
        expires_at: None,
        status: ConnectionStatus::Active,
        created_at: now,
        updated_at: now,
        last_used_at: None,
    };
    renew(context, &mut connection, &tokens, now)?;
    Ok(store::save(context.store.writer(), &connection).await?)
}

/// Puts the tokens of a token endpoint's answer on the connection: the access token and its
/// expiry, the scopes granted when the answer names them, a new refresh token when it gives one.
fn renew(
    context: &Context,
    connection: &mut Connection,
    tokens: &Map<String, Value>,
    now: DateTime<Utc>,
) -> Result<(), Failure> {
    let sealer = context.hasher.sealer(SEALING_PURPOSE);
    let access = tokens.get("access_token").and_then(Value::as_str).filter(|token| !token.is_empty());
    let access = access.ok_or_else(|| Failure::CodeRefused("the answer carries no access token".into()))?;
    connection.access_token = sealer.seal(access.as_bytes());
    if let Some(refresh) = tokens.get("refresh_token").and_then(Value::as_str).filter(|token| !token.is_empty()) {
        connection.refresh_token = Some(sealer.seal(refresh.as_bytes()));
    }
    connection.expires_at =
        tokens.get("expires_in").and_then(Value::as_i64).map(|seconds| now + TimeDelta::seconds(seconds.max(0)));
    if let Some(scope) = tokens.get("scope").and_then(Value::as_str) {
        connection.scopes = scope.split([' ', ',']).filter(|s| !s.is_empty()).map(str::to_owned).collect();
    }
    connection.status = ConnectionStatus::Active;
    connection.updated_at = now;
    Ok(())
}

/// The person's connections, oldest first.
pub async fn of_person(context: &Context, user: &User) -> Result<Vec<Connection>, Error> {
    Ok(store::all_of_person(context.store.pool(), &user.id).await?)
}

/// Removes a connection of the person's own; `false` when they have none of this id.
pub async fn remove_own(context: &Context, user: &User, connection_id: &str) -> Result<bool, Error> {
    Ok(store::delete(context.store.writer(), connection_id, Some(&user.id)).await?)
}

/// An exchange for a connected account's token, as the token endpoint read it.
#[derive(Debug, Clone, Copy)]
pub struct VaultRequest<'a> {
    pub realm: &'a Realm,
    /// The client the resource server authenticated as.
    pub client: &'a Client,
    pub subject_token: Option<&'a str>,
    pub subject_token_type: Option<&'a str>,
    /// The connection provider whose token is asked for.
    pub connection: Option<&'a str>,
    pub origin: &'a Origin,
}

/// The upstream access token handed out.
#[derive(Debug, Clone)]
pub struct VaultToken {
    pub access_token: String,
    /// Seconds left, when the provider said how long it lives.
    pub expires_in: Option<i64>,
    pub scopes: Vec<String>,
}

/// Why an exchange for a connected account was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VaultRefusal {
    Missing(&'static str),
    SubjectTokenTypeUnsupported,
    /// Not an active access token of an Active person of the realm.
    SubjectTokenInactive,
    /// The client represents no resource server, the subject token is not addressed to the one it
    /// represents, or the provider does not allow that server.
    NotAllowed(&'static str),
    ProviderUnknown,
    /// The person has no connection at the provider.
    ConnectionMissing,
    /// The provider refused to renew the connection's token, or it expired with no way to renew it.
    ConnectionRevoked,
    /// The provider could not be reached to renew the token.
    ProviderUnavailable,
}

impl VaultRefusal {
    pub fn code(&self) -> OAuthCode {
        match self {
            Self::Missing(_) => OAuthCode::MissingParameter,
            Self::SubjectTokenTypeUnsupported => OAuthCode::DelegationSubjectTokenTypeUnsupported,
            Self::SubjectTokenInactive => OAuthCode::ConnectionSubjectTokenInactive,
            Self::NotAllowed(_) => OAuthCode::ConnectionNotAllowed,
            Self::ProviderUnknown => OAuthCode::ConnectionProviderUnknown,
            Self::ConnectionMissing => OAuthCode::ConnectionMissing,
            Self::ConnectionRevoked => OAuthCode::ConnectionRevoked,
            Self::ProviderUnavailable => OAuthCode::ConnectionProviderUnavailable,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    #[error("the exchange is refused: {0:?}")]
    Refused(VaultRefusal),
    #[error(transparent)]
    Failed(#[from] Error),
}

impl From<VaultRefusal> for VaultError {
    fn from(refusal: VaultRefusal) -> Self {
        Self::Refused(refusal)
    }
}

impl From<crate::store::Error> for VaultError {
    fn from(error: crate::store::Error) -> Self {
        Self::Failed(error.into())
    }
}

/// What the trail keeps of an attempt.
#[derive(Debug, Default)]
struct Attempt {
    user_id: Option<String>,
    scopes: Vec<String>,
    resource: Option<String>,
}

/// Decides the exchange, hands out the upstream token when it is allowed, and records the attempt
/// in the trail either way.
pub async fn exchange(context: &Context, request: VaultRequest<'_>) -> Result<VaultToken, VaultError> {
    let mut attempt = Attempt::default();
    let outcome = decide(context, &request, &mut attempt).await;
    let refusal = match &outcome {
        Ok(_) => None,
        Err(VaultError::Refused(refusal)) => Some(refusal),
        // A failure of the service itself is not an exchange refused.
        Err(VaultError::Failed(_)) => return outcome,
    };
    let row = Exchange {
        id: ExchangeId::fresh(),
        realm_id: request.realm.id.clone(),
        client_id: request.client.id.clone(),
        subject_user_id: attempt.user_id.map(UserId::known),
        grant_id: None,
        outcome: if refusal.is_some() { ExchangeOutcome::Refused } else { ExchangeOutcome::Granted },
        error_code: refusal.map(|refusal| refusal.code().as_str().to_owned()),
        scopes: attempt.scopes,
        resource: attempt.resource,
        depth: None,
        token_id: None,
        ip_address: request.origin.ip_address.clone(),
        occurred_at: context.clock.now(),
        connection_provider: request.connection.map(str::to_owned),
    };
    trail::insert_exchanges(context.store.writer(), &[&row]).await?;
    outcome
}

async fn decide(
    context: &Context,
    request: &VaultRequest<'_>,
    attempt: &mut Attempt,
) -> Result<VaultToken, VaultError> {
    let VaultRequest { realm, client, subject_token, subject_token_type, connection, .. } = *request;
    let subject_token = subject_token.ok_or(VaultRefusal::Missing("subject_token"))?;
    if subject_token_type.ok_or(VaultRefusal::Missing("subject_token_type"))? != ACCESS_TOKEN_TYPE {
        return Err(VaultRefusal::SubjectTokenTypeUnsupported.into());
    }
    let provider_id = connection.ok_or(VaultRefusal::Missing("connection"))?;
    let pool = context.store.pool();
    let servers = resource_servers::represented_by(pool, &realm.id, &client.id).await?;
    if servers.is_empty() {
        return Err(VaultRefusal::NotAllowed("this client represents no resource server").into());
    }
    let active = tokens::active_access_token(context, &realm.id, subject_token)
        .await?
        .ok_or(VaultRefusal::SubjectTokenInactive)?;
    let (_, user) = active.person.clone().ok_or(VaultRefusal::SubjectTokenInactive)?;
    attempt.user_id = Some(user.id.to_string());
    attempt.scopes = active.scopes();
    let audiences: Vec<&str> = match active.claims.get("aud") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let server = servers
        .iter()
        .find(|server| audiences.contains(&server.address.as_str()))
        .ok_or(VaultRefusal::NotAllowed("the subject token is not addressed to the resource server of this client"))?;
    attempt.resource = Some(server.address.clone());
    let provider = active_provider(context, &realm.id, provider_id).await?.ok_or(VaultRefusal::ProviderUnknown)?;
    if !provider.resource_servers.iter().any(|allowed| *allowed == server.id.as_str()) {
        return Err(VaultRefusal::NotAllowed("the connection provider does not allow this resource server").into());
    }
    let mut connection =
        store::of_person(pool, &user.id, provider.id.as_str()).await?.ok_or(VaultRefusal::ConnectionMissing)?;
    if connection.status == ConnectionStatus::Revoked {
        return Err(VaultRefusal::ConnectionRevoked.into());
    }
    let now = context.clock.now();
    if connection.expires_at.is_some_and(|expires_at| expires_at <= now + REFRESH_AHEAD) {
        refresh(context, realm, &provider, &mut connection, now).await?;
    }
    store::used(context.store.writer(), &connection, now).await?;
    let token = sign_in::opened(context, provider.id.as_str(), &connection.access_token)?;
    Ok(VaultToken {
        access_token: token,
        expires_in: connection.expires_at.map(|expires_at| (expires_at - now).num_seconds()),
        scopes: connection.scopes.clone(),
    })
}

/// Renews the connection's token with its refresh token. A provider that refuses it, or a token
/// with no refresh token, leaves the connection Revoked: the person must connect again.
async fn refresh(
    context: &Context,
    realm: &Realm,
    provider: &ConnectionProvider,
    connection: &mut Connection,
    now: DateTime<Utc>,
) -> Result<(), VaultError> {
    let unavailable = |failure: Failure| match failure {
        Failure::Failed(error) => VaultError::Failed(error),
        other => {
            tracing::warn!(realm = %realm.id, provider = %provider.id, failure = %other, "a connection cannot be renewed");
            VaultRefusal::ProviderUnavailable.into()
        }
    };
    let refresh_token = connection
        .refresh_token
        .as_deref()
        .map(|sealed| sign_in::opened(context, provider.id.as_str(), sealed))
        .transpose()?;
    let renewed = match refresh_token {
        Some(refresh_token) => {
            let authority = authority(context, &realm.id, provider).await.map_err(unavailable)?;
            let form = [("grant_type", "refresh_token"), ("refresh_token", refresh_token.as_str())];
            match sign_in::token_endpoint(context, &authority, &form).await {
                Ok(tokens) => Some(tokens),
                // RFC 6749 §5.2: the refresh token is invalid, expired or revoked.
                Err(Failure::CodeRefused(error)) if error == "invalid_grant" => None,
                Err(failure) => return Err(unavailable(failure)),
            }
        }
        None => None,
    };
    match renewed {
        Some(tokens) => renew(context, connection, &tokens, now).map_err(unavailable),
        None => {
            connection.status = ConnectionStatus::Revoked;
            connection.updated_at = now;
            store::used(context.store.writer(), connection, now).await?;
            Err(VaultRefusal::ConnectionRevoked.into())
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionView {
    pub id: String,
    pub realm_id: String,
    pub user_id: String,
    pub provider_id: String,
    /// Active, or Revoked once the provider refused to renew its token.
    pub status: ConnectionStatus,
    /// The scopes the provider granted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// When the upstream access token expires, when the provider said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// The last exchange for its token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&Connection> for ConnectionView {
    fn from(connection: &Connection) -> Self {
        Self {
            id: connection.id.to_string(),
            realm_id: connection.realm_id.to_string(),
            user_id: connection.user_id.to_string(),
            provider_id: connection.provider_id.clone(),
            status: connection.status,
            scopes: connection.scopes.clone(),
            expires_at: connection.expires_at.map(iso),
            last_used_at: connection.last_used_at.map(iso),
            created_at: iso(connection.created_at),
            updated_at: iso(connection.updated_at),
        }
    }
}

/// Removes `connection` for an administrator: its tokens are forgotten, and no exchange hands them
/// out again.
pub async fn remove(context: &Context, connection: &Connection, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    store::delete(&mut *tx, &connection.id, None).await?;
    let change = Change::of(ChangeAction::Delete, connection.place(), 200).before(ConnectionView::from(connection));
    crate::runtime::changes::commit(context, by, tx, change).await
}
