//! What operators do with readings: apply a recommended change to the realm (only while it still
//! makes the realm stricter), revert an applied one (only while the realm still holds the value it
//! set), and ask again for a failed reading. Apply and revert are administrative changes of the
//! realm: in the change trail, raising `admin_resource_updated`.

use chrono::TimeDelta;
use serde::Serialize;
use serde_json::json;

use super::schedule;
use crate::kernel::ids::AnalysisActionId;
use crate::protection::analyst::Analyst;
use crate::protection::recommendations::{Change as Recommended, Refused};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::analyses::{self, Action, Analysis, AnalysisStatus};
use crate::store::realms::{self, Realm};
use crate::store::threats;
use crate::store::trail::{Change, ChangeAction, Placed};

/// Applies recommendation `index` of `analysis` to its realm; `view` is how the trail shows the
/// realm. Refused with a conflict when it is applied already (and not reverted since) or the realm
/// is already at least as strict.
pub async fn apply<V: Serialize>(
    context: &Context,
    by: Author<'_>,
    analysis: &Analysis,
    index: usize,
    view: impl Fn(&Realm) -> V,
) -> Result<Action, Error> {
    let changes = super::words::changes_of(analysis.recommendations.as_deref());
    let change = *changes.get(index).ok_or(Error::NotFound("recommendation"))?;
    let now = context.clock.now();
    let mut tx = context.store.begin().await?;
    let taken = analyses::actions_of_incident(&mut *tx, &analysis.incident_id).await?;
    let position = i64::try_from(index).unwrap_or(i64::MAX);
    if taken.iter().any(|a| a.analysis_id == analysis.id && a.recommendation == position && a.reverted_at.is_none()) {
        return Err(Error::Conflict("Already in place: the recommendation is applied".into()));
    }
    let before = realms::find(&mut *tx, &analysis.realm_id).await?.ok_or(Error::NotFound("realm"))?;
    let (settings, previous) = change.apply(&before.settings).map_err(|refused| match refused {
        Refused::NotStricter => Error::Conflict("Already in place: the realm is already at least as strict".into()),
        Refused::OutOfBounds | Refused::ChangedSince => Error::Conflict(refused.to_string()),
    })?;
    let after = Realm { settings, updated_at: now, ..before.clone() };
    realms::update(&mut *tx, &after).await?;
    let action = Action {
        id: AnalysisActionId::fresh(),
        analysis_id: analysis.id.clone(),
        recommendation: position,
        account_id: analysis.account_id.clone(),
        realm_id: analysis.realm_id.clone(),
        change: change.name().to_owned(),
        applied_value: change.value().to_string(),
        previous_value: previous.to_string(),
        applied_at: now,
        applied_by: by.actor.acting_id().unwrap_or_default(),
        reverted_at: None,
        reverted_by: None,
    };
    analyses::insert_action(&mut *tx, &action).await?;
    let details = json!({ "analysisActionId": action.id, "analysisId": analysis.id, "recommendation": change.name(),
        "setting": change.setting(), "value": change.value(), "previous": previous });
    let trail = Change::of(ChangeAction::Update, before.place(), 200)
        .before(view(&before))
        .after(view(&after))
        .details(details);
    changes::commit(context, by, tx, trail).await?;
    Ok(action)
}

/// Reverts an applied change: the realm gets back the value it replaced, while it still holds the
/// value the change set. Refused with a conflict once reverted, or when the setting changed since.
pub async fn revert<V: Serialize>(
    context: &Context,
    by: Author<'_>,
    action: &Action,
    view: impl Fn(&Realm) -> V,
) -> Result<Action, Error> {
    if action.reverted_at.is_some() {
        return Err(Error::Conflict("the change was reverted already".into()));
    }
    let value: i64 =
        serde_json::from_str::<serde_json::Value>(&action.applied_value).ok().and_then(|v| v.as_i64()).unwrap_or(1);
    let change = Recommended::named(&action.change, value).ok_or(Error::NotFound("analysis action"))?;
    let previous: serde_json::Value = serde_json::from_str(&action.previous_value).unwrap_or_default();
    let now = context.clock.now();
    let reverted_by = by.actor.acting_id().unwrap_or_default();
    let mut tx = context.store.begin().await?;
    let before = realms::find(&mut *tx, &action.realm_id).await?.ok_or(Error::NotFound("realm"))?;
    let settings = change.revert(&before.settings, &previous).map_err(|_| {
        Error::Conflict(format!(
            "the realm's {} was changed since the recommendation set it; that later change is left alone",
            change.setting()
        ))
    })?;
    if !analyses::revert_action(&mut *tx, &action.id, &reverted_by, now).await? {
        return Err(Error::Conflict("the change was reverted already".into()));
    }
    let after = Realm { settings, updated_at: now, ..before.clone() };
    realms::update(&mut *tx, &after).await?;
    let details = json!({ "analysisActionId": action.id, "analysisId": action.analysis_id, "reverted": change.name(),
        "setting": change.setting(), "value": previous });
    let trail = Change::of(ChangeAction::Update, before.place(), 200)
        .before(view(&before))
        .after(view(&after))
        .details(details);
    changes::commit(context, by, tx, trail).await?;
    Ok(Action { reverted_at: Some(now), reverted_by: Some(reverted_by), ..action.clone() })
}

/// Runs a failed reading again (or one cut off mid-run), within the plan, the realm's consent
/// and the account's daily readings; its status afterwards.
pub async fn retry(context: &Context, analyst: &Analyst, analysis: &Analysis) -> Result<AnalysisStatus, Error> {
    let now = context.clock.now();
    let stale = analysis.status == AnalysisStatus::Running && analysis.ran_at <= now - schedule::CUT_OFF_AFTER;
    if analysis.status != AnalysisStatus::Failed && !stale {
        return Err(Error::Conflict("only a failed reading can be asked for again".into()));
    }
    if !analyst.included(&analysis.account_id) {
        return Err(Error::Conflict("the account's plan does not include the AI advisor".into()));
    }
    if !schedule::within_quota(&context.store, &analysis.account_id, now).await? {
        let tomorrow = now.date_naive().and_hms_opt(0, 0, 0).unwrap_or_default().and_utc() + TimeDelta::days(1);
        let retry_after_seconds = u64::try_from((tomorrow - now).num_seconds().max(1)).unwrap_or(1);
        return Err(Error::RateLimited { retry_after_seconds });
    }
    let incident = threats::find_incident(context.store.pool(), &analysis.account_id, &analysis.incident_id)
        .await?
        .ok_or(Error::NotFound("incident"))?;
    if !analyses::claim_retry(context.store.writer(), &analysis.id, now - schedule::CUT_OFF_AFTER, now).await? {
        return Err(Error::Conflict("the reading is being asked for already".into()));
    }
    Ok(schedule::run(&context.store, analyst, &analysis.id, &incident, analysis.moment, now).await?)
}
