//! `/audit-trail` (administrative changes) and `/access-logs` (credential uses).

use axum::extract::{RawQuery, State};

use super::ListQuery;
use crate::authz::permission;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope::Answer;
use crate::operations::audit::{AccessView, TrailView};
use crate::runtime::error::Error;
use crate::store::access_log::{self};
use crate::store::trail::{self};

#[utoipa::path(get, path = "/audit-trail", tag = "Audit",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("searchTerm" = Option<String>, Query),
           ("status" = Option<String>, Query, description = "Succeeded or Refused"), ("realmId" = Option<String>, Query),
           ("resourceType" = Option<String>, Query), ("actorCredentialId" = Option<String>, Query),
           ("actorUserId" = Option<String>, Query), ("action" = Option<String>, Query, description = "Create, Update, Delete or Impersonate"),
           ("sortBy" = Option<String>, Query), ("sortDirection" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query)),
    responses((status = 200, description = "A page of the change trail, newest first, in `pagination`", body = [TrailView])),
    security(("apiKey" = [])))]
pub async fn trail(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<TrailView>, Error> {
    caller.require_account(&state.authz, permission::AUDIT_READ)?;
    let list = ListQuery::parse(query, &["realmId", "resourceType", "actorCredentialId", "actorUserId", "action"])?;
    list.status_in(crate::store::trail::Outcome::NAMES)?;
    let filter = trail::TrailFilter {
        realm_id: list.filter("realmId"),
        resource_type: list.filter("resourceType"),
        actor_credential_id: list.filter("actorCredentialId"),
        actor_user_id: list.filter("actorUserId"),
        action: list.filter("action"),
    };
    let found = trail::page(&state.store, caller.account_id(), filter, &list.page).await?;
    Ok(Answer::Paged(found.map(TrailView::from)))
}

#[utoipa::path(get, path = "/access-logs", tag = "Audit",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("searchTerm" = Option<String>, Query),
           ("status" = Option<String>, Query, description = "Accepted or Refused"), ("credentialId" = Option<String>, Query),
           ("actorUserId" = Option<String>, Query, description = "The person the call acted for"),
           ("sortBy" = Option<String>, Query), ("sortDirection" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query)),
    responses((status = 200, description = "A page of the access log, newest first, in `pagination`", body = [AccessView])),
    security(("apiKey" = [])))]
pub async fn access_logs(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<AccessView>, Error> {
    caller.require_account(&state.authz, permission::AUDIT_READ)?;
    let list = ListQuery::parse(query, &["credentialId", "actorUserId"])?;
    list.status_in(crate::store::access_log::AccessOutcome::NAMES)?;
    // Entries of this host still queued are written first, so a caller reads its own requests.
    state.access_log.flush().await;
    let (credential, person) = (list.filter("credentialId"), list.filter("actorUserId"));
    let found = access_log::page(&state.store, caller.account_id(), credential, person, &list.page).await?;
    Ok(Answer::Paged(found.map(AccessView::from)))
}
