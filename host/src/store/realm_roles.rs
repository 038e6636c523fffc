//! Realm roles, client roles (exclusive to one client), groups, and who holds which role: people
//! directly or through groups, and clients themselves.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::trail::{Place, Placed, ResourceKind};
use super::{Error, Store};
use crate::kernel::ids::{ClientId, GroupId, RealmId, RoleId};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Role {
    pub id: RoleId,
    pub realm_id: RealmId,
    /// The client the role is exclusive to; `None` for a realm role.
    pub client_id: Option<ClientId>,
    pub name: String,
    pub description: Option<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Placed for Role {
    fn place(&self) -> Place {
        match &self.client_id {
            Some(client) => {
                Place::in_realm(ResourceKind::Role, &self.id, &self.realm_id).of_client(client).under(client)
            }
            None => Place::in_realm(ResourceKind::Role, &self.id, &self.realm_id),
        }
    }
}

const COLUMNS: &str = "id, realm_id, client_id, name, description, created_at, updated_at";

pub const LISTING: Listing = Listing {
    table: "realm_roles",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["name", "description"],
    status: None,
    sortable: &[("name", "name"), ("updatedAt", "updated_at"), ("createdAt", "created_at")],
};

/// Inserts the role; `false` when its name is taken (in the realm, or in the client).
pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, role: &Role) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO realm_roles (id, realm_id, client_id, name, description, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
    )
    .bind(&role.id)
    .bind(&role.realm_id)
    .bind(&role.client_id)
    .bind(&role.name)
    .bind(&role.description)
    .bind(super::millis(role.created_at))
    .bind(super::millis(role.updated_at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn find<'c>(db: impl Executor<'c, Database = Any>, realm_id: &str, id: &str) -> Result<Option<Role>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM realm_roles WHERE realm_id = $1 AND id = $2")))
        .bind(realm_id)
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// Writes name and description; `false` when the new name is taken.
pub async fn update<'c>(db: impl Executor<'c, Database = Any>, role: &Role) -> Result<bool, Error> {
    match sqlx::query("UPDATE realm_roles SET name = $2, description = $3, updated_at = $4 WHERE id = $1")
        .bind(&role.id)
        .bind(&role.name)
        .bind(&role.description)
        .bind(super::millis(role.updated_at))
        .execute(db)
        .await
    {
        Ok(_) => Ok(true),
        Err(sqlx::Error::Database(error)) if error.is_unique_violation() => Ok(false),
        Err(error) => Err(error.into()),
    }
}

pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM realm_roles WHERE id = $1").bind(id).execute(db).await.map(|_| ()).map_err(Error::from)
}

/// The roles a person holds directly.
pub async fn of_user<'c>(db: impl Executor<'c, Database = Any>, user_id: &str) -> Result<Vec<Role>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM realm_roles WHERE id IN (SELECT role_id FROM user_roles WHERE user_id = $1) \
         ORDER BY name, id"
    )))
    .bind(user_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// The roles a person holds directly and through their groups.
pub async fn effective_of_user<'c>(db: impl Executor<'c, Database = Any>, user_id: &str) -> Result<Vec<Role>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM realm_roles WHERE id IN ( \
           SELECT role_id FROM user_roles WHERE user_id = $1 \
           UNION SELECT gr.role_id FROM group_roles gr JOIN group_members gm ON gm.group_id = gr.group_id \
           WHERE gm.user_id = $1) ORDER BY name, id"
    )))
    .bind(user_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// The roles granted to a client itself.
pub async fn of_client<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    client_id: &str,
) -> Result<Vec<Role>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM realm_roles WHERE id IN \
         (SELECT role_id FROM client_roles WHERE realm_id = $1 AND client_id = $2) ORDER BY name, id"
    )))
    .bind(realm_id)
    .bind(client_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// The roles of a group.
pub async fn of_group<'c>(db: impl Executor<'c, Database = Any>, group_id: &str) -> Result<Vec<Role>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM realm_roles WHERE id IN (SELECT role_id FROM group_roles WHERE group_id = $1) \
         ORDER BY name, id"
    )))
    .bind(group_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// Who holds a role: a person, a group, or a client itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder<'a> {
    User(&'a str),
    Group(&'a str),
    Client { realm_id: &'a str, client_id: &'a str },
}

/// Grants the role; `false` when the holder already had it.
pub async fn grant<'c>(
    db: impl Executor<'c, Database = Any>,
    holder: Holder<'_>,
    role_id: &str,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let query = match holder {
        Holder::User(user) => sqlx::query(
            "INSERT INTO user_roles (user_id, role_id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        )
        .bind(user.to_owned())
        .bind(role_id.to_owned())
        .bind(super::millis(now)),
        Holder::Group(group) => sqlx::query(
            "INSERT INTO group_roles (group_id, role_id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
        )
        .bind(group.to_owned())
        .bind(role_id.to_owned())
        .bind(super::millis(now)),
        Holder::Client { realm_id, client_id } => sqlx::query(
            "INSERT INTO client_roles (realm_id, client_id, role_id, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT DO NOTHING",
        )
        .bind(realm_id.to_owned())
        .bind(client_id.to_owned())
        .bind(role_id.to_owned())
        .bind(super::millis(now)),
    };
    Ok(query.execute(db).await?.rows_affected() == 1)
}

/// Withdraws the role; `false` when the holder did not have it.
pub async fn withdraw<'c>(
    db: impl Executor<'c, Database = Any>,
    holder: Holder<'_>,
    role_id: &str,
) -> Result<bool, Error> {
    let query = match holder {
        Holder::User(user) => sqlx::query("DELETE FROM user_roles WHERE user_id = $1 AND role_id = $2")
            .bind(user.to_owned())
            .bind(role_id.to_owned()),
        Holder::Group(group) => sqlx::query("DELETE FROM group_roles WHERE group_id = $1 AND role_id = $2")
            .bind(group.to_owned())
            .bind(role_id.to_owned()),
        Holder::Client { realm_id, client_id } => {
            sqlx::query("DELETE FROM client_roles WHERE realm_id = $1 AND client_id = $2 AND role_id = $3")
                .bind(realm_id.to_owned())
                .bind(client_id.to_owned())
                .bind(role_id.to_owned())
        }
    };
    Ok(query.execute(db).await?.rows_affected() == 1)
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Group {
    pub id: GroupId,
    pub realm_id: RealmId,
    pub name: String,
    pub description: Option<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Placed for Group {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::Group, &self.id, &self.realm_id)
    }
}

const GROUP_COLUMNS: &str = "id, realm_id, name, description, created_at, updated_at";

pub const GROUP_LISTING: Listing = Listing {
    table: "groups",
    columns: GROUP_COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["name", "description"],
    status: None,
    sortable: &[("name", "name"), ("updatedAt", "updated_at"), ("createdAt", "created_at")],
};

/// Inserts the group; `false` when its name is taken in the realm.
pub async fn insert_group<'c>(db: impl Executor<'c, Database = Any>, group: &Group) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO groups (id, realm_id, name, description, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
    )
    .bind(&group.id)
    .bind(&group.realm_id)
    .bind(&group.name)
    .bind(&group.description)
    .bind(super::millis(group.created_at))
    .bind(super::millis(group.updated_at))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn find_group<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    id: &str,
) -> Result<Option<Group>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {GROUP_COLUMNS} FROM groups WHERE realm_id = $1 AND id = $2")))
        .bind(realm_id)
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

/// Writes name and description; `false` when the new name is taken.
pub async fn update_group<'c>(db: impl Executor<'c, Database = Any>, group: &Group) -> Result<bool, Error> {
    match sqlx::query("UPDATE groups SET name = $2, description = $3, updated_at = $4 WHERE id = $1")
        .bind(&group.id)
        .bind(&group.name)
        .bind(&group.description)
        .bind(super::millis(group.updated_at))
        .execute(db)
        .await
    {
        Ok(_) => Ok(true),
        Err(sqlx::Error::Database(error)) if error.is_unique_violation() => Ok(false),
        Err(error) => Err(error.into()),
    }
}

pub async fn delete_group<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM groups WHERE id = $1").bind(id).execute(db).await.map(|_| ()).map_err(Error::from)
}

/// A page of a realm's groups.
pub async fn group_page(store: &Store, realm_id: &str, request: &PageRequest) -> Result<Page<Group>, Error> {
    page::fetch(store.pool(), &GROUP_LISTING, &Scope::of("realm_id", realm_id), request).await
}

/// A page of the roles of a realm (`client_id` `None`) or of one of its clients.
pub async fn page(
    store: &Store,
    realm_id: &str,
    client_id: Option<&str>,
    request: &PageRequest,
) -> Result<Page<Role>, Error> {
    let scope = Scope::of("realm_id", realm_id).and("COALESCE(client_id, '') =", client_id.unwrap_or(""));
    page::fetch(store.pool(), &LISTING, &scope, request).await
}
