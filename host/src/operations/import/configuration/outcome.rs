//! What became of an import's steps: each item's outcome, and the counts of the whole.

use super::plan::Step;
use crate::store::imports::OnConflict;
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

/// What became of one item of an import.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemOutcomeView {
    /// CatalogueScope, Realm, RealmSettings, RealmScope, RealmRole, Client, ClientRole,
    /// ClientGrantedRole, Group, GroupRole, Organization, ResourceServer, IdentityProvider, RealmWebhook
    /// or ClientWebhook.
    pub collection: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub realm_id: Option<String>,
    /// The client the item belongs to, or the client a role is granted to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The group a role is granted to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The item's id, name, address or url; for a grant the role (`client/role` for a client role).
    pub key: String,
    /// Created, Updated, Unchanged, Skipped, Withdrawn (a grant the document does not make,
    /// overwriting) or Refused; in a dry run, what the import would do.
    pub outcome: String,
    /// Why it was refused: `{field, code, message}` each, as in the admin envelope.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<Object>)]
    pub reasons: Vec<Value>,
    /// The secret of a created confidential client or webhook endpoint, shown once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// The items of each outcome.
#[derive(Debug, Default, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutcomeCounts {
    pub created: i64,
    pub updated: i64,
    pub unchanged: i64,
    pub skipped: i64,
    pub withdrawn: i64,
    pub refused: i64,
}

/// The report of a configuration import.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigurationImportView {
    /// Nothing was written or published: each outcome is what the import would do.
    pub dry_run: bool,
    /// Skip, Overwrite or Fail.
    pub on_conflict: OnConflict,
    /// The parts imported: scopes, realms, roles, clients, groups, organizations, resource-servers,
    /// identity-providers, webhooks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resource_types: Vec<String>,
    pub counts: OutcomeCounts,
    /// Every item, in the order the import takes them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<ItemOutcomeView>,
}

impl ItemOutcomeView {
    pub(crate) fn of(step: &Step, outcome: Outcome) -> Self {
        Self {
            collection: format!("{:?}", step.collection),
            realm_id: step.realm.clone(),
            client_id: step.client.clone(),
            group: step.group.clone(),
            key: step.key.clone(),
            outcome: outcome.outcome.to_owned(),
            reasons: outcome.reasons,
            secret: outcome.secret,
        }
    }
}

/// What became of one step.
pub struct Outcome {
    pub outcome: &'static str,
    pub reasons: Vec<Value>,
    /// A created client's secret or endpoint's signing secret.
    pub secret: Option<String>,
}

impl Outcome {
    pub(crate) fn of(outcome: &'static str) -> Self {
        Self { outcome, reasons: Vec::new(), secret: None }
    }

    pub(crate) fn refused(reasons: Vec<Value>) -> Self {
        Self { outcome: "Refused", reasons, secret: None }
    }

    pub(crate) fn refused_because(message: impl Into<String>) -> Self {
        Self::refused(vec![json!({ "code": "Refused", "message": message.into() })])
    }
}
