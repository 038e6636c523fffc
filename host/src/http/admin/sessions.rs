//! `/realms/{realm}/sessions`: open sign-in sessions, read and revoked.

use super::reach::{Found, InRealm, SessionDelete, SessionRead};
use axum::extract::{RawQuery, State};

use crate::directory::admin::sessions as admin;
use crate::directory::sessions::SessionView;
use crate::http::AppState;
use crate::http::envelope::Answer;
use crate::runtime::error::Error;
use crate::store::sessions::Session;

#[utoipa::path(get, path = "/realms/{realm}/sessions", tag = "Sessions",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("searchTerm" = Option<String>, Query, description = "Matched against client, user, address and user agent"),
           ("sortBy" = Option<String>, Query, description = "createdAt, lastActiveAt, expiresAt"), ("sortDirection" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query),
           ("userId" = Option<String>, Query), ("clientId" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's open sessions, in `pagination`", body = [SessionView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    reached: InRealm<SessionRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<SessionView>, Error> {
    admin::list(&state.admin(), reached, query).await
}

#[utoipa::path(get, path = "/realms/{realm}/sessions/{sessionId}", tag = "Sessions",
    params(("realm" = String, Path), ("sessionId" = String, Path)),
    responses((status = 200, description = "The session, open or not, in `data`", body = SessionView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    reached: Found<Session, SessionRead>,
) -> Result<Answer<SessionView>, Error> {
    admin::read(&state.admin(), reached).await
}

#[utoipa::path(delete, path = "/realms/{realm}/sessions/{sessionId}", tag = "Sessions",
    params(("realm" = String, Path), ("sessionId" = String, Path)),
    responses((status = 200, description = "Revoked: its refresh tokens are refused and its access tokens inactive at once"),
              (status = 403), (status = 404), (status = 409, description = "Conflict: the session has already ended")),
    security(("apiKey" = [])))]
pub async fn revoke(
    State(state): State<AppState>,
    reached: Found<Session, SessionDelete>,
) -> Result<Answer<()>, Error> {
    admin::revoke(&state.admin(), reached).await
}
