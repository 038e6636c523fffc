//! `/import/translate` and `/import/migrate`: an export of Keycloak or Auth0 read into this
//! service's terms ([`crate::operations::import::migration`]), shown item by item, then imported: the
//! configuration as `/import` imports it, then the people through one of the translated clients,
//! as the client's user import does. A migration is a dry run unless `dryRun=false` is given.

use crate::operations::import::ImportView;
use axum::extract::{RawQuery, State};
use axum::response::Response;

use super::super::imports::{Parameters, parameters_with};
use super::apply;
use crate::authz::permission;
use crate::directory::reach::client_in_reach;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::validate::Rule;
use crate::operations::import::configuration::Document;
use crate::operations::import::configuration::Kind;
use crate::operations::import::migration::{self, Provider, Translation};
use crate::operations::import::migration::{MigrationView, TranslationView};
use crate::operations::import::users::{BATCH_ROWS, Finished, Importer, Row};
use crate::runtime::error::Error;
use crate::store::clients::{self as client_store, Client, ClientType};
use crate::store::imports::{self as import_store, OnConflict};

/// The source of a translation: `from`, and `realm` when given.
fn source(given: &[(String, String)]) -> Result<(&'static str, Provider, Option<String>), Error> {
    let value = |name: &str| given.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let from = value("from").unwrap_or_default();
    let Some((name, provider)) = Provider::NAMES.iter().find(|(name, _)| *name == from) else {
        return Err(Error::invalid("from", Rule::OneOf, "from must be keycloak or auth0"));
    };
    Ok((*name, *provider, value("realm").filter(|r| !r.is_empty())))
}

#[utoipa::path(post, path = "/import/translate", tag = "Import",
    params(("from" = String, Query, description = "keycloak (a realm export) or auth0 (the Deploy CLI's tenant document with `users`)"),
           ("realm" = Option<String>, Query, description = "The realm id to translate into; by default made from the export's realm or tenant name")),
    request_body(content = Object, description = "The provider's export"),
    responses((status = 200, description = "What each item of the export becomes: mapped, changed (and how) or left behind (and why), with the configuration document and the user rows", body = TranslationView),
              (status = 400), (status = 403)),
    security(("apiKey" = [])))]
pub async fn translate(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
    JsonBody(body): JsonBody,
) -> Result<Response, Error> {
    caller.require_account(&state.authz, permission::REALM_READ)?;
    let given = own_parameters(query, &["from", "realm"])?;
    let (from, provider, realm) = source(&given)?;
    let translation = migration::translate(provider, body.into_value(), realm.as_deref()).map_err(Error::Validation)?;
    Ok(envelope::ok(TranslationView::of(from, &translation, true)))
}

/// The parameters of a translation: only `own` ones.
fn own_parameters(query: Option<String>, own: &[&str]) -> Result<Vec<(String, String)>, Error> {
    let pairs = super::super::query_pairs(query);
    match pairs.iter().find(|(name, _)| !own.contains(&name.as_str())) {
        Some((name, _)) => {
            Err(Error::invalid(name, Rule::Unknown, format!("{name} is not a parameter of a translation")))
        }
        None => Ok(pairs),
    }
}

#[utoipa::path(post, path = "/import/migrate", tag = "Import",
    params(("from" = String, Query, description = "keycloak or auth0"),
           ("dryRun" = Option<bool>, Query, description = "true (the default): answer what the migration would do, writing and publishing nothing; false: do it"),
           ("onConflict" = Option<String>, Query, description = "Skip (default), Overwrite or Fail, for configuration and people alike"),
           ("realm" = Option<String>, Query, description = "The realm id to migrate into"),
           ("client" = Option<String>, Query, description = "The client the people are imported through (whose endpoints hear `user_created`); by default the first translated client")),
    request_body(content = Object, description = "The provider's export"),
    responses((status = 200, description = "The translation, the configuration import's report and the people's", body = MigrationView),
              (status = 400), (status = 403)),
    security(("apiKey" = [])))]
pub async fn migrate(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
    JsonBody(body): JsonBody,
) -> Result<Response, Error> {
    caller.require_account(&state.authz, permission::REALM_UPDATE)?;
    let (Parameters { on_conflict, dry_run }, given) = parameters_with(query, &["from", "realm", "client"], true)?;
    let (from, provider, realm) = source(&given)?;
    let translation = migration::translate(provider, body.into_value(), realm.as_deref()).map_err(Error::Validation)?;
    let chosen = given.iter().find(|(name, _)| name == "client").map(|(_, v)| v.clone());
    let client = chosen.or_else(|| {
        let realm = translation.document.realms.first()?;
        realm.clients.first().map(|client| client.key().to_owned())
    });
    let configuration = apply(&state, &caller, &translation.document, &Kind::ALL, on_conflict, dry_run).await?;
    let (mut users, mut users_not_imported) = (None, None);
    match (translation.realm_id(), client) {
        (Some(realm), Some(client)) if !translation.users.is_empty() => {
            let people = People { realm, client: &client, on_conflict, dry_run };
            match people.import(&state, &caller, &translation).await? {
                Some(report) => users = Some(report),
                None => users_not_imported = Some(format!("the client {client} was not imported: no one was")),
            }
        }
        (_, None) if !translation.users.is_empty() => {
            users_not_imported = Some("people are imported through a client: name one with client=".into());
        }
        _ => {}
    }
    let translation = TranslationView::of(from, &translation, false);
    Ok(envelope::ok(MigrationView { dry_run, translation, configuration, users, users_not_imported }))
}

/// The import of a translation's people.
struct People<'a> {
    realm: &'a str,
    client: &'a str,
    on_conflict: OnConflict,
    dry_run: bool,
}

impl People<'_> {
    /// The import's report; none when the client does not exist after a real run of the
    /// configuration (it was refused).
    async fn import(
        &self,
        state: &AppState,
        caller: &Caller,
        translation: &Translation,
    ) -> Result<Option<ImportView>, Error> {
        let stored = client_store::find(state.store.pool(), self.realm, self.client).await?;
        let client = match stored {
            Some(_) => {
                client_in_reach(&state.admin(), caller, self.realm, self.client, permission::USER_CREATE).await?
            }
            // In a dry run the configuration would make it first.
            None if self.dry_run => Client::new(self.realm, self.client, ClientType::Confidential, state.clock.now()),
            None => return Ok(None),
        };
        let mut importer = Importer::start(state, caller.author(), &client, self.on_conflict, self.dry_run).await?;
        if self.dry_run {
            foresee(&mut importer, &translation.document);
        }
        let rows: Vec<Row> = translation.users.iter().cloned().zip(1..).map(|(row, line)| (line, Ok(row))).collect();
        let mut outcome = Ok(());
        for batch in rows.chunks(BATCH_ROWS) {
            outcome = importer.take(batch.to_vec()).await;
            if outcome.is_err() {
                break;
            }
        }
        let failure = outcome.as_ref().err().map(|error| format!("the import stopped: {error}"));
        let Finished { job, dry_run_refusals } = importer.finish(failure).await?;
        outcome?;
        let refusals = match dry_run_refusals {
            Some(refusals) => refusals,
            None => import_store::refusals(state.store.pool(), &job.id).await?,
        };
        let mut view = ImportView::of(&job, Some(refusals));
        view.dry_run = self.dry_run;
        Ok(Some(view))
    }
}

/// Tells a dry run's importer the names the configuration would make, so rows naming them are
/// checked as the real import would check them.
fn foresee(importer: &mut Importer<'_>, document: &Document) {
    for realm in &document.realms {
        let roles = realm.roles.iter().map(|role| role.key.clone());
        let client_roles =
            realm.clients.iter().flat_map(|c| c.roles.iter().map(move |role| format!("{}/{}", c.key(), role.key)));
        let groups = realm.groups.iter().map(|group| group.item.key.clone());
        let organizations = realm.organizations.iter().map(|organization| organization.key.clone());
        importer.foresee(roles.collect(), client_roles.collect(), groups.collect(), organizations.collect());
    }
}
