//! Imports. [`configuration`]: an account's realms, clients, roles, groups, scopes, organizations,
//! resource servers and webhook endpoints as one document, and the plan of importing one.
//! [`migration`]: exports of Keycloak and Auth0 read into that document and user import rows.
//! [`users`]: people with the password hashes other providers exported, read
//! a batch at a time so a file of any length is imported in bounded memory, every refused row
//! reported with its line and reasons and none of them stopping the others.

use crate::kernel::clock::iso;
use crate::store::imports::{self as store, ImportStatus, OnConflict, UserImport};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

pub mod configuration;
mod factors;
pub mod migration;
pub mod users;

/// An import and its counts.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportView {
    pub id: String,
    pub realm_id: String,
    pub client_id: String,
    /// Running, Completed or Failed.
    pub status: ImportStatus,
    /// Skip, Overwrite or Fail.
    pub on_conflict: OnConflict,
    pub rows_read: i64,
    pub created: i64,
    pub updated: i64,
    pub skipped: i64,
    pub refused: i64,
    /// Why the service stopped the import, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    pub started_at: String,
    pub updated_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Every refused row (in the report of one import).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusals: Option<Vec<RefusalView>>,
    /// A dry run: every row checked as the import would, nothing written or published, no job kept.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

/// A refused row.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefusalView {
    /// The row's line in a JSON Lines body, its position (from 1) in a JSON array.
    pub line: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// `{field, code, message}` for each problem, as in the admin envelope's notifications.
    pub reasons: Value,
}

impl ImportView {
    pub fn of(job: &UserImport, refusals: Option<Vec<store::Refusal>>) -> Self {
        Self {
            id: job.id.to_string(),
            realm_id: job.realm_id.to_string(),
            client_id: job.client_id.to_string(),
            status: job.status,
            on_conflict: job.on_conflict,
            rows_read: job.rows_read,
            created: job.created,
            updated: job.updated,
            skipped: job.skipped,
            refused: job.refused,
            failure: job.failure.clone(),
            started_at: iso(job.started_at),
            updated_at: iso(job.updated_at),
            finished_at: job.finished_at.map(iso),
            refusals: refusals.map(|all| {
                all.iter()
                    .map(|r| RefusalView {
                        line: r.line,
                        username: r.username.clone(),
                        reasons: self::users::reasons(r),
                    })
                    .collect()
            }),
            dry_run: false,
        }
    }
}
