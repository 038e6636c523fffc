//! Attack protection (admin): incidents with their measures,
//! the period summary, exposures and an account's threat standing; lifting a measure and
//! dismissing an incident. Reading needs `audit:read` (`user:read` for a standing), acting
//! `realm:update` on the realm of the incident.

use axum::extract::{Path, RawQuery, State};

use super::{ListQuery, realm_in_reach};
use crate::authz::permission;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope::Answer;
use crate::kernel::clock::iso;
use crate::kernel::validate::{Notification, Rule};
use crate::protection::incidents::{ExposureView, IncidentView, MeasureView, ThreatStandingView};
use crate::protection::operators::{self};
use crate::protection::summary::{self, Within};
use crate::protection::summary::{DayFigures, Share, SourceShare, SummaryView};
use crate::runtime::error::Error;
use crate::store::exposures::{self};
use crate::store::threats::{self as store, Incident, IncidentStatus, Measure, MeasureType, Standing};

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
        None => caller.require_account(&state.authz, permission::AUDIT_READ)?,
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
