//! The incident analyst's readings (admin): an incident's readings in the caller's language,
//! newest first; asking again for a failed one; applying a recommended change and reverting it;
//! the post-incident report as a printable page and as PDF. Reading needs `audit:read`, acting
//! `realm:update` on the incident's realm.

use crate::directory::realms::RealmView;

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::realm_in_reach;
use super::threats::incident_in_reach;
use crate::authz::permission;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope::{self, Answer};
use crate::kernel::validate::{Notification, Rule};
use crate::protection::analyst::{self, current_view};
use crate::protection::analyst::{ActionView, AnalysisView};
use crate::protection::analyst::{Language, actions};
use crate::protection::report;
use crate::runtime::error::Error;
use crate::store::analyses::{self as store, Analysis};
use crate::store::realms::Realm;
use crate::store::threats::Incident;

/// The caller's language, from `Accept-Language`.
pub fn language(headers: &HeaderMap) -> Language {
    Language::preferred(headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()))
}

fn in_language(response: Response, language: Language) -> Response {
    let mut response = response;
    response.headers_mut().insert(header::CONTENT_LANGUAGE, HeaderValue::from_static(language.tag()));
    response.headers_mut().insert(header::VARY, HeaderValue::from_static("Accept-Language"));
    response
}

/// The reading of the caller's account with this id, the caller holding `permission` on its realm.
async fn analysis_in_reach(state: &AppState, caller: &Caller, id: &str, permission: &str) -> Result<Analysis, Error> {
    let analysis = store::find(state.store.pool(), caller.account_id(), id).await?;
    let analysis = analysis.ok_or(Error::NotFound("analysis"))?;
    realm_in_reach(state, caller, &analysis.realm_id, permission).await?;
    Ok(analysis)
}

#[utoipa::path(get, path = "/threat-incidents/{incidentId}/analyses", tag = "Attack protection",
    params(("incidentId" = String, Path), ("Accept-Language" = Option<String>, Header, description = "en (default) or fr")),
    responses((status = 200, description = "The incident's readings, newest first, in the caller's language, in `data`", body = [AnalysisView]),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, Error> {
    let language = language(&headers);
    Ok(in_language(envelope::ok(readings(&state, &caller, &id, language).await?), language))
}

/// The readings of the incident `id`, newest first, in `language`.
pub async fn readings(
    state: &AppState,
    caller: &Caller,
    id: &str,
    language: Language,
) -> Result<Vec<AnalysisView>, Error> {
    let incident: Incident = incident_in_reach(state, caller, id, permission::AUDIT_READ).await?;
    analyst::readings(state, &incident, language).await
}

#[utoipa::path(post, path = "/threat-incidents/analyses/{analysisId}/retry", tag = "Attack protection",
    params(("analysisId" = String, Path)),
    responses((status = 200, description = "The reading run again (Completed, or Failed again with why), in `data`", body = AnalysisView),
              (status = 403), (status = 404),
              (status = 409, description = "Not a failed reading, or the plan does not include the advisor"),
              (status = 429, description = "The account ran its 12 readings of the UTC day")),
    security(("apiKey" = [])))]
pub async fn retry(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, Error> {
    let language = language(&headers);
    Ok(in_language(envelope::ok(retried(&state, &caller, &id, language).await?), language))
}

/// Runs the failed reading `id` again; the reading as it is now, in `language`.
pub async fn retried(state: &AppState, caller: &Caller, id: &str, language: Language) -> Result<AnalysisView, Error> {
    let analysis = analysis_in_reach(state, caller, id, permission::REALM_UPDATE).await?;
    actions::retry(state, &state.analyst, &analysis).await?;
    let analysis =
        store::find(state.store.pool(), caller.account_id(), id).await?.ok_or(Error::NotFound("analysis"))?;
    current_view(state, &analysis, language).await
}

#[utoipa::path(post, path = "/threat-incidents/analyses/{analysisId}/recommendations/{recommendation}/apply", tag = "Attack protection",
    params(("analysisId" = String, Path), ("recommendation" = usize, Path, description = "Counted from zero")),
    responses((status = 201, description = "Applied: the realm is stricter; the action, which can be reverted, in `data`", body = ActionView),
              (status = 403), (status = 404),
              (status = 409, description = "Already in place: applied already, or the realm is already at least as strict")),
    security(("apiKey" = [])))]
pub async fn apply(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, index)): Path<(String, String)>,
) -> Result<Answer<ActionView>, Error> {
    let analysis = analysis_in_reach(&state, &caller, &id, permission::REALM_UPDATE).await?;
    let index: usize = index.parse().map_err(|_| {
        Error::Validation(vec![Notification::new(
            "recommendation",
            Rule::Format,
            "recommendation must be an index counted from zero",
        )])
    })?;
    let action = actions::apply(&state, caller.author(), &analysis, index, |r: &Realm| RealmView::from(r)).await?;
    Ok(Answer::Created(ActionView::from(&action)))
}

#[utoipa::path(post, path = "/threat-incidents/analysis-actions/{actionId}/revert", tag = "Attack protection",
    params(("actionId" = String, Path)),
    responses((status = 200, description = "Reverted: the realm holds its previous value again, in `data`", body = ActionView),
              (status = 403), (status = 404),
              (status = 409, description = "Reverted already, or the setting was changed since (that change stays)")),
    security(("apiKey" = [])))]
pub async fn revert(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Answer<ActionView>, Error> {
    let action = store::find_action(state.store.pool(), caller.account_id(), &id).await?;
    let action = action.ok_or(Error::NotFound("analysis action"))?;
    realm_in_reach(&state, &caller, &action.realm_id, permission::REALM_UPDATE).await?;
    let reverted = actions::revert(&state, caller.author(), &action, |r: &Realm| RealmView::from(r)).await?;
    Ok(Answer::Ok(ActionView::from(&reverted)))
}

#[utoipa::path(get, path = "/threat-incidents/analyses/{analysisId}/report", tag = "Attack protection",
    params(("analysisId" = String, Path), ("format" = Option<String>, Query, description = "html (default) or pdf"),
           ("Accept-Language" = Option<String>, Header, description = "en (default) or fr")),
    responses((status = 200, description = "The post-incident report of a closing reading: a printable HTML page, or a PDF (a document, not an envelope)",
                content((String = "text/html"), (Vec<u8> = "application/pdf"))),
              (status = 403), (status = 404, description = "No such reading, or it has no report"),
              (status = 400, description = "format is neither html nor pdf")),
    security(("apiKey" = [])))]
pub async fn report(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    let pairs = super::query_pairs(query);
    let format = match pairs.iter().find(|(name, _)| name == "format").map(|(_, value)| value.as_str()) {
        None | Some("html") => report::Format::Html,
        Some("pdf") => report::Format::Pdf,
        Some(_) => return Err(Error::invalid("format", Rule::OneOf, "format must be html or pdf")),
    };
    let language = language(&headers);
    let (content_type, body) = printed(&state, &caller, &id, format, language).await?;
    let mut response = (axum::http::StatusCode::OK, [(header::CONTENT_TYPE, content_type)], body).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(in_language(response, language))
}

/// The post-incident report of the reading `id`, printed as `format` in `language`: its media type
/// and its bytes.
pub async fn printed(
    state: &AppState,
    caller: &Caller,
    id: &str,
    format: report::Format,
    language: Language,
) -> Result<(&'static str, Vec<u8>), Error> {
    let analysis = analysis_in_reach(state, caller, id, permission::AUDIT_READ).await?;
    let incident = crate::store::threats::find_incident(state.store.pool(), caller.account_id(), &analysis.incident_id)
        .await?
        .ok_or(Error::NotFound("incident"))?;
    let view = current_view(state, &analysis, language).await?;
    let document = report::Document::of(&incident, &view, language).ok_or(Error::NotFound("report"))?;
    Ok(match format {
        report::Format::Html => ("text/html; charset=utf-8", document.html().into_bytes()),
        report::Format::Pdf => ("application/pdf", document.pdf()),
    })
}
