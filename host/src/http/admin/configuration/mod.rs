//! `/export` and `/import`: an account's configuration as one document
//! ([`crate::operations::import::configuration`]), read and applied through the admin API itself ([`replay`]).
//!
//! An export needs only what reading each part needs; it never holds a secret. An import (a
//! sensitive request: 50 a minute) plans every item against what the account holds, then, unless it
//! is a dry run, sends each creation or update as the caller: one refused item is reported with its
//! reasons and refuses only what belongs to it. `/import/{resourceType}` and `/export/{resourceType}`
//! take one part (the realms stay as the places of the others).

pub mod migration;

use std::collections::HashSet;

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use serde_json::Value;

use super::imports::{Parameters, parameters};
use crate::authz::permission;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::validate::Rule;
use crate::operations::import::configuration::outcome::ConfigurationImportView;
use crate::operations::import::configuration::outcome::ItemOutcomeView;
use crate::operations::import::configuration::outcome::OutcomeCounts;
use crate::operations::import::configuration::replay::{Executor, Replay, foreseen};
use crate::operations::import::configuration::{Document, Kind, plan};
use crate::runtime::error::Error;
use crate::store::imports::OnConflict;

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
    caller.require_account(&state.authz, permission::REALM_READ)?;
    let document = Replay::new(state.admin(), &state.webhooks, caller).document(None).await?;
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
    caller.require_account(&state.authz, permission::REALM_UPDATE)?;
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
    let replay = Replay::new(state.admin(), &state.webhooks, caller);
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
