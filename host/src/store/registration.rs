//! Initial access tokens: what an administrator hands out for clients to register with at a realm
//! that takes registrations only with one (RFC 7591 §3).

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::trail::{Place, Placed, ResourceKind};
use super::{Error, Store};
use crate::kernel::ids::{InitialAccessTokenId, RealmId};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct InitialAccessToken {
    pub id: InitialAccessTokenId,
    pub realm_id: RealmId,
    /// The keyed hash of the token; the token itself is shown once.
    pub token_hash: String,
    /// Registrations it may still make.
    pub remaining_uses: i64,
    #[sqlx(try_from = "super::Millis")]
    pub expires_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
}

impl Placed for InitialAccessToken {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::InitialAccessToken, &self.id, &self.realm_id)
    }
}

const COLUMNS: &str = "id, realm_id, token_hash, remaining_uses, expires_at, created_at";

pub const LISTING: Listing = Listing {
    table: "initial_access_tokens",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &[],
    status: None,
    sortable: &[("createdAt", "created_at"), ("expiresAt", "expires_at")],
};

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, token: &InitialAccessToken) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO initial_access_tokens (id, realm_id, token_hash, remaining_uses, expires_at, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&token.id)
    .bind(&token.realm_id)
    .bind(&token.token_hash)
    .bind(token.remaining_uses)
    .bind(super::millis(token.expires_at))
    .bind(super::millis(token.created_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    id: &str,
) -> Result<Option<InitialAccessToken>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM initial_access_tokens WHERE realm_id = $1 AND id = $2"
    )))
    .bind(realm_id)
    .bind(id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Spends one registration of the token with this hash, when it is the realm's, unexpired and not
/// used up; `false` otherwise. One statement: two registrations racing for the last use cannot
/// both have it.
pub async fn spend<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    token_hash: &str,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE initial_access_tokens SET remaining_uses = remaining_uses - 1 \
         WHERE realm_id = $1 AND token_hash = $2 AND remaining_uses > 0 AND expires_at > $3",
    )
    .bind(realm_id)
    .bind(token_hash)
    .bind(super::millis(now))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, realm_id: &str, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM initial_access_tokens WHERE realm_id = $1 AND id = $2")
        .bind(realm_id)
        .bind(id)
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// A page of a realm's initial access tokens.
pub async fn page(store: &Store, realm_id: &str, request: &PageRequest) -> Result<Page<InitialAccessToken>, Error> {
    page::fetch(store.pool(), &LISTING, &Scope::of("realm_id", realm_id), request).await
}
