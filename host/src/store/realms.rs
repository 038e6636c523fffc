//! Realms: the tenancy unit for end users.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::trail::{Place, Placed, ResourceKind};
use super::{Error, Store};
use super::{Status, text_enum};
use crate::kernel::ids::{AccountId, RealmId};

/// Lockout and password settings, with their documented defaults.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, sqlx::FromRow)]
pub struct RealmSettings {
    /// Failures from one unapproved address within an hour before it is locked out of an account.
    pub max_failed_attempts: i64,
    /// How long such a lock lasts.
    pub lockout_duration_minutes: i64,
    /// Lockout Status: whether the realm lockout applies (to new accounts too).
    #[sqlx(try_from = "super::Flag")]
    pub lockout_enabled: bool,
    /// Minimum Length of passwords.
    pub minimum_password_length: i64,
    /// Refuse passwords found in the breached-password list.
    #[sqlx(try_from = "super::Flag")]
    pub block_breached_passwords: bool,
    /// Whether the login page lets people create their own account.
    #[sqlx(try_from = "super::Flag")]
    pub self_sign_up: bool,
    /// Whether people signing up may do so with a passkey and no password.
    #[sqlx(try_from = "super::Flag")]
    pub passkey_sign_up: bool,
    /// Whether clients may register themselves (RFC 7591), and with what.
    #[sqlx(try_from = "String")]
    pub client_registration: ClientRegistration,
    /// The most scopes a self-registered client may be allowed.
    #[sqlx(try_from = "super::JsonList")]
    pub registration_scopes: Vec<String>,
    /// Whether a `client_id` that is the https address of a client metadata document is taken.
    #[sqlx(try_from = "super::Flag")]
    pub client_id_metadata_documents: bool,
    /// The hosts such documents may be served from: names, `*.domain` patterns, or `*`.
    #[sqlx(try_from = "super::JsonList")]
    pub metadata_document_hosts: Vec<String>,
    /// "Let the AI advisor analyse this realm": the incident analyst reads its incidents.
    #[sqlx(try_from = "super::Flag")]
    pub ai_advisor: bool,
    /// Clients anyone may add within a minute: registrations and metadata documents together.
    pub self_registered_clients_per_minute: i64,
    /// Clients anyone may add in all, counted the same way.
    pub max_self_registered_clients: i64,
    /// When a person's sign-in asks for a second factor.
    #[sqlx(try_from = "String")]
    pub second_factor: SecondFactor,
}

text_enum! {
    /// When a person's sign-in asks for a second factor, the weakest rule first.
    pub enum SecondFactor {
        /// The password (or an upstream provider) alone signs in, whatever the person enrolled.
        Never,
        /// A person who enrolled a second factor (an authenticator app, a passkey, a phone) is
        /// asked for it (the default).
        WhenEnrolled,
        /// Everyone: a person with none enrols one (an app or a passkey) before the sign-in ends.
        Always,
        /// A passkey: a person without one registers one before the sign-in ends, and neither an
        /// app's code nor a phone is enough.
        PhishingResistant,
    }
}

impl SecondFactor {
    /// The stricter of two rules: a client may ask more than its realm, never less.
    pub fn strictest(self, other: Option<Self>) -> Self {
        let rank = |rule: Self| Self::NAMES.iter().position(|(_, named)| *named == rule);
        match other {
            Some(other) if rank(other) > rank(self) => other,
            _ => self,
        }
    }
}

impl From<super::OptionalText> for Option<SecondFactor> {
    fn from(text: super::OptionalText) -> Self {
        text.0.and_then(|name| SecondFactor::try_from(name).ok())
    }
}

text_enum! {
    /// Who may register a client at the realm's registration endpoint.
    pub enum ClientRegistration {
        /// Nobody: clients are created through the admin API only (the default).
        Closed,
        /// Anyone, within the per-source rate limit.
        Open,
        /// Whoever presents an initial access token an administrator created.
        InitialAccessToken,
    }
}

impl RealmSettings {
    pub const MAX_FAILED_ATTEMPTS: (i64, i64) = (1, 100);
    pub const LOCKOUT_DURATION_MINUTES: (i64, i64) = (1, 1440);
    pub const MINIMUM_PASSWORD_LENGTH: (i64, i64) = (8, 64);
    pub const SELF_REGISTERED_CLIENTS_PER_MINUTE: (i64, i64) = (1, 10_000);
    pub const MAX_SELF_REGISTERED_CLIENTS: (i64, i64) = (1, 1_000_000);
}

impl Default for RealmSettings {
    fn default() -> Self {
        Self {
            max_failed_attempts: 5,
            lockout_duration_minutes: 15,
            lockout_enabled: true,
            minimum_password_length: 8,
            block_breached_passwords: false,
            self_sign_up: false,
            passkey_sign_up: false,
            client_registration: ClientRegistration::Closed,
            registration_scopes: Vec::new(),
            client_id_metadata_documents: false,
            metadata_document_hosts: Vec::new(),
            ai_advisor: false,
            self_registered_clients_per_minute: 60,
            max_self_registered_clients: 10_000,
            second_factor: SecondFactor::WhenEnrolled,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Realm {
    pub id: RealmId,
    pub account_id: AccountId,
    pub display_name: String,
    #[sqlx(try_from = "String")]
    pub status: Status,
    #[sqlx(flatten)]
    pub settings: RealmSettings,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Placed for Realm {
    fn place(&self) -> Place {
        Place {
            kind: ResourceKind::Realm,
            id: self.id.to_string(),
            parent: None,
            realm: Some(self.id.to_string()),
            client: None,
        }
    }
}

const COLUMNS: &str = "id, account_id, display_name, status, max_failed_attempts, lockout_duration_minutes, \
     lockout_enabled, minimum_password_length, block_breached_passwords, self_sign_up, passkey_sign_up, client_registration, registration_scopes, client_id_metadata_documents, metadata_document_hosts, \
     ai_advisor, self_registered_clients_per_minute, max_self_registered_clients, second_factor, created_at, \
     updated_at";

pub const LISTING: Listing = Listing {
    table: "realms",
    columns: COLUMNS,
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

pub async fn find<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<Option<Realm>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM realms WHERE id = $1")))
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// Inserts the realm; `false` when the id is taken.
pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, realm: &Realm) -> Result<bool, Error> {
    let s = &realm.settings;
    let done = sqlx::query(
        "INSERT INTO realms (id, account_id, display_name, status, max_failed_attempts, lockout_duration_minutes, \
         lockout_enabled, minimum_password_length, block_breached_passwords, self_sign_up, created_at, updated_at, \
         client_registration, registration_scopes, client_id_metadata_documents, metadata_document_hosts, ai_advisor, \
         self_registered_clients_per_minute, max_self_registered_clients, passkey_sign_up, second_factor) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21) \
         ON CONFLICT (id) DO NOTHING",
    )
    .bind(&realm.id)
    .bind(&realm.account_id)
    .bind(&realm.display_name)
    .bind(realm.status.as_str())
    .bind(s.max_failed_attempts)
    .bind(s.lockout_duration_minutes)
    .bind(s.lockout_enabled)
    .bind(s.minimum_password_length)
    .bind(s.block_breached_passwords)
    .bind(s.self_sign_up)
    .bind(super::millis(realm.created_at))
    .bind(super::millis(realm.updated_at))
    .bind(s.client_registration.as_str())
    .bind(super::to_json_list(&s.registration_scopes))
    .bind(s.client_id_metadata_documents)
    .bind(super::to_json_list(&s.metadata_document_hosts))
    .bind(s.ai_advisor)
    .bind(s.self_registered_clients_per_minute)
    .bind(s.max_self_registered_clients)
    .bind(s.passkey_sign_up)
    .bind(s.second_factor.as_str())
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn update<'c>(db: impl Executor<'c, Database = Any>, realm: &Realm) -> Result<(), Error> {
    let s = &realm.settings;
    sqlx::query(
        "UPDATE realms SET display_name = $2, status = $3, max_failed_attempts = $4, lockout_duration_minutes = $5, \
         lockout_enabled = $6, minimum_password_length = $7, block_breached_passwords = $8, self_sign_up = $9, \
         updated_at = $10, client_registration = $11, registration_scopes = $12, \
         client_id_metadata_documents = $13, metadata_document_hosts = $14, ai_advisor = $15, \
         self_registered_clients_per_minute = $16, max_self_registered_clients = $17, passkey_sign_up = $18, \
         second_factor = $19 WHERE id = $1",
    )
    .bind(&realm.id)
    .bind(&realm.display_name)
    .bind(realm.status.as_str())
    .bind(s.max_failed_attempts)
    .bind(s.lockout_duration_minutes)
    .bind(s.lockout_enabled)
    .bind(s.minimum_password_length)
    .bind(s.block_breached_passwords)
    .bind(s.self_sign_up)
    .bind(super::millis(realm.updated_at))
    .bind(s.client_registration.as_str())
    .bind(super::to_json_list(&s.registration_scopes))
    .bind(s.client_id_metadata_documents)
    .bind(super::to_json_list(&s.metadata_document_hosts))
    .bind(s.ai_advisor)
    .bind(s.self_registered_clients_per_minute)
    .bind(s.max_self_registered_clients)
    .bind(s.passkey_sign_up)
    .bind(s.second_factor.as_str())
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// Deletes the realm; its clients, people and their memberships go with it.
pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM realms WHERE id = $1").bind(id).execute(db).await.map(|_| ()).map_err(Error::from)
}

/// A page of an account's realms.
pub async fn page(store: &Store, account_id: &str, request: &PageRequest) -> Result<Page<Realm>, Error> {
    page::fetch(store.pool(), &LISTING, &Scope::of("account_id", account_id), request).await
}
