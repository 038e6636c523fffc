//! The incident analyst's readings (admin): an incident's readings in the caller's language,
//! newest first; asking again for a failed one; applying a recommended change and reverting it;
//! the post-incident report as a printable page and as PDF. Reading needs `audit:read`, acting
//! `realm:update` on the incident's realm.

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope::{self, Answer};
use crate::kernel::validate::Rule;
use crate::protection::admin::analyses as admin;
use crate::protection::admin::analyses::{printed, readings, retried};
use crate::protection::analyst::Language;
use crate::protection::analyst::{ActionView, AnalysisView};
use crate::protection::report;
use crate::runtime::error::Error;

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
    Ok(in_language(envelope::ok(readings(&state.admin(), &caller, &id, language).await?), language))
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
    Ok(in_language(envelope::ok(retried(&state.admin(), &state.analyst, &caller, &id, language).await?), language))
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
    Path(path): Path<(String, String)>,
) -> Result<Answer<ActionView>, Error> {
    admin::apply(&state.admin(), caller, path).await
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
    Path(path): Path<String>,
) -> Result<Answer<ActionView>, Error> {
    admin::revert(&state.admin(), caller, path).await
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
    let (content_type, body) = printed(&state.admin(), &caller, &id, format, language).await?;
    let mut response = (axum::http::StatusCode::OK, [(header::CONTENT_TYPE, content_type)], body).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(in_language(response, language))
}
