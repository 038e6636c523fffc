//! Consumers of a client: API keys for the users of a customer's own API, validated at the realm's
//! introspection endpoint. Values are stored as keyed hashes.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::trail::{Place, Placed, ResourceKind};
use super::{Error, Store};
use super::{Status, text_enum};
use crate::kernel::ids::{ClientId, ConsumerId, RealmId};

text_enum! {
    pub enum ConsumerType {
        /// A value the consumer sends to the customer's API, which asks introspection about it
        /// with `token_type_hint=api_key`.
        ApiKey,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Consumer {
    pub id: ConsumerId,
    pub realm_id: RealmId,
    pub client_id: ClientId,
    #[sqlx(try_from = "String")]
    pub consumer_type: ConsumerType,
    pub name: String,
    pub description: Option<String>,
    #[sqlx(try_from = "String")]
    pub status: Status,
    pub value_hash: String,
    pub value_last_four: String,
    #[sqlx(try_from = "super::JsonList")]
    pub scopes: Vec<String>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub expires_at: Option<DateTime<Utc>>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Placed for Consumer {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::Consumer, &self.id, &self.realm_id)
            .of_client(&self.client_id)
            .under(&self.client_id)
    }
}

impl Consumer {
    /// Whether the key authenticates at `now`: Active and unexpired.
    pub fn is_usable(&self, now: DateTime<Utc>) -> bool {
        self.status == Status::Active && self.expires_at.is_none_or(|until| until > now)
    }
}

const COLUMNS: &str = "id, realm_id, client_id, consumer_type, name, description, status, value_hash, \
     value_last_four, scopes, expires_at, created_at, updated_at";

pub const LISTING: Listing = Listing {
    table: "consumers",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["name", "description", "value_last_four"],
    status: Some("status"),
    sortable: &[
        ("name", "name"),
        ("expiresAt", "expires_at"),
        ("updatedAt", "updated_at"),
        ("createdAt", "created_at"),
    ],
};

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, consumer: &Consumer) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO consumers (id, realm_id, client_id, consumer_type, name, description, status, value_hash, \
         value_last_four, scopes, expires_at, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(&consumer.id)
    .bind(&consumer.realm_id)
    .bind(&consumer.client_id)
    .bind(consumer.consumer_type.as_str())
    .bind(&consumer.name)
    .bind(&consumer.description)
    .bind(consumer.status.as_str())
    .bind(&consumer.value_hash)
    .bind(&consumer.value_last_four)
    .bind(super::to_json_list(&consumer.scopes))
    .bind(super::millis(consumer.expires_at))
    .bind(super::millis(consumer.created_at))
    .bind(super::millis(consumer.updated_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// The consumer with this id among the client's.
pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    client_id: &str,
    id: &str,
) -> Result<Option<Consumer>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM consumers WHERE realm_id = $1 AND client_id = $2 AND id = $3"
    )))
    .bind(realm_id)
    .bind(client_id)
    .bind(id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// The consumer whose key has this keyed hash, in any realm.
pub async fn find_by_hash<'c>(
    db: impl Executor<'c, Database = Any>,
    value_hash: &str,
) -> Result<Option<Consumer>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM consumers WHERE value_hash = $1")))
        .bind(value_hash)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// Writes the fields an update may change (never the type or the value).
pub async fn update<'c>(db: impl Executor<'c, Database = Any>, consumer: &Consumer) -> Result<(), Error> {
    sqlx::query(
        "UPDATE consumers SET name = $2, description = $3, status = $4, scopes = $5, expires_at = $6, \
         updated_at = $7 WHERE id = $1",
    )
    .bind(&consumer.id)
    .bind(&consumer.name)
    .bind(&consumer.description)
    .bind(consumer.status.as_str())
    .bind(super::to_json_list(&consumer.scopes))
    .bind(super::millis(consumer.expires_at))
    .bind(super::millis(consumer.updated_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM consumers WHERE id = $1").bind(id).execute(db).await.map(|_| ()).map_err(Error::from)
}

/// A page of a client's consumers.
pub async fn page(
    store: &Store,
    realm_id: &str,
    client_id: &str,
    request: &PageRequest,
) -> Result<Page<Consumer>, Error> {
    let scope = Scope::of("realm_id", realm_id).and("client_id", client_id);
    page::fetch(store.pool(), &LISTING, &scope, request).await
}
