//! Self sign-ups waiting for the code sent to their e-mail address, kept by the code's keyed hash.

use chrono::{DateTime, TimeDelta, Utc};
use sqlx::{Any, Executor};

use super::Error;
use crate::kernel::ids::{ClientId, RealmId, SignUpId};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SignUp {
    pub id: SignUpId,
    pub realm_id: RealmId,
    /// The client the person signed up through.
    pub client_id: ClientId,
    pub username: String,
    pub email: String,
    /// Empty for a sign-up with a passkey: the account has no password.
    pub password_hash: String,
    pub code_hash: String,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub expires_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub used_at: Option<DateTime<Utc>>,
    /// A sign-up with a passkey: the id the account will have (the passkey's user handle), and
    /// the passkey its browser made, verified (JSON).
    pub user_id: Option<String>,
    pub passkey: Option<String>,
}

const COLUMNS: &str = "id, realm_id, client_id, username, email, password_hash, code_hash, created_at, expires_at, used_at, user_id, \
     passkey";

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, sign_up: &SignUp) -> Result<(), Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO sign_ups ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    )))
    .bind(&sign_up.id)
    .bind(&sign_up.realm_id)
    .bind(&sign_up.client_id)
    .bind(&sign_up.username)
    .bind(&sign_up.email)
    .bind(&sign_up.password_hash)
    .bind(&sign_up.code_hash)
    .bind(super::millis(sign_up.created_at))
    .bind(super::millis(sign_up.expires_at))
    .bind(super::millis(sign_up.used_at))
    .bind(&sign_up.user_id)
    .bind(&sign_up.passkey)
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// The sign-up of the realm whose code hashes to `code_hash`, unused and not lapsed at `now`.
pub async fn find_open<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    code_hash: &str,
    now: DateTime<Utc>,
) -> Result<Option<SignUp>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM sign_ups WHERE code_hash = $1 AND realm_id = $2 AND used_at IS NULL AND expires_at > $3"
    )))
    .bind(code_hash)
    .bind(realm_id)
    .bind(super::millis(now))
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Marks the sign-up used; false when it already was (the same code twice at once: one wins).
pub async fn use_once<'c>(db: impl Executor<'c, Database = Any>, id: &str, now: DateTime<Utc>) -> Result<bool, Error> {
    let done = sqlx::query("UPDATE sign_ups SET used_at = $2 WHERE id = $1 AND used_at IS NULL")
        .bind(id)
        .bind(super::millis(now))
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Removes sign-ups a day past their lapse.
pub async fn prune<'c>(db: impl Executor<'c, Database = Any>, now: DateTime<Utc>) -> Result<u64, Error> {
    let done = sqlx::query("DELETE FROM sign_ups WHERE expires_at <= $1")
        .bind(super::millis(now - TimeDelta::days(1)))
        .execute(db)
        .await?;
    Ok(done.rows_affected())
}
