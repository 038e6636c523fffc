//! When readings run: every five minutes, each incident a reading is due for (opened five minutes
//! ago, turned critical after its opening reading, closed by itself within the day; never a
//! dismissed one) is read once for that moment, in accounts whose plan includes the advisor, in
//! realms that consent to it (checked again as the reading runs), within the account's twelve
//! readings of the UTC day. A failed reading is kept, and can be retried.

use chrono::{DateTime, TimeDelta, Utc};

use super::{Analyst, Figures};
use crate::kernel::ids::AnalysisId;
use crate::store::analyses::{self, AnalysisStatus, Moment, Outcome};
use crate::store::threats::{self, Incident, IncidentSeverity};
use crate::store::{Error as StoreError, Store, realms};

/// How often the schedule looks for due readings.
pub const EVERY: TimeDelta = TimeDelta::minutes(5);
/// How long an incident runs before its opening reading.
pub const OPENING_AFTER: TimeDelta = TimeDelta::minutes(5);
/// How long after closing by itself an incident still gets its closing reading.
pub const CLOSING_WITHIN: TimeDelta = TimeDelta::hours(24);
/// Readings (first runs and retries) per account and UTC day.
pub const DAILY_READINGS: i64 = 12;
/// A reading still running after this long was cut off (its host stopped): it can be retried.
pub const CUT_OFF_AFTER: TimeDelta = TimeDelta::minutes(10);

/// The moment a due incident is read for, given the moments already read.
fn moment_due(incident: &Incident, read: &[Moment]) -> Option<Moment> {
    use crate::store::threats::IncidentStatus;
    match incident.status {
        IncidentStatus::Resolved if !read.contains(&Moment::Closed) => Some(Moment::Closed),
        IncidentStatus::Active if !read.contains(&Moment::Opened) => Some(Moment::Opened),
        IncidentStatus::Active
            if incident.severity == IncidentSeverity::Critical && !read.contains(&Moment::TurnedCritical) =>
        {
            Some(Moment::TurnedCritical)
        }
        _ => None,
    }
}

/// Whether the account may run one more reading on the UTC day of `now`.
pub async fn within_quota(store: &Store, account_id: &str, now: DateTime<Utc>) -> Result<bool, StoreError> {
    let day = now.date_naive().and_hms_opt(0, 0, 0).unwrap_or_default().and_utc();
    let runs = analyses::runs_between(store.pool(), account_id, day, day + TimeDelta::days(1)).await?;
    Ok(runs < DAILY_READINGS)
}

/// Runs every reading due at `now`; how many ran.
pub async fn run_due(store: &Store, analyst: &Analyst, now: DateTime<Utc>) -> Result<usize, StoreError> {
    let due = analyses::due(store.pool(), now - OPENING_AFTER, now - CLOSING_WITHIN).await?;
    let mut ran = 0;
    for incident in due {
        let read = analyses::moments_read(store.pool(), &incident.id).await?;
        let Some(moment) = moment_due(&incident, &read) else { continue };
        if !analyst.included(&incident.account_id) || !within_quota(store, &incident.account_id, now).await? {
            continue;
        }
        let id = AnalysisId::fresh();
        if !analyses::claim(store.writer(), &id, &incident, moment, now).await? {
            continue;
        }
        run(store, analyst, id.as_str(), &incident, moment, now).await?;
        ran += 1;
    }
    Ok(ran)
}

/// Runs a claimed reading and writes what it produced.
pub async fn run(
    store: &Store,
    analyst: &Analyst,
    id: &str,
    incident: &Incident,
    moment: Moment,
    now: DateTime<Utc>,
) -> Result<AnalysisStatus, StoreError> {
    let realm = realms::find(store.pool(), &incident.realm_id).await?;
    let outcome = match realm {
        Some(realm) if realm.settings.ai_advisor => {
            let measures = threats::measures_of_incident(store.pool(), &incident.id).await?;
            let figures = Figures::of(incident, &measures, &realm.settings, moment, now);
            match analyst.read(&figures).await {
                Ok((reading, author)) => Outcome {
                    status: AnalysisStatus::Completed,
                    produced_by: Some(author.produced_by),
                    model_failure: author.model_failure,
                    classification: Some(reading.classification),
                    confidence: Some(i64::from(reading.confidence)),
                    recommendations: Some(super::words::changes_json(&reading.changes)),
                    texts: serde_json::to_string(&reading.words).ok(),
                    failure: None,
                },
                Err(why) => failed(why),
            }
        }
        _ => failed("the realm no longer lets the AI advisor analyse it".into()),
    };
    analyses::finish(store.writer(), id, &outcome).await?;
    if outcome.status == AnalysisStatus::Failed {
        tracing::warn!(analysis_id = id, reason = outcome.failure.as_deref().unwrap_or_default(), "a reading failed");
    }
    Ok(outcome.status)
}

fn failed(why: String) -> Outcome {
    Outcome {
        status: AnalysisStatus::Failed,
        produced_by: None,
        model_failure: None,
        classification: None,
        confidence: None,
        recommendations: None,
        texts: None,
        failure: Some(why),
    }
}
