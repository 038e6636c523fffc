//! `/secrets`: the account's credentials for the admin API, and their rotation.

use super::reach::{Owned, SecretDelete, SecretRead, SecretUpdate};
use axum::extract::{RawQuery, State};
use axum::response::Response;

use crate::authz::permission;
use crate::directory::admin::secrets as admin;
use crate::directory::rotation::{MAX_PREVIOUS_VALUE_VALID_FOR_MINUTES, RotationInput};
use crate::directory::secrets;
use crate::directory::secrets::{RotatedSecret, RotationPolicy, SecretInput, SecretView};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::runtime::error::Error;
use crate::store::secrets::Secret;

#[utoipa::path(post, path = "/secrets", tag = "Secrets", request_body = SecretInput,
    responses((status = 201, description = "The created secret with its `value` (shown once), in `data`", body = SecretView),
              (status = 400)),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody,
) -> Result<Answer<SecretView>, Error> {
    admin::create(&state.admin(), caller, body).await
}

#[utoipa::path(get, path = "/secrets", tag = "Secrets",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("searchTerm" = Option<String>, Query),
           ("status" = Option<String>, Query, description = "A secret type"), ("sortBy" = Option<String>, Query),
           ("sortDirection" = Option<String>, Query), ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query)),
    responses((status = 200, description = "A page of the account's secrets (never their values), in `pagination`", body = [SecretView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<SecretView>, Error> {
    admin::list(&state.admin(), caller, query).await
}

#[utoipa::path(get, path = "/secrets/{id}", tag = "Secrets", params(("id" = String, Path)),
    responses((status = 200, description = "The secret without its value, in `data`", body = SecretView), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    Owned { item: secret, .. }: Owned<Secret, SecretRead>,
) -> Result<Response, Error> {
    Ok(envelope::ok(SecretView::of(&secret, state.clock.now())))
}

#[utoipa::path(delete, path = "/secrets/{id}", tag = "Secrets", params(("id" = String, Path)),
    responses((status = 200, description = "Deleted; the secret gets 401 from the next call on"), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    Owned { item: secret, caller, .. }: Owned<Secret, SecretDelete>,
) -> Result<Response, Error> {
    secrets::delete(&state, &secret, caller.author()).await?;
    Ok(envelope::done())
}

#[utoipa::path(post, path = "/secrets/{id}/rotate", tag = "Secrets", params(("id" = String, Path)),
    request_body(content = RotationInput, description = "Optional; an empty body rotates immediately"),
    responses((status = 200, description = "The secret with its new `value` (shown once) and `rotation`, in `data`", body = RotatedSecret),
              (status = 400), (status = 404)),
    security(("apiKey" = [])))]
pub async fn rotate(
    State(state): State<AppState>,
    reached: Owned<Secret, SecretUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<RotatedSecret>, Error> {
    admin::rotate(&state.admin(), reached, body).await
}

#[utoipa::path(get, path = "/secrets/rotation-policy", tag = "Secrets",
    responses((status = 200, description = "The limits of rotation, in `data`", body = RotationPolicy), (status = 403)),
    security(("apiKey" = [])))]
pub async fn rotation_policy(State(state): State<AppState>, caller: Caller) -> Result<Response, Error> {
    // Open to whoever may read or change secrets (`secret:write` holds `secret:update`).
    if let Err(refused) = caller.require_account(&state.authz, permission::SECRET_READ) {
        caller.require_account(&state.authz, permission::SECRET_UPDATE).map_err(|_| refused)?;
    }
    Ok(envelope::ok(RotationPolicy { max_previous_value_valid_for_minutes: MAX_PREVIOUS_VALUE_VALID_FOR_MINUTES }))
}
