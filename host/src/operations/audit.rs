//! The account's audit trail (administrative changes) and access log (credential uses), as the
//! account reads them.

use crate::kernel::clock::iso;
use crate::store::access_log::{AccessEntry, AccessOutcome};
use crate::store::trail::TrailRow;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

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
