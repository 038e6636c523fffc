//! The events a place's endpoints heard, each with how its fan-out went.
//!
//! An event belongs to a place's history from its fan-out, which writes one row for the event and
//! the place (`webhook_fan_outs`) beside its first attempt to each endpoint there. A page is chosen
//! from those rows, in the order of their index, and counted from them; only the events of the
//! page are then summed up from all their attempts (retries and replays included, tests never),
//! read from an index that holds each attempt's event, place, endpoint and state
//! (`webhook_attempts_by_event`). So a page costs the same whatever the length of the history, the
//! count reads one index entry per event, and a status filter sums up every event of the place (the
//! status is not stored).
//!
//! A fan-out row lives as long as the event has attempts at its place: removing an endpoint drops
//! the rows its place is left without, removing a client or realm takes them along, and the 30-day
//! history removes them with the fan-out's attempts (a replay made later stays among the
//! deliveries, but the event leaves this list).

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::{Attempt, AttemptKind, Place, rows_per_insert};
use crate::kernel::ids::EventId;
use crate::store::page::{self, Listing, Page, PageRequest, Sql};
use crate::store::{Connection, Error, Store};

/// One event as delivered to a place's endpoints, with its fan-out status.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct EventDelivery {
    pub event_id: EventId,
    pub event_type: String,
    /// When it was fanned out.
    #[sqlx(try_from = "crate::store::Millis")]
    pub created_at: DateTime<Utc>,
    /// Endpoints the event was fanned out to.
    pub endpoints: i64,
    /// Endpoints that accepted it.
    pub delivered: i64,
    /// Pending, Delivered, Partial or Failed.
    pub status: String,
}

/// The attempts `a` made for the fanned-out event `e`: to the endpoints of its place, tests excluded.
macro_rules! of_the_event {
    () => {
        "a.event_id = e.event_id AND a.realm_id = e.realm_id AND a.endpoint_kind = e.endpoint_kind \
         AND COALESCE(a.client_id, '') = COALESCE(e.client_id, '') AND a.kind <> 'Test'"
    };
}

/// The status of the event of the fan-out `e`. Per endpoint, an event is delivered once any attempt
/// succeeded, and pending while it is not delivered and an attempt is still scheduled. Across
/// endpoints it is Pending while any endpoint is pending, Delivered when every endpoint accepted
/// it, Failed when none did, Partial otherwise.
const STATUS: &str = concat!(
    "(SELECT CASE WHEN SUM(CASE WHEN per_endpoint.succeeded = 0 AND per_endpoint.scheduled = 1 THEN 1 ELSE 0 END) > 0 \
         THEN 'Pending' WHEN SUM(per_endpoint.succeeded) = COUNT(*) THEN 'Delivered' \
         WHEN SUM(per_endpoint.succeeded) = 0 THEN 'Failed' ELSE 'Partial' END \
     FROM (SELECT MAX(CASE WHEN a.state = 'Succeeded' THEN 1 ELSE 0 END) AS succeeded, \
                  MAX(CASE WHEN a.state = 'Scheduled' THEN 1 ELSE 0 END) AS scheduled \
           FROM webhook_attempts AS a WHERE ",
    of_the_event!(),
    " GROUP BY a.endpoint_id) AS per_endpoint)"
);

/// Endpoints the event of the fan-out `e` went to, and those that accepted it.
const ENDPOINTS: &str = concat!(
    "(SELECT COUNT(DISTINCT a.endpoint_id) FROM webhook_attempts AS a WHERE ",
    of_the_event!(),
    ") AS endpoints, (SELECT COUNT(DISTINCT a.endpoint_id) FROM webhook_attempts AS a WHERE ",
    of_the_event!(),
    " AND a.state = 'Succeeded') AS delivered"
);

/// The fan-outs `e` of events: one row per event and place.
const FAN_OUTS: Listing = Listing {
    table: "webhook_fan_outs AS e",
    columns: "e.created_at, e.event_id, e.event_type, e.realm_id, e.endpoint_kind, e.client_id",
    created: "created_at",
    tie_breaker: "event_id",
    search: &["event_type", "event_id"],
    status: Some(STATUS),
    sortable: &[("eventType", "event_type"), ("createdAt", "created_at")],
};

/// Records the places the `Event` attempts of a fan-out went to, one row per event and place.
pub async fn insert_fan_outs(tx: &mut Connection, attempts: &[Attempt]) -> Result<(), Error> {
    let mut places: Vec<&Attempt> = attempts.iter().filter(|a| a.kind == AttemptKind::Event).collect();
    places.sort_by(|a, b| {
        (&a.event_id, a.endpoint_kind.as_str(), &a.client_id).cmp(&(
            &b.event_id,
            b.endpoint_kind.as_str(),
            &b.client_id,
        ))
    });
    places
        .dedup_by(|a, b| a.event_id == b.event_id && a.endpoint_kind == b.endpoint_kind && a.client_id == b.client_id);
    for chunk in places.chunks(rows_per_insert(tx)) {
        let mut insert = sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO webhook_fan_outs (event_id, realm_id, endpoint_kind, client_id, event_type, created_at) \
             VALUES {}",
            crate::store::values_placeholders(chunk.len(), 6)
        )));
        for attempt in chunk {
            insert = insert
                .bind(attempt.event_id.as_str())
                .bind(attempt.realm_id.as_str())
                .bind(attempt.endpoint_kind.as_str())
                .bind(attempt.client_id.as_ref().map(|id| id.as_str()))
                .bind(attempt.event_type.as_str())
                .bind(crate::store::millis(attempt.created_at));
        }
        insert.execute(&mut *tx).await?;
    }
    Ok(())
}

/// Drops the fan-outs of a place that no longer has an attempt for them (its endpoints that heard
/// them were removed, with their attempts).
pub async fn forget_unheard<'c>(db: impl Executor<'c, Database = Any>, place: Place<'_>) -> Result<u64, Error> {
    let removed = sqlx::query(concat!(
        "DELETE FROM webhook_fan_outs AS e WHERE e.realm_id = $1 AND e.endpoint_kind = $2 \
         AND COALESCE(e.client_id, '') = COALESCE($3, '') \
         AND NOT EXISTS (SELECT 1 FROM webhook_attempts AS a WHERE ",
        of_the_event!(),
        ")"
    ))
    .bind(place.realm_id)
    .bind(place.kind().as_str())
    .bind(place.client_id)
    .execute(db)
    .await?;
    Ok(removed.rows_affected())
}

/// A page of the events fanned out to a place's endpoints, optionally of one type.
pub async fn event_page(
    store: &Store,
    place: Place<'_>,
    event_type: Option<&str>,
    request: &PageRequest,
) -> Result<Page<EventDelivery>, Error> {
    let scope = place.scope("endpoint_kind").and_given("event_type", event_type);
    let mut fanned = page::conditions(&FAN_OUTS, &scope, request);
    if place.client_id.is_none() {
        // Always so for a realm's place; said, it lets the index give the rows in page order.
        fanned.push(" AND e.client_id IS NULL");
    }

    let count = Sql::joined("SELECT COUNT(*) FROM webhook_fan_outs AS e", &fanned);
    let (total_items,): (i64,) = count.query_as().fetch_one(store.pool()).await?;

    // The page's fan-outs first, then the figures of those events alone.
    let order = page::order(&FAN_OUTS, request);
    let mut select =
        Sql::joined(&format!("WITH chosen AS (SELECT {} FROM {}", FAN_OUTS.columns, FAN_OUTS.table), &fanned);
    select.push(&format!(" ORDER BY {order}"));
    select.bind_page(request);
    select.push(&format!(
        ") SELECT e.event_id, e.event_type, e.created_at, {ENDPOINTS}, {STATUS} AS status FROM chosen AS e ORDER BY {order}"
    ));
    let items = select.query_as().fetch_all(store.pool()).await?;
    Ok(Page { items, page_number: request.number, page_size: request.size, total_items, total_at_least: false })
}
