//! Connection providers (OAuth 2.0 authorization servers people of a realm connect accounts at)
//! and connections (the accounts people connected), whose upstream tokens are sealed at rest.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::trail::{Place, Placed, ResourceKind};
use super::{Error, Status, Store, text_enum};
use crate::kernel::ids::{ConnectionId, ConnectionProviderId, RealmId, UserId};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ConnectionProvider {
    pub realm_id: RealmId,
    pub id: ConnectionProviderId,
    pub display_name: String,
    #[sqlx(try_from = "String")]
    pub status: Status,
    /// Its discovery address, or else its two addresses.
    pub discovery_url: Option<String>,
    pub authorization_url: Option<String>,
    pub token_url: Option<String>,
    pub client_id: String,
    /// Sealed.
    pub client_secret: Option<String>,
    pub client_secret_last_four: Option<String>,
    #[sqlx(try_from = "super::JsonList")]
    pub scopes: Vec<String>,
    /// The resource servers that may exchange tokens for this provider's.
    #[sqlx(try_from = "super::JsonList")]
    pub resource_servers: Vec<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Placed for ConnectionProvider {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::ConnectionProvider, &self.id, &self.realm_id)
    }
}

const PROVIDER_COLUMNS: &str = "realm_id, id, display_name, status, discovery_url, authorization_url, token_url, \
     client_id, client_secret, client_secret_last_four, scopes, resource_servers, created_at, updated_at";

pub const PROVIDER_LISTING: Listing = Listing {
    table: "connection_providers",
    columns: PROVIDER_COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["id", "display_name"],
    status: Some("status"),
    sortable: &[
        ("id", "id"),
        ("displayName", "display_name"),
        ("updatedAt", "updated_at"),
        ("createdAt", "created_at"),
    ],
};

/// Inserts the provider; `false` when its id is taken in the realm.
pub async fn insert_provider<'c>(
    db: impl Executor<'c, Database = Any>,
    provider: &ConnectionProvider,
) -> Result<bool, Error> {
    let done = sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO connection_providers ({PROVIDER_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT DO NOTHING"
    )))
    .bind(&provider.realm_id)
    .bind(&provider.id)
    .bind(&provider.display_name)
    .bind(provider.status.as_str())
    .bind(&provider.discovery_url)
    .bind(&provider.authorization_url)
    .bind(&provider.token_url)
    .bind(&provider.client_id)
    .bind(&provider.client_secret)
    .bind(&provider.client_secret_last_four)
    .bind(super::to_json_list(&provider.scopes))
    .bind(super::to_json_list(&provider.resource_servers))
    .bind(super::millis(provider.created_at))
    .bind(super::millis(provider.updated_at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn update_provider<'c>(
    db: impl Executor<'c, Database = Any>,
    provider: &ConnectionProvider,
) -> Result<(), Error> {
    sqlx::query(
        "UPDATE connection_providers SET display_name = $3, status = $4, discovery_url = $5, authorization_url = $6, \
         token_url = $7, client_id = $8, client_secret = $9, client_secret_last_four = $10, scopes = $11, \
         resource_servers = $12, updated_at = $13 WHERE realm_id = $1 AND id = $2",
    )
    .bind(&provider.realm_id)
    .bind(&provider.id)
    .bind(&provider.display_name)
    .bind(provider.status.as_str())
    .bind(&provider.discovery_url)
    .bind(&provider.authorization_url)
    .bind(&provider.token_url)
    .bind(&provider.client_id)
    .bind(&provider.client_secret)
    .bind(&provider.client_secret_last_four)
    .bind(super::to_json_list(&provider.scopes))
    .bind(super::to_json_list(&provider.resource_servers))
    .bind(super::millis(provider.updated_at))
    .execute(db)
    .await?;
    Ok(())
}

pub async fn find_provider<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    id: &str,
) -> Result<Option<ConnectionProvider>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {PROVIDER_COLUMNS} FROM connection_providers WHERE realm_id = $1 AND id = $2"
    )))
    .bind(realm_id)
    .bind(id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Deletes the provider, and with it every connection made at it.
pub async fn delete_provider<'c>(db: impl Executor<'c, Database = Any>, realm_id: &str, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM connection_providers WHERE realm_id = $1 AND id = $2")
        .bind(realm_id)
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

pub async fn page_providers(
    store: &Store,
    realm_id: &str,
    request: &PageRequest,
) -> Result<Page<ConnectionProvider>, Error> {
    page::fetch(store.pool(), &PROVIDER_LISTING, &Scope::of("realm_id", realm_id), request).await
}

text_enum! {
    pub enum ConnectionStatus {
        Active,
        /// The provider refused to refresh its token: the person must connect again.
        Revoked,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Connection {
    pub id: ConnectionId,
    pub realm_id: RealmId,
    pub user_id: UserId,
    pub provider_id: String,
    #[sqlx(try_from = "super::JsonList")]
    pub scopes: Vec<String>,
    /// Sealed.
    pub access_token: String,
    /// Sealed.
    pub refresh_token: Option<String>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub expires_at: Option<DateTime<Utc>>,
    #[sqlx(try_from = "String")]
    pub status: ConnectionStatus,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub last_used_at: Option<DateTime<Utc>>,
}

impl Placed for Connection {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::Connection, &self.id, &self.realm_id)
    }
}

const COLUMNS: &str = "id, realm_id, user_id, provider_id, scopes, access_token, refresh_token, expires_at, status, \
     created_at, updated_at, last_used_at";

pub const LISTING: Listing = Listing {
    table: "connections",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["provider_id"],
    status: Some("status"),
    sortable: &[("createdAt", "created_at"), ("updatedAt", "updated_at"), ("lastUsedAt", "last_used_at")],
};

/// Stores a person's connection at a provider, replacing the one they had there: the same id,
/// new tokens, Active again.
pub async fn save<'c>(db: impl Executor<'c, Database = Any>, connection: &Connection) -> Result<Connection, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "INSERT INTO connections ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
         ON CONFLICT (user_id, provider_id) DO UPDATE SET scopes = excluded.scopes, \
         access_token = excluded.access_token, refresh_token = excluded.refresh_token, \
         expires_at = excluded.expires_at, status = excluded.status, updated_at = excluded.updated_at \
         RETURNING {COLUMNS}"
    )))
    .bind(&connection.id)
    .bind(&connection.realm_id)
    .bind(&connection.user_id)
    .bind(&connection.provider_id)
    .bind(super::to_json_list(&connection.scopes))
    .bind(&connection.access_token)
    .bind(&connection.refresh_token)
    .bind(super::millis(connection.expires_at))
    .bind(connection.status.as_str())
    .bind(super::millis(connection.created_at))
    .bind(super::millis(connection.updated_at))
    .bind(super::millis(connection.last_used_at))
    .fetch_one(db)
    .await
    .map_err(Error::from)
}

/// The new tokens of a refreshed connection, and its use now; or its use alone.
pub async fn used<'c>(
    db: impl Executor<'c, Database = Any>,
    connection: &Connection,
    at: DateTime<Utc>,
) -> Result<(), Error> {
    sqlx::query(
        "UPDATE connections SET access_token = $2, refresh_token = $3, expires_at = $4, status = $5, \
         updated_at = $6, last_used_at = $7 WHERE id = $1",
    )
    .bind(&connection.id)
    .bind(&connection.access_token)
    .bind(&connection.refresh_token)
    .bind(super::millis(connection.expires_at))
    .bind(connection.status.as_str())
    .bind(super::millis(connection.updated_at))
    .bind(super::millis(at))
    .execute(db)
    .await?;
    Ok(())
}

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    id: &str,
) -> Result<Option<Connection>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM connections WHERE realm_id = $1 AND id = $2")))
        .bind(realm_id)
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// The person's connection at the provider, when they have one.
pub async fn of_person<'c>(
    db: impl Executor<'c, Database = Any>,
    user_id: &str,
    provider_id: &str,
) -> Result<Option<Connection>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM connections WHERE user_id = $1 AND provider_id = $2"
    )))
    .bind(user_id)
    .bind(provider_id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Every connection of the person, oldest first.
pub async fn all_of_person<'c>(db: impl Executor<'c, Database = Any>, user_id: &str) -> Result<Vec<Connection>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM connections WHERE user_id = $1 ORDER BY created_at, id"
    )))
    .bind(user_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// Deletes the connection; `false` when there was none of this id (of this person, when named).
pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, id: &str, user_id: Option<&str>) -> Result<bool, Error> {
    let done = match user_id {
        Some(user_id) => {
            sqlx::query("DELETE FROM connections WHERE id = $1 AND user_id = $2")
                .bind(id)
                .bind(user_id)
                .execute(db)
                .await?
        }
        None => sqlx::query("DELETE FROM connections WHERE id = $1").bind(id).execute(db).await?,
    };
    Ok(done.rows_affected() == 1)
}

/// A page of the realm's connections, of one person or at one provider when named.
pub async fn page(
    store: &Store,
    realm_id: &str,
    user_id: Option<&str>,
    provider_id: Option<&str>,
    request: &PageRequest,
) -> Result<Page<Connection>, Error> {
    let scope = Scope::of("realm_id", realm_id).and_given("user_id", user_id).and_given("provider_id", provider_id);
    page::fetch(store.pool(), &LISTING, &scope, request).await
}
