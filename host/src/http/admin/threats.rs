//! Attack protection (admin): incidents with their measures,
//! the period summary, exposures and an account's threat standing; lifting a measure and
//! dismissing an incident. Reading needs `audit:read` (`user:read` for a standing), acting
//! `realm:update` on the realm of the incident.

use axum::extract::{Path, RawQuery, State};
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::{ListQuery, realm_in_reach};
use crate::authz::permission;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope::Answer;
use crate::kernel::clock::iso;
use crate::kernel::validate::{Notification, Rule};
use crate::protection::incidents::title;
use crate::protection::operators::{self};
use crate::protection::summary::{self, Within};
use crate::runtime::error::Error;
use crate::store::exposures::{self, Exposure};
use crate::store::threats::{
    self as store, Incident, IncidentKind, IncidentSeverity, IncidentStatus, Measure, MeasureType, Standing,
};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IncidentView {
    pub id: String,
    pub realm_id: String,
    /// The client the first detection came through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    pub kind: IncidentKind,
    /// The kind in words: Credential stuffing, Password spraying, …
    pub title: &'static str,
    /// The highest severity reached.
    pub severity: IncidentSeverity,
    pub status: IncidentStatus,
    pub started_at: String,
    /// The latest detection or refused attempt.
    pub last_activity_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<String>,
    pub detections: i64,
    pub refused_attempts: i64,
    pub blocked_sources: i64,
    pub protected_accounts: i64,
    pub exposed_passwords: i64,
    /// Every measure the incident took; only when one incident is read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measures: Option<Vec<MeasureView>>,
}

impl IncidentView {
    fn of(incident: Incident) -> Self {
        Self {
            title: title(incident.kind),
            id: incident.id.into(),
            realm_id: incident.realm_id.to_string(),
            client_id: incident.client_id.map(String::from),
            kind: incident.kind,
            severity: incident.severity,
            status: incident.status,
            started_at: iso(incident.started_at),
            last_activity_at: iso(incident.last_activity_at),
            closed_at: incident.closed_at.map(iso),
            detections: incident.detections,
            refused_attempts: incident.refused_attempts,
            blocked_sources: incident.blocked_sources,
            protected_accounts: incident.protected_accounts,
            exposed_passwords: incident.exposed_passwords,
            measures: None,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MeasureView {
    pub id: String,
    pub incident_id: String,
    pub realm_id: String,
    #[serde(rename = "type")]
    pub kind: MeasureType,
    /// The address a Source blocked measure refuses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_address: Option<String>,
    /// The account the other measures protect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_user_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// The factors counted, in words, the datacenter or Tor halving among them when it applied.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// InForce (until `lapsesAt`), Lapsed, Lifted, ChangeRequired (an exposed password not
    /// changed since) or Resolved (changed since).
    pub standing: Standing,
    pub created_at: String,
    /// When it lapses by itself; absent for an exposed password, which never does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lapses_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifted_at: Option<String>,
    /// The person or credential that lifted it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifted_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<String>,
}

impl MeasureView {
    fn of(measure: Measure, now: DateTime<Utc>) -> Self {
        Self {
            standing: measure.standing(now),
            reasons: measure.reasons,
            id: measure.id.into(),
            incident_id: measure.incident_id.into(),
            realm_id: measure.realm_id.to_string(),
            kind: measure.kind,
            target_address: measure.target_address,
            target_user_id: measure.target_user_id.map(String::from),
            country: measure.country,
            network: measure.network,
            created_at: iso(measure.created_at),
            lapses_at: measure.lapses_at.map(iso),
            lifted_at: measure.lifted_at.map(iso),
            lifted_by: measure.lifted_by,
            resolved_at: measure.resolved_at.map(iso),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExposureView {
    pub user_id: String,
    pub realm_id: String,
    /// The client the latest exposed sign-in came through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The incident behind the latest exposure.
    pub incident_id: String,
    /// The latest exposure.
    pub exposed_at: String,
    /// How many times the account's password arrived from an attack.
    pub exposures: i64,
    /// Whether the password was changed after the latest exposure.
    pub resolved: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<String>,
}

impl ExposureView {
    fn of(exposure: Exposure) -> Self {
        Self {
            user_id: exposure.user_id.to_string(),
            realm_id: exposure.realm_id.to_string(),
            client_id: exposure.client_id.map(String::from),
            incident_id: exposure.incident_id.into(),
            exposed_at: iso(exposure.exposed_at),
            exposures: exposure.exposures,
            resolved: exposure.resolved_at.is_some(),
            resolved_at: exposure.resolved_at.map(iso),
        }
    }
}

/// Reads the incident list's and the exposure list's `realmId` filter: a realm the caller may
/// read, or the whole account.
async fn realm_filter<'a>(
    state: &AppState,
    caller: &'a Caller,
    list: &'a ListQuery,
) -> Result<store::ThreatFilter<'a>, Error> {
    let realm_id = list.filter("realmId");
    match realm_id {
        // The realm found is the one named: its id is the filter's value.
        Some(realm_id) => {
            realm_in_reach(state, caller, realm_id, permission::AUDIT_READ).await?;
        }
        None => caller.require_account(state, permission::AUDIT_READ)?,
    }
    Ok(store::ThreatFilter { account_id: caller.account_id(), realm_id, client_id: list.filter("clientId") })
}

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
    let list = ListQuery::parse(query, &["realmId", "clientId", "incidentStatus"])?;
    let filter = realm_filter(&state, &caller, &list).await?;
    let status = match list.filter("incidentStatus") {
        None => None,
        Some(status) => Some(IncidentStatus::try_from(status.to_owned()).map_err(|_| {
            Error::Validation(vec![Notification::new(
                "incidentStatus",
                Rule::OneOf,
                "incidentStatus must be Active, Resolved or Dismissed",
            )])
        })?),
    };
    state.protection.store_refusals(&state.store).await?;
    let found = store::incident_page(&state.store, filter, status, &list.page).await?;
    Ok(Answer::Paged(found.map(IncidentView::of)))
}

/// The incident of the caller's account with this id, the caller holding `permission` on its realm.
pub(super) async fn incident_in_reach(
    state: &AppState,
    caller: &Caller,
    id: &str,
    permission: &str,
) -> Result<Incident, Error> {
    let incident = store::find_incident(state.store.pool(), caller.account_id(), id).await?;
    let incident = incident.ok_or(Error::NotFound("incident"))?;
    realm_in_reach(state, caller, &incident.realm_id, permission).await?;
    Ok(incident)
}

#[utoipa::path(get, path = "/threat-incidents/{incidentId}", tag = "Attack protection", params(("incidentId" = String, Path)),
    responses((status = 200, description = "The incident with every measure it took, in `data`", body = IncidentView),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Answer<IncidentView>, Error> {
    state.protection.store_refusals(&state.store).await?;
    let incident = incident_in_reach(&state, &caller, &id, permission::AUDIT_READ).await?;
    let now = state.clock.now();
    let measures = store::measures_of_incident(state.store.pool(), &incident.id).await?;
    let mut view = IncidentView::of(incident);
    view.measures = Some(measures.into_iter().map(|m| MeasureView::of(m, now)).collect());
    Ok(Answer::Ok(view))
}

#[utoipa::path(post, path = "/threat-incidents/{incidentId}/dismiss", tag = "Attack protection", params(("incidentId" = String, Path)),
    responses((status = 200, description = "Dismissed: every measure in force is lifted and what each blocked source did is forgotten; exposed passwords still must be changed", body = IncidentView),
              (status = 403), (status = 404), (status = 409, description = "The incident is not active")),
    security(("apiKey" = [])))]
pub async fn dismiss(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Answer<IncidentView>, Error> {
    state.protection.store_refusals(&state.store).await?;
    let incident = incident_in_reach(&state, &caller, &id, permission::REALM_UPDATE).await?;
    let view = |incident: &Incident| IncidentView::of(incident.clone());
    let dismissed = operators::dismiss(&state, &state.protection, caller.author(), incident, view).await?;
    Ok(Answer::Ok(IncidentView::of(dismissed.after)))
}

#[utoipa::path(post, path = "/threat-incidents/mitigations/{mitigationId}/revoke", tag = "Attack protection", params(("mitigationId" = String, Path)),
    responses((status = 200, description = "Lifted; for a blocked source, what it did is forgotten", body = MeasureView),
              (status = 403), (status = 404),
              (status = 409, description = "Not in force, or an exposed password (resolved only by changing it)")),
    security(("apiKey" = [])))]
pub async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Answer<MeasureView>, Error> {
    let measure = store::find_measure(state.store.pool(), caller.account_id(), &id).await?;
    let measure = measure.ok_or(Error::NotFound("measure"))?;
    realm_in_reach(&state, &caller, &measure.realm_id, permission::REALM_UPDATE).await?;
    let now = state.clock.now();
    let view = |measure: &Measure| MeasureView::of(measure.clone(), now);
    let lifted = operators::lift(&state, &state.protection, caller.author(), measure, view).await?;
    Ok(Answer::Ok(MeasureView::of(lifted.after, now)))
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
    let list = ListQuery::parse(query, &["realmId", "clientId", "unresolvedOnly"])?;
    let filter = realm_filter(&state, &caller, &list).await?;
    let unresolved_only = match list.filter("unresolvedOnly") {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => {
            return Err(Error::Validation(vec![Notification::new(
                "unresolvedOnly",
                Rule::Type,
                "unresolvedOnly must be true or false",
            )]));
        }
    };
    let found = exposures::exposure_page(&state.store, filter, unresolved_only, &list.page).await?;
    Ok(Answer::Paged(found.map(ExposureView::of)))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreatStandingView {
    pub user_id: String,
    /// Whether the current password arrived from an attack and was not changed since.
    pub password_exposed: bool,
    /// Since when, while it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exposed_since: Option<String>,
    /// The latest exposure (one row per account), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_exposure: Option<ExposureView>,
    /// Exposed-password measures on the account, newest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exposures: Vec<MeasureView>,
    /// Measures in force on the account now.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub measures_in_force: Vec<MeasureView>,
}

#[utoipa::path(get, path = "/realms/{realm}/users/{userId}/threat-standing", tag = "Attack protection",
    params(("realm" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "The account's exposures and the measures in force on it, in `data`", body = ThreatStandingView),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn standing(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm_id, user_id)): Path<(String, String)>,
) -> Result<Answer<ThreatStandingView>, Error> {
    let realm = realm_in_reach(&state, &caller, &realm_id, permission::USER_READ).await?;
    let pool = state.store.pool();
    let user = crate::store::users::find(pool, &realm.id, &user_id).await?.ok_or(Error::NotFound("user"))?;
    let now = state.clock.now();
    let exposure = exposures::exposure_of(pool, &user.id).await?;
    let measures = store::measures_on_user(pool, &user.id).await?;
    let (exposures, others): (Vec<Measure>, Vec<Measure>) =
        measures.into_iter().partition(|m| m.kind == MeasureType::PasswordExposed);
    let open = exposure.as_ref().filter(|e| e.resolved_at.is_none());
    Ok(Answer::Ok(ThreatStandingView {
        user_id: user.id.to_string(),
        password_exposed: open.is_some(),
        exposed_since: open.map(|e| iso(e.exposed_at)),
        latest_exposure: exposure.map(ExposureView::of),
        exposures: exposures.into_iter().map(|m| MeasureView::of(m, now)).collect(),
        measures_in_force: others
            .into_iter()
            .filter(|m| m.standing(now) == Standing::InForce)
            .map(|m| MeasureView::of(m, now))
            .collect(),
    }))
}

#[derive(Debug, Default, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    pub incidents: i64,
    pub refused_attempts: i64,
    pub blocked_sources: i64,
    pub protected_accounts: i64,
    pub exposed_passwords: i64,
}

impl From<summary::Figures> for Figures {
    fn from(figures: summary::Figures) -> Self {
        let summary::Figures { incidents, refused_attempts, blocked_sources, protected_accounts, exposed_passwords } =
            figures;
        Self { incidents, refused_attempts, blocked_sources, protected_accounts, exposed_passwords }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DayFigures {
    /// The day (UTC), `YYYY-MM-DD`.
    pub date: String,
    #[serde(flatten)]
    pub figures: Figures,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Share {
    /// A kind, a severity, a country or a network.
    pub name: String,
    #[serde(flatten)]
    pub figures: Figures,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceShare {
    /// A country code or a network name; `Unknown` when the data files do not know the address.
    pub name: String,
    pub blocked_sources: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SummaryView {
    /// The period: 7, 30 or 90 days ending now.
    pub days: i64,
    pub from: String,
    pub to: String,
    /// Incidents active now.
    pub open_incidents: i64,
    /// Measures in force now (exposed passwords not changed count as in force).
    pub measures_in_force: i64,
    /// Totals of the incidents started in the period.
    pub totals: Figures,
    /// The same, day by day (by the day each incident started), every day of the period listed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_day: Vec<DayFigures>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_kind: Vec<Share>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_severity: Vec<Share>,
    /// Countries of the sources blocked in the period.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub countries: Vec<SourceShare>,
    /// Networks of the sources blocked in the period.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub networks: Vec<SourceShare>,
    /// The latest measures of the period, newest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latest_measures: Vec<MeasureView>,
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
    let list = ListQuery::parse(query, &["realmId", "clientId", "days"])?;
    // The filters are checked as the lists check them; the figures are gathered below.
    realm_filter(&state, &caller, &list).await?;
    let days =
        list.filter("days").and_then(|d| d.parse::<i64>().ok()).filter(|d| [7, 30, 90].contains(d)).unwrap_or(30);
    let within = Within {
        account_id: caller.account_id(),
        realm_id: list.filter("realmId"),
        client_id: list.filter("clientId"),
    };
    let summary = summary::summary(&state, &state.protection, within, days).await?;
    let now_ms = summary.to;
    let shares = |counted: Vec<(String, i64)>| {
        counted.into_iter().map(|(name, blocked_sources)| SourceShare { name, blocked_sources }).collect()
    };
    let named = |figures: Vec<(&'static str, summary::Figures)>| {
        figures.into_iter().map(|(name, figures)| Share { name: name.to_owned(), figures: figures.into() }).collect()
    };
    Ok(Answer::Ok(SummaryView {
        days: summary.days,
        from: iso(summary.from),
        to: iso(summary.to),
        open_incidents: i64::try_from(summary.open_incidents).unwrap_or(i64::MAX),
        measures_in_force: i64::try_from(summary.measures_in_force).unwrap_or(i64::MAX),
        totals: summary.totals.into(),
        by_day: summary
            .by_day
            .into_iter()
            .map(|(date, figures)| DayFigures { date, figures: figures.into() })
            .collect(),
        by_kind: named(summary.by_kind),
        by_severity: named(summary.by_severity),
        countries: shares(summary.countries),
        networks: shares(summary.networks),
        latest_measures: summary.latest_measures.into_iter().map(|m| MeasureView::of(m, now_ms)).collect(),
    }))
}
