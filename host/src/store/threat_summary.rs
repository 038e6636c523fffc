//! The figures of the attack-protection summary, summed and counted in the database: an account's
//! incidents of a period by day, kind and severity, its blocked sources by country and network,
//! and its latest measures.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::Error;
use super::threats::{MEASURE_COLUMNS, Measure};

/// An account's incidents, narrowed to a realm and to the client of their first detection when
/// named: what the period summary counts.
#[derive(Debug, Clone, Copy)]
pub struct Narrowed<'a> {
    pub account_id: &'a str,
    pub realm_id: Option<&'a str>,
    pub client_id: Option<&'a str>,
}

/// The incidents `i` a [`Narrowed`] holds, its values bound as `$1`, `$2` and `$3`.
const NARROWED: &str = "i.account_id = $1 AND ($2 IS NULL OR i.realm_id = $2) AND ($3 IS NULL OR i.client_id = $3)";

/// `query`, whose incidents `i` are those of `within` started at or after `since` (`$1` to `$4`).
fn narrowed<T>(query: String, within: Narrowed<'_>, since: DateTime<Utc>) -> NarrowedQuery<T>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow>,
{
    sqlx::query_as(sqlx::AssertSqlSafe(query))
        .bind(within.account_id.to_owned())
        .bind(within.realm_id.map(str::to_owned))
        .bind(within.client_id.map(str::to_owned))
        .bind(super::millis(since))
}

type NarrowedQuery<T> = sqlx::query::QueryAs<'static, Any, T, sqlx::any::AnyArguments>;

/// The figures of incidents started on one day (UTC, counted in days since the epoch), of one kind
/// and severity.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct IncidentFigures {
    pub day: i64,
    pub kind: String,
    pub severity: String,
    pub incidents: i64,
    pub refused_attempts: i64,
    pub blocked_sources: i64,
    pub protected_accounts: i64,
    pub exposed_passwords: i64,
}

/// The figures of the incidents started at or after `since`, summed by day, kind and severity in
/// the database: the summary reads a few hundred rows, however many incidents there were.
pub async fn incident_figures<'c>(
    db: impl Executor<'c, Database = Any>,
    within: Narrowed<'_>,
    since: DateTime<Utc>,
) -> Result<Vec<IncidentFigures>, Error> {
    let query = format!(
        "SELECT i.started_at / 86400000 AS day, i.kind, i.severity, COUNT(*) AS incidents, \
         CAST(SUM(i.refused_attempts) AS BIGINT) AS refused_attempts, \
         CAST(SUM(i.blocked_sources) AS BIGINT) AS blocked_sources, \
         CAST(SUM(i.protected_accounts) AS BIGINT) AS protected_accounts, \
         CAST(SUM(i.exposed_passwords) AS BIGINT) AS exposed_passwords \
         FROM threat_incidents i WHERE {NARROWED} AND i.started_at >= $4 \
         GROUP BY i.started_at / 86400000, i.kind, i.severity"
    );
    Ok(narrowed(query, within, since).fetch_all(db).await?)
}

/// How many of the incidents are active now.
pub async fn count_active_incidents<'c>(
    db: impl Executor<'c, Database = Any>,
    within: Narrowed<'_>,
) -> Result<i64, Error> {
    let query = format!("SELECT COUNT(*) FROM threat_incidents i WHERE {NARROWED} AND i.status = 'Active'");
    let (count,): (i64,) = sqlx::query_as(sqlx::AssertSqlSafe(query))
        .bind(within.account_id)
        .bind(within.realm_id)
        .bind(within.client_id)
        .fetch_one(db)
        .await?;
    Ok(count)
}

/// How many of the account's measures (in the realm, when named) are in force at `now`, exposed
/// passwords not changed since included.
pub async fn count_measures_in_force<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    realm_id: Option<&str>,
    now: DateTime<Utc>,
) -> Result<i64, Error> {
    let (count,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM threat_measures WHERE account_id = $1 AND ($2 IS NULL OR realm_id = $2) \
         AND lifted_at IS NULL AND ((kind = 'PasswordExposed' AND resolved_at IS NULL) OR lapses_at > $3)",
    )
    .bind(account_id)
    .bind(realm_id)
    .bind(super::millis(now))
    .fetch_one(db)
    .await?;
    Ok(count)
}

/// The sources blocked since `since` by incidents started since then, counted by country and
/// network (`None` where the data files do not know the address).
pub async fn blocked_source_origins<'c>(
    db: impl Executor<'c, Database = Any>,
    within: Narrowed<'_>,
    since: DateTime<Utc>,
) -> Result<Vec<(Option<String>, Option<String>, i64)>, Error> {
    let query = format!(
        "SELECT m.country, m.network, COUNT(*) FROM threat_measures m \
         JOIN threat_incidents i ON i.id = m.incident_id \
         WHERE {NARROWED} AND i.started_at >= $4 AND m.account_id = $1 AND m.created_at >= $4 \
         AND m.kind = 'SourceBlocked' GROUP BY m.country, m.network"
    );
    Ok(narrowed(query, within, since).fetch_all(db).await?)
}

/// The `limit` latest measures taken since `since` by incidents started since then, newest first.
pub async fn latest_measures<'c>(
    db: impl Executor<'c, Database = Any>,
    within: Narrowed<'_>,
    since: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<Measure>, Error> {
    let query = format!(
        "SELECT {MEASURE_COLUMNS} FROM threat_measures WHERE id IN (SELECT m.id FROM threat_measures m \
         JOIN threat_incidents i ON i.id = m.incident_id \
         WHERE {NARROWED} AND i.started_at >= $4 AND m.account_id = $1 AND m.created_at >= $4 \
         ORDER BY m.created_at DESC, m.id ASC LIMIT $5)"
    );
    let mut measures: Vec<Measure> = narrowed(query, within, since).bind(limit).fetch_all(db).await?;
    measures.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| a.id.cmp(&b.id)));
    Ok(measures)
}
