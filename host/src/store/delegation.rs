//! Delegation grants (written once, never edited, only withdrawn) and the trail of token exchanges.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::text_enum;
use super::trail::ActorType;
use super::trail::{Place, Placed, ResourceKind};
use super::{Error, Store};
use crate::kernel::ids::{ClientId, ExchangeId, GrantId, OrganizationId, RealmId, UserId};

/// A grant as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DelegationGrant {
    pub id: GrantId,
    pub realm_id: RealmId,
    pub client_id: ClientId,
    pub subject_user_id: UserId,
    #[sqlx(try_from = "super::JsonList")]
    pub scopes: Vec<String>,
    #[sqlx(try_from = "super::JsonList")]
    pub allowed_resources: Vec<String>,
    pub max_depth: i64,
    pub organization_id: Option<OrganizationId>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub expires_at: Option<DateTime<Utc>>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "String")]
    pub created_by_type: ActorType,
    pub created_by_id: Option<String>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub issued_tokens_expire_at: Option<DateTime<Utc>>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub withdrawn_at: Option<DateTime<Utc>>,
    pub withdrawal_reason: Option<String>,
    pub withdrawn_by_type: Option<String>,
    pub withdrawn_by_id: Option<String>,
    /// The level of assurance (`acr`) the sign-in behind a subject token must have reached.
    pub minimum_acr: Option<String>,
}

impl Placed for DelegationGrant {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::DelegationGrant, &self.id, &self.realm_id)
    }
}

text_enum! {
    /// Where a grant stands: exchanges are possible only while it is Live.
    pub enum GrantState {
        Live,
        Expired,
        Withdrawn,
    }
}

impl DelegationGrant {
    pub fn state(&self, now: DateTime<Utc>) -> GrantState {
        if self.withdrawn_at.is_some() {
            GrantState::Withdrawn
        } else if self.expires_at.is_some_and(|until| until <= now) {
            GrantState::Expired
        } else {
            GrantState::Live
        }
    }
}

const COLUMNS: &str = "id, realm_id, client_id, subject_user_id, scopes, allowed_resources, max_depth, \
     organization_id, expires_at, created_at, created_by_type, created_by_id, issued_tokens_expire_at, \
     withdrawn_at, withdrawal_reason, withdrawn_by_type, withdrawn_by_id, minimum_acr";

pub const LISTING: Listing = Listing {
    table: "delegation_grants",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["client_id", "withdrawal_reason"],
    status: None,
    sortable: &[("createdAt", "created_at"), ("expiresAt", "expires_at"), ("clientId", "client_id")],
};

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, grant: &DelegationGrant) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO delegation_grants (id, realm_id, client_id, subject_user_id, scopes, allowed_resources, \
         max_depth, organization_id, expires_at, created_at, created_by_type, created_by_id, minimum_acr) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(&grant.id)
    .bind(&grant.realm_id)
    .bind(&grant.client_id)
    .bind(&grant.subject_user_id)
    .bind(super::to_json_list(&grant.scopes))
    .bind(super::to_json_list(&grant.allowed_resources))
    .bind(grant.max_depth)
    .bind(&grant.organization_id)
    .bind(super::millis(grant.expires_at))
    .bind(super::millis(grant.created_at))
    .bind(grant.created_by_type.as_str())
    .bind(&grant.created_by_id)
    .bind(&grant.minimum_acr)
    .execute(db)
    .await?;
    Ok(())
}

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    id: &str,
) -> Result<Option<DelegationGrant>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM delegation_grants WHERE realm_id = $1 AND id = $2"
    )))
    .bind(realm_id)
    .bind(id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// The grants not withdrawn for this client and this person, oldest first.
pub async fn unwithdrawn_for<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    client_id: &str,
    subject_user_id: &str,
) -> Result<Vec<DelegationGrant>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM delegation_grants WHERE realm_id = $1 AND client_id = $2 AND subject_user_id = $3 \
         AND withdrawn_at IS NULL ORDER BY created_at, id"
    )))
    .bind(realm_id)
    .bind(client_id)
    .bind(subject_user_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// Who withdraws a grant, and why.
#[derive(Debug, Clone)]
pub struct Withdrawal<'a> {
    pub reason: &'a str,
    pub by_type: ActorType,
    pub by_id: Option<&'a str>,
    pub at: DateTime<Utc>,
}

/// Withdraws the grant if it is not withdrawn yet, returning it as it now stands; `None` when it
/// already was. Exchanges committing concurrently either committed first (their tokens' expiry is
/// in the returned row) or find the grant withdrawn.
pub async fn withdraw<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    withdrawal: &Withdrawal<'_>,
) -> Result<Option<DelegationGrant>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "UPDATE delegation_grants SET withdrawn_at = $2, withdrawal_reason = $3, withdrawn_by_type = $4, \
         withdrawn_by_id = $5 WHERE id = $1 AND withdrawn_at IS NULL RETURNING {COLUMNS}"
    )))
    .bind(id)
    .bind(super::millis(withdrawal.at))
    .bind(withdrawal.reason)
    .bind(withdrawal.by_type.as_str())
    .bind(withdrawal.by_id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Records that tokens issued under the grant live until `expires_at`, if it is still not
/// withdrawn: `false` when it was withdrawn (the exchange must not answer).
pub async fn record_issued<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    expires_at: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE delegation_grants SET issued_tokens_expire_at = CASE \
         WHEN issued_tokens_expire_at IS NULL OR issued_tokens_expire_at < $2 THEN $2 \
         ELSE issued_tokens_expire_at END WHERE id = $1 AND withdrawn_at IS NULL",
    )
    .bind(id)
    .bind(super::millis(expires_at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

text_enum! {
    pub enum ExchangeOutcome {
        Granted,
        Refused,
    }
}

/// One token exchange, granted or refused, as the trail keeps it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Exchange {
    pub id: ExchangeId,
    pub realm_id: RealmId,
    pub client_id: ClientId,
    pub subject_user_id: Option<UserId>,
    pub grant_id: Option<GrantId>,
    #[sqlx(try_from = "String")]
    pub outcome: ExchangeOutcome,
    pub error_code: Option<String>,
    #[sqlx(try_from = "super::JsonList")]
    pub scopes: Vec<String>,
    pub resource: Option<String>,
    pub depth: Option<i64>,
    pub token_id: Option<String>,
    pub ip_address: String,
    #[sqlx(try_from = "super::Millis")]
    pub occurred_at: DateTime<Utc>,
    /// The connection provider whose token was asked for, for an exchange for a connected account.
    pub connection_provider: Option<String>,
}

const EXCHANGE_COLUMNS: &str = "id, realm_id, client_id, subject_user_id, grant_id, outcome, error_code, scopes, \
     resource, depth, token_id, ip_address, occurred_at, connection_provider";
const EXCHANGE_FIELDS: usize = 14;

pub const EXCHANGE_LISTING: Listing = Listing {
    table: "delegation_exchanges",
    columns: EXCHANGE_COLUMNS,
    created: "occurred_at",
    tie_breaker: "id",
    search: &["client_id", "error_code"],
    status: Some("outcome"),
    sortable: &[("occurredAt", "occurred_at")],
};

/// Inserts trail rows in one statement.
pub async fn insert_exchanges<'c>(db: impl Executor<'c, Database = Any>, rows: &[&Exchange]) -> Result<(), Error> {
    let sql = format!(
        "INSERT INTO delegation_exchanges ({EXCHANGE_COLUMNS}) VALUES {}",
        super::values_placeholders(rows.len(), EXCHANGE_FIELDS)
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for row in rows {
        query = query
            .bind(row.id.clone())
            .bind(row.realm_id.clone())
            .bind(row.client_id.clone())
            .bind(row.subject_user_id.clone())
            .bind(row.grant_id.clone())
            .bind(row.outcome.as_str())
            .bind(row.error_code.clone())
            .bind(super::to_json_list(&row.scopes))
            .bind(row.resource.clone())
            .bind(row.depth)
            .bind(row.token_id.clone())
            .bind(row.ip_address.clone())
            .bind(super::millis(row.occurred_at))
            .bind(row.connection_provider.clone());
    }
    query.execute(db).await?;
    Ok(())
}

/// Which grants of a realm a page shows.
#[derive(Debug, Clone, Default)]
pub struct GrantFilter<'a> {
    pub client_id: Option<&'a str>,
    pub subject_user_id: Option<&'a str>,
    /// Grants in this state at the page's `now`.
    pub state: Option<GrantState>,
}

/// A page of a realm's grants.
pub async fn page(
    store: &Store,
    realm_id: &str,
    now: DateTime<Utc>,
    filter: GrantFilter<'_>,
    request: &PageRequest,
) -> Result<Page<DelegationGrant>, Error> {
    let scope = Scope::of("realm_id", realm_id)
        .and_given("client_id", filter.client_id)
        .and_given("subject_user_id", filter.subject_user_id);
    // A grant without an expiry never expires.
    let scope = match filter.state {
        None => scope,
        Some(GrantState::Live) => {
            scope.and("COALESCE(withdrawn_at, 0) =", 0).and("COALESCE(expires_at, 9223372036854775807) >", now)
        }
        Some(GrantState::Expired) => {
            scope.and("COALESCE(withdrawn_at, 0) =", 0).and("COALESCE(expires_at, 9223372036854775807) <=", now)
        }
        Some(GrantState::Withdrawn) => scope.and("COALESCE(withdrawn_at, 0) >", 0),
    };
    page::fetch(store.pool(), &LISTING, &scope, request).await
}

/// Which exchanges of a realm a page shows.
#[derive(Debug, Clone, Default)]
pub struct ExchangeFilter<'a> {
    pub client_id: Option<&'a str>,
    pub subject_user_id: Option<&'a str>,
    pub grant_id: Option<&'a str>,
}

/// A page of a realm's exchange trail.
pub async fn exchange_page(
    store: &Store,
    realm_id: &str,
    filter: ExchangeFilter<'_>,
    request: &PageRequest,
) -> Result<Page<Exchange>, Error> {
    let scope = Scope::of("realm_id", realm_id)
        .and_given("client_id", filter.client_id)
        .and_given("subject_user_id", filter.subject_user_id)
        .and_given("grant_id", filter.grant_id);
    page::fetch(store.pool(), &EXCHANGE_LISTING, &scope, request).await
}
