//! `/audit-trail` (administrative changes) and `/access-logs` (credential uses).

use axum::extract::{RawQuery, State};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::ListQuery;
use crate::authz::permission;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope::Answer;
use crate::kernel::clock::iso;
use crate::runtime::error::Error;
use crate::store::access_log::{self, AccessEntry, AccessOutcome};
use crate::store::trail::{self, TrailRow};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrailView {
    pub id: String,
    pub occurred_at: String,
    /// Succeeded or Refused.
    pub outcome: String,
    /// Create, Update, Delete or Impersonate.
    pub action: String,
    pub resource_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub realm_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// User or Credential.
    pub actor_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor_user_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor_username: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor_email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor_credential_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor_credential_name: Option<String>,
    pub ip_address: String,
    pub method: String,
    pub path: String,
    pub status: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl From<TrailRow> for TrailView {
    fn from(row: TrailRow) -> Self {
        let json = |text: Option<String>| text.and_then(|t| serde_json::from_str(&t).ok());
        Self {
            id: row.id,
            occurred_at: iso(row.occurred_at),
            outcome: row.outcome,
            action: row.action,
            resource_type: row.resource_type,
            resource_id: row.resource_id,
            parent_id: row.parent_id,
            realm_id: row.realm_id.map(String::from),
            client_id: row.client_id.map(String::from),
            actor_type: row.actor_type,
            actor_user_id: row.actor_user_id.map(String::from),
            actor_username: row.actor_username,
            actor_email: row.actor_email,
            actor_credential_id: row.actor_credential_id.map(String::from),
            actor_credential_name: row.actor_credential_name,
            ip_address: row.ip_address,
            method: row.method,
            path: row.path,
            status: row.status,
            error_code: row.error_code,
            before: json(row.before_state),
            after: json(row.after_state),
            details: json(row.details),
        }
    }
}

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
    caller.require_account(&state, permission::AUDIT_READ)?;
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

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessView {
    pub id: String,
    pub occurred_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credential_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credential_name: Option<String>,
    /// The person the credential acts for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor_user_id: Option<String>,
    pub ip_address: String,
    pub method: String,
    pub path: String,
    pub status: i64,
    pub outcome: AccessOutcome,
    /// Why it was refused (an error code, or why the credential was not accepted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl From<AccessEntry> for AccessView {
    fn from(e: AccessEntry) -> Self {
        Self {
            id: e.id,
            occurred_at: iso(e.occurred_at),
            credential_id: e.credential_id.map(String::from),
            credential_name: e.credential_name,
            actor_user_id: e.actor_user_id.map(String::from),
            ip_address: e.ip_address,
            method: e.method,
            path: e.path,
            status: e.status,
            outcome: e.outcome,
            reason: e.reason,
        }
    }
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
    caller.require_account(&state, permission::AUDIT_READ)?;
    let list = ListQuery::parse(query, &["credentialId", "actorUserId"])?;
    list.status_in(crate::store::access_log::AccessOutcome::NAMES)?;
    // Entries of this host still queued are written first, so a caller reads its own requests.
    state.access_log.flush().await;
    let (credential, person) = (list.filter("credentialId"), list.filter("actorUserId"));
    let found = access_log::page(&state.store, caller.account_id(), credential, person, &list.page).await?;
    Ok(Answer::Paged(found.map(AccessView::from)))
}
