//! `/realms/{realm}/organizations`: organizations of a realm, their e-mail domains and members.

use super::reach::{Found, InRealm, OrganizationCreate, OrganizationDelete, OrganizationRead, OrganizationUpdate};
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::{ListQuery, members};
use crate::directory::members::Owner;
use crate::directory::organizations;
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::clock::iso;
use crate::kernel::ids::OrganizationId;
use crate::kernel::validate::{Body, Notification, Refusals, Rule, list_of, one_of, text};
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::memberships::Membership;
use crate::store::organizations::{self as org_store, Organization};

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
    fn of(organization: &Organization) -> Self {
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
    name: Option<String>,
    /// Up to 1024 characters.
    #[schema(value_type = Option<String>)]
    description: Option<Option<String>>,
    /// DNS names (lowercased), up to 50, none held by another organization of the realm.
    domains: Option<Vec<String>>,
    status: Option<Status>,
}

impl OrganizationInput {
    fn read(body: &mut Body) -> Self {
        Self {
            name: body.optional("name", text(1, 128)),
            description: body.nullable("description", text(0, 1024)).map(|d| d.filter(|d| !d.is_empty())),
            domains: body.optional("domains", list_of(50, domain)),
            status: body.optional("status", one_of(Status::NAMES)),
        }
    }

    /// The organization with the fields given changed.
    fn apply(self, organization: &mut Organization) {
        let Self { name, description, domains, status } = self;
        organization.name = name.unwrap_or(std::mem::take(&mut organization.name));
        organization.description = description.unwrap_or(organization.description.take());
        organization.domains = domains.unwrap_or(std::mem::take(&mut organization.domains));
        organization.status = status.unwrap_or(organization.status);
    }
}

fn domain(path: &str, value: &Value) -> Result<String, Refusals> {
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

#[utoipa::path(post, path = "/realms/{realm}/organizations", tag = "Organizations", params(("realm" = String, Path)),
    request_body = OrganizationInput,
    responses((status = 201, description = "The created organization, in `data`", body = OrganizationView),
              (status = 400, description = "ValidationFailed, also for a domain another organization holds"), (status = 403),
              (status = 409, description = "AlreadyExists: the name is taken in the realm")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    InRealm { realm, caller, .. }: InRealm<OrganizationCreate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<OrganizationView>, Error> {
    let now = state.clock.now();
    let mut organization = Organization {
        id: OrganizationId::fresh(),
        realm_id: realm.id.clone(),
        name: String::new(),
        description: None,
        domains: Vec::new(),
        status: Status::Active,
        created_at: now,
        updated_at: now,
    };
    if !body.has("name") {
        body.refuse("name", Rule::Required, "name is required");
    }
    let input = OrganizationInput::read(&mut body);
    body.finish()?;
    input.apply(&mut organization);
    let organization = organizations::create(&state, organization, caller.author(), OrganizationView::of).await?;
    Ok(Answer::Created(OrganizationView::of(&organization)))
}

#[utoipa::path(get, path = "/realms/{realm}/organizations", tag = "Organizations",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query, description = "Matched against name, description and domains"),
           ("status" = Option<String>, Query), ("sortBy" = Option<String>, Query), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's organizations, in `pagination`", body = [OrganizationView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<OrganizationRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<OrganizationView>, Error> {
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::Status::NAMES)?;
    let found = org_store::page(&state.store, &realm.id, &list.page).await?;
    Ok(Answer::Paged(found.map(|organization| OrganizationView::of(&organization))))
}

fn owner(organization: &Organization) -> Owner<'_> {
    Owner { kind: Membership::Organization, id: &organization.id, realm_id: &organization.realm_id }
}

#[utoipa::path(get, path = "/realms/{realm}/organizations/{organizationId}", tag = "Organizations",
    params(("realm" = String, Path), ("organizationId" = String, Path)),
    responses((status = 200, body = OrganizationView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(Found { item: organization, .. }: Found<Organization, OrganizationRead>) -> Result<Response, Error> {
    Ok(envelope::ok(OrganizationView::of(&organization)))
}

#[utoipa::path(put, path = "/realms/{realm}/organizations/{organizationId}", tag = "Organizations",
    params(("realm" = String, Path), ("organizationId" = String, Path)), request_body = OrganizationInput,
    responses((status = 200, body = OrganizationView), (status = 400), (status = 403), (status = 404), (status = 409)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    Found { item: before, caller, .. }: Found<Organization, OrganizationUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<OrganizationView>, Error> {
    let mut organization = before.clone();
    body.unchanged("id", &organization.id);
    let input = OrganizationInput::read(&mut body);
    body.finish()?;
    input.apply(&mut organization);
    let organization =
        organizations::update(&state, &before, organization, caller.author(), OrganizationView::of).await?;
    Ok(Answer::Ok(OrganizationView::of(&organization)))
}

#[utoipa::path(delete, path = "/realms/{realm}/organizations/{organizationId}", tag = "Organizations",
    params(("realm" = String, Path), ("organizationId" = String, Path)),
    responses((status = 200, description = "Deleted with its domains and memberships"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    Found { item: organization, caller, .. }: Found<Organization, OrganizationDelete>,
) -> Result<Answer<()>, Error> {
    organizations::delete(&state, &organization, caller.author(), OrganizationView::of).await?;
    Ok(Answer::Done)
}

#[utoipa::path(get, path = "/realms/{realm}/organizations/{organizationId}/members", tag = "Organizations",
    params(("realm" = String, Path), ("organizationId" = String, Path)),
    responses((status = 200, description = "The ids of the members, in `data`", body = [String]), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn members(
    State(state): State<AppState>,
    Found { item: organization, .. }: Found<Organization, OrganizationRead>,
) -> Result<Response, Error> {
    members::list(&state, owner(&organization)).await
}

/// What adding a member answers.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrganizationMembership {
    organization_id: String,
    user_id: String,
}

#[utoipa::path(post, path = "/realms/{realm}/organizations/{organizationId}/members", tag = "Organizations",
    params(("realm" = String, Path), ("organizationId" = String, Path)), request_body = members::MembershipInput,
    responses((status = 201, description = "Added: `organizationId` and `userId`, in `data`", body = OrganizationMembership), (status = 400, description = "ValidationFailed: no such user in the realm"),
              (status = 403), (status = 404), (status = 409, description = "Conflict: already a member")),
    security(("apiKey" = [])))]
pub async fn add_member(
    State(state): State<AppState>,
    Found { item: organization, caller, .. }: Found<Organization, OrganizationUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Response, Error> {
    let user_id = members::add(&state, &caller, owner(&organization), body).await?;
    Ok(envelope::created(OrganizationMembership { organization_id: organization.id.into(), user_id }))
}

#[utoipa::path(delete, path = "/realms/{realm}/organizations/{organizationId}/members/{userId}", tag = "Organizations",
    params(("realm" = String, Path), ("organizationId" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "Removed"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn remove_member(
    State(state): State<AppState>,
    Found { item: organization, caller, .. }: Found<Organization, OrganizationUpdate>,
    Path((_, _, user_id)): Path<(String, String, String)>,
) -> Result<Response, Error> {
    members::remove(&state, &caller, owner(&organization), &user_id).await
}
