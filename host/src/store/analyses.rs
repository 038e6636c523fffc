//! The incident analyst's records: readings of attack incidents (one per incident and moment),
//! and the recommended changes applied to realms from them.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::Error;
use super::text_enum;
use super::threats::{INCIDENT_COLUMNS, Incident, IncidentSeverity};
use crate::kernel::ids::{AccountId, AnalysisActionId, AnalysisId, IncidentId, RealmId};

text_enum! {
    /// The moment of an incident a reading is for.
    pub enum Moment {
        /// The incident has run five minutes.
        Opened,
        /// It turned critical after its first reading.
        TurnedCritical,
        /// It closed by itself.
        Closed,
    }
}

text_enum! {
    pub enum AnalysisStatus {
        /// Claimed by a host and being read.
        Running,
        Completed,
        /// The analyst could not answer; it can be retried.
        Failed,
    }
}

text_enum! {
    /// What a reading says the incident was.
    pub enum Classification {
        CredentialStuffing,
        PasswordSpraying,
        BruteForce,
        PushBombing,
        RecoveryAbuse,
        SignUpAbuse,
        SecondFactorGuessing,
        LegitimateSurge,
        Misconfiguration,
        Inconclusive,
    }
}

/// What the counters held on the attempt a measure was taken on (all zero for measures recorded
/// before they were kept).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MeasureFactors {
    pub source_failures: u32,
    pub source_accounts: u32,
    pub unknown_account_failures: u32,
    pub earlier_blocks: u32,
    /// Different addresses, never approved at the attempt's account, that failed against it
    /// within 15 minutes.
    pub account_sources: u32,
    pub datacenter: bool,
    pub tor: bool,
}

impl From<Option<String>> for MeasureFactors {
    fn from(text: Option<String>) -> Self {
        text.and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Analysis {
    pub id: AnalysisId,
    pub incident_id: IncidentId,
    pub account_id: AccountId,
    pub realm_id: RealmId,
    #[sqlx(try_from = "String")]
    pub moment: Moment,
    #[sqlx(try_from = "String")]
    pub severity: IncidentSeverity,
    #[sqlx(try_from = "String")]
    pub status: AnalysisStatus,
    pub produced_by: Option<String>,
    pub model_failure: Option<String>,
    pub classification: Option<String>,
    pub confidence: Option<i64>,
    /// JSON list of `{change, value}`.
    pub recommendations: Option<String>,
    /// JSON object of the words, per language tag.
    pub texts: Option<String>,
    pub failure: Option<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub ran_at: DateTime<Utc>,
    pub runs: i64,
}

const COLUMNS: &str = "id, incident_id, account_id, realm_id, moment, severity, status, produced_by, model_failure, \
     classification, confidence, recommendations, texts, failure, created_at, ran_at, runs";

/// What a finished run wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub status: AnalysisStatus,
    pub produced_by: Option<String>,
    pub model_failure: Option<String>,
    pub classification: Option<Classification>,
    pub confidence: Option<i64>,
    pub recommendations: Option<String>,
    pub texts: Option<String>,
    pub failure: Option<String>,
}

/// Incidents a reading is due for at `now`, in realms that consent to the advisor: the opening
/// reading of an active incident that ran five minutes, the critical reading of one that turned
/// critical after its opening reading, the closing reading within a day of closing by itself.
pub async fn due<'c>(
    db: impl Executor<'c, Database = Any>,
    opened_before: DateTime<Utc>,
    closed_since: DateTime<Utc>,
) -> Result<Vec<Incident>, Error> {
    let columns = INCIDENT_COLUMNS.split(", ").map(|c| format!("i.{c}")).collect::<Vec<_>>().join(", ");
    let read = |moment: &str| {
        format!("EXISTS (SELECT 1 FROM threat_analyses a WHERE a.incident_id = i.id AND a.moment = '{moment}')")
    };
    let (opened, critical, closed) = (read("Opened"), read("TurnedCritical"), read("Closed"));
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {columns} FROM threat_incidents i JOIN realms r ON r.id = i.realm_id WHERE r.ai_advisor = $3 AND (\
           (i.status = 'Active' AND i.started_at <= $1 AND NOT {opened}) \
           OR (i.status = 'Active' AND i.severity = 'Critical' AND NOT {critical} AND EXISTS (SELECT 1 FROM \
               threat_analyses a WHERE a.incident_id = i.id AND a.moment = 'Opened' AND a.severity <> 'Critical')) \
           OR (i.status = 'Resolved' AND i.closed_at >= $2 AND NOT {closed})\
         ) ORDER BY i.started_at, i.id LIMIT 200"
    )))
    .bind(super::millis(opened_before))
    .bind(super::millis(closed_since))
    .bind(true)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// The moments already read of an incident.
pub async fn moments_read<'c>(db: impl Executor<'c, Database = Any>, incident_id: &str) -> Result<Vec<Moment>, Error> {
    let rows: Vec<(String,)> = sqlx::query_as("SELECT moment FROM threat_analyses WHERE incident_id = $1")
        .bind(incident_id)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().filter_map(|(moment,)| Moment::try_from(moment).ok()).collect())
}

/// Runs of an account's readings within `[from, to)`: its daily quota counts them.
pub async fn runs_between<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<i64, Error> {
    let (count,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM threat_analyses WHERE account_id = $1 AND ran_at >= $2 AND ran_at < $3")
            .bind(account_id)
            .bind(super::millis(from))
            .bind(super::millis(to))
            .fetch_one(db)
            .await?;
    Ok(count)
}

/// Claims the reading of `incident` at `moment` for this host; `false` when it exists already.
pub async fn claim<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &AnalysisId,
    incident: &Incident,
    moment: Moment,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "INSERT INTO threat_analyses (id, incident_id, account_id, realm_id, moment, severity, status, created_at, \
         ran_at, runs) VALUES ($1, $2, $3, $4, $5, $6, 'Running', $7, $7, 1) ON CONFLICT (incident_id, moment) DO NOTHING",
    )
    .bind(id)
    .bind(&incident.id)
    .bind(&incident.account_id)
    .bind(&incident.realm_id)
    .bind(moment.as_str())
    .bind(incident.severity.as_str())
    .bind(super::millis(now))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Claims a failed reading (or one whose run was cut off before `stale_before`) for another run.
pub async fn claim_retry<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    stale_before: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE threat_analyses SET status = 'Running', ran_at = $3, runs = runs + 1, failure = NULL \
         WHERE id = $1 AND (status = 'Failed' OR (status = 'Running' AND ran_at < $2))",
    )
    .bind(id)
    .bind(super::millis(stale_before))
    .bind(super::millis(now))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Writes what a run produced.
pub async fn finish<'c>(db: impl Executor<'c, Database = Any>, id: &str, outcome: &Outcome) -> Result<(), Error> {
    sqlx::query(
        "UPDATE threat_analyses SET status = $2, produced_by = $3, model_failure = $4, classification = $5, \
         confidence = $6, recommendations = $7, texts = $8, failure = $9 WHERE id = $1",
    )
    .bind(id)
    .bind(outcome.status.as_str())
    .bind(&outcome.produced_by)
    .bind(&outcome.model_failure)
    .bind(outcome.classification.map(Classification::as_str))
    .bind(outcome.confidence)
    .bind(&outcome.recommendations)
    .bind(&outcome.texts)
    .bind(&outcome.failure)
    .execute(db)
    .await?;
    Ok(())
}

pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    id: &str,
) -> Result<Option<Analysis>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM threat_analyses WHERE id = $1 AND account_id = $2"
    )))
    .bind(id)
    .bind(account_id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// An incident's readings, newest first.
pub async fn of_incident<'c>(db: impl Executor<'c, Database = Any>, incident_id: &str) -> Result<Vec<Analysis>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM threat_analyses WHERE incident_id = $1 ORDER BY created_at DESC, id DESC"
    )))
    .bind(incident_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Action {
    pub id: AnalysisActionId,
    pub analysis_id: AnalysisId,
    pub recommendation: i64,
    pub account_id: AccountId,
    pub realm_id: RealmId,
    pub change: String,
    /// JSON values.
    pub applied_value: String,
    pub previous_value: String,
    #[sqlx(try_from = "super::Millis")]
    pub applied_at: DateTime<Utc>,
    pub applied_by: String,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub reverted_at: Option<DateTime<Utc>>,
    pub reverted_by: Option<String>,
}

const ACTION_COLUMNS: &str = "id, analysis_id, recommendation, account_id, realm_id, change, applied_value, \
     previous_value, applied_at, applied_by, reverted_at, reverted_by";

pub async fn insert_action<'c>(db: impl Executor<'c, Database = Any>, a: &Action) -> Result<(), Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO threat_analysis_actions ({ACTION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    )))
    .bind(&a.id)
    .bind(&a.analysis_id)
    .bind(a.recommendation)
    .bind(&a.account_id)
    .bind(&a.realm_id)
    .bind(&a.change)
    .bind(&a.applied_value)
    .bind(&a.previous_value)
    .bind(super::millis(a.applied_at))
    .bind(&a.applied_by)
    .bind(super::millis(a.reverted_at))
    .bind(&a.reverted_by)
    .execute(db)
    .await?;
    Ok(())
}

/// The actions taken from an incident's readings, oldest first.
pub async fn actions_of_incident<'c>(
    db: impl Executor<'c, Database = Any>,
    incident_id: &str,
) -> Result<Vec<Action>, Error> {
    let columns = ACTION_COLUMNS.split(", ").map(|c| format!("x.{c}")).collect::<Vec<_>>().join(", ");
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {columns} FROM threat_analysis_actions x JOIN threat_analyses a ON a.id = x.analysis_id \
         WHERE a.incident_id = $1 ORDER BY x.applied_at, x.id"
    )))
    .bind(incident_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

pub async fn find_action<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    id: &str,
) -> Result<Option<Action>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {ACTION_COLUMNS} FROM threat_analysis_actions WHERE id = $1 AND account_id = $2"
    )))
    .bind(id)
    .bind(account_id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Marks an action reverted; `false` when it was already.
pub async fn revert_action<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    by: &str,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE threat_analysis_actions SET reverted_at = $2, reverted_by = $3 WHERE id = $1 AND reverted_at IS NULL",
    )
    .bind(id)
    .bind(super::millis(now))
    .bind(by)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}
