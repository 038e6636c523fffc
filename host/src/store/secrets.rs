//! API secrets of an account (the credentials of the admin API). Values are stored as keyed hashes.

use sqlx::{Any, Executor};

use super::page::Listing;
use super::text_enum;

text_enum! {
    pub enum SecretType {
        /// Sent as `x-api-key`.
        ApiKey,
        /// Acts for the person who made it.
        PersonalAccessToken,
        /// Exchanged at the platform realm's token endpoint for a bearer token.
        ClientSecret,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Secret {
    pub id: String,
    pub account_id: String,
    #[sqlx(try_from = "String")]
    pub secret_type: SecretType,
    pub name: String,
    pub value_hash: String,
    pub value_last_four: String,
    /// JSON list of account role names.
    pub roles: String,
    /// JSON list of permission names; `None` means no bound beyond the roles.
    pub scopes: Option<String>,
    pub expires_at: Option<i64>,
    pub acts_for_user_id: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A secret found by its value, with the person it acts for.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Credential {
    #[sqlx(flatten)]
    pub secret: Secret,
    pub acts_for_username: Option<String>,
    pub acts_for_email: Option<String>,
}

const COLUMNS: &str = "id, account_id, secret_type, name, value_hash, value_last_four, roles, scopes, expires_at, \
     acts_for_user_id, created_at, updated_at";

pub const LISTING: Listing = Listing {
    table: "secrets",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["name", "value_last_four"],
    status: Some("secret_type"),
    sortable: &[("name", "name"), ("expiresAt", "expires_at"), ("createdAt", "created_at")],
};

pub async fn find_by_hash<'c>(
    db: impl Executor<'c, Database = Any>,
    value_hash: &str,
) -> Result<Option<Credential>, sqlx::Error> {
    sqlx::query_as(
        "SELECT s.id, s.account_id, s.secret_type, s.name, s.value_hash, s.value_last_four, s.roles, s.scopes, \
         s.expires_at, s.acts_for_user_id, s.created_at, s.updated_at, \
         u.username AS acts_for_username, u.email AS acts_for_email \
         FROM secrets s LEFT JOIN users u ON u.id = s.acts_for_user_id WHERE s.value_hash = $1",
    )
    .bind(value_hash)
    .fetch_optional(db)
    .await
}

/// The secret with this id, of any account, with the person it acts for.
pub async fn find_credential<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
) -> Result<Option<Credential>, sqlx::Error> {
    sqlx::query_as(
        "SELECT s.id, s.account_id, s.secret_type, s.name, s.value_hash, s.value_last_four, s.roles, s.scopes, \
         s.expires_at, s.acts_for_user_id, s.created_at, s.updated_at, \
         u.username AS acts_for_username, u.email AS acts_for_email \
         FROM secrets s LEFT JOIN users u ON u.id = s.acts_for_user_id WHERE s.id = $1",
    )
    .bind(id)
    .fetch_optional(db)
    .await
}

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    id: &str,
) -> Result<Option<Secret>, sqlx::Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM secrets WHERE account_id = $1 AND id = $2")))
        .bind(account_id)
        .bind(id)
        .fetch_optional(db)
        .await
}

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, secret: &Secret) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO secrets (id, account_id, secret_type, name, value_hash, value_last_four, roles, scopes, \
         expires_at, acts_for_user_id, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(&secret.id)
    .bind(&secret.account_id)
    .bind(secret.secret_type.as_str())
    .bind(&secret.name)
    .bind(&secret.value_hash)
    .bind(&secret.value_last_four)
    .bind(&secret.roles)
    .bind(&secret.scopes)
    .bind(secret.expires_at)
    .bind(&secret.acts_for_user_id)
    .bind(secret.created_at)
    .bind(secret.updated_at)
    .execute(db)
    .await
    .map(|_| ())
}

pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, account_id: &str, id: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM secrets WHERE account_id = $1 AND id = $2")
        .bind(account_id)
        .bind(id)
        .execute(db)
        .await
        .map(|_| ())
}
