//! The incident analyst's readings (admin): an incident's readings in the caller's language,
//! newest first; asking again for a failed one; applying a recommended change and reverting it;
//! the post-incident report as a printable page and as PDF. Reading needs `audit:read`, acting
//! `realm:update` on the incident's realm.

use std::collections::BTreeMap;

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use super::incident_report as report;
use super::realm_in_reach;
use super::realms::RealmView;
use super::threats::incident_in_reach;
use crate::authz::permission;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope::{self, Answer};
use crate::kernel::clock::iso;
use crate::kernel::validate::{Notification, Rule};
use crate::protection::analyst::words::{changes_of, noticed, title};
use crate::protection::analyst::{Language, Report, Words, actions};
use crate::runtime::error::Error;
use crate::store::analyses::{self as store, Action, Analysis, AnalysisStatus, Moment};
use crate::store::realms::{Realm, RealmSettings};
use crate::store::threats::Incident;

/// One reading, in one language.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnalysisView {
    pub id: String,
    pub incident_id: String,
    pub realm_id: String,
    /// Opened (the incident had run five minutes), TurnedCritical, or Closed.
    pub moment: Moment,
    /// Running, Completed, or Failed (it can be asked for again).
    pub status: AnalysisStatus,
    /// The language of the words: the caller's (`Accept-Language`), en or fr.
    pub language: &'static str,
    /// `component` (the analyst the service runs offline) or `model:{name}` (the language model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub produced_by: Option<String>,
    /// Why the language model's answer was passed over, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_failure: Option<String>,
    /// One of the five kinds, LegitimateSurge, Misconfiguration or Inconclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classification: Option<String>,
    /// How sure the analyst is, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what_happened: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what_was_done: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exposed_passwords: Option<String>,
    /// Up to three changes that would make the realm stricter.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recommendations: Vec<RecommendationView>,
    /// The post-incident report: in the closing reading only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<Report>,
    /// Why a failed reading failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    pub created_at: String,
    /// Its latest run; retries count toward the account's 12 readings a UTC day.
    pub ran_at: String,
    pub runs: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecommendationView {
    /// Its index, counted from zero, as `apply` takes it.
    pub index: usize,
    /// RefuseBreachedPasswords, LockOutSooner, LockOutLonger, LockOutNewAccounts or RequireLongerPasswords.
    pub change: &'static str,
    pub title: &'static str,
    /// The realm setting it changes, by its admin API name.
    pub setting: &'static str,
    #[schema(value_type = Object)]
    pub value: serde_json::Value,
    /// The realm's value now.
    #[schema(value_type = Object)]
    pub current_value: serde_json::Value,
    /// Whether applying it would still make the realm stricter.
    pub tightens: bool,
    /// What the realm's users will notice.
    pub noticed: String,
    /// Why, in the analyst's words.
    pub why: String,
    /// The action that applied it, while not reverted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied_action_id: Option<String>,
}

/// A recommended change applied to the realm.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionView {
    pub id: String,
    pub analysis_id: String,
    pub realm_id: String,
    pub recommendation: i64,
    pub change: String,
    #[schema(value_type = Object)]
    pub applied_value: serde_json::Value,
    /// What a revert restores.
    #[schema(value_type = Object)]
    pub previous_value: serde_json::Value,
    pub applied_at: String,
    pub applied_by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverted_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverted_by: Option<String>,
}

impl From<&Action> for ActionView {
    fn from(a: &Action) -> Self {
        let json = |text: &str| serde_json::from_str(text).unwrap_or_default();
        Self {
            id: a.id.to_string(),
            analysis_id: a.analysis_id.to_string(),
            realm_id: a.realm_id.to_string(),
            recommendation: a.recommendation,
            change: a.change.clone(),
            applied_value: json(&a.applied_value),
            previous_value: json(&a.previous_value),
            applied_at: iso(a.applied_at),
            applied_by: a.applied_by.clone(),
            reverted_at: a.reverted_at.map(iso),
            reverted_by: a.reverted_by.clone(),
        }
    }
}

/// The words of a reading in `language`.
fn words_in(analysis: &Analysis, language: Language) -> Option<Words> {
    let mut all: BTreeMap<String, Words> = serde_json::from_str(analysis.texts.as_deref()?).ok()?;
    all.remove(language.tag())
}

pub fn view(analysis: &Analysis, settings: &RealmSettings, actions: &[Action], language: Language) -> AnalysisView {
    let words = words_in(analysis, language);
    let recommendations = changes_of(analysis.recommendations.as_deref())
        .into_iter()
        .enumerate()
        .map(|(index, change)| RecommendationView {
            index,
            change: change.name(),
            title: title(change, language),
            setting: change.setting(),
            value: change.value(),
            current_value: change.current(settings),
            tightens: change.tightens(settings),
            noticed: noticed(change, language),
            why: words.as_ref().and_then(|w| w.why.get(index).cloned()).unwrap_or_default(),
            applied_action_id: actions
                .iter()
                .find(|a| a.analysis_id == analysis.id && a.recommendation == index as i64 && a.reverted_at.is_none())
                .map(|a| a.id.to_string()),
        })
        .collect();
    AnalysisView {
        id: analysis.id.to_string(),
        incident_id: analysis.incident_id.to_string(),
        realm_id: analysis.realm_id.to_string(),
        moment: analysis.moment,
        status: analysis.status,
        language: language.tag(),
        produced_by: analysis.produced_by.clone(),
        model_failure: analysis.model_failure.clone(),
        classification: analysis.classification.clone(),
        confidence: analysis.confidence,
        what_happened: words.as_ref().map(|w| w.what_happened.clone()),
        what_was_done: words.as_ref().map(|w| w.what_was_done.clone()),
        exposed_passwords: words.as_ref().map(|w| w.exposed_passwords.clone()),
        recommendations,
        report: words.and_then(|w| w.report),
        failure: analysis.failure.clone(),
        created_at: iso(analysis.created_at),
        ran_at: iso(analysis.ran_at),
        runs: analysis.runs,
    }
}

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

/// What readings are shown against: the realm's current settings and the incident's actions.
async fn context(state: &AppState, realm_id: &str, incident_id: &str) -> Result<(RealmSettings, Vec<Action>), Error> {
    let realm = crate::store::realms::find(state.store.pool(), realm_id).await?;
    let actions = store::actions_of_incident(state.store.pool(), incident_id).await?;
    Ok((realm.map(|r| r.settings).unwrap_or_default(), actions))
}

/// The reading as the caller reads it.
async fn current_view(state: &AppState, analysis: &Analysis, language: Language) -> Result<AnalysisView, Error> {
    let (settings, actions) = context(state, &analysis.realm_id, &analysis.incident_id).await?;
    Ok(view(analysis, &settings, &actions, language))
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
    let readings = store::of_incident(state.store.pool(), &incident.id).await?;
    let (settings, actions) = context(state, &incident.realm_id, &incident.id).await?;
    Ok(readings.iter().map(|a| view(a, &settings, &actions, language)).collect())
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
