//! The events of sign-ins: what `login_succeeded` and `login_failed` tell of an attempt, and
//! publishing them with the change they belong to.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::Origin;
use crate::runtime::error::Error;
use crate::store::Connection;
use crate::store::clients::Client;
use crate::store::events::{self, Event, EventType};
use crate::store::realms::Realm;
use crate::store::users::User;
use crate::store::write_queue::QueuedEvent;

/// What a sign-in event tells about one attempt.
#[derive(Debug, Clone, Copy)]
pub struct Login<'a> {
    pub grant_type: &'a str,
    pub resource: Option<&'a str>,
    pub user: Option<&'a User>,
    pub session_id: Option<&'a str>,
    pub failure_reason: Option<&'a str>,
    pub scopes: &'a [String],
    pub methods: &'a [&'a str],
}

/// The `data` of `login_succeeded` and `login_failed`.
pub fn login_data(login: Login<'_>, origin: &Origin) -> Value {
    let Login { grant_type, resource, user, session_id, failure_reason, scopes, methods } = login;
    json!({
        "grant_type": grant_type,
        "user_id": user.map(|u| u.id.clone()),
        "username": user.map(|u| u.username.clone()),
        "email": user.and_then(|u| u.email.clone()),
        "ip_address": origin.ip_address,
        "user_agent": origin.user_agent,
        "session_id": session_id,
        "failure_reason": failure_reason,
        "resource": resource,
        "scopes": scopes,
        "authentication_methods": methods,
        "acr": if methods.is_empty() { Value::Null } else { json!(super::assurance::Level::of_methods(methods).acr()) },
        "identity_provider": null,
        "consumer_id": null,
        "consumer_name": null,
    })
}

/// A `login_succeeded` event for the group commit (`crate::store::write_queue`).
pub(super) fn succeeded_event(realm: &Realm, client: &Client, data: Value, at: DateTime<Utc>) -> QueuedEvent {
    QueuedEvent {
        event_type: EventType::LoginSucceeded,
        account_id: realm.account_id.clone(),
        realm_id: Some(realm.id.clone()),
        client_id: Some(client.id.clone()),
        data,
        at,
    }
}

pub(super) async fn publish(
    tx: &mut Connection,
    realm: &Realm,
    client: &Client,
    event_type: EventType,
    data: Value,
    at: DateTime<Utc>,
) -> Result<(), Error> {
    let event = Event {
        event_type,
        account_id: &realm.account_id,
        realm_id: Some(&realm.id),
        client_id: Some(&client.id),
        data,
    };
    events::publish(tx, event, at).await?;
    Ok(())
}
