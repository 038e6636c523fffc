//! `/realms/{realm}/identity-providers`: the external providers people of a realm may sign in
//! through. Reading needs `realm:read`, changing `realm:update`. The client secret is write-only:
//! sealed at rest, shown by its last four characters. Which providers a client's login page offers
//! (`client:*`) and an organization's people use (`organization:*`) are lists of their ids.

use axum::extract::{RawQuery, State};

use super::reach::{
    ClientRead, ClientUpdate, Found, InClient, InRealm, OrganizationRead, OrganizationUpdate, RealmRead, RealmUpdate,
};
use crate::directory::admin::identity_providers as admin;
use crate::directory::identity_providers::{IdentityProviderInput, IdentityProviderView, OfferedProvidersInput};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::runtime::error::Error;
use crate::store::identity_providers::IdentityProvider;
use crate::store::organizations::Organization;

#[utoipa::path(post, path = "/realms/{realm}/identity-providers", tag = "Identity providers", params(("realm" = String, Path)),
    request_body = IdentityProviderInput,
    responses((status = 201, description = "The created provider, in `data` (its secret never shown)", body = IdentityProviderView),
              (status = 400), (status = 403), (status = 409, description = "AlreadyExists: the id is taken in the realm")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    reached: InRealm<RealmUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<IdentityProviderView>, Error> {
    admin::create(&state.admin(), reached, body).await
}

#[utoipa::path(get, path = "/realms/{realm}/identity-providers", tag = "Identity providers",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query), ("status" = Option<String>, Query),
           ("sortBy" = Option<String>, Query, description = "id, displayName, createdAt, updatedAt"), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's identity providers, in `pagination`", body = [IdentityProviderView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    reached: InRealm<RealmRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<IdentityProviderView>, Error> {
    admin::list(&state.admin(), reached, query).await
}

#[utoipa::path(get, path = "/realms/{realm}/identity-providers/{providerId}", tag = "Identity providers",
    params(("realm" = String, Path), ("providerId" = String, Path)),
    responses((status = 200, body = IdentityProviderView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    reached: Found<IdentityProvider, RealmRead>,
) -> Result<Answer<IdentityProviderView>, Error> {
    admin::read(&state.admin(), reached).await
}

#[utoipa::path(put, path = "/realms/{realm}/identity-providers/{providerId}", tag = "Identity providers",
    params(("realm" = String, Path), ("providerId" = String, Path)), request_body = IdentityProviderInput,
    responses((status = 200, body = IdentityProviderView), (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    reached: Found<IdentityProvider, RealmUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<IdentityProviderView>, Error> {
    admin::update(&state.admin(), reached, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/identity-providers/{providerId}", tag = "Identity providers",
    params(("realm" = String, Path), ("providerId" = String, Path)),
    responses((status = 200, description = "Deleted"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    reached: Found<IdentityProvider, RealmUpdate>,
) -> Result<Answer<()>, Error> {
    admin::delete(&state.admin(), reached).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/identity-providers", tag = "Identity providers",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "The ids of the providers the client's login page offers, in order, in `data`", body = [String]),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn client_providers(
    State(state): State<AppState>,
    reached: InClient<ClientRead>,
) -> Result<Answer<Vec<String>>, Error> {
    admin::client_providers(&state.admin(), reached).await
}

#[utoipa::path(put, path = "/realms/{realm}/clients/{client}/identity-providers", tag = "Identity providers",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = OfferedProvidersInput,
    responses((status = 200, description = "The providers now offered, in `data`", body = [String]),
              (status = 400, description = "ValidationFailed: a provider the realm does not have"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn offer_client_providers(
    State(state): State<AppState>,
    reached: InClient<ClientUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<Vec<String>>, Error> {
    admin::offer_client_providers(&state.admin(), reached, body).await
}

#[utoipa::path(get, path = "/realms/{realm}/organizations/{organizationId}/identity-providers", tag = "Identity providers",
    params(("realm" = String, Path), ("organizationId" = String, Path)),
    responses((status = 200, description = "The ids of the organization's providers, in order, in `data`", body = [String]),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn organization_providers(
    State(state): State<AppState>,
    reached: Found<Organization, OrganizationRead>,
) -> Result<Answer<Vec<String>>, Error> {
    admin::organization_providers(&state.admin(), reached).await
}

#[utoipa::path(put, path = "/realms/{realm}/organizations/{organizationId}/identity-providers", tag = "Identity providers",
    params(("realm" = String, Path), ("organizationId" = String, Path)), request_body = OfferedProvidersInput,
    responses((status = 200, description = "The organization's providers now, in `data`", body = [String]),
              (status = 400, description = "ValidationFailed: a provider the realm does not have"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn offer_organization_providers(
    State(state): State<AppState>,
    reached: Found<Organization, OrganizationUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<Vec<String>>, Error> {
    admin::offer_organization_providers(&state.admin(), reached, body).await
}
