//! `/realms/{realm}/users/{userId}/authenticators`: a person's authenticators beyond the password
//! (TOTP apps, recovery codes, passkeys). Reading needs `user:read`; removing one, or all of them
//! ("reset second factors", for a person who lost their phone), `user:update`. No secret is ever
//! shown: an authenticator tells its kind, its name, and when it was added and last used.

use axum::extract::{Path, State};
use axum::response::Response;
use serde_json::json;

use super::reach::{Found, UserRead, UserUpdate};
use crate::http::AppState;
use crate::http::envelope;
use crate::oauth::second_factors::{self, AuthenticatorView, By};
use crate::runtime::error::Error;
use crate::store::users::User;

#[utoipa::path(get, path = "/realms/{realm}/users/{userId}/authenticators", tag = "Users",
    params(("realm" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "The person's authenticators, the oldest first", body = [AuthenticatorView]),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    Found { item: user, .. }: Found<User, UserRead>,
) -> Result<Response, Error> {
    Ok(envelope::ok(second_factors::list(&state, &user).await?))
}

#[utoipa::path(delete, path = "/realms/{realm}/users/{userId}/authenticators", tag = "Users",
    params(("realm" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "Every authenticator removed (`removed` counts them), each with its \
        `authenticator_removed` event: the person signs in with their password until they enrol again"),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn reset(
    State(state): State<AppState>,
    Found { realm, item: user, caller, .. }: Found<User, UserUpdate>,
) -> Result<Response, Error> {
    let removed = second_factors::reset(&state, &realm, &user, By::Administrator(caller.author())).await?;
    Ok(envelope::ok(json!({ "removed": removed })))
}

#[utoipa::path(delete, path = "/realms/{realm}/users/{userId}/authenticators/{authenticatorId}", tag = "Users",
    params(("realm" = String, Path), ("userId" = String, Path), ("authenticatorId" = String, Path)),
    responses((status = 200, description = "Removed, with its `authenticator_removed` event; removing the last \
        second factor removes the recovery codes too"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn remove(
    State(state): State<AppState>,
    Found { realm, item: user, caller, .. }: Found<User, UserUpdate>,
    Path((_, _, id)): Path<(String, String, String)>,
) -> Result<Response, Error> {
    second_factors::remove(&state, &realm, &user, &id, By::Administrator(caller.author())).await?;
    Ok(envelope::done())
}
