//! Accounts (owners of realms and clients), the people on their teams, and their account roles.

use super::Error;
use crate::kernel::ids::{AccountId, RealmId, UserId};
use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Account {
    pub id: AccountId,
    pub name: String,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
}

/// A person of a realm, as far as the admin API needs one here (the identity core owns the rest).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Person {
    pub id: UserId,
    pub realm_id: RealmId,
    pub username: String,
    pub email: Option<String>,
}

pub async fn exists_any<'c>(db: impl Executor<'c, Database = Any>) -> Result<bool, Error> {
    let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM accounts").fetch_one(db).await?;
    Ok(count > 0)
}

pub async fn find<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<Option<Account>, Error> {
    sqlx::query_as("SELECT id, name, created_at FROM accounts WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, account: &Account) -> Result<(), Error> {
    sqlx::query("INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)")
        .bind(&account.id)
        .bind(&account.name)
        .bind(super::millis(account.created_at))
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// Creates a person with no password yet (they set one through the sign-in flows).
pub async fn insert_person<'c>(
    db: impl Executor<'c, Database = Any>,
    person: &Person,
    at: DateTime<Utc>,
) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO users (id, realm_id, username, email, email_confirmed, status, must_change_password, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'Active', $6, $7, $7)",
    )
    .bind(&person.id)
    .bind(&person.realm_id)
    .bind(&person.username)
    .bind(&person.email)
    .bind(false)
    .bind(false)
    .bind(super::millis(at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

pub async fn find_person<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<Option<Person>, Error> {
    sqlx::query_as("SELECT id, realm_id, username, email FROM users WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// Puts a person on an account's team with the given account roles.
pub async fn insert_member<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    user_id: &str,
    roles: &[String],
    at: DateTime<Utc>,
) -> Result<(), Error> {
    sqlx::query("INSERT INTO account_members (account_id, user_id, roles, created_at) VALUES ($1, $2, $3, $4)")
        .bind(account_id)
        .bind(user_id)
        .bind(super::to_json_list(roles))
        .bind(super::millis(at))
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// A person on an account's team.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Member {
    pub account_id: AccountId,
    pub user_id: UserId,
    pub username: String,
    pub email: Option<String>,
    #[sqlx(try_from = "super::JsonList")]
    pub roles: Vec<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
}

const MEMBER_SELECT: &str = "SELECT m.account_id, m.user_id, u.username, u.email, m.roles, m.created_at \
     FROM account_members m JOIN users u ON u.id = m.user_id";

/// The team, in the order people joined.
pub async fn members<'c>(db: impl Executor<'c, Database = Any>, account_id: &str) -> Result<Vec<Member>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "{MEMBER_SELECT} WHERE m.account_id = $1 ORDER BY m.created_at, m.user_id"
    )))
    .bind(account_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// The person's place on a team, if they have one (a person of the platform realm belongs to one
/// account).
pub async fn membership<'c>(db: impl Executor<'c, Database = Any>, user_id: &str) -> Result<Option<Member>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("{MEMBER_SELECT} WHERE m.user_id = $1")))
        .bind(user_id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// Replaces a member's roles; `false` when the person is not on the account's team.
pub async fn set_member_roles<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    user_id: &str,
    roles: &[String],
) -> Result<bool, Error> {
    let done = sqlx::query("UPDATE account_members SET roles = $1 WHERE account_id = $2 AND user_id = $3")
        .bind(super::to_json_list(roles))
        .bind(account_id)
        .bind(user_id)
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Deletes a member's person (of the platform realm): their sessions and membership go with it.
pub async fn delete_member<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    user_id: &str,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "DELETE FROM users WHERE id = $1 AND id IN (SELECT user_id FROM account_members WHERE account_id = $2)",
    )
    .bind(user_id)
    .bind(account_id)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}
