//! Suspensions of a person's use of one client. Their status is read from their instants; the
//! rows record what was decided and when its end was announced.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::text_enum;
use super::trail::{Place, Placed, ResourceKind};
use super::{Error, Store};
use crate::kernel::ids::{AccountId, ClientId, RealmId, SuspensionId, UserId};

text_enum! {
    /// What a suspension takes away while it is Active.
    pub enum SuspensionLevel {
        /// New tokens of the person at the client lack the restricted scopes and the revoked roles;
        /// sign-in goes on.
        Restricted,
        /// No sign-in and no token of the person at the client; the tokens already issued answer
        /// `active: false` at introspection.
        Full,
    }
}

text_enum! {
    /// Where a suspension stands, read from its instants.
    pub enum SuspensionStatus {
        /// Written, starting later.
        Scheduled,
        Active,
        /// Ran out at its end.
        Ended,
        /// Lifted by an administrator before it ran out.
        Lifted,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Suspension {
    pub id: SuspensionId,
    pub account_id: AccountId,
    pub realm_id: RealmId,
    pub client_id: ClientId,
    pub user_id: UserId,
    #[sqlx(try_from = "String")]
    pub level: SuspensionLevel,
    pub reason: Option<String>,
    #[sqlx(try_from = "super::Millis")]
    pub starts_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub ends_at: Option<DateTime<Utc>>,
    #[sqlx(try_from = "super::JsonList")]
    pub restricted_scopes: Vec<String>,
    #[sqlx(try_from = "super::Flag")]
    pub revokes_every_role: bool,
    #[sqlx(try_from = "super::JsonList")]
    pub revoked_role_ids: Vec<String>,
    #[sqlx(try_from = "super::Flag")]
    pub terminates_sessions: bool,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub sessions_terminated_at: Option<DateTime<Utc>>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub lifted_at: Option<DateTime<Utc>>,
    /// When its end was announced: at the lift, or by the suspensions job once `ends_at` passed.
    #[sqlx(try_from = "super::OptionalMillis")]
    pub ended_at: Option<DateTime<Utc>>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Suspension {
    pub fn status(&self, now: DateTime<Utc>) -> SuspensionStatus {
        if self.lifted_at.is_some() {
            SuspensionStatus::Lifted
        } else if self.ends_at.is_some_and(|end| end <= now) {
            SuspensionStatus::Ended
        } else if self.starts_at > now {
            SuspensionStatus::Scheduled
        } else {
            SuspensionStatus::Active
        }
    }

    /// Whether it takes effect at `now`.
    pub fn in_force(&self, now: DateTime<Utc>) -> bool {
        self.status(now) == SuspensionStatus::Active
    }
}

impl Placed for Suspension {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::Suspension, &self.id, &self.realm_id)
            .of_client(&self.client_id)
            .under(&self.user_id)
    }
}

const COLUMNS: &str = "id, account_id, realm_id, client_id, user_id, level, reason, starts_at, ends_at, \
     restricted_scopes, revokes_every_role, revoked_role_ids, terminates_sessions, sessions_terminated_at, \
     lifted_at, ended_at, created_at, updated_at";

pub const LISTING: Listing = Listing {
    table: "suspensions",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["reason", "user_id", "client_id"],
    status: None,
    sortable: &[("createdAt", "created_at"), ("startsAt", "starts_at"), ("endsAt", "ends_at")],
};

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, suspension: &Suspension) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO suspensions (id, account_id, realm_id, client_id, user_id, level, reason, starts_at, ends_at, \
         restricted_scopes, revokes_every_role, revoked_role_ids, terminates_sessions, sessions_terminated_at, \
         lifted_at, ended_at, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)",
    )
    .bind(&suspension.id)
    .bind(&suspension.account_id)
    .bind(&suspension.realm_id)
    .bind(&suspension.client_id)
    .bind(&suspension.user_id)
    .bind(suspension.level.as_str())
    .bind(&suspension.reason)
    .bind(super::millis(suspension.starts_at))
    .bind(super::millis(suspension.ends_at))
    .bind(super::to_json_list(&suspension.restricted_scopes))
    .bind(suspension.revokes_every_role)
    .bind(super::to_json_list(&suspension.revoked_role_ids))
    .bind(suspension.terminates_sessions)
    .bind(super::millis(suspension.sessions_terminated_at))
    .bind(super::millis(suspension.lifted_at))
    .bind(super::millis(suspension.ended_at))
    .bind(super::millis(suspension.created_at))
    .bind(super::millis(suspension.updated_at))
    .execute(db)
    .await?;
    Ok(())
}

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    id: &str,
) -> Result<Option<Suspension>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM suspensions WHERE realm_id = $1 AND id = $2")))
        .bind(realm_id)
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// Every suspension of the realm whose end was not announced: those that may be in force.
pub async fn unended_of_realm<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
) -> Result<Vec<Suspension>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM suspensions WHERE realm_id = $1 AND ended_at IS NULL"
    )))
    .bind(realm_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// Lifts the suspension at `now` (its end announced then); the lifted row, or `None` when it had
/// already been lifted or had run out.
pub async fn lift<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    now: DateTime<Utc>,
) -> Result<Option<Suspension>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "UPDATE suspensions SET lifted_at = $2, ended_at = $2, updated_at = $2 \
         WHERE id = $1 AND lifted_at IS NULL AND ended_at IS NULL AND COALESCE(ends_at, 9223372036854775807) > $2 \
         RETURNING {COLUMNS}"
    )))
    .bind(id)
    .bind(super::millis(now))
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Suspensions that ran out by `now` and whose end was not announced, oldest end first.
pub async fn run_out<'c>(
    db: impl Executor<'c, Database = Any>,
    now: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<Suspension>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM suspensions WHERE ended_at IS NULL AND ends_at <= $1 ORDER BY ends_at, id LIMIT $2"
    )))
    .bind(super::millis(now))
    .bind(limit)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// Records that the suspension's end was announced at `at`; `false` when another host did first.
pub async fn mark_ended<'c>(db: impl Executor<'c, Database = Any>, id: &str, at: DateTime<Utc>) -> Result<bool, Error> {
    let done = sqlx::query("UPDATE suspensions SET ended_at = $2, updated_at = $2 WHERE id = $1 AND ended_at IS NULL")
        .bind(id)
        .bind(super::millis(at))
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Suspensions in force at `now` that end the person's sessions at their start and have not yet
/// (one that started and ran out between two runs of the job ends none).
pub async fn sessions_to_end<'c>(
    db: impl Executor<'c, Database = Any>,
    now: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<Suspension>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM suspensions WHERE terminates_sessions = $1 AND sessions_terminated_at IS NULL \
         AND ended_at IS NULL AND starts_at <= $2 AND COALESCE(ends_at, 9223372036854775807) > $2 \
         ORDER BY starts_at, id LIMIT $3"
    )))
    .bind(true)
    .bind(super::millis(now))
    .bind(limit)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// Records that the suspension ended the person's sessions at `at`; `false` when another host did.
pub async fn mark_sessions_ended<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    at: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE suspensions SET sessions_terminated_at = $2, updated_at = $2 \
         WHERE id = $1 AND sessions_terminated_at IS NULL",
    )
    .bind(id)
    .bind(super::millis(at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Which suspensions a page shows.
#[derive(Debug, Clone, Default)]
pub struct SuspensionFilter<'a> {
    pub realm_id: Option<&'a str>,
    pub client_id: Option<&'a str>,
    pub user_id: Option<&'a str>,
    pub status: Option<SuspensionStatus>,
}

/// A page of the account's suspensions, its status read at `now`.
pub async fn page(
    store: &Store,
    account_id: &str,
    now: DateTime<Utc>,
    filter: SuspensionFilter<'_>,
    request: &PageRequest,
) -> Result<Page<Suspension>, Error> {
    let scope = Scope::of("account_id", account_id)
        .and_given("realm_id", filter.realm_id)
        .and_given("client_id", filter.client_id)
        .and_given("user_id", filter.user_id);
    let at = super::millis(now);
    let scope = match filter.status {
        None => scope,
        Some(SuspensionStatus::Lifted) => scope.and("COALESCE(lifted_at, 0) >", 0),
        Some(status) => {
            let scope = scope.and("COALESCE(lifted_at, 0) =", 0);
            match status {
                // A suspension without an end never runs out.
                SuspensionStatus::Ended => scope.and("COALESCE(ends_at, 9223372036854775807) <=", at),
                SuspensionStatus::Scheduled => scope.and("starts_at >", at),
                _ => scope.and("starts_at <=", at).and("COALESCE(ends_at, 9223372036854775807) >", at),
            }
        }
    };
    page::fetch(store.pool(), &LISTING, &scope, request).await
}
