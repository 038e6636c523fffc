//! Accounts whose password attack protection found exposed (a credential-stuffing list held it):
//! one row per account, by its latest exposure, resolved when the password changes.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest};
use super::threats::ThreatFilter;
use super::{Error, Store};
use crate::kernel::ids::{AccountId, ClientId, IncidentId, RealmId, UserId};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Exposure {
    pub user_id: UserId,
    pub account_id: AccountId,
    pub realm_id: RealmId,
    pub client_id: Option<ClientId>,
    pub incident_id: IncidentId,
    #[sqlx(try_from = "super::Millis")]
    pub exposed_at: DateTime<Utc>,
    pub exposures: i64,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub resolved_at: Option<DateTime<Utc>>,
}

const EXPOSURE_COLUMNS: &str =
    "user_id, account_id, realm_id, client_id, incident_id, exposed_at, exposures, resolved_at";

pub const EXPOSURE_LISTING: Listing = Listing {
    table: "threat_exposures",
    columns: EXPOSURE_COLUMNS,
    created: "exposed_at",
    tie_breaker: "user_id",
    search: &[],
    status: None,
    sortable: &[("exposedAt", "exposed_at"), ("exposures", "exposures")],
};

/// Records an exposure of the account's password: a first row, or the latest replacing the one
/// before with the count raised.
pub async fn expose<'c>(db: impl Executor<'c, Database = Any>, e: &Exposure) -> Result<(), Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO threat_exposures ({EXPOSURE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, 1, NULL) \
         ON CONFLICT (user_id) DO UPDATE SET client_id = excluded.client_id, incident_id = excluded.incident_id, \
         exposed_at = excluded.exposed_at, exposures = threat_exposures.exposures + 1, resolved_at = NULL"
    )))
    .bind(&e.user_id)
    .bind(&e.account_id)
    .bind(&e.realm_id)
    .bind(&e.client_id)
    .bind(&e.incident_id)
    .bind(super::millis(e.exposed_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

pub async fn exposure_of<'c>(db: impl Executor<'c, Database = Any>, user_id: &str) -> Result<Option<Exposure>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {EXPOSURE_COLUMNS} FROM threat_exposures WHERE user_id = $1")))
        .bind(user_id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// The password of the account changed: its exposure, and the exposed-password measures on it,
/// are resolved.
pub async fn password_changed(tx: &mut super::Connection, user_id: &str, now: DateTime<Utc>) -> Result<(), Error> {
    sqlx::query("UPDATE threat_exposures SET resolved_at = $2 WHERE user_id = $1 AND resolved_at IS NULL")
        .bind(user_id)
        .bind(super::millis(now))
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "UPDATE threat_measures SET resolved_at = $2 WHERE target_user_id = $1 AND kind = 'PasswordExposed' \
         AND resolved_at IS NULL",
    )
    .bind(user_id)
    .bind(super::millis(now))
    .execute(&mut *tx)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// A page of exposures, optionally only those not resolved by a password change.
pub async fn exposure_page(
    store: &Store,
    filter: ThreatFilter<'_>,
    unresolved_only: bool,
    request: &PageRequest,
) -> Result<Page<Exposure>, Error> {
    let scope = filter.scope();
    let scope = if unresolved_only { scope.and("COALESCE(resolved_at, 0) =", 0) } else { scope };
    page::fetch(store.pool(), &EXPOSURE_LISTING, &scope, request).await
}
