//! Connection providers of a realm: where people connect accounts whose tokens the realm's
//! resource servers may exchange for. Each change is checked against the realm (the resource
//! servers it names), written, trailed and announced here.

use super::identity_providers::{client_secret, provider_address};
use crate::kernel::clock::iso;
use crate::kernel::ids::ConnectionProviderId;
use crate::kernel::validate::{Body, Refusals, Rule, list_of, one_of, parsed, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::connections::{self as store, ConnectionProvider};
use crate::store::trail::{Change, ChangeAction, Placed};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// The resource servers named must be the realm's.
async fn check_servers(context: &Context, provider: &ConnectionProvider) -> Result<(), Error> {
    let pool = context.store.pool();
    let found = |id: String| async move {
        Ok(crate::store::resource_servers::find(pool, &provider.realm_id, &id).await?.is_some())
    };
    let message = |id: &str| format!("the realm has no resource server {id}");
    let refused = super::missing("resourceServers", &provider.resource_servers, found, message).await?;
    if refused.is_empty() { Ok(()) } else { Err(Error::Validation(refused)) }
}

/// Creates `provider`; its id must be free in the realm.
pub async fn create(
    context: &Context,
    provider: ConnectionProvider,
    by: Author<'_>,
) -> Result<ConnectionProvider, Error> {
    check_servers(context, &provider).await?;
    let mut tx = context.store.begin().await?;
    if !store::insert_provider(&mut *tx, &provider).await? {
        return Err(Error::AlreadyExists("connection provider"));
    }
    let change =
        Change::of(ChangeAction::Create, provider.place(), 201).after(ConnectionProviderView::of(context, &provider));
    changes::commit(context, by, tx, change).await?;
    Ok(provider)
}

/// Changes `before` into `provider`.
pub async fn update(
    context: &Context,
    before: &ConnectionProvider,
    mut provider: ConnectionProvider,
    by: Author<'_>,
) -> Result<ConnectionProvider, Error> {
    check_servers(context, &provider).await?;
    provider.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    store::update_provider(&mut *tx, &provider).await?;
    let change = Change::of(ChangeAction::Update, provider.place(), 200)
        .before(ConnectionProviderView::of(context, before))
        .after(ConnectionProviderView::of(context, &provider));
    changes::commit(context, by, tx, change).await?;
    Ok(provider)
}

/// Deletes `provider`, with every connection made at it.
pub async fn delete(context: &Context, provider: &ConnectionProvider, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    store::delete_provider(&mut *tx, &provider.realm_id, &provider.id).await?;
    let change =
        Change::of(ChangeAction::Delete, provider.place(), 200).before(ConnectionProviderView::of(context, provider));
    changes::commit(context, by, tx, change).await
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionProviderView {
    /// What the token exchange's `connection` parameter names.
    pub id: String,
    pub realm_id: String,
    pub display_name: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discovery_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorization_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
    pub client_id: String,
    /// The secret itself is never shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_last_four: Option<String>,
    /// The scopes asked for when a person connects an account.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// Ids of the resource servers that may exchange tokens they receive for this provider's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resource_servers: Vec<String>,
    /// Where the provider sends people back: the redirect URI to register at the provider.
    pub redirect_uri: String,
    pub created_at: String,
    pub updated_at: String,
}

impl ConnectionProviderView {
    pub(crate) fn of(context: &Context, provider: &ConnectionProvider) -> Self {
        Self {
            id: provider.id.to_string(),
            realm_id: provider.realm_id.to_string(),
            display_name: provider.display_name.clone(),
            status: provider.status,
            discovery_url: provider.discovery_url.clone(),
            authorization_url: provider.authorization_url.clone(),
            token_url: provider.token_url.clone(),
            client_id: provider.client_id.clone(),
            client_secret_last_four: provider.client_secret_last_four.clone(),
            scopes: provider.scopes.clone(),
            resource_servers: provider.resource_servers.clone(),
            redirect_uri: callback_address(context, &provider.realm_id, provider.id.as_str()),
            created_at: iso(provider.created_at),
            updated_at: iso(provider.updated_at),
        }
    }
}

/// The body of a creation; an update takes the same fields but `id`, each optional.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ConnectionProviderInput {
    /// 1–64 lowercase letters, digits, `-`, `_`; unique in the realm. Required at creation.
    #[schema(value_type = String, required = true)]
    pub(crate) id: Option<ConnectionProviderId>,
    /// Up to 128 characters; defaults to the id.
    pub(crate) display_name: Option<String>,
    pub(crate) status: Option<Status>,
    /// The provider's discovery address (`…/.well-known/openid-configuration`); or else both
    /// `authorizationUrl` and `tokenUrl`. Every address is https.
    #[schema(value_type = Option<String>)]
    pub(crate) discovery_url: Option<Option<String>>,
    #[schema(value_type = Option<String>)]
    pub(crate) authorization_url: Option<Option<String>>,
    #[schema(value_type = Option<String>)]
    pub(crate) token_url: Option<Option<String>>,
    /// The client id registered at the provider. Required at creation.
    #[schema(value_type = String, required = true)]
    pub(crate) client_id: Option<String>,
    /// Write-only; null removes it.
    #[schema(value_type = Option<String>)]
    pub(crate) client_secret: Option<(Option<String>, Option<String>)>,
    /// Up to 50.
    pub(crate) scopes: Option<Vec<String>>,
    /// Ids of the realm's resource servers allowed to exchange for this provider's tokens, up to 50.
    pub(crate) resource_servers: Option<Vec<String>>,
}

impl ConnectionProviderInput {
    /// The changeable fields `body` gives (not the id, which only a creation reads); a new client
    /// secret is sealed at once.
    pub(crate) fn read(context: &Context, body: &mut Body) -> Self {
        Self {
            id: None,
            display_name: body.optional("displayName", text(1, 128)),
            status: body.optional("status", one_of(Status::NAMES)),
            discovery_url: body.nullable("discoveryUrl", parsed(provider_address)),
            authorization_url: body.nullable("authorizationUrl", parsed(provider_address)),
            token_url: body.nullable("tokenUrl", parsed(provider_address)),
            client_id: body.optional("clientId", text(1, 255)),
            client_secret: client_secret(context, body),
            scopes: body.optional("scopes", list_of(50, crate::directory::client_fields::scope_token)),
            resource_servers: body.optional("resourceServers", list_of(50, server_reference)),
        }
    }

    /// Changes the fields given on `provider`, which must then have its addresses: a discovery
    /// address, or both the authorization and the token address (refused on `body` otherwise).
    pub(crate) fn apply(self, provider: &mut ConnectionProvider, body: &mut Body) {
        provider.display_name = self.display_name.unwrap_or(std::mem::take(&mut provider.display_name));
        provider.status = self.status.unwrap_or(provider.status);
        provider.discovery_url = self.discovery_url.unwrap_or(provider.discovery_url.take());
        provider.authorization_url = self.authorization_url.unwrap_or(provider.authorization_url.take());
        provider.token_url = self.token_url.unwrap_or(provider.token_url.take());
        provider.client_id = self.client_id.unwrap_or(std::mem::take(&mut provider.client_id));
        if let Some((sealed, four)) = self.client_secret {
            (provider.client_secret, provider.client_secret_last_four) = (sealed, four);
        }
        provider.scopes = self.scopes.unwrap_or(std::mem::take(&mut provider.scopes));
        provider.resource_servers = self.resource_servers.unwrap_or(std::mem::take(&mut provider.resource_servers));
        if provider.discovery_url.is_none() {
            for (field, url) in [("authorizationUrl", &provider.authorization_url), ("tokenUrl", &provider.token_url)] {
                if url.is_none() {
                    body.refuse(field, Rule::Required, format!("{field} is required without a discoveryUrl"));
                }
            }
        }
    }
}
/// Where the provider sends the person back: the address registered at the provider.
pub fn callback_address(context: &Context, realm_id: &str, provider_id: &str) -> String {
    format!("{}/connections/{provider_id}/callback", super::realms::issuer(context, realm_id))
}

pub(crate) fn server_reference(path: &str, value: &Value) -> Result<String, Refusals> {
    text(1, 64)(path, value)
}
