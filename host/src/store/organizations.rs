//! Organizations of a realm: their e-mail domains and their members.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::Status;
use super::page::{self, Listing, Page, PageRequest, Scope};
use super::trail::{Place, Placed, ResourceKind};
use super::{Error, Store};
use crate::kernel::ids::{OrganizationId, RealmId};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Organization {
    pub id: OrganizationId,
    pub realm_id: RealmId,
    pub name: String,
    pub description: Option<String>,
    /// DNS domains.
    #[sqlx(try_from = "super::JsonList")]
    pub domains: Vec<String>,
    #[sqlx(try_from = "String")]
    pub status: Status,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Placed for Organization {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::Organization, &self.id, &self.realm_id)
    }
}

const COLUMNS: &str = "id, realm_id, name, description, domains, status, created_at, updated_at";

pub const LISTING: Listing = Listing {
    table: "organizations",
    columns: COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["name", "description", "domains"],
    status: Some("status"),
    sortable: &[("name", "name"), ("updatedAt", "updated_at"), ("createdAt", "created_at")],
};

/// Why an organization could not be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken {
    Name,
    /// Another organization of the realm has this domain.
    Domain(String),
}

/// Claims the organization's domains in the realm; the first one another organization holds.
async fn claim_domains(tx: &mut super::Connection, organization: &Organization) -> Result<Option<Taken>, Error> {
    sqlx::query("DELETE FROM organization_domains WHERE organization_id = $1")
        .bind(&organization.id)
        .execute(&mut *tx)
        .await?;
    for domain in &organization.domains {
        let done = sqlx::query(
            "INSERT INTO organization_domains (realm_id, domain, organization_id) VALUES ($1, $2, $3) \
             ON CONFLICT DO NOTHING",
        )
        .bind(&organization.realm_id)
        .bind(domain)
        .bind(&organization.id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Ok(Some(Taken::Domain(domain.clone())));
        }
    }
    Ok(None)
}

pub async fn insert(tx: &mut super::Connection, organization: &Organization) -> Result<Option<Taken>, Error> {
    let done = sqlx::query(
        "INSERT INTO organizations (id, realm_id, name, description, domains, status, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
    )
    .bind(&organization.id)
    .bind(&organization.realm_id)
    .bind(&organization.name)
    .bind(&organization.description)
    .bind(super::to_json_list(&organization.domains))
    .bind(organization.status.as_str())
    .bind(super::millis(organization.created_at))
    .bind(super::millis(organization.updated_at))
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() == 0 {
        return Ok(Some(Taken::Name));
    }
    claim_domains(tx, organization).await
}

pub async fn update(tx: &mut super::Connection, organization: &Organization) -> Result<Option<Taken>, Error> {
    let result = sqlx::query(
        "UPDATE organizations SET name = $2, description = $3, domains = $4, status = $5, updated_at = $6 \
         WHERE id = $1",
    )
    .bind(&organization.id)
    .bind(&organization.name)
    .bind(&organization.description)
    .bind(super::to_json_list(&organization.domains))
    .bind(organization.status.as_str())
    .bind(super::millis(organization.updated_at))
    .execute(&mut *tx)
    .await;
    match result {
        Ok(_) => claim_domains(tx, organization).await,
        Err(sqlx::Error::Database(error)) if error.is_unique_violation() => Ok(Some(Taken::Name)),
        Err(error) => Err(error.into()),
    }
}

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    id: &str,
) -> Result<Option<Organization>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM organizations WHERE realm_id = $1 AND id = $2")))
        .bind(realm_id)
        .bind(id)
        .fetch_optional(db)
        .await
        .map_err(Error::from)
}

pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM organizations WHERE id = $1").bind(id).execute(db).await.map(|_| ()).map_err(Error::from)
}

/// A page of a realm's organizations.
pub async fn page(store: &Store, realm_id: &str, request: &PageRequest) -> Result<Page<Organization>, Error> {
    page::fetch(store.pool(), &LISTING, &Scope::of("realm_id", realm_id), request).await
}
