//! Custom account roles: a name and the permissions it grants, beside the built-in roles.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::trail::{Place, Placed, ResourceKind};
use super::{Error, Store};
use crate::kernel::ids::{AccountId, AccountRoleId};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct AccountRole {
    pub id: AccountRoleId,
    pub account_id: AccountId,
    pub name: String,
    pub description: Option<String>,
    /// Permission names.
    #[sqlx(try_from = "super::JsonList")]
    pub permissions: Vec<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Placed for AccountRole {
    fn place(&self) -> Place {
        Place::outside_realms(ResourceKind::AccountRole, &self.id)
    }
}

const COLUMNS: &str = "id, account_id, name, description, permissions, created_at, updated_at";

pub const LISTING: Listing = Listing {
    table: "account_roles",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["name", "description"],
    status: None,
    sortable: &[("name", "name"), ("updatedAt", "updated_at"), ("createdAt", "created_at")],
};

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    id: &str,
) -> Result<Option<AccountRole>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM account_roles WHERE account_id = $1 AND id = $2"
    )))
    .bind(account_id)
    .bind(id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Every custom role of an account, by name (accounts have few).
pub async fn all_of_account<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
) -> Result<Vec<AccountRole>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM account_roles WHERE account_id = $1")))
        .bind(account_id)
        .fetch_all(db)
        .await
        .map_err(Error::from)
}

/// Inserts the role; `false` when the account has a role of that name.
pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, role: &AccountRole) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO account_roles (id, account_id, name, description, permissions, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (account_id, name) DO NOTHING",
    )
    .bind(&role.id)
    .bind(&role.account_id)
    .bind(&role.name)
    .bind(&role.description)
    .bind(super::to_json_list(&role.permissions))
    .bind(super::millis(role.created_at))
    .bind(super::millis(role.updated_at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn update<'c>(db: impl Executor<'c, Database = Any>, role: &AccountRole) -> Result<(), Error> {
    sqlx::query("UPDATE account_roles SET description = $3, permissions = $4, updated_at = $5 WHERE account_id = $1 AND id = $2")
        .bind(&role.account_id)
        .bind(&role.id)
        .bind(&role.description)
        .bind(super::to_json_list(&role.permissions))
        .bind(super::millis(role.updated_at))
        .execute(db)
        .await
        .map(|_| ()).map_err(Error::from)
}

pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, account_id: &str, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM account_roles WHERE account_id = $1 AND id = $2")
        .bind(account_id)
        .bind(id)
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// A page of an account's roles.
pub async fn page(store: &Store, account_id: &str, request: &PageRequest) -> Result<Page<AccountRole>, Error> {
    page::fetch(store.pool(), &LISTING, &Scope::of("account_id", account_id), request).await
}
