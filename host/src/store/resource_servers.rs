//! Resource servers: the APIs and MCP servers a realm issues tokens for.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::trail::{Place, Placed, ResourceKind};
use super::{Error, Store};
use super::{Status, text_enum};
use crate::kernel::ids::{RealmId, ResourceServerId};

text_enum! {
    pub enum ServerKind {
        Api,
        McpServer,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ResourceServer {
    pub id: ResourceServerId,
    pub realm_id: RealmId,
    pub name: String,
    /// The `aud` of its tokens, as clients send it in `resource`.
    pub address: String,
    #[sqlx(try_from = "String")]
    pub kind: ServerKind,
    /// The scopes it accepts.
    #[sqlx(try_from = "super::JsonList")]
    pub scopes: Vec<String>,
    /// The clients that may request tokens for it.
    #[sqlx(try_from = "super::JsonList")]
    pub allowed_clients: Vec<String>,
    /// Whether self-registered clients may request tokens for it too (an MCP server that any
    /// agent may reach, with the person's consent).
    #[sqlx(try_from = "super::Flag")]
    pub accepts_self_registered: bool,
    /// The client the server authenticates as when it exchanges the tokens it receives.
    pub client_id: Option<String>,
    #[sqlx(try_from = "String")]
    pub status: Status,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl ResourceServer {
    /// Whether `client` may request tokens addressed to this server.
    pub fn accepts(&self, client: &super::clients::Client) -> bool {
        self.allowed_clients.iter().any(|allowed| *allowed == client.id)
            || (self.accepts_self_registered && client.third_party())
    }
}

impl Placed for ResourceServer {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::ResourceServer, &self.id, &self.realm_id)
    }
}

const COLUMNS: &str = "id, realm_id, name, address, kind, scopes, allowed_clients, status, created_at, updated_at, accepts_self_registered, client_id";

pub const LISTING: Listing = Listing {
    table: "resource_servers",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["name", "address"],
    status: Some("status"),
    sortable: &[("name", "name"), ("address", "address"), ("updatedAt", "updated_at"), ("createdAt", "created_at")],
};

/// Inserts the server; `false` when its address is taken in the realm.
pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, server: &ResourceServer) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO resource_servers (id, realm_id, name, address, kind, scopes, allowed_clients, status, \
         created_at, updated_at, accepts_self_registered, client_id) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
         ON CONFLICT DO NOTHING",
    )
    .bind(&server.id)
    .bind(&server.realm_id)
    .bind(&server.name)
    .bind(&server.address)
    .bind(server.kind.as_str())
    .bind(super::to_json_list(&server.scopes))
    .bind(super::to_json_list(&server.allowed_clients))
    .bind(server.status.as_str())
    .bind(super::millis(server.created_at))
    .bind(super::millis(server.updated_at))
    .bind(server.accepts_self_registered)
    .bind(&server.client_id)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    id: &str,
) -> Result<Option<ResourceServer>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM resource_servers WHERE realm_id = $1 AND id = $2"
    )))
    .bind(realm_id)
    .bind(id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

pub async fn find_by_address<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    address: &str,
) -> Result<Option<ResourceServer>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM resource_servers WHERE realm_id = $1 AND address = $2"
    )))
    .bind(realm_id)
    .bind(address)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Writes every changeable field; `false` when the new address is taken.
pub async fn update<'c>(db: impl Executor<'c, Database = Any>, server: &ResourceServer) -> Result<bool, Error> {
    let result = sqlx::query(
        "UPDATE resource_servers SET name = $2, address = $3, scopes = $4, allowed_clients = $5, status = $6, \
         updated_at = $7, accepts_self_registered = $8, client_id = $9 WHERE id = $1",
    )
    .bind(&server.id)
    .bind(&server.name)
    .bind(&server.address)
    .bind(super::to_json_list(&server.scopes))
    .bind(super::to_json_list(&server.allowed_clients))
    .bind(server.status.as_str())
    .bind(super::millis(server.updated_at))
    .bind(server.accepts_self_registered)
    .bind(&server.client_id)
    .execute(db)
    .await;
    match result {
        Ok(_) => Ok(true),
        Err(sqlx::Error::Database(error)) if error.is_unique_violation() => Ok(false),
        Err(error) => Err(error.into()),
    }
}

/// The realm's Active resource servers that authenticate as `client_id`.
pub async fn represented_by<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    client_id: &str,
) -> Result<Vec<ResourceServer>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM resource_servers WHERE realm_id = $1 AND client_id = $2 AND status = 'Active'"
    )))
    .bind(realm_id)
    .bind(client_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM resource_servers WHERE id = $1")
        .bind(id)
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// A page of a realm's resource servers.
pub async fn page(store: &Store, realm_id: &str, request: &PageRequest) -> Result<Page<ResourceServer>, Error> {
    page::fetch(store.pool(), &LISTING, &Scope::of("realm_id", realm_id), request).await
}
