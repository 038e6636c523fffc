//! `/realms/{realm}/sessions`: open sign-in sessions, read and revoked.

use super::reach::{Found, InRealm, SessionDelete, SessionRead};
use axum::extract::{RawQuery, State};
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::ListQuery;
use crate::directory::sessions;
use crate::http::AppState;
use crate::http::envelope::Answer;
use crate::kernel::clock::iso;
use crate::runtime::error::Error;
use crate::store::sessions::{self as session_store, Session};

/// A session as the admin API shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    pub id: String,
    pub realm_id: String,
    pub client_id: String,
    pub user_id: String,
    pub ip_address: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// How the person signed in (`pwd`, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub authentication_methods: Vec<String>,
    /// Active, Ended (revoked, signed out or ended on refresh-token reuse) or Expired.
    pub status: &'static str,
    pub created_at: String,
    pub last_active_at: String,
    pub expires_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
}

impl SessionView {
    fn of(session: &Session, now: DateTime<Utc>) -> Self {
        let status = match (session.ended_at, session.expires_at > now) {
            (Some(_), _) => "Ended",
            (None, false) => "Expired",
            (None, true) => "Active",
        };
        Self {
            id: session.id.clone().into(),
            realm_id: session.realm_id.to_string(),
            client_id: session.client_id.to_string(),
            user_id: session.user_id.to_string(),
            ip_address: session.ip_address.clone(),
            user_agent: session.user_agent.clone(),
            authentication_methods: session.authentication_methods.clone(),
            status,
            created_at: iso(session.created_at),
            last_active_at: iso(session.last_active_at),
            expires_at: iso(session.expires_at),
            ended_at: session.ended_at.map(iso),
            end_reason: session.end_reason.clone(),
        }
    }
}

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
    let now = state.clock.now();
    sessions::end(&state, &session, caller.author(), |session| SessionView::of(session, now)).await?;
    Ok(Answer::Done)
}
