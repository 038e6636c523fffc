//! Scopes: the account's catalogue, shared by all its realms, and scopes exclusive to one realm.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope as Rows};
use super::trail::{Place, Placed, ResourceKind};
use super::{Error, Store};
use crate::kernel::ids::{AccountId, RealmId, ScopeId};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Scope {
    pub id: ScopeId,
    pub account_id: AccountId,
    /// `None` for a catalogue scope.
    pub realm_id: Option<RealmId>,
    pub name: String,
    pub description: Option<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Placed for Scope {
    fn place(&self) -> Place {
        Place {
            kind: ResourceKind::Scope,
            id: self.id.clone().into(),
            parent: self.realm_id.clone().map(String::from),
            realm: self.realm_id.clone().map(String::from),
            client: None,
        }
    }
}

const COLUMNS: &str = "id, account_id, realm_id, name, description, created_at, updated_at";

pub const LISTING: Listing = Listing {
    table: "scopes",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["name", "description"],
    status: None,
    sortable: &[("name", "name"), ("updatedAt", "updated_at"), ("createdAt", "created_at")],
};

/// Inserts the scope; `false` when the name is taken (in the catalogue, or in the realm).
pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, scope: &Scope) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO scopes (id, account_id, realm_id, name, description, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
    )
    .bind(&scope.id)
    .bind(&scope.account_id)
    .bind(&scope.realm_id)
    .bind(&scope.name)
    .bind(&scope.description)
    .bind(super::millis(scope.created_at))
    .bind(super::millis(scope.updated_at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    id: &str,
) -> Result<Option<Scope>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM scopes WHERE account_id = $1 AND id = $2")))
        .bind(account_id)
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// Writes the description (a scope's name is what tokens carry and never changes).
pub async fn update<'c>(db: impl Executor<'c, Database = Any>, scope: &Scope) -> Result<(), Error> {
    sqlx::query("UPDATE scopes SET description = $2, updated_at = $3 WHERE id = $1")
        .bind(&scope.id)
        .bind(&scope.description)
        .bind(super::millis(scope.updated_at))
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM scopes WHERE id = $1").bind(id).execute(db).await.map(|_| ()).map_err(Error::from)
}

/// The names of the scopes usable in a realm: the account's catalogue and the realm's own.
pub async fn names_in_realm<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    realm_id: &str,
) -> Result<Vec<String>, Error> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT name FROM scopes WHERE account_id = $1 AND (realm_id IS NULL OR realm_id = $2) ORDER BY name",
    )
    .bind(account_id)
    .bind(realm_id)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(name,)| name).collect())
}

/// The descriptions of the scopes usable in a realm that have one, by name; a realm's own scope
/// wins over the account's catalogue scope of the same name.
pub async fn descriptions_in_realm<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    realm_id: &str,
) -> Result<Vec<(String, String)>, Error> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT name, description FROM scopes WHERE account_id = $1 AND (realm_id IS NULL OR realm_id = $2) \
         AND description IS NOT NULL AND description <> '' ORDER BY realm_id IS NULL",
    )
    .bind(account_id)
    .bind(realm_id)
    .fetch_all(db)
    .await?;
    Ok(rows)
}

/// A page of the scopes an account defined for all its realms (`realm_id` `None`) or for one.
pub async fn page(
    store: &Store,
    account_id: &str,
    realm_id: Option<&str>,
    request: &PageRequest,
) -> Result<Page<Scope>, Error> {
    let scope = Rows::of("account_id", account_id).and("COALESCE(realm_id, '') =", realm_id.unwrap_or(""));
    page::fetch(store.pool(), &LISTING, &scope, request).await
}
