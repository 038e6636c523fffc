//! `/realms/{realm}/connections` and `/realms/{realm}/users/{userId}/connections`: the accounts
//! people connected at the realm's connection providers. Reading needs `user:read`, removing
//! `user:update`. The upstream tokens are never shown: a connection tells its provider, the
//! scopes granted, when its token expires and when it was last used.

use axum::extract::{RawQuery, State};
use axum::response::Response;

use super::ListQuery;
use super::reach::{Found, InRealm, UserRead, UserUpdate};
use crate::http::AppState;
use crate::http::envelope;
use crate::oauth::federation::connections::ConnectionView;
use crate::runtime::error::Error;
use crate::store::connections::{self as store, Connection};
use crate::store::users::User;

#[utoipa::path(get, path = "/realms/{realm}/connections", tag = "Connected accounts",
    params(("realm" = String, Path), ("userId" = Option<String>, Query), ("providerId" = Option<String>, Query),
           ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("status" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query),
           ("sortBy" = Option<String>, Query, description = "createdAt, updatedAt, lastUsedAt"), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's connections, in `pagination`", body = [ConnectionView]), (status = 403)),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<UserRead>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    let list = ListQuery::parse(query, &["userId", "providerId"])?;
    list.status_in(crate::store::connections::ConnectionStatus::NAMES)?;
    let found =
        store::page(&state.store, &realm.id, list.filter("userId"), list.filter("providerId"), &list.page).await?;
    Ok(envelope::paged(found.map(|connection| ConnectionView::from(&connection))))
}

#[utoipa::path(get, path = "/realms/{realm}/users/{userId}/connections", tag = "Connected accounts",
    params(("realm" = String, Path), ("userId" = String, Path), ("pageNumber" = Option<u32>, Query),
           ("pageSize" = Option<u32>, Query), ("status" = Option<String>, Query)),
    responses((status = 200, description = "A page of the person's connections, in `pagination`", body = [ConnectionView]),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn of_user(
    State(state): State<AppState>,
    Found { realm, item: user, .. }: Found<User, UserRead>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::connections::ConnectionStatus::NAMES)?;
    let found = store::page(&state.store, &realm.id, Some(&user.id), None, &list.page).await?;
    Ok(envelope::paged(found.map(|connection| ConnectionView::from(&connection))))
}

#[utoipa::path(get, path = "/realms/{realm}/connections/{connectionId}", tag = "Connected accounts",
    params(("realm" = String, Path), ("connectionId" = String, Path)),
    responses((status = 200, body = ConnectionView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(Found { item: connection, .. }: Found<Connection, UserRead>) -> Result<Response, Error> {
    Ok(envelope::ok(ConnectionView::from(&connection)))
}

#[utoipa::path(delete, path = "/realms/{realm}/connections/{connectionId}", tag = "Connected accounts",
    params(("realm" = String, Path), ("connectionId" = String, Path)),
    responses((status = 200, description = "Removed: its tokens are forgotten, and no exchange hands them out again"),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    Found { item: connection, caller, .. }: Found<Connection, UserUpdate>,
) -> Result<Response, Error> {
    crate::oauth::federation::connections::remove(&state, &connection, caller.author()).await?;
    Ok(envelope::done())
}
