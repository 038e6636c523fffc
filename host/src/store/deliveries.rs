//! The webhook delivery queue: events claimed from the outbox to be fanned out, attempts claimed
//! when due, and their outcomes with the health of their endpoints. A claim is a lease
//! (`claimed_until`) taken in one statement, so hosts sharing a PostgreSQL database never take one
//! row at once.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use sqlx::Row as _;

use super::events::StoredEvent;
use super::webhooks::{ATTEMPT_COLUMNS, Attempt, AttemptState, INSERT_CHUNK, insert_attempts, rows_per_insert};
use super::{Backend, Connection, Error, Store, list_placeholders};
use crate::kernel::ids::{AccountId, EndpointId};

/// Takes up to `batch` events not yet fanned out, the oldest first, and marks them fanned out at
/// `now`, in the caller's claim transaction ([`Store::begin_claim`]).
pub async fn claim_events(tx: &mut Connection, now: DateTime<Utc>, batch: usize) -> Result<Vec<StoredEvent>, Error> {
    let lock = Backend::of(tx).claim_lock();
    let mut events: Vec<StoredEvent> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "UPDATE event_outbox SET fanned_out_at = $1 WHERE id IN (SELECT id FROM event_outbox \
         WHERE fanned_out_at IS NULL ORDER BY created_at LIMIT {batch}{lock}) \
         RETURNING id, event_type, account_id, realm_id, client_id, created_at, data"
    )))
    .bind(super::millis(now))
    .fetch_all(&mut *tx)
    .await?;
    events.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    Ok(events)
}

/// Where a claimed attempt goes, and how its endpoint retries.
#[derive(Debug, Clone)]
pub struct Target {
    pub url: String,
    pub secret_sealed: String,
    pub retries: i64,
    pub first_retry_after_seconds: i64,
}

/// Claims up to `room` Scheduled attempts due at `now` whose lease (if any) ran out, leasing them
/// until `lease_until`, each with its endpoint's target. An attempt whose endpoint is gone is left
/// out.
pub async fn claim_attempts(
    store: &Store,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    room: usize,
) -> Result<Vec<(Attempt, Target)>, Error> {
    let mut tx = store.begin_claim().await?;
    let lock = Backend::of(&tx).claim_lock();
    let ids: Vec<String> = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE webhook_attempts SET claimed_until = $1 WHERE id IN (SELECT id FROM webhook_attempts \
         WHERE state = 'Scheduled' AND due_at <= $2 AND (claimed_until IS NULL OR claimed_until <= $2) \
         ORDER BY due_at LIMIT $3{lock}) RETURNING id"
    )))
    .bind(super::millis(lease_until))
    .bind(super::millis(now))
    .bind(i64::try_from(room).unwrap_or(i64::MAX))
    .fetch_all(&mut *tx)
    .await?
    .iter()
    .map(|row| row.try_get::<String, _>(0))
    .collect::<Result<_, _>>()?;
    tx.commit().await?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut select = sqlx::query_as::<_, Attempt>(sqlx::AssertSqlSafe(format!(
        "SELECT {ATTEMPT_COLUMNS} FROM webhook_attempts WHERE id IN ({})",
        list_placeholders(1, ids.len())
    )));
    for id in &ids {
        select = select.bind(id);
    }
    let attempts = select.fetch_all(store.pool()).await?;
    let endpoint_ids: Vec<&str> =
        attempts.iter().map(|attempt| attempt.endpoint_id.as_str()).collect::<HashSet<_>>().into_iter().collect();
    let mut endpoints = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT id, url, secret_sealed, retries, first_retry_after_seconds FROM webhook_endpoints WHERE id IN ({})",
        list_placeholders(1, endpoint_ids.len())
    )));
    for id in &endpoint_ids {
        endpoints = endpoints.bind(*id);
    }
    let mut targets = HashMap::new();
    for row in endpoints.fetch_all(store.pool()).await? {
        let target = Target {
            url: row.try_get(1)?,
            secret_sealed: row.try_get(2)?,
            retries: row.try_get(3)?,
            first_retry_after_seconds: row.try_get(4)?,
        };
        targets.insert(row.try_get::<EndpointId, _>(0)?, target);
    }
    Ok(attempts
        .into_iter()
        .filter_map(|attempt| {
            let target = targets.get(&attempt.endpoint_id)?.clone();
            Some((attempt, target))
        })
        .collect())
}

/// Inserts many attempts, as many per statement as [`rows_per_insert`] says.
pub async fn insert_all_attempts(tx: &mut Connection, attempts: &[Attempt]) -> Result<(), Error> {
    for chunk in attempts.chunks(rows_per_insert(tx)) {
        insert_attempts(&mut *tx, chunk).await?;
    }
    Ok(())
}

/// What the receiver answered to an attempt; beside a success, `error` is what cut its body short.
#[derive(Debug, Clone)]
pub struct Answer<'a> {
    pub id: &'a str,
    pub sent_at: DateTime<Utc>,
    pub status: Option<i64>,
    pub headers: Option<&'a str>,
    pub body: Option<&'a str>,
    pub latency_ms: i64,
    pub error: Option<&'a str>,
}

/// Records successful attempts still Scheduled. On PostgreSQL, where each statement is a round
/// trip, many per statement (`UPDATE … FROM (VALUES …)`, whose columns are named `column1`,
/// `column2`, …); SQLite runs in-process and is faster with one prepared statement per row, as
/// its planner does not look rows up by key from a `VALUES` list.
pub async fn record_accepted(tx: &mut Connection, accepted: &[Answer<'_>]) -> Result<(), Error> {
    if Backend::of(tx) == Backend::Sqlite {
        for answer in accepted {
            sqlx::query(
                "UPDATE webhook_attempts SET state = 'Succeeded', sent_at = $2, response_status = $3, \
                 response_headers = $4, response_body = $5, latency_ms = $6, error = $7, claimed_until = NULL \
                 WHERE id = $1 AND state = 'Scheduled'",
            )
            .bind(answer.id)
            .bind(super::millis(answer.sent_at))
            .bind(answer.status)
            .bind(answer.headers)
            .bind(answer.body)
            .bind(answer.latency_ms)
            .bind(answer.error)
            .execute(&mut *tx)
            .await?;
        }
        return Ok(());
    }
    for chunk in accepted.chunks(INSERT_CHUNK) {
        let rows: Vec<String> = (0..chunk.len())
            .map(|row| {
                let n = row * 7;
                format!(
                    "(${}, CAST(${} AS BIGINT), CAST(${} AS BIGINT), ${}, ${}, CAST(${} AS BIGINT), CAST(${} AS TEXT))",
                    n + 1,
                    n + 2,
                    n + 3,
                    n + 4,
                    n + 5,
                    n + 6,
                    n + 7
                )
            })
            .collect();
        let mut update = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE webhook_attempts SET state = 'Succeeded', sent_at = v.column2, response_status = v.column3, \
             response_headers = v.column4, response_body = v.column5, latency_ms = v.column6, error = v.column7, \
             claimed_until = NULL FROM (VALUES {}) AS v WHERE webhook_attempts.id = v.column1 \
             AND webhook_attempts.state = 'Scheduled'",
            rows.join(", ")
        )));
        for answer in chunk {
            update = update
                .bind(answer.id)
                .bind(super::millis(answer.sent_at))
                .bind(answer.status)
                .bind(answer.headers)
                .bind(answer.body)
                .bind(answer.latency_ms)
                .bind(answer.error);
        }
        update.execute(&mut *tx).await?;
    }
    Ok(())
}

/// Records a failed attempt still Scheduled; false when it was not (another host recorded it after
/// its lease lapsed, or its endpoint is gone).
pub async fn record_refused(tx: &mut Connection, refused: &Answer<'_>) -> Result<bool, Error> {
    let updated = sqlx::query(
        "UPDATE webhook_attempts SET state = $2, sent_at = $3, response_status = $4, response_headers = $5, \
         response_body = $6, latency_ms = $7, error = $8, claimed_until = NULL WHERE id = $1 AND state = 'Scheduled'",
    )
    .bind(refused.id)
    .bind(AttemptState::Failed.as_str())
    .bind(super::millis(refused.sent_at))
    .bind(refused.status)
    .bind(refused.headers)
    .bind(refused.body)
    .bind(refused.latency_ms)
    .bind(refused.error)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    Ok(updated > 0)
}

/// Clears the consecutive failures of endpoints that accepted an attempt.
pub async fn reset_failures(tx: &mut Connection, endpoint_ids: &[&str]) -> Result<(), Error> {
    if endpoint_ids.is_empty() {
        return Ok(());
    }
    let mut reset = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE webhook_endpoints SET consecutive_failures = 0 WHERE id IN ({}) AND consecutive_failures <> 0",
        list_placeholders(1, endpoint_ids.len())
    )));
    for id in endpoint_ids {
        reset = reset.bind(*id);
    }
    reset.execute(&mut *tx).await?;
    Ok(())
}

/// Failures in a row that turn an Active endpoint Disabled.
pub const FAILURES_TO_DISABLE: i64 = 10;

/// An endpoint that this failure turned Disabled.
#[derive(Debug, Clone)]
pub struct Disabled {
    pub account_id: AccountId,
    pub name: String,
    pub url: String,
}

/// Counts one more consecutive failure of an endpoint, disabling an Active endpoint at the
/// [`FAILURES_TO_DISABLE`]th; the endpoint when this failure disabled it.
pub async fn count_failure(
    tx: &mut Connection,
    endpoint_id: &str,
    now: DateTime<Utc>,
) -> Result<Option<Disabled>, Error> {
    let row = sqlx::query(
        "UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1, \
         status = CASE WHEN consecutive_failures + 1 >= $3 AND status = 'Active' THEN 'Disabled' ELSE status END, \
         updated_at = CASE WHEN consecutive_failures + 1 = $3 AND status = 'Active' THEN $2 ELSE updated_at END \
         WHERE id = $1 RETURNING consecutive_failures, status, account_id, name, url",
    )
    .bind(endpoint_id)
    .bind(super::millis(now))
    .bind(FAILURES_TO_DISABLE)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let (failures, status): (i64, String) = (row.try_get(0)?, row.try_get(1)?);
    if failures != FAILURES_TO_DISABLE || status != "Disabled" {
        return Ok(None);
    }
    Ok(Some(Disabled { account_id: row.try_get(2)?, name: row.try_get(3)?, url: row.try_get(4)? }))
}
