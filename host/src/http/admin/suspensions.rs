//! `/realms/{realm}/clients/{client}/users/{userId}/suspensions` (a person's suspensions at a
//! client) and `/suspensions` (every suspension of the account). Writing and lifting need
//! `user:update`; reading needs `user:read`.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;

use super::ListQuery;
use super::reach::{ClientUser, UserRead, UserUpdate};
use crate::authz::permission;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::oauth::admin::suspensions as admin;
use crate::oauth::admin::suspensions::{named, page, status_filter};
use crate::oauth::suspensions;
use crate::oauth::suspensions::{SuspensionInput, SuspensionView};
use crate::runtime::error::Error;
use crate::store::suspensions::SuspensionFilter;

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/users/{userId}/suspensions", tag = "Suspensions",
    params(("realm" = String, Path), ("client" = String, Path), ("userId" = String, Path)),
    request_body = SuspensionInput,
    responses((status = 201, description = "The suspension, in `data`; `user_suspended` is published with it", body = SuspensionView),
              (status = 400, description = "ValidationFailed, one notification per refused field"),
              (status = 403), (status = 404, description = "No such client, or no such person in the realm")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    reached: ClientUser<UserUpdate>,
    JsonBody(body): JsonBody,
) -> Result<Answer<SuspensionView>, Error> {
    admin::create(&state.admin(), reached, body).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/users/{userId}/suspensions", tag = "Suspensions",
    params(("realm" = String, Path), ("client" = String, Path), ("userId" = String, Path),
           ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("status" = Option<String>, Query, description = "Scheduled, Active, Ended or Lifted"),
           ("sortBy" = Option<String>, Query, description = "createdAt, startsAt, endsAt"), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the person's suspensions at the client, in `pagination`", body = [SuspensionView]),
              (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn list_of_user(
    State(state): State<AppState>,
    ClientUser { client, user, caller, .. }: ClientUser<UserRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<SuspensionView>, Error> {
    let list = ListQuery::parse(query, &[])?;
    let filter = SuspensionFilter {
        realm_id: Some(&client.realm_id),
        client_id: Some(&client.id),
        user_id: Some(&user.id),
        status: status_filter(&list)?,
    };
    page(&state.admin(), &caller, filter, &list).await
}

#[utoipa::path(get, path = "/suspensions", tag = "Suspensions",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("searchTerm" = Option<String>, Query),
           ("realmId" = Option<String>, Query), ("clientId" = Option<String>, Query), ("userId" = Option<String>, Query),
           ("status" = Option<String>, Query, description = "Scheduled, Active, Ended or Lifted"),
           ("sortBy" = Option<String>, Query, description = "createdAt, startsAt, endsAt"), ("sortDirection" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query)),
    responses((status = 200, description = "A page of the account's suspensions, newest first, in `pagination`", body = [SuspensionView]),
              (status = 400), (status = 403)),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<SuspensionView>, Error> {
    caller.require_account(&state.authz, permission::USER_READ)?;
    let list = ListQuery::parse(query, &["realmId", "clientId", "userId"])?;
    let filter = SuspensionFilter {
        realm_id: list.filter("realmId"),
        client_id: list.filter("clientId"),
        user_id: list.filter("userId"),
        status: status_filter(&list)?,
    };
    page(&state.admin(), &caller, filter, &list).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/users/{userId}/suspensions/{suspensionId}", tag = "Suspensions",
    params(("realm" = String, Path), ("client" = String, Path), ("userId" = String, Path), ("suspensionId" = String, Path)),
    responses((status = 200, body = SuspensionView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    ClientUser { client, user, .. }: ClientUser<UserRead>,
    Path((_, _, _, id)): Path<(String, String, String, String)>,
) -> Result<Response, Error> {
    let suspension = named(&state.admin(), &client, &user, &id).await?;
    Ok(envelope::ok(SuspensionView::of(&suspension, state.clock.now())))
}

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/users/{userId}/suspensions/{suspensionId}/lift", tag = "Suspensions",
    params(("realm" = String, Path), ("client" = String, Path), ("userId" = String, Path), ("suspensionId" = String, Path)),
    responses((status = 200, description = "The lifted suspension; `user_suspension_ended` is published with it", body = SuspensionView),
              (status = 403), (status = 404),
              (status = 409, description = "SuspensionAlreadyEnded: it was already lifted or has run out")),
    security(("apiKey" = [])))]
pub async fn lift(
    State(state): State<AppState>,
    ClientUser { client, user, caller, .. }: ClientUser<UserUpdate>,
    Path((_, _, _, id)): Path<(String, String, String, String)>,
) -> Result<Response, Error> {
    let before = named(&state.admin(), &client, &user, &id).await?;
    let now = state.clock.now();
    let lifted = suspensions::lift(&state, caller.author(), &before, |s| SuspensionView::of(s, now)).await?;
    Ok(envelope::ok(SuspensionView::of(&lifted, now)))
}
