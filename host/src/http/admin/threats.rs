//! Attack protection (admin): incidents with their measures,
//! the period summary, exposures and an account's threat standing; lifting a measure and
//! dismissing an incident. Reading needs `audit:read` (`user:read` for a standing), acting
//! `realm:update` on the realm of the incident.

use axum::extract::{Path, RawQuery, State};

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope::Answer;
use crate::protection::admin::threats as admin;
use crate::protection::incident_views::ExposureView;
use crate::protection::incident_views::IncidentView;
use crate::protection::incident_views::MeasureView;
use crate::protection::incident_views::ThreatStandingView;
use crate::protection::summary::SummaryView;
use crate::runtime::error::Error;

#[utoipa::path(get, path = "/threat-incidents", tag = "Attack protection",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("sortBy" = Option<String>, Query, description = "startedAt (default), lastActivityAt"), ("sortDirection" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query, description = "Started at or after"), ("createdTo" = Option<String>, Query),
           ("realmId" = Option<String>, Query), ("clientId" = Option<String>, Query, description = "The client of the first detection"),
           ("incidentStatus" = Option<String>, Query, description = "Active, Resolved or Dismissed")),
    responses((status = 200, description = "A page of incidents, newest first, without their measures, in `pagination`", body = [IncidentView]),
              (status = 400), (status = 403)),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<IncidentView>, Error> {
    admin::list(&state.admin(), &state.protection, caller, query).await
}

#[utoipa::path(get, path = "/threat-incidents/{incidentId}", tag = "Attack protection", params(("incidentId" = String, Path)),
    responses((status = 200, description = "The incident with every measure it took, in `data`", body = IncidentView),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<String>,
) -> Result<Answer<IncidentView>, Error> {
    admin::read(&state.admin(), &state.protection, caller, path).await
}

#[utoipa::path(post, path = "/threat-incidents/{incidentId}/dismiss", tag = "Attack protection", params(("incidentId" = String, Path)),
    responses((status = 200, description = "Dismissed: every measure in force is lifted and what each blocked source did is forgotten; exposed passwords still must be changed", body = IncidentView),
              (status = 403), (status = 404), (status = 409, description = "The incident is not active")),
    security(("apiKey" = [])))]
pub async fn dismiss(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<String>,
) -> Result<Answer<IncidentView>, Error> {
    admin::dismiss(&state.admin(), &state.protection, caller, path).await
}

#[utoipa::path(post, path = "/threat-incidents/mitigations/{mitigationId}/revoke", tag = "Attack protection", params(("mitigationId" = String, Path)),
    responses((status = 200, description = "Lifted; for a blocked source, what it did is forgotten", body = MeasureView),
              (status = 403), (status = 404),
              (status = 409, description = "Not in force, or an exposed password (resolved only by changing it)")),
    security(("apiKey" = [])))]
pub async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<String>,
) -> Result<Answer<MeasureView>, Error> {
    admin::revoke(&state.admin(), &state.protection, caller, path).await
}

#[utoipa::path(get, path = "/threat-incidents/exposures", tag = "Attack protection",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("sortBy" = Option<String>, Query, description = "exposedAt (default), exposures"), ("sortDirection" = Option<String>, Query),
           ("realmId" = Option<String>, Query), ("clientId" = Option<String>, Query),
           ("unresolvedOnly" = Option<bool>, Query, description = "Only accounts that have not changed the password since")),
    responses((status = 200, description = "A page of exposures, one per account by its latest, in `pagination`", body = [ExposureView]),
              (status = 400), (status = 403)),
    security(("apiKey" = [])))]
pub async fn exposures(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<ExposureView>, Error> {
    admin::exposures(&state.admin(), caller, query).await
}

#[utoipa::path(get, path = "/realms/{realm}/users/{userId}/threat-standing", tag = "Attack protection",
    params(("realm" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "The account's exposures and the measures in force on it, in `data`", body = ThreatStandingView),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn standing(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<(String, String)>,
) -> Result<Answer<ThreatStandingView>, Error> {
    admin::standing(&state.admin(), caller, path).await
}

#[utoipa::path(get, path = "/threat-incidents/summary", tag = "Attack protection",
    params(("days" = Option<i64>, Query, description = "7, 30 or 90; 30 otherwise"), ("realmId" = Option<String>, Query), ("clientId" = Option<String>, Query)),
    responses((status = 200, description = "The period's figures, in `data`", body = SummaryView), (status = 403)),
    security(("apiKey" = [])))]
pub async fn summary(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<SummaryView>, Error> {
    admin::summary(&state.admin(), &state.protection, caller, query).await
}
