//! `/realms/{realm}/organizations`: organizations of a realm, their e-mail domains and members.

use super::reach::{Found, InRealm, OrganizationCreate, OrganizationDelete, OrganizationRead, OrganizationUpdate};
use crate::directory::members::MembershipInput;
use axum::extract::{Path, RawQuery, State};

use crate::directory::admin::organizations as admin;
use crate::directory::organizations::{OrganizationInput, OrganizationMembership, OrganizationView};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::runtime::error::Error;
use crate::store::organizations::Organization;

#[utoipa::path(post, path = "/realms/{realm}/organizations", tag = "Organizations", params(("realm" = String, Path)),
    request_body = OrganizationInput,
    responses((status = 201, description = "The created organization, in `data`", body = OrganizationView),
              (status = 400, description = "ValidationFailed, also for a domain another organization holds"), (status = 403),
              (status = 409, description = "AlreadyExists: the name is taken in the realm")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    reached: InRealm<OrganizationCreate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<OrganizationView>, Error> {
    admin::create(&state.admin(), reached, body).await
}

#[utoipa::path(get, path = "/realms/{realm}/organizations", tag = "Organizations",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query, description = "Matched against name, description and domains"),
           ("status" = Option<String>, Query), ("sortBy" = Option<String>, Query), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's organizations, in `pagination`", body = [OrganizationView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    reached: InRealm<OrganizationRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<OrganizationView>, Error> {
    admin::list(&state.admin(), reached, query).await
}

#[utoipa::path(get, path = "/realms/{realm}/organizations/{organizationId}", tag = "Organizations",
    params(("realm" = String, Path), ("organizationId" = String, Path)),
    responses((status = 200, body = OrganizationView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(reached: Found<Organization, OrganizationRead>) -> Result<Answer<OrganizationView>, Error> {
    admin::read(reached)
}

#[utoipa::path(put, path = "/realms/{realm}/organizations/{organizationId}", tag = "Organizations",
    params(("realm" = String, Path), ("organizationId" = String, Path)), request_body = OrganizationInput,
    responses((status = 200, body = OrganizationView), (status = 400), (status = 403), (status = 404), (status = 409)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    reached: Found<Organization, OrganizationUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<OrganizationView>, Error> {
    admin::update(&state.admin(), reached, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/organizations/{organizationId}", tag = "Organizations",
    params(("realm" = String, Path), ("organizationId" = String, Path)),
    responses((status = 200, description = "Deleted with its domains and memberships"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    reached: Found<Organization, OrganizationDelete>,
) -> Result<Answer<()>, Error> {
    admin::delete(&state.admin(), reached).await
}

#[utoipa::path(get, path = "/realms/{realm}/organizations/{organizationId}/members", tag = "Organizations",
    params(("realm" = String, Path), ("organizationId" = String, Path)),
    responses((status = 200, description = "The ids of the members, in `data`", body = [String]), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn members(
    State(state): State<AppState>,
    reached: Found<Organization, OrganizationRead>,
) -> Result<Answer<Vec<String>>, Error> {
    admin::members(&state.admin(), reached).await
}

#[utoipa::path(post, path = "/realms/{realm}/organizations/{organizationId}/members", tag = "Organizations",
    params(("realm" = String, Path), ("organizationId" = String, Path)), request_body = MembershipInput,
    responses((status = 201, description = "Added: `organizationId` and `userId`, in `data`", body = OrganizationMembership), (status = 400, description = "ValidationFailed: no such user in the realm"),
              (status = 403), (status = 404), (status = 409, description = "Conflict: already a member")),
    security(("apiKey" = [])))]
pub async fn add_member(
    State(state): State<AppState>,
    reached: Found<Organization, OrganizationUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<OrganizationMembership>, Error> {
    admin::add_member(&state.admin(), reached, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/organizations/{organizationId}/members/{userId}", tag = "Organizations",
    params(("realm" = String, Path), ("organizationId" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "Removed"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn remove_member(
    State(state): State<AppState>,
    reached: Found<Organization, OrganizationUpdate>,
    Path(path): Path<(String, String, String)>,
) -> Result<Answer<()>, Error> {
    admin::remove_member(&state.admin(), reached, path).await
}
