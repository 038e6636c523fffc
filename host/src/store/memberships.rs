//! Who belongs to what: people in groups and in organizations. Both memberships have the same
//! shape (owner, person, since when); the table is all that differs.

use super::Error;
use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

/// A kind of membership.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Membership {
    Group,
    Organization,
}

impl Membership {
    fn table(self) -> (&'static str, &'static str) {
        match self {
            Self::Group => ("group_members", "group_id"),
            Self::Organization => ("organization_members", "organization_id"),
        }
    }
}

/// Adds the person; `false` when already a member.
pub async fn add<'c>(
    db: impl Executor<'c, Database = Any>,
    kind: Membership,
    owner_id: &str,
    user_id: &str,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let (table, owner) = kind.table();
    let done = sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO {table} ({owner}, user_id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING"
    )))
    .bind(owner_id)
    .bind(user_id)
    .bind(super::millis(now))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Removes the person; `false` when not a member.
pub async fn remove<'c>(
    db: impl Executor<'c, Database = Any>,
    kind: Membership,
    owner_id: &str,
    user_id: &str,
) -> Result<bool, Error> {
    let (table, owner) = kind.table();
    let done = sqlx::query(sqlx::AssertSqlSafe(format!("DELETE FROM {table} WHERE {owner} = $1 AND user_id = $2")))
        .bind(owner_id)
        .bind(user_id)
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// The ids of the members, in the order they joined.
pub async fn members<'c>(
    db: impl Executor<'c, Database = Any>,
    kind: Membership,
    owner_id: &str,
) -> Result<Vec<String>, Error> {
    let (table, owner) = kind.table();
    let rows: Vec<(String,)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT user_id FROM {table} WHERE {owner} = $1 ORDER BY created_at, user_id"
    )))
    .bind(owner_id)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

/// The names of what the person belongs to, by name.
pub async fn names_of_user<'c>(
    db: impl Executor<'c, Database = Any>,
    kind: Membership,
    user_id: &str,
) -> Result<Vec<String>, Error> {
    let (table, owner) = kind.table();
    let owners = match kind {
        Membership::Group => "groups",
        Membership::Organization => "organizations",
    };
    let rows: Vec<(String,)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT o.name FROM {table} m JOIN {owners} o ON o.id = m.{owner} WHERE m.user_id = $1 ORDER BY o.name"
    )))
    .bind(user_id)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(name,)| name).collect())
}

pub async fn is_member<'c>(
    db: impl Executor<'c, Database = Any>,
    kind: Membership,
    owner_id: &str,
    user_id: &str,
) -> Result<bool, Error> {
    let (table, owner) = kind.table();
    let found: Option<(String,)> =
        sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT user_id FROM {table} WHERE {owner} = $1 AND user_id = $2")))
            .bind(owner_id)
            .bind(user_id)
            .fetch_optional(db)
            .await?;
    Ok(found.is_some())
}
