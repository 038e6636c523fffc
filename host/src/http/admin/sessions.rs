//! `/realms/{realm}/sessions`: open sign-in sessions, read and revoked.

use super::reach::{Found, InRealm, SessionDelete, SessionRead};
use axum::extract::{RawQuery, State};

use super::ListQuery;
use crate::directory::sessions;
use crate::directory::sessions::SessionView;
use crate::http::AppState;
use crate::http::envelope::Answer;
use crate::runtime::error::Error;
use crate::store::sessions::{self as session_store, Session};

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
    InRealm { realm, .. }: InRealm<SessionRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<SessionView>, Error> {
    let list = ListQuery::parse(query, &["userId", "clientId"])?;
    let now = state.clock.now();
    let filter = session_store::SessionFilter { user_id: list.filter("userId"), client_id: list.filter("clientId") };
    let found = session_store::page(&state.store, &realm.id, now, filter, &list.page).await?;
    Ok(Answer::Paged(found.map(|session| SessionView::of(&session, now))))
}

#[utoipa::path(get, path = "/realms/{realm}/sessions/{sessionId}", tag = "Sessions",
    params(("realm" = String, Path), ("sessionId" = String, Path)),
    responses((status = 200, description = "The session, open or not, in `data`", body = SessionView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    Found { item: session, .. }: Found<Session, SessionRead>,
) -> Result<Answer<SessionView>, Error> {
    Ok(Answer::Ok(SessionView::of(&session, state.clock.now())))
}

#[utoipa::path(delete, path = "/realms/{realm}/sessions/{sessionId}", tag = "Sessions",
    params(("realm" = String, Path), ("sessionId" = String, Path)),
    responses((status = 200, description = "Revoked: its refresh tokens are refused and its access tokens inactive at once"),
              (status = 403), (status = 404), (status = 409, description = "Conflict: the session has already ended")),
    security(("apiKey" = [])))]
pub async fn revoke(
    State(state): State<AppState>,
    Found { item: session, caller, .. }: Found<Session, SessionDelete>,
) -> Result<Answer<()>, Error> {
    sessions::end(&state, &session, caller.author()).await?;
    Ok(Answer::Done)
}
