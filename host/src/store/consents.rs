//! Consents: what a person allowed a third-party client, per resource server.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::Error;
use super::trail::{Place, Placed, ResourceKind};
use crate::kernel::ids::{ClientId, RealmId, UserId};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Consent {
    pub realm_id: RealmId,
    pub user_id: UserId,
    pub client_id: ClientId,
    /// The resource server's address the consent is for; empty for tokens without one.
    pub resource: String,
    #[sqlx(try_from = "super::JsonList")]
    pub scopes: Vec<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Placed for Consent {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::Consent, &self.client_id, &self.realm_id).of_client(&self.client_id)
    }
}

const COLUMNS: &str = "realm_id, user_id, client_id, resource, scopes, created_at, updated_at";

/// The consent of the person to the client for this resource (`""` for none).
pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    user_id: &str,
    client_id: &str,
    resource: &str,
) -> Result<Option<Consent>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM consents WHERE realm_id = $1 AND user_id = $2 AND client_id = $3 AND resource = $4"
    )))
    .bind(realm_id)
    .bind(user_id)
    .bind(client_id)
    .bind(resource)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Writes the consent, replacing the scopes of an earlier one for the same client and resource.
pub async fn save<'c>(db: impl Executor<'c, Database = Any>, consent: &Consent) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO consents (realm_id, user_id, client_id, resource, scopes, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT (realm_id, user_id, client_id, resource) DO UPDATE SET scopes = $5, updated_at = $7",
    )
    .bind(&consent.realm_id)
    .bind(&consent.user_id)
    .bind(&consent.client_id)
    .bind(&consent.resource)
    .bind(super::to_json_list(&consent.scopes))
    .bind(super::millis(consent.created_at))
    .bind(super::millis(consent.updated_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// Every consent the person gave, by client and resource. A person consents to few clients: the
/// list is whole, never paged.
pub async fn of_user<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    user_id: &str,
) -> Result<Vec<Consent>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM consents WHERE realm_id = $1 AND user_id = $2 ORDER BY client_id, resource"
    )))
    .bind(realm_id)
    .bind(user_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// Withdraws every consent the person gave the client; `false` when there was none.
pub async fn withdraw<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    user_id: &str,
    client_id: &str,
) -> Result<bool, Error> {
    let done = sqlx::query("DELETE FROM consents WHERE realm_id = $1 AND user_id = $2 AND client_id = $3")
        .bind(realm_id)
        .bind(user_id)
        .bind(client_id)
        .execute(db)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Forgets every consent given to a client, deleted.
pub async fn forget_client<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    client_id: &str,
) -> Result<(), Error> {
    sqlx::query("DELETE FROM consents WHERE realm_id = $1 AND client_id = $2")
        .bind(realm_id)
        .bind(client_id)
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}
