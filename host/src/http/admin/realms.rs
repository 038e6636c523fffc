//! `/realms`: create, list, read, update, delete.

use super::reach::{InRealm, RealmDelete, RealmRead, RealmUpdate};
use axum::extract::{RawQuery, State};

use crate::directory::admin::realms as admin;
use crate::directory::realms::{RealmInput, RealmView};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::runtime::error::Error;

#[utoipa::path(post, path = "/realms", tag = "Realms", request_body = RealmInput,
    responses((status = 201, description = "The created realm, in `data`", body = RealmView),
              (status = 400, description = "ValidationFailed"), (status = 409, description = "AlreadyExists: the id is taken")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Answer<RealmView>, Error> {
    admin::create(&state.admin(), caller, body).await
}

#[utoipa::path(get, path = "/realms", tag = "Realms",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("searchTerm" = Option<String>, Query),
           ("status" = Option<String>, Query), ("sortBy" = Option<String>, Query, description = "id, displayName, createdAt, updatedAt"),
           ("sortDirection" = Option<String>, Query), ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query)),
    responses((status = 200, description = "A page of the account's realms, in `pagination`", body = [RealmView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<RealmView>, Error> {
    admin::list(&state.admin(), caller, query).await
}

#[utoipa::path(get, path = "/realms/{realm}", tag = "Realms", params(("realm" = String, Path)),
    responses((status = 200, description = "The realm, in `data`", body = RealmView),
              (status = 403, description = "Forbidden: another account's realm, or none")),
    security(("apiKey" = [])))]
pub async fn read(reached: InRealm<RealmRead>) -> Result<Answer<RealmView>, Error> {
    admin::read(reached)
}

#[utoipa::path(put, path = "/realms/{realm}", tag = "Realms", params(("realm" = String, Path)), request_body = RealmInput,
    responses((status = 200, description = "The updated realm, in `data`", body = RealmView), (status = 400), (status = 403),
              (status = 409, description = "Conflict: the platform realm stays active, without self sign-up")),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    reached: InRealm<RealmUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RealmView>, Error> {
    admin::update(&state.admin(), reached, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}", tag = "Realms", params(("realm" = String, Path)),
    responses((status = 200, description = "Deleted, with its clients and people"), (status = 403),
              (status = 409, description = "Conflict: the platform realm cannot be deleted")),
    security(("apiKey" = [])))]
pub async fn delete(State(state): State<AppState>, reached: InRealm<RealmDelete>) -> Result<Answer<()>, Error> {
    admin::delete(&state.admin(), reached).await
}
