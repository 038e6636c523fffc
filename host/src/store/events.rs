//! The event outbox: every event is written in the transaction of the change it announces
//! (DESIGN principle 6) and delivered later by the webhook worker.

use serde_json::Value;

use super::Error;
use crate::ids::new_guid;

/// One event, as the SPEC's envelope names its parts.
#[derive(Debug, Clone, PartialEq)]
pub struct Event<'a> {
    pub event_type: &'static str,
    pub account_id: &'a str,
    pub realm_id: Option<&'a str>,
    pub client_id: Option<&'a str>,
    pub data: Value,
}

/// Writes the event to the outbox; its id stays the same across every retry and replay.
pub async fn publish(tx: &mut super::Connection, event: Event<'_>, at: i64) -> Result<String, Error> {
    let id = new_guid();
    sqlx::query(
        "INSERT INTO event_outbox (id, event_type, account_id, realm_id, client_id, created_at, data) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&id)
    .bind(event.event_type)
    .bind(event.account_id)
    .bind(event.realm_id)
    .bind(event.client_id)
    .bind(at)
    .bind(event.data.to_string())
    .execute(&mut *tx)
    .await?;
    Ok(id)
}

/// A stored event.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StoredEvent {
    pub id: String,
    pub event_type: String,
    pub account_id: Option<String>,
    pub realm_id: Option<String>,
    pub client_id: Option<String>,
    pub created_at: i64,
    pub data: String,
}
