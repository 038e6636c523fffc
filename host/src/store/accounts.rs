//! Accounts (owners of realms and clients), the people on their teams, and their account roles.

use sqlx::{Any, Executor};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Account {
    pub id: String,
    pub name: String,
    pub created_at: i64,
}

/// A person of a realm, as far as the admin API needs one here (the identity core owns the rest).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Person {
    pub id: String,
    pub realm_id: String,
    pub username: String,
    pub email: Option<String>,
}

pub async fn exists_any<'c>(db: impl Executor<'c, Database = Any>) -> Result<bool, sqlx::Error> {
    let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM accounts").fetch_one(db).await?;
    Ok(count > 0)
}

pub async fn find<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<Option<Account>, sqlx::Error> {
    sqlx::query_as("SELECT id, name, created_at FROM accounts WHERE id = $1").bind(id).fetch_optional(db).await
}

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, account: &Account) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)")
        .bind(&account.id)
        .bind(&account.name)
        .bind(account.created_at)
        .execute(db)
        .await
        .map(|_| ())
}

/// Creates a person with no password yet (they set one through the sign-in flows).
pub async fn insert_person<'c>(
    db: impl Executor<'c, Database = Any>,
    person: &Person,
    at: i64,
) -> Result<(), sqlx::Error> {
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
    .bind(at)
    .execute(db)
    .await
    .map(|_| ())
}

pub async fn find_person<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<Option<Person>, sqlx::Error> {
    sqlx::query_as("SELECT id, realm_id, username, email FROM users WHERE id = $1").bind(id).fetch_optional(db).await
}

/// Puts a person on an account's team with the given account roles.
pub async fn insert_member<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    user_id: &str,
    roles: &[String],
    at: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO account_members (account_id, user_id, roles, created_at) VALUES ($1, $2, $3, $4)")
        .bind(account_id)
        .bind(user_id)
        .bind(super::to_json_list(roles))
        .bind(at)
        .execute(db)
        .await
        .map(|_| ())
}
