//! Organizations of a realm (a customer company, say): created, changed and deleted here, their
//! names and e-mail domains each unique in the realm.

use crate::kernel::clock::iso;
use crate::kernel::validate::{Body, Notification, Refusals, Rule, list_of, one_of, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::organizations::{self as org_store, Organization, Taken};
use crate::store::trail::{Change, ChangeAction, Placed};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

fn taken(conflict: Taken) -> Error {
    match conflict {
        Taken::Name => Error::AlreadyExists("organization"),
        Taken::Domain(domain) => {
            Error::invalid("domains", Rule::Duplicate, format!("{domain} belongs to another organization of the realm"))
        }
    }
}

/// Creates `organization`; its name and domains must be free in the realm.
pub async fn create(context: &Context, organization: Organization, by: Author<'_>) -> Result<Organization, Error> {
    let mut tx = context.store.begin().await?;
    if let Some(conflict) = org_store::insert(&mut tx, &organization).await? {
        return Err(taken(conflict));
    }
    let change = Change::of(ChangeAction::Create, organization.place(), 201).after(OrganizationView::of(&organization));
    changes::commit(context, by, tx, change).await?;
    Ok(organization)
}

/// Changes `before` into `organization`; a new name or domain must be free in the realm.
pub async fn update(
    context: &Context,
    before: &Organization,
    mut organization: Organization,
    by: Author<'_>,
) -> Result<Organization, Error> {
    organization.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    if let Some(conflict) = org_store::update(&mut tx, &organization).await? {
        return Err(taken(conflict));
    }
    let change = Change::of(ChangeAction::Update, organization.place(), 200)
        .before(OrganizationView::of(before))
        .after(OrganizationView::of(&organization));
    changes::commit(context, by, tx, change).await?;
    Ok(organization)
}

/// Deletes `organization` with its domains and memberships.
pub async fn delete(context: &Context, organization: &Organization, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    org_store::delete(&mut *tx, &organization.id).await?;
    let change = Change::of(ChangeAction::Delete, organization.place(), 200).before(OrganizationView::of(organization));
    changes::commit(context, by, tx, change).await
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrganizationView {
    pub id: String,
    pub realm_id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// E-mail domains of the organization, each unique in the realm.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub domains: Vec<String>,
    pub status: Status,
    pub created_at: String,
    pub updated_at: String,
}

impl OrganizationView {
    pub(crate) fn of(organization: &Organization) -> Self {
        Self {
            id: organization.id.clone().into(),
            realm_id: organization.realm_id.to_string(),
            name: organization.name.clone(),
            description: organization.description.clone(),
            domains: organization.domains.clone(),
            status: organization.status,
            created_at: iso(organization.created_at),
            updated_at: iso(organization.updated_at),
        }
    }
}

/// The body of an organization creation (the name required); an update takes the same fields,
/// each optional, and a null description removes it.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct OrganizationInput {
    /// 1–128 characters, unique in the realm.
    #[schema(value_type = String, required = true)]
    pub(crate) name: Option<String>,
    /// Up to 1024 characters.
    #[schema(value_type = Option<String>)]
    pub(crate) description: Option<Option<String>>,
    /// DNS names (lowercased), up to 50, none held by another organization of the realm.
    pub(crate) domains: Option<Vec<String>>,
    pub(crate) status: Option<Status>,
}

impl OrganizationInput {
    pub(crate) fn read(body: &mut Body) -> Self {
        Self {
            name: body.optional("name", text(1, 128)),
            description: body.nullable("description", text(0, 1024)).map(|d| d.filter(|d| !d.is_empty())),
            domains: body.optional("domains", list_of(50, domain)),
            status: body.optional("status", one_of(Status::NAMES)),
        }
    }

    /// The organization with the fields given changed.
    pub(crate) fn apply(self, organization: &mut Organization) {
        let Self { name, description, domains, status } = self;
        organization.name = name.unwrap_or(std::mem::take(&mut organization.name));
        organization.description = description.unwrap_or(organization.description.take());
        organization.domains = domains.unwrap_or(std::mem::take(&mut organization.domains));
        organization.status = status.unwrap_or(organization.status);
    }
}

/// What adding a member answers.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrganizationMembership {
    pub(crate) organization_id: String,
    pub(crate) user_id: String,
}

pub(crate) fn domain(path: &str, value: &Value) -> Result<String, Refusals> {
    let name = text(1, 253)(path, value)?.to_ascii_lowercase();
    let labels_ok = name.split('.').count() >= 2
        && name.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        });
    if labels_ok {
        Ok(name)
    } else {
        Err(vec![Notification::new(path, Rule::Format, format!("{path} must be a DNS domain such as example.com"))])
    }
}
