//! A consumer API key validated by the customer's API at introspection is a sign-in of that
//! consumer: `login_succeeded` or `login_failed`, naming `consumer_id` and `consumer_name`. A busy
//! API validates the same key many times a second, so each key raises at most one success a
//! minute, and one failure a minute for the same reason; a key that names no consumer at all
//! raises one failure a minute per address it comes from. The throttle is counted where attack
//! protection counts (Redis when configured, so every host agrees).

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::Value;

use super::{Login, Origin, login_data, publish, succeeded_event};
use crate::protection::Protection;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::clients::Client;
use crate::store::consumers::Consumer;
use crate::store::events::EventType;
use crate::store::realms::Realm;

/// The grant type the events name.
pub const GRANT_TYPE: &str = "api_key";
/// At most one event per key (or unknown source) and outcome within this long.
pub const EVENT_EVERY: TimeDelta = TimeDelta::minutes(1);

/// What validating a key found.
#[derive(Debug, Clone, Copy)]
pub enum Validated<'a> {
    /// A usable key of the client.
    Live(&'a Consumer),
    /// A key of the client, disabled or expired.
    NotUsable(&'a Consumer),
    /// A key that names no consumer of the client.
    Unknown,
}

/// Why a key was refused, as `failure_reason` says it.
fn reason(consumer: &Consumer, now: DateTime<Utc>) -> &'static str {
    if consumer.status != Status::Active {
        "consumer_disabled"
    } else if consumer.expires_at.is_some_and(|until| until <= now) {
        "consumer_expired"
    } else {
        "consumer_not_usable"
    }
}

/// Publishes the sign-in event of a validation, unless one like it was published within the minute.
pub async fn record(
    context: &Context,
    protection: &Protection,
    realm: &Realm,
    client: &Client,
    validated: Validated<'_>,
    key_hash: &str,
    origin: &Origin,
) -> Result<(), Error> {
    let now = context.clock.now();
    let (event_type, consumer, failure, throttle) = match validated {
        Validated::Live(c) => (EventType::LoginSucceeded, Some(c), None, format!("succeeded:{key_hash}")),
        Validated::NotUsable(c) => {
            let why = reason(c, now);
            (EventType::LoginFailed, Some(c), Some(why), format!("failed:{why}:{key_hash}"))
        }
        Validated::Unknown => (
            EventType::LoginFailed,
            None,
            Some("unknown_api_key"),
            format!("unknown:{}:{}:{}", realm.id, client.id, origin.ip_address),
        ),
    };
    let key = format!("consumer-event:{throttle}");
    match protection.counters.hold_unless_held(&key, "1", now + EVENT_EVERY, now).await {
        Ok(false) => return Ok(()),
        Ok(true) => {}
        // Unreadable counters: the event is published rather than lost.
        Err(error) => tracing::warn!(%error, "cannot read the consumer key event throttle"),
    }
    let login = Login {
        grant_type: GRANT_TYPE,
        resource: None,
        user: None,
        session_id: None,
        failure_reason: failure,
        scopes: consumer.map_or(&[][..], |c| &c.scopes[..]),
        methods: &[],
    };
    let mut data = login_data(login, origin);
    if let Some(consumer) = consumer {
        data["consumer_id"] = Value::from(consumer.id.as_str());
        data["consumer_name"] = Value::from(consumer.name.as_str());
    }
    if event_type == EventType::LoginSucceeded {
        context.writes.publish(succeeded_event(realm, client, data, now)).await?;
        return Ok(());
    }
    let mut tx = context.store.begin().await?;
    publish(&mut tx, realm, client, event_type, data, now).await?;
    tx.commit().await?;
    Ok(())
}
