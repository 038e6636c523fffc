//! `/realms/{realm}/resource-servers`: the APIs and MCP servers tokens are issued for. A client
//! asks for a token addressed to one with RFC 8707 `resource`; the token's `aud` is its address.
//! Resource servers are part of the realm's configuration (`realm:read`, `realm:update`).

use super::reach::{Found, InRealm, RealmRead, RealmUpdate};
use axum::extract::{RawQuery, State};
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::ListQuery;
use crate::directory::resource_servers;
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::clock::iso;
use crate::kernel::ids::ResourceServerId;
use crate::kernel::validate::{Body, Refusals, Rule, boolean, list_of, one_of, parsed, text};
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::resource_servers::{self as server_store, ResourceServer, ServerKind};

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

/// The body of a resource server creation (name and address required); an update takes the same
/// fields but `type`, each optional.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ResourceServerInput {
    /// 1–128 characters.
    #[schema(value_type = String, required = true)]
    name: Option<String>,
    /// An absolute URI without fragment, unique in the realm: https, or http on a loopback host.
    #[schema(value_type = String, required = true)]
    address: Option<String>,
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
    #[schema(value_type = Option<String>)]
    client_id: Option<Option<String>>,
    status: Option<Status>,
}

impl ResourceServerInput {
    /// The fields but `type`, which only a creation reads.
    fn read(body: &mut Body) -> Self {
        Self {
            name: body.optional("name", text(1, 128)),
            address: body.optional("address", parsed(address)),
            kind: None,
            scopes: body.optional("scopes", list_of(100, super::clients::scope_token)),
            allowed_clients: body.optional("allowedClients", list_of(200, client_reference)),
            accepts_self_registered_clients: body.optional("acceptsSelfRegisteredClients", boolean),
            client_id: body.nullable("clientId", client_reference),
            status: body.optional("status", one_of(Status::NAMES)),
        }
    }

    /// The server with the fields given changed.
    fn apply(self, server: &mut ResourceServer) {
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

#[utoipa::path(post, path = "/realms/{realm}/resource-servers", tag = "Resource servers", params(("realm" = String, Path)),
    request_body = ResourceServerInput,
    responses((status = 201, description = "The created resource server, in `data`", body = ResourceServerView), (status = 400), (status = 403),
              (status = 409, description = "AlreadyExists: the address is taken in the realm")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    InRealm { realm, caller, .. }: InRealm<RealmUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<ResourceServerView>, Error> {
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
    let input = ResourceServerInput { kind: Some(kind), ..ResourceServerInput::read(&mut body) };
    body.finish()?;
    input.apply(&mut server);
    let server = resource_servers::create(&state, &realm, server, caller.author(), ResourceServerView::of).await?;
    Ok(Answer::Created(ResourceServerView::of(&server)))
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
) -> Result<Answer<ResourceServerView>, Error> {
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::Status::NAMES)?;
    let found = server_store::page(&state.store, &realm.id, &list.page).await?;
    Ok(Answer::Paged(found.map(|server| ResourceServerView::of(&server))))
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
) -> Result<Answer<ResourceServerView>, Error> {
    let mut server = before.clone();
    body.unchanged("id", &server.id);
    body.unchanged("type", server.kind.as_str());
    let input = ResourceServerInput::read(&mut body);
    body.finish()?;
    input.apply(&mut server);
    let server =
        resource_servers::update(&state, &realm, &before, server, caller.author(), ResourceServerView::of).await?;
    Ok(Answer::Ok(ResourceServerView::of(&server)))
}

#[utoipa::path(delete, path = "/realms/{realm}/resource-servers/{serverId}", tag = "Resource servers",
    params(("realm" = String, Path), ("serverId" = String, Path)),
    responses((status = 200, description = "Deleted"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    Found { item: server, caller, .. }: Found<ResourceServer, RealmUpdate>,
) -> Result<Response, Error> {
    resource_servers::delete(&state, &server, caller.author(), ResourceServerView::of).await?;
    Ok(envelope::done())
}
