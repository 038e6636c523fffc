//! `/export` and `/import`: an account's configuration as one document
//! ([`crate::operations::import::configuration`]), read and applied through the admin API itself ([`replay`]).
//!
//! An export needs only what reading each part needs; it never holds a secret. An import (a
//! sensitive request: 50 a minute) plans every item against what the account holds, then, unless it
//! is a dry run, sends each creation or update as the caller: one refused item is reported with its
//! reasons and refuses only what belongs to it. `/import/{resourceType}` and `/export/{resourceType}`
//! take one part (the realms stay as the places of the others).

pub mod migration;
pub mod replay;

use std::collections::HashSet;

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use self::replay::{Executor, Outcome, Replay, foreseen};
use super::imports::{Parameters, parameters};
use crate::authz::permission;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::validate::Rule;
use crate::operations::import::configuration::{Document, Kind, Step, plan};
use crate::runtime::error::Error;
use crate::store::imports::OnConflict;

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
    fn of(step: &Step, outcome: Outcome) -> Self {
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

fn kind_named(name: &str) -> Result<Kind, Error> {
    Kind::named(name).ok_or_else(|| {
        let names: Vec<&str> = Kind::ALL.iter().map(|kind| kind.path_name()).collect();
        Error::invalid("resourceType", Rule::OneOf, format!("resourceType must be one of {}", names.join(", ")))
    })
}

#[utoipa::path(get, path = "/export", tag = "Import",
    responses((status = 200, description = "The account's configuration document (format `castellan-configuration/1`), in `data`: catalogue scopes and realms with their scopes, roles, groups, organizations, resource servers, clients and webhook endpoints, without secrets or generated ids", body = Object),
              (status = 403)),
    security(("apiKey" = [])))]
pub async fn export(State(state): State<AppState>, caller: Caller) -> Result<Response, Error> {
    export_of(&state, &caller, &Kind::ALL).await
}

#[utoipa::path(get, path = "/export/{resourceType}", tag = "Import",
    params(("resourceType" = String, Path, description = "scopes, realms, roles, clients, groups, organizations, resource-servers, identity-providers or webhooks")),
    responses((status = 200, description = "The document with that part only (realms stay, named by id, as the places of their parts), in `data`", body = Object),
              (status = 400), (status = 403)),
    security(("apiKey" = [])))]
pub async fn export_part(
    State(state): State<AppState>,
    caller: Caller,
    Path(resource_type): Path<String>,
) -> Result<Response, Error> {
    export_of(&state, &caller, &[kind_named(&resource_type)?]).await
}

async fn export_of(state: &AppState, caller: &Caller, kinds: &[Kind]) -> Result<Response, Error> {
    caller.require_account(state, permission::REALM_READ)?;
    let document = Replay::new(state, caller).document(None).await?;
    Ok(envelope::ok(document.only(kinds).to_value()))
}

#[utoipa::path(post, path = "/import", tag = "Import",
    params(("onConflict" = Option<String>, Query, description = "Skip (default), Overwrite or Fail: what an item the account holds, different, does"),
           ("dryRun" = Option<bool>, Query, description = "true: answer what the import would do, writing and publishing nothing")),
    request_body(content = Object, description = "A configuration document, as `/export` writes it (`realm:update`, and the permission each item's change needs)"),
    responses((status = 200, description = "The import's report, every item with its outcome", body = ConfigurationImportView),
              (status = 400, description = "ValidationFailed: a parameter, or a document whose shape or keys are wrong (nothing is imported)"),
              (status = 403)),
    security(("apiKey" = [])))]
pub async fn import(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
    JsonBody(body): JsonBody,
) -> Result<Response, Error> {
    import_of(&state, &caller, query, body.into_value(), &Kind::ALL).await
}

#[utoipa::path(post, path = "/import/{resourceType}", tag = "Import",
    params(("resourceType" = String, Path, description = "scopes, realms, roles, clients, groups, organizations, resource-servers, identity-providers or webhooks"),
           ("onConflict" = Option<String>, Query, description = "Skip (default), Overwrite or Fail"),
           ("dryRun" = Option<bool>, Query)),
    request_body(content = Object, description = "A configuration document: only its items of that part are imported, into realms the account holds"),
    responses((status = 200, description = "The import's report", body = ConfigurationImportView), (status = 400), (status = 403)),
    security(("apiKey" = [])))]
pub async fn import_part(
    State(state): State<AppState>,
    caller: Caller,
    Path(resource_type): Path<String>,
    RawQuery(query): RawQuery,
    JsonBody(body): JsonBody,
) -> Result<Response, Error> {
    let kind = kind_named(&resource_type)?;
    import_of(&state, &caller, query, body.into_value(), &[kind]).await
}

async fn import_of(
    state: &AppState,
    caller: &Caller,
    query: Option<String>,
    body: Value,
    kinds: &[Kind],
) -> Result<Response, Error> {
    // An import changes realms: a caller who may not is refused before anything is planned.
    caller.require_account(state, permission::REALM_UPDATE)?;
    let Parameters { on_conflict, dry_run } = parameters(query)?;
    let document = Document::read(body).map_err(Error::Validation)?;
    let report = apply(state, caller, &document, kinds, on_conflict, dry_run).await?;
    Ok(envelope::ok(report))
}

/// Plans the import of `document` against the account and, unless `dry_run`, carries it out.
pub async fn apply(
    state: &AppState,
    caller: &Caller,
    document: &Document,
    kinds: &[Kind],
    on_conflict: OnConflict,
    dry_run: bool,
) -> Result<ConfigurationImportView, Error> {
    let replay = Replay::new(state, caller);
    // Only the realms the document names are read: an import costs what its document holds.
    let named: HashSet<String> = document.realms.iter().map(|realm| realm.key().to_owned()).collect();
    let held = replay.document(Some(&named)).await?;
    let steps = plan(document, &held, kinds, on_conflict);
    let mut executor = Executor::new(&replay, &held);
    let mut items = Vec::with_capacity(steps.len());
    for step in &steps {
        let outcome = if dry_run { foreseen(step) } else { executor.take(step).await? };
        items.push(ItemOutcomeView::of(step, outcome));
    }
    let mut counts = OutcomeCounts::default();
    for item in &items {
        *match item.outcome.as_str() {
            "Created" => &mut counts.created,
            "Updated" => &mut counts.updated,
            "Unchanged" => &mut counts.unchanged,
            "Skipped" => &mut counts.skipped,
            "Withdrawn" => &mut counts.withdrawn,
            _ => &mut counts.refused,
        } += 1;
    }
    let resource_types = kinds.iter().map(|kind| kind.path_name().to_owned()).collect();
    Ok(ConfigurationImportView { dry_run, on_conflict, resource_types, counts, items })
}
