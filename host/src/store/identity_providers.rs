//! External identity providers of a realm: where people may sign in instead of with a password
//! here. The client secret is kept sealed (`client_secret`), its last four characters beside it.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::trail::{Place, Placed, ResourceKind};
use super::{Error, Status, Store, text_enum};
use crate::kernel::ids::{IdentityProviderId, RealmId};

text_enum! {
    /// How the service speaks to the provider.
    pub enum Protocol {
        /// OpenID Connect: found from its discovery address; the person is read from its ID token.
        OpenIdConnect,
        /// Plain OAuth 2.0 (GitHub-style): the person is read from its user-info address.
        OAuth2,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct IdentityProvider {
    pub realm_id: RealmId,
    pub id: IdentityProviderId,
    pub display_name: String,
    #[sqlx(try_from = "String")]
    pub protocol: Protocol,
    #[sqlx(try_from = "String")]
    pub status: Status,
    pub discovery_url: Option<String>,
    pub authorization_url: Option<String>,
    pub token_url: Option<String>,
    pub userinfo_url: Option<String>,
    pub client_id: String,
    /// Sealed with the service's secret key.
    pub client_secret: Option<String>,
    pub client_secret_last_four: Option<String>,
    #[sqlx(try_from = "super::JsonList")]
    pub scopes: Vec<String>,
    /// JSON object: the upstream claim read for each of the person's fields.
    pub claims: String,
    #[sqlx(try_from = "super::Flag")]
    pub trust_verified_email: bool,
    /// JSON list of `{claim, value, roles, groups}`.
    pub role_mappings: String,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Placed for IdentityProvider {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::IdentityProvider, &self.id, &self.realm_id)
    }
}

const COLUMNS: &str = "realm_id, id, display_name, protocol, status, discovery_url, authorization_url, token_url, \
     userinfo_url, client_id, client_secret, client_secret_last_four, scopes, claims, trust_verified_email, \
     role_mappings, created_at, updated_at";

pub const LISTING: Listing = Listing {
    table: "identity_providers",
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

/// Inserts the provider; `false` when its id is taken in the realm.
pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, provider: &IdentityProvider) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO identity_providers (realm_id, id, display_name, protocol, status, discovery_url, \
         authorization_url, token_url, userinfo_url, client_id, client_secret, client_secret_last_four, scopes, \
         claims, trust_verified_email, role_mappings, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) \
         ON CONFLICT DO NOTHING",
    )
    .bind(&provider.realm_id)
    .bind(&provider.id)
    .bind(&provider.display_name)
    .bind(provider.protocol.as_str())
    .bind(provider.status.as_str())
    .bind(&provider.discovery_url)
    .bind(&provider.authorization_url)
    .bind(&provider.token_url)
    .bind(&provider.userinfo_url)
    .bind(&provider.client_id)
    .bind(&provider.client_secret)
    .bind(&provider.client_secret_last_four)
    .bind(super::to_json_list(&provider.scopes))
    .bind(&provider.claims)
    .bind(provider.trust_verified_email)
    .bind(&provider.role_mappings)
    .bind(super::millis(provider.created_at))
    .bind(super::millis(provider.updated_at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Writes every field but the keys and the creation instant.
pub async fn update<'c>(db: impl Executor<'c, Database = Any>, provider: &IdentityProvider) -> Result<(), Error> {
    sqlx::query(
        "UPDATE identity_providers SET display_name = $3, status = $4, discovery_url = $5, authorization_url = $6, \
         token_url = $7, userinfo_url = $8, client_id = $9, client_secret = $10, client_secret_last_four = $11, \
         scopes = $12, claims = $13, trust_verified_email = $14, role_mappings = $15, updated_at = $16 \
         WHERE realm_id = $1 AND id = $2",
    )
    .bind(&provider.realm_id)
    .bind(&provider.id)
    .bind(&provider.display_name)
    .bind(provider.status.as_str())
    .bind(&provider.discovery_url)
    .bind(&provider.authorization_url)
    .bind(&provider.token_url)
    .bind(&provider.userinfo_url)
    .bind(&provider.client_id)
    .bind(&provider.client_secret)
    .bind(&provider.client_secret_last_four)
    .bind(super::to_json_list(&provider.scopes))
    .bind(&provider.claims)
    .bind(provider.trust_verified_email)
    .bind(&provider.role_mappings)
    .bind(super::millis(provider.updated_at))
    .execute(db)
    .await?;
    Ok(())
}

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    id: &str,
) -> Result<Option<IdentityProvider>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM identity_providers WHERE realm_id = $1 AND id = $2"
    )))
    .bind(realm_id)
    .bind(id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, realm_id: &str, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM identity_providers WHERE realm_id = $1 AND id = $2")
        .bind(realm_id)
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

pub async fn page(store: &Store, realm_id: &str, request: &PageRequest) -> Result<Page<IdentityProvider>, Error> {
    page::fetch(store.pool(), &LISTING, &Scope::of("realm_id", realm_id), request).await
}

/// Who offers providers: a client's login page, or an organization's people.
#[derive(Debug, Clone, Copy)]
pub enum Offer<'a> {
    Client { realm_id: &'a str, client_id: &'a str },
    Organization { realm_id: &'a str, organization_id: &'a str },
}

impl<'a> Offer<'a> {
    /// The realm whose providers are offered.
    pub fn realm_id(self) -> &'a str {
        match self {
            Offer::Client { realm_id, .. } | Offer::Organization { realm_id, .. } => realm_id,
        }
    }

    fn table(self) -> (&'static str, &'static str) {
        match self {
            Offer::Client { .. } => ("client_identity_providers", "client_id"),
            Offer::Organization { .. } => ("organization_identity_providers", "organization_id"),
        }
    }

    fn keys(self) -> (String, String) {
        match self {
            Offer::Client { realm_id, client_id } => (realm_id.to_owned(), client_id.to_owned()),
            Offer::Organization { realm_id, organization_id } => (realm_id.to_owned(), organization_id.to_owned()),
        }
    }
}

/// The ids of the providers offered, in order.
pub async fn offered<'c>(db: impl Executor<'c, Database = Any>, offer: Offer<'_>) -> Result<Vec<String>, Error> {
    let (table, owner) = offer.table();
    let (realm_id, owner_id) = offer.keys();
    let rows: Vec<(String,)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT provider_id FROM {table} WHERE realm_id = $1 AND {owner} = $2 ORDER BY position"
    )))
    .bind(realm_id)
    .bind(owner_id)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

/// Replaces the providers offered with `providers`, in their order.
pub async fn offer(tx: &mut super::Connection, offer: Offer<'_>, providers: &[String]) -> Result<(), Error> {
    let (table, owner) = offer.table();
    let (realm_id, owner_id) = offer.keys();
    sqlx::query(sqlx::AssertSqlSafe(format!("DELETE FROM {table} WHERE realm_id = $1 AND {owner} = $2")))
        .bind(&realm_id)
        .bind(&owner_id)
        .execute(&mut *tx)
        .await?;
    for (position, provider) in (0_i64..).zip(providers) {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO {table} (realm_id, {owner}, provider_id, position) VALUES ($1, $2, $3, $4)"
        )))
        .bind(&realm_id)
        .bind(&owner_id)
        .bind(provider)
        .bind(position)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// The Active providers `offer` offers, in its order.
pub async fn offered_active<'c>(
    db: impl Executor<'c, Database = Any>,
    offer: Offer<'_>,
) -> Result<Vec<IdentityProvider>, Error> {
    let (table, owner) = offer.table();
    let (realm_id, owner_id) = offer.keys();
    let columns: Vec<String> = COLUMNS.split(", ").map(|column| format!("p.{column}")).collect();
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {} FROM {table} o JOIN identity_providers p ON p.realm_id = o.realm_id AND p.id = o.provider_id \
         WHERE o.realm_id = $1 AND o.{owner} = $2 AND p.status = 'Active' ORDER BY o.position",
        columns.join(", ")
    )))
    .bind(realm_id)
    .bind(owner_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// The organization of the realm whose people have addresses at `domain`, when an Active one has it.
pub async fn organization_of_domain<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    domain: &str,
) -> Result<Option<String>, Error> {
    let found: Option<(String,)> = sqlx::query_as(
        "SELECT d.organization_id FROM organization_domains d JOIN organizations o ON o.id = d.organization_id \
         WHERE d.realm_id = $1 AND d.domain = $2 AND o.status = 'Active'",
    )
    .bind(realm_id)
    .bind(domain)
    .fetch_optional(db)
    .await?;
    Ok(found.map(|(id,)| id))
}

/// The person linked to the provider's `subject`, when one is.
pub async fn linked<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    provider_id: &str,
    subject: &str,
) -> Result<Option<String>, Error> {
    let found: Option<(String,)> = sqlx::query_as(
        "SELECT user_id FROM federated_identities WHERE realm_id = $1 AND provider_id = $2 AND subject = $3",
    )
    .bind(realm_id)
    .bind(provider_id)
    .bind(subject)
    .fetch_optional(db)
    .await?;
    Ok(found.map(|(id,)| id))
}

/// Links the provider's `subject` to the person; `false` when the subject is linked already.
pub async fn link<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    provider_id: &str,
    subject: &str,
    user_id: &str,
    at: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO federated_identities (realm_id, provider_id, subject, user_id, created_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
    )
    .bind(realm_id)
    .bind(provider_id)
    .bind(subject)
    .bind(user_id)
    .bind(super::millis(at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}
