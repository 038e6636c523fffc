//! User imports: the job rows with their progress and refused lines, the lookup of the people a
//! batch names, and the batch's roles and memberships in one statement each (the people and their
//! events go in through `users::insert_many` and `events::publish_many`).

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::text_enum;
use super::trail::ActorType;
use super::users::User;
use super::{Backend, Error, Store};
use crate::kernel::ids::{AccountId, ClientId, ImportId, RealmId};

text_enum! {
    /// Where an import stands.
    pub enum ImportStatus {
        Running,
        Completed,
        /// Stopped by the service (the body could not be read, the database failed); what was
        /// written before stays.
        Failed,
    }
}

text_enum! {
    /// What a row naming a person the realm already has does.
    pub enum OnConflict {
        /// Leaves the person as they are; the row counts as skipped.
        Skip,
        /// Writes the row's fields over the person's.
        Overwrite,
        /// Refuses the row, reported with its line.
        Fail,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct UserImport {
    pub id: ImportId,
    pub account_id: AccountId,
    pub realm_id: RealmId,
    pub client_id: ClientId,
    #[sqlx(try_from = "String")]
    pub status: ImportStatus,
    #[sqlx(try_from = "String")]
    pub on_conflict: OnConflict,
    pub rows_read: i64,
    pub created: i64,
    pub updated: i64,
    pub skipped: i64,
    pub refused: i64,
    pub failure: Option<String>,
    #[sqlx(try_from = "String")]
    pub created_by_type: ActorType,
    pub created_by_id: Option<String>,
    #[sqlx(try_from = "super::Millis")]
    pub started_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub finished_at: Option<DateTime<Utc>>,
}

const COLUMNS: &str = "id, account_id, realm_id, client_id, status, on_conflict, rows_read, created, updated, skipped, \
     refused, failure, created_by_type, created_by_id, started_at, updated_at, finished_at";

pub const LISTING: Listing = Listing {
    table: "user_imports",
    columns: COLUMNS,
    created: "started_at",
    tie_breaker: "id",
    search: &[],
    status: Some("status"),
    sortable: &[("startedAt", "started_at")],
};

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, import: &UserImport) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO user_imports (id, account_id, realm_id, client_id, status, on_conflict, rows_read, created, \
         updated, skipped, refused, failure, created_by_type, created_by_id, started_at, updated_at, finished_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
    )
    .bind(&import.id)
    .bind(&import.account_id)
    .bind(&import.realm_id)
    .bind(&import.client_id)
    .bind(import.status.as_str())
    .bind(import.on_conflict.as_str())
    .bind(import.rows_read)
    .bind(import.created)
    .bind(import.updated)
    .bind(import.skipped)
    .bind(import.refused)
    .bind(&import.failure)
    .bind(import.created_by_type.as_str())
    .bind(&import.created_by_id)
    .bind(super::millis(import.started_at))
    .bind(super::millis(import.updated_at))
    .bind(super::millis(import.finished_at))
    .execute(db)
    .await?;
    Ok(())
}

/// Writes the import's counts, status, failure and end.
pub async fn save_progress<'c>(db: impl Executor<'c, Database = Any>, import: &UserImport) -> Result<(), Error> {
    sqlx::query(
        "UPDATE user_imports SET status = $2, rows_read = $3, created = $4, updated = $5, skipped = $6, refused = $7, \
         failure = $8, updated_at = $9, finished_at = $10 WHERE id = $1",
    )
    .bind(&import.id)
    .bind(import.status.as_str())
    .bind(import.rows_read)
    .bind(import.created)
    .bind(import.updated)
    .bind(import.skipped)
    .bind(import.refused)
    .bind(&import.failure)
    .bind(super::millis(import.updated_at))
    .bind(super::millis(import.finished_at))
    .execute(db)
    .await?;
    Ok(())
}

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    client_id: &str,
    id: &str,
) -> Result<Option<UserImport>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM user_imports WHERE realm_id = $1 AND client_id = $2 AND id = $3"
    )))
    .bind(realm_id)
    .bind(client_id)
    .bind(id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// A page of the client's imports, newest first by default.
pub async fn page(
    store: &Store,
    realm_id: &str,
    client_id: &str,
    request: &PageRequest,
) -> Result<Page<UserImport>, Error> {
    let scope = Scope::of("realm_id", realm_id).and("client_id", client_id);
    page::fetch(store.pool(), &LISTING, &scope, request).await
}

/// A refused row of an import.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Refusal {
    pub line: i64,
    pub username: Option<String>,
    /// A JSON list of `{field, rule, message}`.
    pub reasons: String,
}

pub async fn insert_refusals<'c>(
    db: impl Executor<'c, Database = Any>,
    import_id: &str,
    refusals: &[Refusal],
) -> Result<(), Error> {
    if refusals.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO user_import_refusals (import_id, line, username, reasons) VALUES {}",
        super::values_placeholders(refusals.len(), 4)
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for refusal in refusals {
        query = query
            .bind(import_id.to_owned())
            .bind(refusal.line)
            .bind(refusal.username.clone())
            .bind(refusal.reasons.clone());
    }
    query.execute(db).await?;
    Ok(())
}

/// Every refused row of the import, by line.
pub async fn refusals<'c>(db: impl Executor<'c, Database = Any>, import_id: &str) -> Result<Vec<Refusal>, Error> {
    sqlx::query_as("SELECT line, username, reasons FROM user_import_refusals WHERE import_id = $1 ORDER BY line")
        .bind(import_id)
        .fetch_all(db)
        .await
        .map_err(Error::from)
}

/// The people of the realm who have one of these usernames or one of these e-mail addresses
/// (given in lowercase, compared case-insensitively). One statement per column, each answered from
/// its index whatever plan the database keeps for it: on PostgreSQL, a lookup per value (a lateral
/// join kept apart by `OFFSET 0`), since a cached plan for an `IN` list may read the whole realm.
pub async fn existing(
    store: &Store,
    realm_id: &str,
    usernames: &[String],
    emails: &[String],
) -> Result<Vec<User>, Error> {
    let mut found: Vec<User> = Vec::new();
    for (column, values) in [("username", usernames), ("lower(email)", emails)] {
        if values.is_empty() {
            continue;
        }
        let columns = super::users::COLUMNS;
        let sql = match store.backend() {
            Backend::Postgres => {
                let wanted = (2..values.len() + 2).map(|n| format!("(${n})")).collect::<Vec<_>>().join(", ");
                format!(
                    "SELECT {columns} FROM (VALUES {wanted}) AS wanted (value) CROSS JOIN LATERAL \
                     (SELECT {columns} FROM users WHERE realm_id = $1 AND {column} = wanted.value OFFSET 0) AS found"
                )
            }
            Backend::Sqlite => {
                format!(
                    "SELECT {columns} FROM users WHERE realm_id = $1 AND {column} IN ({})",
                    super::list_placeholders(2, values.len())
                )
            }
        };
        let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(realm_id.to_owned());
        for value in values {
            query = query.bind(value.clone());
        }
        let rows: Vec<User> = query.fetch_all(store.pool()).await?;
        found.extend(rows.into_iter().filter(|row| !found.iter().any(|known| known.id == row.id)).collect::<Vec<_>>());
    }
    Ok(found)
}

/// The names of the realm's roles (`realm_role`), its clients' roles (`client_role`, named
/// `client/role`), its groups and organizations: `(kind, name, id)`.
pub async fn names<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
) -> Result<Vec<(String, String, String)>, Error> {
    sqlx::query_as(
        "SELECT 'realm_role', name, id FROM realm_roles WHERE realm_id = $1 AND client_id IS NULL \
         UNION ALL SELECT 'client_role', client_id || '/' || name, id FROM realm_roles \
           WHERE realm_id = $1 AND client_id IS NOT NULL \
         UNION ALL SELECT 'group', name, id FROM groups WHERE realm_id = $1 \
         UNION ALL SELECT 'organization', name, id FROM organizations WHERE realm_id = $1",
    )
    .bind(realm_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// Where a person is added: a role, a group or an organization (the table and its owner column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    Role,
    Group,
    Organization,
}

/// Adds people to roles, groups or organizations in one statement: `(owner id, user id)` pairs.
pub async fn link<'c>(
    db: impl Executor<'c, Database = Any>,
    link: Link,
    pairs: &[(String, String)],
    at: DateTime<Utc>,
) -> Result<(), Error> {
    if pairs.is_empty() {
        return Ok(());
    }
    let (table, owner) = match link {
        Link::Role => ("user_roles", "role_id"),
        Link::Group => ("group_members", "group_id"),
        Link::Organization => ("organization_members", "organization_id"),
    };
    let sql = format!(
        "INSERT INTO {table} ({owner}, user_id, created_at) VALUES {} ON CONFLICT DO NOTHING",
        super::values_placeholders(pairs.len(), 3)
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for (owner, user) in pairs {
        query = query.bind(owner.clone()).bind(user.clone()).bind(super::millis(at));
    }
    query.execute(db).await?;
    Ok(())
}
