//! The console's server-side sessions, each bound to its person's session at the platform realm.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::Error;
use crate::kernel::ids::{SessionId, UserId};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ConsoleSession {
    /// The keyed hash of the browser's cookie value.
    pub id: String,
    /// The person's session at the platform realm.
    pub session_id: SessionId,
    pub user_id: UserId,
    /// What every form of this session carries.
    pub csrf_token: String,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub expires_at: DateTime<Utc>,
}

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, session: &ConsoleSession) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO console_sessions (id, session_id, user_id, csrf_token, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&session.id)
    .bind(&session.session_id)
    .bind(&session.user_id)
    .bind(&session.csrf_token)
    .bind(super::millis(session.created_at))
    .bind(super::millis(session.expires_at))
    .execute(db)
    .await?;
    Ok(())
}

/// The session with this keyed hash, unless it has expired.
pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    now: DateTime<Utc>,
) -> Result<Option<ConsoleSession>, Error> {
    Ok(sqlx::query_as("SELECT * FROM console_sessions WHERE id = $1 AND expires_at > $2")
        .bind(id)
        .bind(super::millis(now))
        .fetch_optional(db)
        .await?)
}

/// Forgets the session: `false` when there was none.
pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<bool, Error> {
    let deleted = sqlx::query("DELETE FROM console_sessions WHERE id = $1").bind(id).execute(db).await?;
    Ok(deleted.rows_affected() > 0)
}
