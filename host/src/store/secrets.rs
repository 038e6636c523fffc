//! API secrets of an account (the credentials of the admin API). Values are stored as keyed hashes.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::text_enum;
use super::trail::{Place, Placed, ResourceKind};
use super::{Error, Store};
use crate::kernel::crypto::hash_matches_rotated;
use crate::kernel::ids::{AccountId, CredentialId, UserId};

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

/// Prefix of API key values.
pub const API_KEY_PREFIX: &str = "cstl_key_";
/// Prefix of personal access token values (sent like API keys, in `x-api-key`).
pub const PERSONAL_ACCESS_TOKEN_PREFIX: &str = "cstl_pat_";
/// Prefix of account client secrets (exchanged for bearer tokens at the platform realm).
pub const ACCOUNT_CLIENT_SECRET_PREFIX: &str = "cstl_acs_";

impl SecretType {
    /// The prefix of this kind's values, which tells a leaked value's kind at a glance.
    pub fn value_prefix(self) -> &'static str {
        match self {
            Self::ClientSecret => ACCOUNT_CLIENT_SECRET_PREFIX,
            Self::ApiKey => API_KEY_PREFIX,
            Self::PersonalAccessToken => PERSONAL_ACCESS_TOKEN_PREFIX,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Secret {
    pub id: CredentialId,
    pub account_id: AccountId,
    #[sqlx(try_from = "String")]
    pub secret_type: SecretType,
    pub name: String,
    pub value_hash: String,
    pub value_last_four: String,
    /// Account role names.
    #[sqlx(try_from = "super::JsonList")]
    pub roles: Vec<String>,
    /// Permission names; `None` means no bound beyond the roles.
    #[sqlx(try_from = "super::OptionalJsonList")]
    pub scopes: Option<Vec<String>>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub expires_at: Option<DateTime<Utc>>,
    pub acts_for_user_id: Option<UserId>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
    /// When the value last changed; none before the first rotation.
    #[sqlx(try_from = "super::OptionalMillis")]
    pub rotated_at: Option<DateTime<Utc>>,
    /// The keyed hash of the value before the last rotation, while it may still authenticate.
    pub previous_value_hash: Option<String>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub previous_value_valid_until: Option<DateTime<Utc>>,
    /// Tokens issued before this instant are revoked.
    #[sqlx(try_from = "super::OptionalMillis")]
    pub issued_tokens_revoked_before: Option<DateTime<Utc>>,
}

impl Placed for Secret {
    fn place(&self) -> Place {
        Place::outside_realms(ResourceKind::Secret, &self.id)
    }
}

impl Secret {
    /// Whether the value with this keyed hash authenticates now: the current value, or the previous
    /// one within its overlap.
    pub fn accepts(&self, value_hash: &str, now: DateTime<Utc>) -> bool {
        hash_matches_rotated(
            value_hash,
            Some(&self.value_hash),
            self.previous_value_hash.as_deref(),
            self.previous_value_valid_until,
            now,
        )
    }

    /// Whether a token issued at `issued_at` was revoked by a compromise rotation.
    pub fn revoked_token(&self, issued_at: DateTime<Utc>) -> bool {
        self.issued_tokens_revoked_before.is_some_and(|before| issued_at < before)
    }
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
     acts_for_user_id, created_at, updated_at, rotated_at, previous_value_hash, previous_value_valid_until, \
     issued_tokens_revoked_before";

/// Every account's secrets that expire after `from` and at `to` or before, soonest first.
pub async fn expiring_between<'c>(
    db: impl Executor<'c, Database = Any>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<Vec<Secret>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM secrets WHERE expires_at > $1 AND expires_at <= $2 ORDER BY expires_at, id"
    )))
    .bind(super::millis(from))
    .bind(super::millis(to))
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// The columns of a secret and its person, for a query of `secrets s LEFT JOIN users u`.
const CREDENTIAL_COLUMNS: &str = "s.id, s.account_id, s.secret_type, s.name, s.value_hash, s.value_last_four, \
     s.roles, s.scopes, s.expires_at, s.acts_for_user_id, s.created_at, s.updated_at, s.rotated_at, \
     s.previous_value_hash, s.previous_value_valid_until, s.issued_tokens_revoked_before, \
     u.username AS acts_for_username, u.email AS acts_for_email";

pub const LISTING: Listing = Listing {
    table: "secrets",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["name", "value_last_four"],
    status: Some("secret_type"),
    sortable: &[("name", "name"), ("expiresAt", "expires_at"), ("createdAt", "created_at")],
};

/// The secret whose current value, or previous value, has this keyed hash; the caller checks
/// which one and whether the previous one still authenticates ([`Secret::accepts`]).
pub async fn find_by_hash<'c>(
    db: impl Executor<'c, Database = Any>,
    value_hash: &str,
) -> Result<Option<Credential>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {CREDENTIAL_COLUMNS} FROM secrets s LEFT JOIN users u ON u.id = s.acts_for_user_id \
         WHERE s.value_hash = $1 OR s.previous_value_hash = $1"
    )))
    .bind(value_hash)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// The secret with this id, of any account, with the person it acts for.
pub async fn find_credential<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<Option<Credential>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {CREDENTIAL_COLUMNS} FROM secrets s LEFT JOIN users u ON u.id = s.acts_for_user_id WHERE s.id = $1"
    )))
    .bind(id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    id: &str,
) -> Result<Option<Secret>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM secrets WHERE account_id = $1 AND id = $2")))
        .bind(account_id)
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, secret: &Secret) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO secrets (id, account_id, secret_type, name, value_hash, value_last_four, roles, scopes, \
         expires_at, acts_for_user_id, created_at, updated_at, rotated_at, previous_value_hash, \
         previous_value_valid_until, issued_tokens_revoked_before) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
    )
    .bind(&secret.id)
    .bind(&secret.account_id)
    .bind(secret.secret_type.as_str())
    .bind(&secret.name)
    .bind(&secret.value_hash)
    .bind(&secret.value_last_four)
    .bind(super::to_json_list(&secret.roles))
    .bind(secret.scopes.as_deref().map(super::to_json_list))
    .bind(super::millis(secret.expires_at))
    .bind(&secret.acts_for_user_id)
    .bind(super::millis(secret.created_at))
    .bind(super::millis(secret.updated_at))
    .bind(super::millis(secret.rotated_at))
    .bind(&secret.previous_value_hash)
    .bind(super::millis(secret.previous_value_valid_until))
    .bind(super::millis(secret.issued_tokens_revoked_before))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// Writes a rotated value: the new hash and last four, and what became of the previous value.
pub async fn rotate<'c>(db: impl Executor<'c, Database = Any>, secret: &Secret) -> Result<(), Error> {
    sqlx::query(
        "UPDATE secrets SET value_hash = $3, value_last_four = $4, rotated_at = $5, previous_value_hash = $6, \
         previous_value_valid_until = $7, issued_tokens_revoked_before = $8, updated_at = $9 \
         WHERE account_id = $1 AND id = $2",
    )
    .bind(&secret.account_id)
    .bind(&secret.id)
    .bind(&secret.value_hash)
    .bind(&secret.value_last_four)
    .bind(super::millis(secret.rotated_at))
    .bind(&secret.previous_value_hash)
    .bind(super::millis(secret.previous_value_valid_until))
    .bind(super::millis(secret.issued_tokens_revoked_before))
    .bind(super::millis(secret.updated_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, account_id: &str, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM secrets WHERE account_id = $1 AND id = $2")
        .bind(account_id)
        .bind(id)
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// A page of an account's API secrets.
pub async fn page(store: &Store, account_id: &str, request: &PageRequest) -> Result<Page<Secret>, Error> {
    page::fetch(store.pool(), &LISTING, &Scope::of("account_id", account_id), request).await
}
