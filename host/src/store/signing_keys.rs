//! Token signing keys: the realm's, shared by its clients, and those of clients with keys of their
//! own.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::Error;
use super::text_enum;
use crate::kernel::ids::{ClientId, KeyId, RealmId};

text_enum! {
    pub enum KeyStatus {
        /// Signs new tokens from `signs_from` on, and is published from its creation.
        Active,
        /// Signs until `retired_at`, then nothing; published until the tokens it signed have expired.
        Retired,
        /// Withdrawn at once: its tokens no longer verify.
        Revoked,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SigningKey {
    /// The `kid`.
    pub id: KeyId,
    pub realm_id: RealmId,
    /// The client whose own key it is; none for a key of the realm.
    pub client_id: Option<ClientId>,
    /// ES256 or RS256.
    pub algorithm: String,
    /// PKCS#8 PEM, sealed (see `crypto::Sealer`).
    pub sealed_key: String,
    /// The public JWK as JSON, with `kid`, `alg` and `use`.
    pub public_jwk: String,
    #[sqlx(try_from = "String")]
    pub status: KeyStatus,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    /// When it starts signing: at its creation for an owner's first key or a revoking rotation,
    /// later for a rotation (or a client's first own key) that lets verifiers fetch it first.
    #[sqlx(try_from = "super::Millis")]
    pub signs_from: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub retired_at: Option<DateTime<Utc>>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub published_until: Option<DateTime<Utc>>,
}

/// Whose keys: the realm's, or one client's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner<'a> {
    Realm(&'a str),
    Client(&'a str, &'a str),
}

impl Owner<'_> {
    fn realm_id(self) -> String {
        match self {
            Self::Realm(realm) | Self::Client(realm, _) => realm.to_owned(),
        }
    }

    fn client_id(self) -> Option<String> {
        match self {
            Self::Realm(_) => None,
            Self::Client(_, client) => Some(client.to_owned()),
        }
    }
}

/// The keys of the owner bound as `$1` (realm) and `$2` (client, or NULL for the realm's).
const OF_OWNER: &str = "realm_id = $1 AND (client_id = $2 OR (client_id IS NULL AND $2 IS NULL))";

const COLUMNS: &str = "id, realm_id, client_id, algorithm, sealed_key, public_jwk, status, created_at, signs_from, \
     retired_at, published_until";

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, key: &SigningKey) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO signing_keys (id, realm_id, client_id, algorithm, sealed_key, public_jwk, status, created_at, \
         signs_from, retired_at, published_until) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(&key.id)
    .bind(&key.realm_id)
    .bind(&key.client_id)
    .bind(&key.algorithm)
    .bind(&key.sealed_key)
    .bind(&key.public_jwk)
    .bind(key.status.as_str())
    .bind(super::millis(key.created_at))
    .bind(super::millis(key.signs_from))
    .bind(super::millis(key.retired_at))
    .bind(super::millis(key.published_until))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// The owner's keys that sign now or will: active ones (signing from their `signs_from`) and
/// retired ones still signing until their `retired_at`; newest `signs_from` first.
pub async fn signing<'c>(
    db: impl Executor<'c, Database = Any>,
    owner: Owner<'_>,
    now: DateTime<Utc>,
) -> Result<Vec<SigningKey>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM signing_keys WHERE {OF_OWNER} \
         AND (status = 'Active' OR (status = 'Retired' AND retired_at > $3)) ORDER BY signs_from DESC, id DESC"
    )))
    .bind(owner.realm_id())
    .bind(owner.client_id())
    .bind(super::millis(now))
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

pub async fn find<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<Option<SigningKey>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM signing_keys WHERE id = $1")))
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// Every key of the realm whose tokens may still be alive at `now`, the realm's and its clients'
/// own: active ones, and retired ones still within their publication.
pub async fn published<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    now: DateTime<Utc>,
) -> Result<Vec<SigningKey>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM signing_keys WHERE realm_id = $1 \
         AND (status = 'Active' OR (status = 'Retired' AND published_until > $2)) ORDER BY created_at, id"
    )))
    .bind(realm_id)
    .bind(super::millis(now))
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// The owner's keys that are not revoked, newest first.
pub async fn of_owner<'c>(db: impl Executor<'c, Database = Any>, owner: Owner<'_>) -> Result<Vec<SigningKey>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM signing_keys WHERE {OF_OWNER} AND status <> 'Revoked' ORDER BY created_at DESC, id DESC"
    )))
    .bind(owner.realm_id())
    .bind(owner.client_id())
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// Retires the owner's active keys: each signs until `retire_at` (when the next key starts) and
/// stays published until `published_until`. Returns how many keys were retired.
pub async fn retire_all<'c>(
    db: impl Executor<'c, Database = Any>,
    owner: Owner<'_>,
    retire_at: DateTime<Utc>,
    published_until: DateTime<Utc>,
) -> Result<u64, Error> {
    let done = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE signing_keys SET status = 'Retired', retired_at = $3, published_until = $4 \
         WHERE {OF_OWNER} AND status = 'Active'"
    )))
    .bind(owner.realm_id())
    .bind(owner.client_id())
    .bind(super::millis(retire_at))
    .bind(super::millis(published_until))
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}

/// Revokes every key of the owner that is not revoked yet: withdrawn from the JWKS at once, its
/// tokens no longer verify. Returns how many keys were revoked.
pub async fn revoke_all<'c>(
    db: impl Executor<'c, Database = Any>,
    owner: Owner<'_>,
    now: DateTime<Utc>,
) -> Result<u64, Error> {
    let done = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE signing_keys SET status = 'Revoked', retired_at = CASE WHEN retired_at IS NULL OR retired_at > $3 \
         THEN $3 ELSE retired_at END, published_until = $3 \
         WHERE {OF_OWNER} AND status <> 'Revoked'"
    )))
    .bind(owner.realm_id())
    .bind(owner.client_id())
    .bind(super::millis(now))
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}

/// Clients with keys of their own whose newest active key is older than their rotation period:
/// `(realm, client, days)`.
pub async fn due_for_rotation<'c>(
    db: impl Executor<'c, Database = Any>,
    now: DateTime<Utc>,
) -> Result<Vec<(String, String, i64)>, Error> {
    sqlx::query_as(
        "SELECT c.realm_id, c.id, c.key_rotation_days FROM clients c \
         JOIN signing_keys k ON k.realm_id = c.realm_id AND k.client_id = c.id AND k.status = 'Active' \
         WHERE c.key_rotation_days IS NOT NULL AND c.signing_keys = 'Own' \
         GROUP BY c.realm_id, c.id, c.key_rotation_days \
         HAVING MAX(k.created_at) + c.key_rotation_days * 86400000 <= $1",
    )
    .bind(super::millis(now))
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// Retires, as `retire_all` does, the client's active keys created at or before `cutoff`; the
/// count tells whether this caller won the rotation (another host that got there first leaves
/// nothing to retire).
pub async fn retire_older<'c>(
    db: impl Executor<'c, Database = Any>,
    owner: Owner<'_>,
    cutoff: DateTime<Utc>,
    retire_at: DateTime<Utc>,
    published_until: DateTime<Utc>,
) -> Result<u64, Error> {
    let done = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE signing_keys SET status = 'Retired', retired_at = $4, published_until = $5 \
         WHERE {OF_OWNER} AND status = 'Active' AND created_at <= $3"
    )))
    .bind(owner.realm_id())
    .bind(owner.client_id())
    .bind(super::millis(cutoff))
    .bind(super::millis(retire_at))
    .bind(super::millis(published_until))
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}
