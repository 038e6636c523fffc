//! A person's authenticators beyond the password (TOTP apps, recovery codes, passkeys) and the
//! recovery codes of each set.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor, Row as _};

use super::Error;
use super::text_enum;
use crate::kernel::ids::{AuthenticatorId, RealmId, UserId};

text_enum! {
    /// What an authenticator is.
    pub enum AuthenticatorKind {
        /// An app showing time-based one-time passwords (RFC 6238).
        Totp,
        /// Ten codes, each usable once, for when the other factors are out of reach.
        RecoveryCodes,
        /// A WebAuthn credential.
        Passkey,
    }
}

/// The longest name of an authenticator.
pub const MAX_NAME: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Authenticator {
    pub id: AuthenticatorId,
    pub realm_id: RealmId,
    pub user_id: UserId,
    #[sqlx(try_from = "String")]
    pub kind: AuthenticatorKind,
    pub name: String,
    /// A TOTP secret, sealed with the deployment key.
    pub secret_sealed: Option<String>,
    /// JSON: a TOTP's parameters, a passkey's public key and flags.
    pub data: String,
    /// A TOTP's last step accepted; a passkey's signature counter.
    pub counter: Option<i64>,
    /// Unique in the realm: a passkey's credential id, a TOTP's keyed hash of its secret.
    pub credential_id: Option<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub last_used_at: Option<DateTime<Utc>>,
}

const COLUMNS: &str =
    "id, realm_id, user_id, kind, name, secret_sealed, data, counter, credential_id, created_at, last_used_at";

/// Stores a new authenticator: false when the realm has one of its credential id already (a
/// passkey registered twice, a TOTP enrolment confirmed twice).
pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, a: &Authenticator) -> Result<bool, Error> {
    let done = sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO authenticators ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
         ON CONFLICT DO NOTHING"
    )))
    .bind(&a.id)
    .bind(&a.realm_id)
    .bind(&a.user_id)
    .bind(a.kind.as_str())
    .bind(&a.name)
    .bind(&a.secret_sealed)
    .bind(&a.data)
    .bind(a.counter)
    .bind(&a.credential_id)
    .bind(super::millis(a.created_at))
    .bind(super::millis(a.last_used_at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The person's authenticators, the oldest first.
pub async fn of_user<'c>(db: impl Executor<'c, Database = Any>, user_id: &str) -> Result<Vec<Authenticator>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM authenticators WHERE user_id = $1 ORDER BY created_at, id"
    )))
    .bind(user_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// Removes one of the person's authenticators (with its recovery codes), returning it.
pub async fn remove<'c>(
    db: impl Executor<'c, Database = Any>,
    user_id: &str,
    id: &str,
) -> Result<Option<Authenticator>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "DELETE FROM authenticators WHERE user_id = $1 AND id = $2 RETURNING {COLUMNS}"
    )))
    .bind(user_id)
    .bind(id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Removes the person's authenticators of `kind`, returning them.
pub async fn remove_kind<'c>(
    db: impl Executor<'c, Database = Any>,
    user_id: &str,
    kind: AuthenticatorKind,
) -> Result<Vec<Authenticator>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "DELETE FROM authenticators WHERE user_id = $1 AND kind = $2 RETURNING {COLUMNS}"
    )))
    .bind(user_id)
    .bind(kind.as_str())
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// Records that a TOTP code of `step` was accepted at `now`, unless a code of this step or a later
/// one was accepted before: whether it was the first. The check and the write are one statement,
/// so two requests racing with one code cannot both pass.
pub async fn use_step<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    step: i64,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE authenticators SET counter = $2, last_used_at = $3 \
         WHERE id = $1 AND (counter IS NULL OR counter < $2)",
    )
    .bind(id)
    .bind(step)
    .bind(super::millis(now))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The realm's passkey whose credential id (base64url) is `credential_id`.
pub async fn passkey<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    credential_id: &str,
) -> Result<Option<Authenticator>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM authenticators WHERE realm_id = $1 AND credential_id = $2 AND kind = 'Passkey'"
    )))
    .bind(realm_id)
    .bind(credential_id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Records an assertion of a passkey at `now` with the authenticator's `counter` and its flags in
/// `data`, unless the counter went back (or stayed, once not zero): whether it was recorded. The
/// check and the write are one statement, so two assertions with one counter cannot both pass.
pub async fn use_passkey<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    counter: i64,
    data: &str,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE authenticators SET counter = $2, data = $3, last_used_at = $4 \
         WHERE id = $1 AND (counter < $2 OR (counter = 0 AND $2 = 0))",
    )
    .bind(id)
    .bind(counter)
    .bind(data)
    .bind(super::millis(now))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Stores the hashes of a set's recovery codes.
pub async fn insert_codes(tx: &mut super::Connection, authenticator_id: &str, hashes: &[String]) -> Result<(), Error> {
    for hash in hashes {
        sqlx::query("INSERT INTO recovery_codes (authenticator_id, code_hash) VALUES ($1, $2)")
            .bind(authenticator_id)
            .bind(hash)
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

/// Uses the person's recovery code whose hash is `hash`, if it is theirs and unused: the id of its
/// set. Marking it used is the check, so a code is accepted once.
pub async fn use_code<'c>(
    db: impl Executor<'c, Database = Any>,
    user_id: &str,
    hash: &str,
    now: DateTime<Utc>,
) -> Result<Option<AuthenticatorId>, Error> {
    let row = sqlx::query(
        "UPDATE recovery_codes SET used_at = $1 WHERE code_hash = $2 AND used_at IS NULL AND authenticator_id IN \
         (SELECT id FROM authenticators WHERE user_id = $3 AND kind = 'RecoveryCodes') RETURNING authenticator_id",
    )
    .bind(super::millis(now))
    .bind(hash)
    .bind(user_id)
    .fetch_optional(db)
    .await?;
    Ok(row.map(|row| row.try_get::<String, _>(0)).transpose()?.map(AuthenticatorId::known))
}

/// Records when an authenticator was last used.
pub async fn touch<'c>(db: impl Executor<'c, Database = Any>, id: &str, now: DateTime<Utc>) -> Result<(), Error> {
    sqlx::query("UPDATE authenticators SET last_used_at = $2 WHERE id = $1")
        .bind(id)
        .bind(super::millis(now))
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// How many of a set's recovery codes are unused.
pub async fn codes_left<'c>(db: impl Executor<'c, Database = Any>, authenticator_id: &str) -> Result<i64, Error> {
    let row = sqlx::query("SELECT COUNT(*) FROM recovery_codes WHERE authenticator_id = $1 AND used_at IS NULL")
        .bind(authenticator_id)
        .fetch_one(db)
        .await?;
    Ok(row.try_get::<i64, _>(0)?)
}
