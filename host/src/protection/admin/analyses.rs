//! The admin operations on the analyst's readings of an incident: read, run again, printed as
//! the post-incident report; applying and reverting the changes a reading recommends.

use crate::authz::caller::Caller;
use crate::authz::permission;
use crate::directory::reach::{Admin, realm_in_reach};
use crate::directory::realms::RealmView;
use crate::kernel::validate::{Notification, Rule};
use crate::protection::admin::threats::incident_in_reach;
use crate::protection::analyst::{self, ActionView, AnalysisView, Language, actions, current_view};
use crate::protection::report;
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::analyses::{self as store, Analysis};
use crate::store::realms::Realm;
use crate::store::threats::Incident;

/// The reading of the caller's account with this id, the caller holding `permission` on its realm.
pub(crate) async fn analysis_in_reach(
    admin: &Admin<'_>,
    caller: &Caller,
    id: &str,
    permission: &str,
) -> Result<Analysis, Error> {
    let analysis = store::find(admin.store.pool(), caller.account_id(), id).await?;
    let analysis = analysis.ok_or(Error::NotFound("analysis"))?;
    realm_in_reach(admin, caller, &analysis.realm_id, permission).await?;
    Ok(analysis)
}

/// The readings of the incident `id`, newest first, in `language`.
pub async fn readings(
    admin: &Admin<'_>,
    caller: &Caller,
    id: &str,
    language: Language,
) -> Result<Vec<AnalysisView>, Error> {
    let incident: Incident = incident_in_reach(admin, caller, id, permission::AUDIT_READ).await?;
    analyst::readings(admin, &incident, language).await
}

/// Runs the failed reading `id` again; the reading as it is now, in `language`.
pub async fn retried(
    admin: &Admin<'_>,
    analyst: &crate::protection::analyst::Analyst,
    caller: &Caller,
    id: &str,
    language: Language,
) -> Result<AnalysisView, Error> {
    let analysis = analysis_in_reach(admin, caller, id, permission::REALM_UPDATE).await?;
    actions::retry(admin, analyst, &analysis).await?;
    let analysis =
        store::find(admin.store.pool(), caller.account_id(), id).await?.ok_or(Error::NotFound("analysis"))?;
    current_view(admin, &analysis, language).await
}

/// The post-incident report of the reading `id`, printed as `format` in `language`: its media type
/// and its bytes.
pub async fn printed(
    admin: &Admin<'_>,
    caller: &Caller,
    id: &str,
    format: report::Format,
    language: Language,
) -> Result<(&'static str, Vec<u8>), Error> {
    let analysis = analysis_in_reach(admin, caller, id, permission::AUDIT_READ).await?;
    let incident = crate::store::threats::find_incident(admin.store.pool(), caller.account_id(), &analysis.incident_id)
        .await?
        .ok_or(Error::NotFound("incident"))?;
    let view = current_view(admin, &analysis, language).await?;
    let document = report::Document::of(&incident, &view, language).ok_or(Error::NotFound("report"))?;
    Ok(match format {
        report::Format::Html => ("text/html; charset=utf-8", document.html().into_bytes()),
        report::Format::Pdf => ("application/pdf", document.pdf()),
    })
}

/// `GET /threat-incidents/{incidentId}/analyses`: the incident's readings, newest first, in the
/// caller's language.
pub async fn apply(
    admin: &Admin<'_>,
    caller: Caller,
    (id, index): (String, String),
) -> Result<Answer<ActionView>, Error> {
    let analysis = analysis_in_reach(admin, &caller, &id, permission::REALM_UPDATE).await?;
    let index: usize = index.parse().map_err(|_| {
        Error::Validation(vec![Notification::new(
            "recommendation",
            Rule::Format,
            "recommendation must be an index counted from zero",
        )])
    })?;
    let action = actions::apply(admin, caller.author(), &analysis, index, |r: &Realm| RealmView::from(r)).await?;
    Ok(Answer::Created(ActionView::from(&action)))
}

/// `POST /threat-incidents/analysis-actions/{actionId}/revert`: reverted: the realm holds its
/// previous value again.
pub async fn revert(admin: &Admin<'_>, caller: Caller, id: String) -> Result<Answer<ActionView>, Error> {
    let action = store::find_action(admin.store.pool(), caller.account_id(), &id).await?;
    let action = action.ok_or(Error::NotFound("analysis action"))?;
    realm_in_reach(admin, &caller, &action.realm_id, permission::REALM_UPDATE).await?;
    let reverted = actions::revert(admin, caller.author(), &action, |r: &Realm| RealmView::from(r)).await?;
    Ok(Answer::Ok(ActionView::from(&reverted)))
}
