//! `/realms/{realm}/clients/{client}/users/import`: importing people through a client, and the
//! imports' reports. Importing needs `user:create` (a sensitive request: 50 a minute); reading the
//! reports needs `user:read`.
//!
//! A body of `application/json` (an array of rows, or `{"users": [...]}`) is read whole, within the
//! service's body limit; a body of JSON Lines (`application/x-ndjson` or `application/jsonl`) is
//! read as it arrives, a batch of rows at a time, up to [`MAX_LINES_BYTES`].

use axum::body::Body as RequestBody;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, header};
use axum::response::Response;
use futures_util::StreamExt as _;
use serde_json::Value;

use super::ListQuery;
use super::reach::{InClient, UserCreate, UserRead};
use crate::http::AppState;
use crate::http::envelope;
use crate::kernel::validate::Rule;
use crate::operations::import::ImportView;
use crate::operations::import::users::{self as import, BATCH_ROWS, Finished, Importer, Row};
use crate::runtime::error::Error;
use crate::store::imports::{self as store, OnConflict};

/// The largest JSON Lines body an import reads.
pub const MAX_LINES_BYTES: usize = 1024 * 1024 * 1024;
/// The longest line of a JSON Lines body: a longer one is refused, and the import goes on.
const MAX_LINE_BYTES: usize = 64 * 1024;

/// The body's kind, from its media type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Document,
    Lines,
}

fn format_of(headers: &HeaderMap) -> Result<Format, Error> {
    let media = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("application/json");
    match media.split(';').next().unwrap_or("").trim().to_ascii_lowercase().as_str() {
        "application/json" => Ok(Format::Document),
        "application/x-ndjson" | "application/jsonl" | "application/json-lines" => Ok(Format::Lines),
        _ => Err(Error::UnsupportedMediaType),
    }
}

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/users/import", tag = "Realm users",
    params(("realm" = String, Path), ("client" = String, Path),
           ("onConflict" = Option<String>, Query, description = "Skip (default), Overwrite or Fail: what a row naming a person the realm has does"),
           ("dryRun" = Option<bool>, Query, description = "true: check every row and answer the report the import would, writing and publishing nothing")),
    request_body(content = Vec<Value>, description = "Rows: `username` (required), `email`, `firstName`, `lastName`, `emailConfirmed`, `status`, `passwordHash` {`algorithm` bcrypt, argon2, pbkdf2-sha512, pbkdf2-sha256, pbkdf2 or sha256; `value`; `salt`; `iterations`; `saltPosition` prefix or suffix}, `roles`, `clientRoles`, `groups`, `organizations` (names). As a JSON array or `{\"users\": [...]}` (`application/json`), or JSON Lines (`application/x-ndjson`)."),
    responses((status = 200, description = "The import's report, every refused row with its line and reasons", body = ImportView),
              (status = 400, description = "ValidationFailed: onConflict, or a JSON body that is not a list of rows"),
              (status = 403), (status = 404), (status = 415)),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    InClient { client, caller, .. }: InClient<UserCreate>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: RequestBody,
) -> Result<Response, Error> {
    let Parameters { on_conflict, dry_run } = parameters(query)?;
    let format = format_of(&headers)?;
    let (document, lines) = match format {
        Format::Document => {
            let bytes = axum::body::to_bytes(body, state.settings.max_body_bytes)
                .await
                .map_err(|_| Error::PayloadTooLarge { limit: state.settings.max_body_bytes })?;
            let document: Value = serde_json::from_slice(&bytes)
                .map_err(|e| Error::invalid("", Rule::Json, format!("the body is not JSON: {e}")))?;
            (Some(import::rows_of_document(document)?), None)
        }
        Format::Lines => (None, Some(body)),
    };
    let mut importer = Importer::start(&state, caller.author(), &client, on_conflict, dry_run).await?;
    let outcome = match (document, lines) {
        (Some(rows), _) => feed_rows(&mut importer, rows).await,
        (None, Some(body)) => feed_lines(&mut importer, body).await,
        (None, None) => Ok(()),
    };
    let job = match outcome {
        Ok(()) => importer.finish(None).await?,
        Err(Stop::Body(why)) => importer.finish(Some(why)).await?,
        Err(Stop::Failed(error)) => {
            // What the batches before wrote stays; the job says why the rest was not read.
            if let Err(unrecorded) = importer.finish(Some(format!("the import stopped: {error}"))).await {
                tracing::error!(error = %unrecorded, "an import's failure could not be recorded");
            }
            return Err(error);
        }
    };
    let Finished { job, dry_run_refusals } = job;
    let refusals = match dry_run_refusals {
        Some(refusals) => refusals,
        None => store::refusals(state.store.pool(), &job.id).await?,
    };
    let mut view = ImportView::of(&job, Some(refusals));
    view.dry_run = dry_run;
    Ok(envelope::ok(view))
}

/// Why an import stopped before the end of its body.
enum Stop {
    /// The body could not be read to its end (too large, cut off): the import is Failed, and what
    /// was read stays imported.
    Body(String),
    Failed(Error),
}

impl From<Error> for Stop {
    fn from(error: Error) -> Self {
        Self::Failed(error)
    }
}

async fn feed_rows(importer: &mut Importer<'_>, rows: Vec<Row>) -> Result<(), Stop> {
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        importer.take(rows.by_ref().take(BATCH_ROWS).collect()).await?;
    }
    Ok(())
}

/// Reads JSON Lines as they arrive, a batch at a time: memory holds one batch and one line.
async fn feed_lines(importer: &mut Importer<'_>, body: RequestBody) -> Result<(), Stop> {
    let mut stream = body.into_data_stream();
    let (mut pending, mut batch, mut line, mut total) = (Vec::<u8>::new(), Vec::new(), 0_i64, 0_usize);
    let mut overlong = false;
    loop {
        let chunk = match stream.next().await {
            Some(Ok(chunk)) => chunk,
            Some(Err(error)) => return Err(Stop::Body(format!("the body could not be read: {error}"))),
            None => break,
        };
        total += chunk.len();
        if total > MAX_LINES_BYTES {
            return Err(Stop::Body(format!("the body is larger than {MAX_LINES_BYTES} bytes")));
        }
        for byte in chunk {
            if byte != b'\n' {
                if pending.len() < MAX_LINE_BYTES {
                    pending.push(byte);
                } else {
                    overlong = true;
                }
                continue;
            }
            line += 1;
            take_line(&mut batch, line, &mut pending, &mut overlong);
            if batch.len() >= BATCH_ROWS {
                importer.take(std::mem::take(&mut batch)).await?;
            }
        }
    }
    if !pending.is_empty() || overlong {
        line += 1;
        take_line(&mut batch, line, &mut pending, &mut overlong);
    }
    if !batch.is_empty() {
        importer.take(batch).await?;
    }
    Ok(())
}

/// Adds the line read so far to the batch (a blank line is no row) and starts the next.
fn take_line(batch: &mut Vec<Row>, line: i64, pending: &mut Vec<u8>, overlong: &mut bool) {
    if *overlong {
        batch.push((line, Err(format!("line {line} is longer than {MAX_LINE_BYTES} bytes"))));
    } else if !pending.iter().all(u8::is_ascii_whitespace) {
        let row = serde_json::from_slice::<Value>(pending).map_err(|e| format!("line {line} is not JSON: {e}"));
        batch.push((line, row));
    }
    pending.clear();
    *overlong = false;
}

/// The parameters of an import.
pub struct Parameters {
    pub on_conflict: OnConflict,
    pub dry_run: bool,
}

pub fn parameters(query: Option<String>) -> Result<Parameters, Error> {
    Ok(parameters_with(query, &[], false)?.0)
}

/// The parameters of an import (`dry_run` by default, or not), and the values of the `own` ones
/// an endpoint adds; any other is refused.
pub fn parameters_with(
    query: Option<String>,
    own: &[&str],
    dry_run: bool,
) -> Result<(Parameters, Vec<(String, String)>), Error> {
    let pairs = super::query_pairs(query);
    let mut chosen = Parameters { on_conflict: OnConflict::Skip, dry_run };
    let mut given = Vec::new();
    for (name, value) in pairs {
        match name.as_str() {
            "onConflict" => {
                chosen.on_conflict = OnConflict::try_from(value).map_err(|_| {
                    Error::invalid("onConflict", Rule::OneOf, "onConflict must be Skip, Overwrite or Fail")
                })?;
            }
            "dryRun" => {
                chosen.dry_run = match value.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(Error::invalid("dryRun", Rule::Type, "dryRun must be true or false")),
                };
            }
            _ if own.contains(&name.as_str()) => given.push((name, value)),
            _ => {
                let message = format!("{name} is not a parameter of this import");
                return Err(Error::invalid(name, Rule::Unknown, message));
            }
        }
    }
    Ok((chosen, given))
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/users/import", tag = "Realm users",
    params(("realm" = String, Path), ("client" = String, Path), ("pageNumber" = Option<u32>, Query),
           ("pageSize" = Option<u32>, Query), ("status" = Option<String>, Query, description = "Running, Completed or Failed"),
           ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the client's imports, newest first, with their progress", body = [ImportView]),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    InClient { client, .. }: InClient<UserRead>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::imports::ImportStatus::NAMES)?;
    let found = store::page(&state.store, &client.realm_id, &client.id, &list.page).await?;
    Ok(envelope::paged(found.map(|job| ImportView::of(&job, None))))
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/users/import/{importId}", tag = "Realm users",
    params(("realm" = String, Path), ("client" = String, Path), ("importId" = String, Path)),
    responses((status = 200, description = "The import's progress or report, with every refused row so far", body = ImportView),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    InClient { client, .. }: InClient<UserRead>,
    Path((_, _, id)): Path<(String, String, String)>,
) -> Result<Response, Error> {
    let pool = state.store.pool();
    let job = store::find(pool, &client.realm_id, &client.id, &id).await?.ok_or(Error::NotFound("import"))?;
    let refusals = store::refusals(pool, &job.id).await?;
    Ok(envelope::ok(ImportView::of(&job, Some(refusals))))
}
