//! `/realms/{realm}/resource-servers`: the APIs and MCP servers tokens are issued for. A client
//! asks for a token addressed to one with RFC 8707 `resource`; the token's `aud` is its address.
//! Resource servers are part of the realm's configuration (`realm:read`, `realm:update`).

use super::reach::{Found, InRealm, RealmRead, RealmUpdate};
use axum::extract::{RawQuery, State};
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::{ListQuery, commit};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::clock::iso;
use crate::kernel::ids::ResourceServerId;
use crate::kernel::validate::{Body, Notification, Refusals, Rule, boolean, list_of, one_of, parsed, text};
use crate::runtime::error::Error;
use crate::store::realms::Realm;
use crate::store::resource_servers::{self as server_store, ResourceServer, ServerKind};
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::{Status, clients as client_store};

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
    fn of(server: &ResourceServer) -> Self {
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

/// The body of a resource server creation; an update takes the same fields but `type`, each
/// optional.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct ResourceServerInput {
    /// 1–128 characters.
    name: String,
    /// An absolute URI without fragment, unique in the realm: https, or http on a loopback host.
    address: String,
    /// Api (default) or McpServer; cannot change.
    #[schema(rename = "type")]
    kind: Option<ServerKind>,
    /// Scopes of the catalogue or the realm it accepts.
    scopes: Option<Vec<String>>,
    /// Ids of the realm's clients that may request tokens for it.
    allowed_clients: Option<Vec<String>>,
    /// Whether self-registered clients may request tokens for it too (default false).
    accepts_self_registered_clients: Option<bool>,
    /// The id of the realm's client the server authenticates as when it exchanges tokens for
    /// connected accounts; null removes it.
    client_id: Option<String>,
    status: Option<Status>,
}

pub(super) fn address(text_value: &str) -> Result<String, (Rule, String)> {
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

fn client_reference(path: &str, value: &Value) -> Result<String, Refusals> {
    text(1, 128)(path, value)
}

fn read_fields(body: &mut Body, server: &mut ResourceServer) {
    if let Some(name) = body.optional("name", text(1, 128)) {
        server.name = name;
    }
    if let Some(address) = body.optional("address", parsed(address)) {
        server.address = address;
    }
    if let Some(scopes) = body.optional("scopes", list_of(100, super::clients::scope_token)) {
        server.scopes = scopes.clone();
    }
    if let Some(clients) = body.optional("allowedClients", list_of(200, client_reference)) {
        server.allowed_clients = clients.clone();
    }
    if let Some(accepts) = body.optional("acceptsSelfRegisteredClients", boolean) {
        server.accepts_self_registered = accepts;
    }
    if let Some(client) = body.nullable("clientId", client_reference) {
        server.client_id = client;
    }
    if let Some(status) = body.optional("status", one_of(Status::NAMES)) {
        server.status = status;
    }
}

/// The scopes must exist and the clients must be clients of the realm.
async fn check_references(state: &AppState, realm: &Realm, server: &ResourceServer) -> Result<(), Error> {
    let scopes = server.scopes.clone();
    super::scopes::check_scopes_exist(state, &realm.account_id, &realm.id, &scopes, "scopes").await?;
    let mut refused = Vec::new();
    for (index, client) in server.allowed_clients.iter().enumerate() {
        if client_store::find(state.store.pool(), &realm.id, client).await?.is_none() {
            let field = format!("allowedClients[{index}]");
            refused.push(Notification::new(field, Rule::NotFound, format!("no client {client} in the realm")));
        }
    }
    if let Some(client) = &server.client_id
        && client_store::find(state.store.pool(), &realm.id, client).await?.is_none()
    {
        refused.push(Notification::new("clientId", Rule::NotFound, format!("no client {client} in the realm")));
    }
    if refused.is_empty() { Ok(()) } else { Err(Error::Validation(refused)) }
}

#[utoipa::path(post, path = "/realms/{realm}/resource-servers", tag = "Resource servers", params(("realm" = String, Path)),
    request_body = ResourceServerInput,
    responses((status = 201, description = "The created resource server, in `data`", body = ResourceServerView), (status = 400), (status = 403),
              (status = 409, description = "AlreadyExists: the address is taken in the realm")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    InRealm { realm, caller, .. }: InRealm<RealmUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let now = state.clock.now();
    let kind = body.optional("type", one_of(ServerKind::NAMES)).unwrap_or(ServerKind::Api);
    let mut server = ResourceServer {
        id: ResourceServerId::fresh(),
        realm_id: realm.id.clone(),
        name: String::new(),
        address: String::new(),
        kind,
        scopes: Vec::new(),
        allowed_clients: Vec::new(),
        accepts_self_registered: false,
        client_id: None,
        status: Status::Active,
        created_at: now,
        updated_at: now,
    };
    for required in ["name", "address"] {
        if !body.has(required) {
            body.refuse(required, Rule::Required, format!("{required} is required"));
        }
    }
    read_fields(&mut body, &mut server);
    body.finish()?;
    check_references(&state, &realm, &server).await?;
    let mut tx = state.store.begin().await?;
    if !server_store::insert(&mut *tx, &server).await? {
        return Err(Error::AlreadyExists("resource server"));
    }
    commit(
        &state,
        &caller,
        tx,
        Change::of(ChangeAction::Create, server.place(), 201).after(ResourceServerView::of(&server)),
    )
    .await?;
    Ok(envelope::created(ResourceServerView::of(&server)))
}

#[utoipa::path(get, path = "/realms/{realm}/resource-servers", tag = "Resource servers",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query), ("status" = Option<String>, Query),
           ("sortBy" = Option<String>, Query, description = "name, address, createdAt, updatedAt"), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's resource servers, in `pagination`", body = [ResourceServerView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<RealmRead>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::Status::NAMES)?;
    let found = server_store::page(&state.store, &realm.id, &list.page).await?;
    Ok(envelope::paged(found.map(|server| ResourceServerView::of(&server))))
}

#[utoipa::path(get, path = "/realms/{realm}/resource-servers/{serverId}", tag = "Resource servers",
    params(("realm" = String, Path), ("serverId" = String, Path)),
    responses((status = 200, body = ResourceServerView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(Found { item: server, .. }: Found<ResourceServer, RealmRead>) -> Result<Response, Error> {
    Ok(envelope::ok(ResourceServerView::of(&server)))
}

#[utoipa::path(put, path = "/realms/{realm}/resource-servers/{serverId}", tag = "Resource servers",
    params(("realm" = String, Path), ("serverId" = String, Path)), request_body = ResourceServerInput,
    responses((status = 200, body = ResourceServerView), (status = 400), (status = 403), (status = 404), (status = 409)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    Found { realm, item: before, caller, .. }: Found<ResourceServer, RealmUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let mut server = before.clone();
    body.unchanged("id", &server.id);
    body.unchanged("type", server.kind.as_str());
    read_fields(&mut body, &mut server);
    body.finish()?;
    check_references(&state, &realm, &server).await?;
    server.updated_at = state.clock.now();
    let mut tx = state.store.begin().await?;
    if !server_store::update(&mut *tx, &server).await? {
        return Err(Error::AlreadyExists("resource server"));
    }
    commit(
        &state,
        &caller,
        tx,
        Change::of(ChangeAction::Update, server.place(), 200)
            .before(ResourceServerView::of(&before))
            .after(ResourceServerView::of(&server)),
    )
    .await?;
    Ok(envelope::ok(ResourceServerView::of(&server)))
}

#[utoipa::path(delete, path = "/realms/{realm}/resource-servers/{serverId}", tag = "Resource servers",
    params(("realm" = String, Path), ("serverId" = String, Path)),
    responses((status = 200, description = "Deleted"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    Found { item: server, caller, .. }: Found<ResourceServer, RealmUpdate>,
) -> Result<Response, Error> {
    let mut tx = state.store.begin().await?;
    server_store::delete(&mut *tx, &server.id).await?;
    commit(
        &state,
        &caller,
        tx,
        Change::of(ChangeAction::Delete, server.place(), 200).before(ResourceServerView::of(&server)),
    )
    .await?;
    Ok(envelope::done())
}
