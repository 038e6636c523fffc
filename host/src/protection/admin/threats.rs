//! The admin operations of attack protection: incidents and their measures, exposures, an
//! account's standing, the period's summary; dismissing an incident and lifting a measure.

use crate::authz::caller::Caller;
use crate::authz::permission;
use crate::directory::listing::ListQuery;
use crate::directory::reach::{Admin, realm_in_reach};
use crate::kernel::clock::iso;
use crate::kernel::validate::{Notification, Rule};
use crate::protection::incident_views::ExposureView;
use crate::protection::incident_views::IncidentView;
use crate::protection::incident_views::MeasureView;
use crate::protection::incident_views::ThreatStandingView;
use crate::protection::operators::{self};
use crate::protection::summary;
use crate::protection::summary::{DayFigures, Share, SourceShare, SummaryView, Within};
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::exposures;
use crate::store::threats::{self as store, Incident, IncidentStatus, Measure, MeasureType, Standing};

/// Reads the incident list's and the exposure list's `realmId` filter: a realm the caller may
/// read, or the whole account.
pub(crate) async fn realm_filter<'a>(
    admin: &Admin<'_>,
    caller: &'a Caller,
    list: &'a ListQuery,
) -> Result<store::ThreatFilter<'a>, Error> {
    let realm_id = list.filter("realmId");
    match realm_id {
        // The realm found is the one named: its id is the filter's value.
        Some(realm_id) => {
            realm_in_reach(admin, caller, realm_id, permission::AUDIT_READ).await?;
        }
        None => caller.require_account(admin.authz, permission::AUDIT_READ)?,
    }
    Ok(store::ThreatFilter { account_id: caller.account_id(), realm_id, client_id: list.filter("clientId") })
}

/// The incident of the caller's account with this id, the caller holding `permission` on its realm.
pub(crate) async fn incident_in_reach(
    admin: &Admin<'_>,
    caller: &Caller,
    id: &str,
    permission: &str,
) -> Result<Incident, Error> {
    let incident = store::find_incident(admin.store.pool(), caller.account_id(), id).await?;
    let incident = incident.ok_or(Error::NotFound("incident"))?;
    realm_in_reach(admin, caller, &incident.realm_id, permission).await?;
    Ok(incident)
}

/// `GET /threat-incidents`: a page of incidents, newest first, without their measures.
pub async fn list(
    admin: &Admin<'_>,
    protection: &crate::protection::Protection,
    caller: Caller,
    query: Option<String>,
) -> Result<Answer<IncidentView>, Error> {
    let list = ListQuery::parse(query, &["realmId", "clientId", "incidentStatus"])?;
    let filter = realm_filter(admin, &caller, &list).await?;
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
    protection.store_refusals(&admin.store).await?;
    let found = store::incident_page(&admin.store, filter, status, &list.page).await?;
    Ok(Answer::Paged(found.map(IncidentView::of)))
}

/// `GET /threat-incidents/{incidentId}`: the incident with every measure it took.
pub async fn read(
    admin: &Admin<'_>,
    protection: &crate::protection::Protection,
    caller: Caller,
    id: String,
) -> Result<Answer<IncidentView>, Error> {
    protection.store_refusals(&admin.store).await?;
    let incident = incident_in_reach(admin, &caller, &id, permission::AUDIT_READ).await?;
    let now = admin.clock.now();
    let measures = store::measures_of_incident(admin.store.pool(), &incident.id).await?;
    let mut view = IncidentView::of(incident);
    view.measures = Some(measures.into_iter().map(|m| MeasureView::of(m, now)).collect());
    Ok(Answer::Ok(view))
}

/// `POST /threat-incidents/{incidentId}/dismiss`: dismissed: every measure in force is lifted and
/// what each blocked source did is forgotten; exposed passwords still must be changed.
pub async fn dismiss(
    admin: &Admin<'_>,
    protection: &crate::protection::Protection,
    caller: Caller,
    id: String,
) -> Result<Answer<IncidentView>, Error> {
    protection.store_refusals(&admin.store).await?;
    let incident = incident_in_reach(admin, &caller, &id, permission::REALM_UPDATE).await?;
    let view = |incident: &Incident| IncidentView::of(incident.clone());
    let dismissed = operators::dismiss(admin, protection, caller.author(), incident, view).await?;
    Ok(Answer::Ok(IncidentView::of(dismissed.after)))
}

/// `POST /threat-incidents/mitigations/{mitigationId}/revoke`: lifted; for a blocked source, what
/// it did is forgotten.
pub async fn revoke(
    admin: &Admin<'_>,
    protection: &crate::protection::Protection,
    caller: Caller,
    id: String,
) -> Result<Answer<MeasureView>, Error> {
    let measure = store::find_measure(admin.store.pool(), caller.account_id(), &id).await?;
    let measure = measure.ok_or(Error::NotFound("measure"))?;
    realm_in_reach(admin, &caller, &measure.realm_id, permission::REALM_UPDATE).await?;
    let now = admin.clock.now();
    let view = |measure: &Measure| MeasureView::of(measure.clone(), now);
    let lifted = operators::lift(admin, protection, caller.author(), measure, view).await?;
    Ok(Answer::Ok(MeasureView::of(lifted.after, now)))
}

/// `GET /threat-incidents/exposures`: a page of exposures, one per account by its latest.
pub async fn exposures(
    admin: &Admin<'_>,
    caller: Caller,
    query: Option<String>,
) -> Result<Answer<ExposureView>, Error> {
    let list = ListQuery::parse(query, &["realmId", "clientId", "unresolvedOnly"])?;
    let filter = realm_filter(admin, &caller, &list).await?;
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
    let found = exposures::exposure_page(&admin.store, filter, unresolved_only, &list.page).await?;
    Ok(Answer::Paged(found.map(ExposureView::of)))
}

/// `GET /realms/{realm}/users/{userId}/threat-standing`: the account's exposures and the measures
/// in force on it.
pub async fn standing(
    admin: &Admin<'_>,
    caller: Caller,
    (realm_id, user_id): (String, String),
) -> Result<Answer<ThreatStandingView>, Error> {
    let realm = realm_in_reach(admin, &caller, &realm_id, permission::USER_READ).await?;
    let pool = admin.store.pool();
    let user = crate::store::users::find(pool, &realm.id, &user_id).await?.ok_or(Error::NotFound("user"))?;
    let now = admin.clock.now();
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

/// `GET /threat-incidents/summary`: the period's figures.
pub async fn summary(
    admin: &Admin<'_>,
    protection: &crate::protection::Protection,
    caller: Caller,
    query: Option<String>,
) -> Result<Answer<SummaryView>, Error> {
    let list = ListQuery::parse(query, &["realmId", "clientId", "days"])?;
    // The filters are checked as the lists check them; the figures are gathered below.
    realm_filter(admin, &caller, &list).await?;
    let days =
        list.filter("days").and_then(|d| d.parse::<i64>().ok()).filter(|d| [7, 30, 90].contains(d)).unwrap_or(30);
    let within = Within {
        account_id: caller.account_id(),
        realm_id: list.filter("realmId"),
        client_id: list.filter("clientId"),
    };
    let summary = summary::summary(admin, protection, within, days).await?;
    let now_ms = summary.to;
    let shares = |counted: Vec<(String, i64)>| {
        counted.into_iter().map(|(name, blocked_sources)| SourceShare { name, blocked_sources }).collect()
    };
    let named = |figures: Vec<(&'static str, summary::Figures)>| {
        figures.into_iter().map(|(name, figures)| Share { name: name.to_owned(), figures }).collect()
    };
    Ok(Answer::Ok(SummaryView {
        days: summary.days,
        from: iso(summary.from),
        to: iso(summary.to),
        open_incidents: i64::try_from(summary.open_incidents).unwrap_or(i64::MAX),
        measures_in_force: i64::try_from(summary.measures_in_force).unwrap_or(i64::MAX),
        totals: summary.totals,
        by_day: summary.by_day.into_iter().map(|(date, figures)| DayFigures { date, figures }).collect(),
        by_kind: named(summary.by_kind),
        by_severity: named(summary.by_severity),
        countries: shares(summary.countries),
        networks: shares(summary.networks),
        latest_measures: summary.latest_measures.into_iter().map(|m| MeasureView::of(m, now_ms)).collect(),
    }))
}
