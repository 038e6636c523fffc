//! Webhook endpoints and their delivery attempts.

pub mod events;

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::page::{self, Listing, Page, PageRequest, Scope};
use super::text_enum;
use super::trail::{self, Placed, ResourceKind};
use super::{Error, Store};
use crate::kernel::ids::{AccountId, AttemptId, ClientId, EndpointId, EventId, RealmId};

text_enum! {
    /// Which events an endpoint can hear.
    pub enum EndpointKind {
        /// Registered on a client: user, sign-in, token, key and suspension events.
        Client,
        /// Registered on a realm: administrative changes and attack events.
        Realm,
    }
}

text_enum! {
    pub enum EndpointStatus {
        /// Receives new events.
        Active,
        /// Receives no new events until set Active again; scheduled retries still go out.
        Paused,
        /// Turned off after 10 consecutive failures; scheduled retries still go out.
        Disabled,
    }
}

text_enum! {
    /// What made an attempt.
    pub enum AttemptKind {
        /// The first delivery of an event.
        Event,
        /// An automatic retry after a failure.
        Retry,
        /// A manual resend of a delivered payload.
        Replay,
        /// A `ping` sent by Send test.
        Test,
    }
}

text_enum! {
    pub enum AttemptState {
        /// Waiting for its time (`dueAt`) or being sent.
        Scheduled,
        /// The receiver answered 2xx within 10 seconds.
        Succeeded,
        /// Any other answer, a timeout, a refused address or a connection error.
        Failed,
        /// A scheduled retry a replay made unnecessary.
        Cancelled,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Endpoint {
    pub id: EndpointId,
    pub account_id: AccountId,
    pub realm_id: RealmId,
    #[sqlx(try_from = "String")]
    pub kind: EndpointKind,
    pub client_id: Option<ClientId>,
    pub name: String,
    pub url: String,
    pub description: Option<String>,
    /// Event names.
    #[sqlx(try_from = "super::JsonList")]
    pub events: Vec<String>,
    pub retries: i64,
    pub first_retry_after_seconds: i64,
    #[sqlx(try_from = "String")]
    pub status: EndpointStatus,
    pub secret_sealed: String,
    pub secret_last_four: String,
    pub consecutive_failures: i64,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub updated_at: DateTime<Utc>,
}

impl Placed for Endpoint {
    fn place(&self) -> trail::Place {
        match &self.client_id {
            Some(client) => {
                trail::Place::in_realm(ResourceKind::Webhook, &self.id, &self.realm_id).of_client(client).under(client)
            }
            None => trail::Place::in_realm(ResourceKind::Webhook, &self.id, &self.realm_id),
        }
    }
}

const ENDPOINT_COLUMNS: &str = "id, account_id, realm_id, kind, client_id, name, url, description, events, retries, \
     first_retry_after_seconds, status, secret_sealed, secret_last_four, consecutive_failures, created_at, updated_at";

pub const ENDPOINT_LISTING: Listing = Listing {
    table: "webhook_endpoints",
    columns: ENDPOINT_COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["name", "url", "description"],
    status: Some("status"),
    sortable: &[("name", "name"), ("url", "url"), ("updatedAt", "updated_at"), ("createdAt", "created_at")],
};

pub async fn insert<'c>(db: impl Executor<'c, Database = Any>, endpoint: &Endpoint) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO webhook_endpoints (id, account_id, realm_id, kind, client_id, name, url, description, events, \
         retries, first_retry_after_seconds, status, secret_sealed, secret_last_four, consecutive_failures, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
    )
    .bind(&endpoint.id)
    .bind(&endpoint.account_id)
    .bind(&endpoint.realm_id)
    .bind(endpoint.kind.as_str())
    .bind(&endpoint.client_id)
    .bind(&endpoint.name)
    .bind(&endpoint.url)
    .bind(&endpoint.description)
    .bind(super::to_json_list(&endpoint.events))
    .bind(endpoint.retries)
    .bind(endpoint.first_retry_after_seconds)
    .bind(endpoint.status.as_str())
    .bind(&endpoint.secret_sealed)
    .bind(&endpoint.secret_last_four)
    .bind(endpoint.consecutive_failures)
    .bind(super::millis(endpoint.created_at))
    .bind(super::millis(endpoint.updated_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// The endpoint with this id among the realm's endpoints of `kind` (and the client's, for a
/// client endpoint).
pub async fn find<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    client_id: Option<&str>,
    id: &str,
) -> Result<Option<Endpoint>, Error> {
    let kind = if client_id.is_some() { EndpointKind::Client } else { EndpointKind::Realm };
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND realm_id = $2 AND kind = $3 \
         AND ($4 IS NULL OR client_id = $4)"
    )))
    .bind(id)
    .bind(realm_id)
    .bind(kind.as_str())
    .bind(client_id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Writes everything an update, a rotation or a health change may touch.
pub async fn update<'c>(db: impl Executor<'c, Database = Any>, endpoint: &Endpoint) -> Result<(), Error> {
    sqlx::query(
        "UPDATE webhook_endpoints SET name = $2, url = $3, description = $4, events = $5, retries = $6, \
         first_retry_after_seconds = $7, status = $8, secret_sealed = $9, secret_last_four = $10, \
         consecutive_failures = $11, updated_at = $12 WHERE id = $1",
    )
    .bind(&endpoint.id)
    .bind(&endpoint.name)
    .bind(&endpoint.url)
    .bind(&endpoint.description)
    .bind(super::to_json_list(&endpoint.events))
    .bind(endpoint.retries)
    .bind(endpoint.first_retry_after_seconds)
    .bind(endpoint.status.as_str())
    .bind(&endpoint.secret_sealed)
    .bind(&endpoint.secret_last_four)
    .bind(endpoint.consecutive_failures)
    .bind(super::millis(endpoint.updated_at))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

pub async fn delete<'c>(db: impl Executor<'c, Database = Any>, id: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM webhook_endpoints WHERE id = $1")
        .bind(id)
        .execute(db)
        .await
        .map(|_| ())
        .map_err(Error::from)
}

/// The realm's Active endpoints, which receive new events.
pub async fn active_in_realm<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
) -> Result<Vec<Endpoint>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE realm_id = $1 AND status = 'Active'"
    )))
    .bind(realm_id)
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

/// One attempt to deliver a payload to an endpoint, scheduled or made.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Attempt {
    pub id: AttemptId,
    pub endpoint_id: EndpointId,
    pub realm_id: RealmId,
    #[sqlx(try_from = "String")]
    pub endpoint_kind: EndpointKind,
    pub client_id: Option<ClientId>,
    pub event_id: EventId,
    pub event_type: String,
    #[sqlx(try_from = "String")]
    pub kind: AttemptKind,
    pub retry_number: i64,
    pub payload: String,
    #[sqlx(try_from = "String")]
    pub state: AttemptState,
    #[sqlx(try_from = "super::Millis")]
    pub due_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub sent_at: Option<DateTime<Utc>>,
    pub response_status: Option<i64>,
    pub response_headers: Option<String>,
    pub response_body: Option<String>,
    pub latency_ms: Option<i64>,
    pub error: Option<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    /// While a host holds a scheduled attempt to send it: until when the other hosts leave it.
    #[sqlx(try_from = "super::OptionalMillis")]
    pub claimed_until: Option<DateTime<Utc>>,
}

pub(super) const ATTEMPT_COLUMNS: &str = "id, endpoint_id, realm_id, endpoint_kind, client_id, event_id, event_type, kind, \
     retry_number, payload, state, due_at, sent_at, response_status, response_headers, response_body, latency_ms, \
     error, created_at, claimed_until";

pub const ATTEMPT_LISTING: Listing = Listing {
    table: "webhook_attempts",
    columns: ATTEMPT_COLUMNS,
    created: "created_at",
    tie_breaker: "id",
    search: &["event_type", "event_id", "error"],
    status: Some("state"),
    sortable: &[("dueAt", "due_at"), ("sentAt", "sent_at"), ("createdAt", "created_at")],
};

impl Attempt {
    /// A new attempt, due at `due_at`, of `payload` to `endpoint`.
    pub fn scheduled(
        endpoint: &Endpoint,
        event: (&EventId, &str),
        kind: AttemptKind,
        payload: String,
        due_at: DateTime<Utc>,
    ) -> Self {
        Self {
            id: AttemptId::fresh(),
            endpoint_id: endpoint.id.clone(),
            realm_id: endpoint.realm_id.clone(),
            endpoint_kind: endpoint.kind,
            client_id: endpoint.client_id.clone(),
            event_id: event.0.clone(),
            event_type: event.1.to_owned(),
            kind,
            retry_number: 0,
            payload,
            state: AttemptState::Scheduled,
            due_at,
            sent_at: None,
            response_status: None,
            response_headers: None,
            response_body: None,
            latency_ms: None,
            error: None,
            created_at: due_at,
            claimed_until: None,
        }
    }
}

/// Attempts one multi-row statement inserts: 13 values each, well under either database's limit
/// on bound values.
pub(super) const INSERT_CHUNK: usize = 500;

/// Rows one insert statement carries on `connection`: on PostgreSQL a few hundred, since each
/// statement is a round trip; on SQLite (in-process, where a prepared one-row statement is
/// cheapest) one.
pub(super) fn rows_per_insert(connection: &super::Connection) -> usize {
    match super::Backend::of(connection) {
        super::Backend::Postgres => INSERT_CHUNK,
        super::Backend::Sqlite => 1,
    }
}

pub async fn insert_attempt<'c>(db: impl Executor<'c, Database = Any>, attempt: &Attempt) -> Result<(), Error> {
    insert_attempts(db, std::slice::from_ref(attempt)).await
}

/// Inserts at most [`INSERT_CHUNK`] attempts in one statement.
pub(super) async fn insert_attempts<'c>(
    db: impl Executor<'c, Database = Any>,
    attempts: &[Attempt],
) -> Result<(), Error> {
    let mut insert = sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO webhook_attempts (id, endpoint_id, realm_id, endpoint_kind, client_id, event_id, event_type, \
         kind, retry_number, payload, state, due_at, created_at) VALUES {}",
        super::values_placeholders(attempts.len(), 13)
    )));
    for attempt in attempts {
        insert = insert
            .bind(&attempt.id)
            .bind(&attempt.endpoint_id)
            .bind(&attempt.realm_id)
            .bind(attempt.endpoint_kind.as_str())
            .bind(&attempt.client_id)
            .bind(&attempt.event_id)
            .bind(&attempt.event_type)
            .bind(attempt.kind.as_str())
            .bind(attempt.retry_number)
            .bind(&attempt.payload)
            .bind(attempt.state.as_str())
            .bind(super::millis(attempt.due_at))
            .bind(super::millis(attempt.created_at));
    }
    insert.execute(db).await.map(|_| ()).map_err(Error::from)
}

/// The attempt with this id made to this endpoint.
pub async fn find_attempt<'c>(
    db: impl Executor<'c, Database = Any>,
    endpoint_id: &str,
    id: &str,
) -> Result<Option<Attempt>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {ATTEMPT_COLUMNS} FROM webhook_attempts WHERE id = $1 AND endpoint_id = $2"
    )))
    .bind(id)
    .bind(endpoint_id)
    .fetch_optional(db)
    .await
    .map_err(Error::from)
}

/// Cancels the automatic retries still scheduled for an event at an endpoint.
pub async fn cancel_retries<'c>(
    db: impl Executor<'c, Database = Any>,
    endpoint_id: &str,
    event_id: &str,
) -> Result<u64, Error> {
    sqlx::query(
        "UPDATE webhook_attempts SET state = 'Cancelled' \
         WHERE endpoint_id = $1 AND event_id = $2 AND kind = 'Retry' AND state = 'Scheduled'",
    )
    .bind(endpoint_id)
    .bind(event_id)
    .execute(db)
    .await
    .map(|done| done.rows_affected())
    .map_err(Error::from)
}

/// Removes finished attempts, fanned-out events and their fan-out rows older than `before` (the
/// 30-day history).
pub async fn delete_history_before<'c>(
    db: impl Executor<'c, Database = Any> + Copy,
    before: DateTime<Utc>,
) -> Result<u64, Error> {
    let attempts = sqlx::query("DELETE FROM webhook_attempts WHERE created_at < $1 AND state <> 'Scheduled'")
        .bind(super::millis(before))
        .execute(db)
        .await?
        .rows_affected();
    let events = sqlx::query("DELETE FROM event_outbox WHERE created_at < $1 AND fanned_out_at IS NOT NULL")
        .bind(super::millis(before))
        .execute(db)
        .await?
        .rows_affected();
    let fan_outs = sqlx::query("DELETE FROM webhook_fan_outs WHERE created_at < $1")
        .bind(super::millis(before))
        .execute(db)
        .await?
        .rows_affected();
    Ok(attempts + events + fan_outs)
}

/// How a window of finished attempts went.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    pub attempts: i64,
    pub succeeded: i64,
    /// Attempts still scheduled in the window.
    pub scheduled: i64,
    pub latency_average_ms: Option<i64>,
    /// p50, p95 and p99 of the finished attempts' latency.
    pub latency_percentiles_ms: Option<[i64; 3]>,
    /// The most common failures, most frequent first: the receiver's status (none for a timeout or a
    /// connection error), what went wrong, how often.
    pub failures: Vec<(Option<i64>, String, i64)>,
}

/// Most common failures a metrics answer names.
const TOP_FAILURES: i64 = 5;

/// Metrics of the attempts made to a client's endpoints (or one of them) created in `[from, to)`.
pub async fn metrics(
    pool: &sqlx::AnyPool,
    (realm_id, client_id): (&str, &str),
    endpoint_id: Option<&str>,
    (from, to): (DateTime<Utc>, DateTime<Utc>),
) -> Result<Metrics, Error> {
    let (from, to) = (super::millis(from), super::millis(to));
    let window = "realm_id = $1 AND endpoint_kind = 'Client' AND client_id = $2 AND ($3 IS NULL OR endpoint_id = $3) \
                  AND created_at >= $4 AND created_at < $5";
    let bind = |sql: String| {
        sqlx::query_as::<_, (i64,)>(sqlx::AssertSqlSafe(sql))
            .bind(realm_id.to_owned())
            .bind(client_id.to_owned())
            .bind(endpoint_id.map(str::to_owned))
            .bind(from)
            .bind(to)
    };
    // Every count and the average in one pass over the window.
    let (attempts, succeeded, scheduled, measured, average): (i64, i64, i64, i64, Option<i64>) =
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT COUNT(CASE WHEN state IN ('Succeeded', 'Failed') THEN 1 END), \
             COUNT(CASE WHEN state = 'Succeeded' THEN 1 END), COUNT(CASE WHEN state = 'Scheduled' THEN 1 END), \
             COUNT(CASE WHEN state IN ('Succeeded', 'Failed') THEN latency_ms END), \
             CAST(AVG(CASE WHEN state IN ('Succeeded', 'Failed') THEN latency_ms END) AS BIGINT) \
             FROM webhook_attempts WHERE {window}"
        )))
        .bind(realm_id)
        .bind(client_id)
        .bind(endpoint_id)
        .bind(from)
        .bind(to)
        .fetch_one(pool)
        .await?;
    let timed =
        format!("FROM webhook_attempts WHERE {window} AND state IN ('Succeeded', 'Failed') AND latency_ms IS NOT NULL");
    let (mut latency_average_ms, mut latency_percentiles_ms) = (None, None);
    if let (true, Some(average)) = (measured > 0, average) {
        let mut percentiles = [0; 3];
        for (slot, per_cent) in percentiles.iter_mut().zip([50, 95, 99]) {
            // The nearest-rank percentile: the smallest latency at or above `per_cent` of them.
            let rank = (measured * per_cent + 99) / 100;
            let (value,) = bind(format!("SELECT latency_ms {timed} ORDER BY latency_ms LIMIT 1 OFFSET {}", rank - 1))
                .fetch_one(pool)
                .await?;
            *slot = value;
        }
        (latency_average_ms, latency_percentiles_ms) = (Some(average), Some(percentiles));
    }
    let failures = sqlx::query_as::<_, (Option<i64>, Option<String>, i64)>(sqlx::AssertSqlSafe(format!(
        "SELECT response_status, error, COUNT(*) AS times FROM webhook_attempts WHERE {window} AND state = 'Failed' \
         GROUP BY response_status, error ORDER BY times DESC, error LIMIT {TOP_FAILURES}"
    )))
    .bind(realm_id)
    .bind(client_id)
    .bind(endpoint_id)
    .bind(from)
    .bind(to)
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|(status, error, times)| (status, error.unwrap_or_default(), times))
    .collect();
    Ok(Metrics { attempts, succeeded, scheduled, latency_average_ms, latency_percentiles_ms, failures })
}

/// The endpoints of a realm (`client_id` `None`) or of one of its clients, or their deliveries.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    pub realm_id: &'a str,
    pub client_id: Option<&'a str>,
}

impl Place<'_> {
    pub fn kind(&self) -> EndpointKind {
        if self.client_id.is_some() { EndpointKind::Client } else { EndpointKind::Realm }
    }

    pub(super) fn scope(&self, kind_column: &'static str) -> Scope {
        Scope::of("realm_id", self.realm_id)
            .and(kind_column, self.kind().as_str())
            .and_given("client_id", self.client_id)
    }
}

/// A page of a place's endpoints.
pub async fn endpoint_page(store: &Store, place: Place<'_>, request: &PageRequest) -> Result<Page<Endpoint>, Error> {
    page::fetch(store.pool(), &ENDPOINT_LISTING, &place.scope("kind"), request).await
}

/// Which attempts of a place a page shows.
#[derive(Debug, Clone, Default)]
pub struct AttemptFilter<'a> {
    pub endpoint_id: Option<&'a str>,
    pub event_id: Option<&'a str>,
    pub event_type: Option<&'a str>,
    pub kind: Option<&'a str>,
}

/// A page of the delivery attempts to a place's endpoints.
pub async fn attempt_page(
    store: &Store,
    place: Place<'_>,
    filter: AttemptFilter<'_>,
    request: &PageRequest,
) -> Result<Page<Attempt>, Error> {
    let scope = place
        .scope("endpoint_kind")
        .and_given("endpoint_id", filter.endpoint_id)
        .and_given("event_id", filter.event_id)
        .and_given("event_type", filter.event_type)
        .and_given("kind", filter.kind);
    page::fetch(store.pool(), &ATTEMPT_LISTING, &scope, request).await
}
