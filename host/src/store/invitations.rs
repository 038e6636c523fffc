//! Invitations to join an account's team.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::{Error, Store};
use crate::kernel::ids::{AccountId, InvitationId, UserId};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Invitation {
    pub id: InvitationId,
    pub account_id: AccountId,
    pub email: String,
    #[sqlx(try_from = "super::JsonList")]
    pub roles: Vec<String>,
    pub token_hash: String,
    pub invited_by: String,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub expires_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub accepted_at: Option<DateTime<Utc>>,
    pub accepted_user_id: Option<UserId>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub revoked_at: Option<DateTime<Utc>>,
}

impl Invitation {
    /// Pending, Accepted, Revoked or Expired at `now`.
    pub fn status(&self, now: DateTime<Utc>) -> &'static str {
        match (self.accepted_at, self.revoked_at) {
            (Some(_), _) => "Accepted",
            (None, Some(_)) => "Revoked",
            (None, None) if self.expires_at <= now => "Expired",
            (None, None) => "Pending",
        }
    }
}

const COLUMNS: &str = "id, account_id, email, roles, token_hash, invited_by, created_at, expires_at, accepted_at, \
     accepted_user_id, revoked_at";

pub const LISTING: Listing = Listing {
    table: "account_invitations",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["email"],
    status: None,
    sortable: &[("createdAt", "created_at"), ("expiresAt", "expires_at"), ("email", "email")],
};

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, invitation: &Invitation) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO account_invitations (id, account_id, email, roles, token_hash, invited_by, created_at, \
         expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&invitation.id)
    .bind(&invitation.account_id)
    .bind(&invitation.email)
    .bind(super::to_json_list(&invitation.roles))
    .bind(&invitation.token_hash)
    .bind(&invitation.invited_by)
    .bind(super::millis(invitation.created_at))
    .bind(super::millis(invitation.expires_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    id: &str,
) -> Result<Option<Invitation>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM account_invitations WHERE id = $1 AND account_id = $2"
    )))
    .bind(id)
    .bind(account_id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

pub async fn find_by_token<'c>(
    db: impl Executor<'c, Database = Any>,
    token_hash: &str,
) -> Result<Option<Invitation>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM account_invitations WHERE token_hash = $1")))
        .bind(token_hash)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// Whether a pending invitation of the account goes to this address (compared case-insensitively).
pub async fn pending_for<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    email: &str,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let found: Option<(String,)> = sqlx::query_as(
        "SELECT id FROM account_invitations WHERE account_id = $1 AND LOWER(email) = LOWER($2) \
         AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $3 LIMIT 1",
    )
    .bind(account_id)
    .bind(email)
    .bind(super::millis(now))
    .fetch_optional(db)
    .await?;
    Ok(found.is_some())
}

/// Marks a pending invitation accepted by `user_id`; `false` when it was no longer pending at `now`
/// (accepted, revoked or expired meanwhile), so it is used at most once.
pub async fn accept<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    user_id: &str,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE account_invitations SET accepted_at = $1, accepted_user_id = $2 \
         WHERE id = $3 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $1",
    )
    .bind(super::millis(now))
    .bind(user_id)
    .bind(id)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Revokes a pending invitation; `false` when it was not pending.
pub async fn revoke<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    id: &str,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE account_invitations SET revoked_at = $1 \
         WHERE id = $2 AND account_id = $3 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $1",
    )
    .bind(super::millis(now))
    .bind(id)
    .bind(account_id)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// A page of an account's invitations.
pub async fn page(store: &Store, account_id: &str, request: &PageRequest) -> Result<Page<Invitation>, Error> {
    page::fetch(store.pool(), &LISTING, &Scope::of("account_id", account_id), request).await
}
