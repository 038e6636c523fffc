//! `/audit-trail` (administrative changes) and `/access-logs` (credential uses).

use axum::extract::{RawQuery, State};

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope::Answer;
use crate::operations::admin::audit as admin;
use crate::operations::audit::{AccessView, TrailView};
use crate::runtime::error::Error;

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
    admin::trail(&state.admin(), caller, query).await
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
    admin::access_logs(&state.admin(), &state.access_log, caller, query).await
}
