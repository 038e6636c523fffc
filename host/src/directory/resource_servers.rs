//! Resource servers of a realm: the APIs and MCP servers tokens are addressed to. Each change is
//! checked against the realm (its scopes exist, its clients are the realm's), written, trailed
//! and announced here.

use crate::kernel::clock::iso;
use crate::kernel::validate::{Body, Notification, Refusals, Rule, boolean, list_of, one_of, parsed, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::realms::Realm;
use crate::store::resource_servers::{self as server_store, ResourceServer, ServerKind};
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::{Status, clients as client_store};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// The scopes must exist and the clients must be clients of the realm.
async fn check_references(context: &Context, realm: &Realm, server: &ResourceServer) -> Result<(), Error> {
    super::scopes::check_exist(context, &realm.account_id, &realm.id, &server.scopes, "scopes").await?;
    let pool = context.store.pool();
    let found = |client: String| async move { Ok(client_store::find(pool, &realm.id, &client).await?.is_some()) };
    let message = |client: &str| format!("no client {client} in the realm");
    let mut refused = super::missing("allowedClients", &server.allowed_clients, found, message).await?;
    if let Some(client) = &server.client_id
        && client_store::find(pool, &realm.id, client).await?.is_none()
    {
        refused.push(Notification::new("clientId", Rule::NotFound, format!("no client {client} in the realm")));
    }
    if refused.is_empty() { Ok(()) } else { Err(Error::Validation(refused)) }
}

/// Creates `server` in `realm`; its address must be free in the realm.
pub async fn create(
    context: &Context,
    realm: &Realm,
    server: ResourceServer,
    by: Author<'_>,
) -> Result<ResourceServer, Error> {
    check_references(context, realm, &server).await?;
    let mut tx = context.store.begin().await?;
    if !server_store::insert(&mut *tx, &server).await? {
        return Err(Error::AlreadyExists("resource server"));
    }
    let change = Change::of(ChangeAction::Create, server.place(), 201).after(ResourceServerView::of(&server));
    changes::commit(context, by, tx, change).await?;
    Ok(server)
}

/// Changes `before` into `server`; a new address must be free in the realm.
pub async fn update(
    context: &Context,
    realm: &Realm,
    before: &ResourceServer,
    mut server: ResourceServer,
    by: Author<'_>,
) -> Result<ResourceServer, Error> {
    check_references(context, realm, &server).await?;
    server.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    if !server_store::update(&mut *tx, &server).await? {
        return Err(Error::AlreadyExists("resource server"));
    }
    let change = Change::of(ChangeAction::Update, server.place(), 200)
        .before(ResourceServerView::of(before))
        .after(ResourceServerView::of(&server));
    changes::commit(context, by, tx, change).await?;
    Ok(server)
}

/// Deletes `server`.
pub async fn delete(context: &Context, server: &ResourceServer, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    server_store::delete(&mut *tx, &server.id).await?;
    changes::commit(
        context,
        by,
        tx,
        Change::of(ChangeAction::Delete, server.place(), 200).before(ResourceServerView::of(server)),
    )
    .await
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceServerView {
    pub id: String,
    pub realm_id: String,
    pub name: String,
    /// The `resource` clients send and the `aud` of the tokens.
    pub address: String,
    #[serde(rename = "type")]
    pub kind: ServerKind,
    /// The scopes it accepts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The clients that may request tokens for it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_clients: Vec<String>,
    /// Whether clients that registered themselves may request tokens for it too, each with the
    /// consent of the person signing in (default false).
    pub accepts_self_registered_clients: bool,
    /// The client the server authenticates as when it exchanges tokens it received for the
    /// tokens of accounts people connected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    pub status: Status,
    pub created_at: String,
    pub updated_at: String,
}

impl ResourceServerView {
    pub(crate) fn of(server: &ResourceServer) -> Self {
        Self {
            id: server.id.clone().into(),
            realm_id: server.realm_id.to_string(),
            name: server.name.clone(),
            address: server.address.clone(),
            kind: server.kind,
            scopes: server.scopes.clone(),
            allowed_clients: server.allowed_clients.clone(),
            accepts_self_registered_clients: server.accepts_self_registered,
            client_id: server.client_id.clone(),
            status: server.status,
            created_at: iso(server.created_at),
            updated_at: iso(server.updated_at),
        }
    }
}

/// The body of a resource server creation (name and address required); an update takes the same
/// fields but `type`, each optional.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ResourceServerInput {
    /// 1–128 characters.
    #[schema(value_type = String, required = true)]
    pub(crate) name: Option<String>,
    /// An absolute URI without fragment, unique in the realm: https, or http on a loopback host.
    #[schema(value_type = String, required = true)]
    pub(crate) address: Option<String>,
    /// Api (default) or McpServer; cannot change.
    #[schema(rename = "type")]
    pub(crate) kind: Option<ServerKind>,
    /// Scopes of the catalogue or the realm it accepts.
    pub(crate) scopes: Option<Vec<String>>,
    /// Ids of the realm's clients that may request tokens for it.
    pub(crate) allowed_clients: Option<Vec<String>>,
    /// Whether self-registered clients may request tokens for it too (default false).
    pub(crate) accepts_self_registered_clients: Option<bool>,
    /// The id of the realm's client the server authenticates as when it exchanges tokens for
    /// connected accounts; null removes it.
    #[schema(value_type = Option<String>)]
    pub(crate) client_id: Option<Option<String>>,
    pub(crate) status: Option<Status>,
}

impl ResourceServerInput {
    /// The fields but `type`, which only a creation reads.
    pub(crate) fn read(body: &mut Body) -> Self {
        Self {
            name: body.optional("name", text(1, 128)),
            address: body.optional("address", parsed(address)),
            kind: None,
            scopes: body.optional("scopes", list_of(100, crate::directory::client_fields::scope_token)),
            allowed_clients: body.optional("allowedClients", list_of(200, client_reference)),
            accepts_self_registered_clients: body.optional("acceptsSelfRegisteredClients", boolean),
            client_id: body.nullable("clientId", client_reference),
            status: body.optional("status", one_of(Status::NAMES)),
        }
    }

    /// The server with the fields given changed.
    pub(crate) fn apply(self, server: &mut ResourceServer) {
        let Self { name, address, kind, scopes, allowed_clients, accepts_self_registered_clients, client_id, status } =
            self;
        server.kind = kind.unwrap_or(server.kind);
        server.name = name.unwrap_or(std::mem::take(&mut server.name));
        server.address = address.unwrap_or(std::mem::take(&mut server.address));
        server.scopes = scopes.unwrap_or(std::mem::take(&mut server.scopes));
        server.allowed_clients = allowed_clients.unwrap_or(std::mem::take(&mut server.allowed_clients));
        server.accepts_self_registered = accepts_self_registered_clients.unwrap_or(server.accepts_self_registered);
        server.client_id = client_id.unwrap_or(server.client_id.take());
        server.status = status.unwrap_or(server.status);
    }
}

pub(crate) fn address(text_value: &str) -> Result<String, (Rule, String)> {
    let refuse = |why: &str| Err((Rule::Format, format!("address {why}")));
    let Ok(uri) = url::Url::parse(text_value) else { return refuse("must be an absolute URI") };
    if uri.fragment().is_some() {
        return refuse("must not have a fragment");
    }
    let loopback = matches!(uri.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    match uri.scheme() {
        "https" if uri.host_str().is_some() => Ok(text_value.to_owned()),
        "http" if loopback => Ok(text_value.to_owned()),
        _ => refuse("must use https (http only on a loopback host)"),
    }
}

pub(crate) fn client_reference(path: &str, value: &Value) -> Result<String, Refusals> {
    text(1, 128)(path, value)
}
