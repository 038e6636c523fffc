//! `/realms/{realm}/users`: the people of a realm.

use super::reach::{Found, InRealm, UserCreate, UserDelete, UserImpersonate, UserRead, UserUpdate};
use crate::oauth::tokens::impersonation::ImpersonationView;
use axum::extract::{RawQuery, State};
use axum::response::Response;

use crate::directory::admin::people as admin;
use crate::directory::people::{UserInput, UserView};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::validate::Rule;
use crate::oauth::tokens::impersonation::{self, ImpersonationInput};
use crate::runtime::error::Error;
use crate::store::users::User;

#[utoipa::path(post, path = "/realms/{realm}/users", tag = "Realm users", params(("realm" = String, Path)),
    request_body = UserInput,
    responses((status = 201, description = "The created user, in `data`", body = UserView),
              (status = 400, description = "ValidationFailed, also for a username or e-mail taken in the realm"),
              (status = 403)),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    reached: InRealm<UserCreate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<UserView>, Error> {
    admin::create(&state.admin(), reached, body).await
}

#[utoipa::path(get, path = "/realms/{realm}/users", tag = "Realm users",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query, description = "Matched, in any case, anywhere in the username, e-mail address, first or last name; a term of one or two characters at the start of one of them"),
           ("status" = Option<String>, Query, description = "Active or Disabled"),
           ("sortBy" = Option<String>, Query, description = "username, email, createdAt, updatedAt"), ("sortDirection" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query),
           ("emailConfirmed" = Option<bool>, Query)),
    responses((status = 200, description = "A page of the realm's users, in `pagination`", body = [UserView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    reached: InRealm<UserRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<UserView>, Error> {
    admin::list(&state.admin(), reached, query).await
}

#[utoipa::path(get, path = "/realms/{realm}/users/{userId}", tag = "Realm users",
    params(("realm" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "The user, in `data`", body = UserView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(reached: Found<User, UserRead>) -> Result<Answer<UserView>, Error> {
    admin::read(reached)
}

#[utoipa::path(put, path = "/realms/{realm}/users/{userId}", tag = "Realm users",
    params(("realm" = String, Path), ("userId" = String, Path)), request_body = UserInput,
    responses((status = 200, description = "The updated user, in `data`", body = UserView), (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    reached: Found<User, UserUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<UserView>, Error> {
    admin::update(&state.admin(), reached, body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/users/{userId}", tag = "Realm users",
    params(("realm" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "Deleted; the user's sessions end with it"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(State(state): State<AppState>, reached: Found<User, UserDelete>) -> Result<Answer<()>, Error> {
    admin::delete(&state.admin(), reached).await
}

#[utoipa::path(post, path = "/realms/{realm}/users/{userId}/impersonate", tag = "Realm users",
    params(("realm" = String, Path), ("userId" = String, Path)), request_body = ImpersonationInput,
    responses((status = 200, description = "A short-lived access token for the user, in `data`", body = ImpersonationView),
              (status = 400, description = "`clientId` names no client of the realm"),
              (status = 403, description = "`ImpersonationActorNotAPerson` for an API key, a personal access token or a token from an account client secret, whatever its roles; `Forbidden` without `user:impersonate`"),
              (status = 404), (status = 409, description = "The user or the client is not Active, or the user is under a Full suspension at the client")),
    security(("apiKey" = [])))]
pub async fn impersonate(
    State(state): State<AppState>,
    Found { realm, item: user, caller, .. }: Found<User, UserImpersonate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    if realm.id == crate::kernel::ids::PLATFORM_REALM {
        // The team's own people are never impersonated.
        return Err(Error::Forbidden(crate::kernel::error_code::ErrorCode::Forbidden));
    }
    let input = ImpersonationInput::read(&mut body);
    body.finish()?;
    let Some(ImpersonationInput { client_id }) = input else {
        return Err(Error::invalid("clientId", Rule::Required, "clientId is required"));
    };
    let acting = caller.principal.id.as_str();
    Ok(envelope::ok(impersonation::impersonate(&state, &realm, &user, &client_id, acting, caller.author()).await?))
}
