//! A confidential client refused at the token endpoint (a wrong secret, a bad assertion) is a
//! failed sign-in of that client: `login_failed` with `failure_reason` `invalid_client`. Anyone
//! can send wrong secrets as fast as they like, so each client raises at most one such event a
//! minute per address the attempts come from, counted where attack protection counts (Redis when
//! configured, so every host agrees). A client that does not exist raises nothing: there is no
//! one to tell.

use chrono::TimeDelta;

use super::{Login, Origin, login_data, publish};
use crate::protection::Protection;
use crate::runtime::context::Context;
use crate::store::events::EventType;
use crate::store::realms::Realm;

/// At most one event per client and address within this long.
pub const EVENT_EVERY: TimeDelta = TimeDelta::minutes(1);

/// Publishes `login_failed` for the client named `client_id`, refused for `grant_type`, unless one
/// was published for it and this address within the minute. Failures to publish are logged: the
/// caller's answer is the refusal whatever happens here.
pub async fn record(
    context: &Context,
    protection: &Protection,
    realm: &Realm,
    client_id: &str,
    grant_type: &str,
    origin: &Origin,
) {
    if let Err(error) = try_record(context, protection, realm, client_id, grant_type, origin).await {
        tracing::error!(error = format!("{error:#}"), "cannot publish a refused client's login_failed");
    }
}

async fn try_record(
    context: &Context,
    protection: &Protection,
    realm: &Realm,
    client_id: &str,
    grant_type: &str,
    origin: &Origin,
) -> Result<(), crate::runtime::error::Error> {
    let Some(client) = crate::oauth::tokens::find_client(context, &realm.id, client_id).await? else { return Ok(()) };
    let now = context.clock.now();
    let key = format!("client-refused-event:{}:{}:{}", realm.id, client.id, origin.ip_address);
    match protection.counters.hold_unless_held(&key, "1", now + EVENT_EVERY, now).await {
        Ok(false) => return Ok(()),
        Ok(true) => {}
        // Unreadable counters: the event is published rather than lost.
        Err(error) => tracing::warn!(%error, "cannot read the refused-client event throttle"),
    }
    let login = Login {
        grant_type,
        resource: None,
        user: None,
        session_id: None,
        failure_reason: Some("invalid_client"),
        scopes: &[],
        methods: &[],
    };
    let mut tx = context.store.begin().await?;
    publish(&mut tx, realm, &client, EventType::LoginFailed, login_data(login, origin), now).await?;
    tx.commit().await?;
    Ok(())
}
