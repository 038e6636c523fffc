//! Token introspection (RFC 7662) and revocation (RFC 7009), for a client already authenticated:
//! what a token is, told only to those it may be told to, and its end.

use std::net::IpAddr;

use serde_json::{Value, json};

use crate::directory::consumers::CONSUMER_KEY_PREFIX;
use crate::oauth::signin::Origin;
use crate::oauth::signin::consumer_keys::{self, Validated};
use crate::oauth::tokens::{self, ActiveToken};
use crate::protection::Protection;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::changes::Invalidation;
use crate::store::clients::Client;
use crate::store::consumers::{self, Consumer};
use crate::store::events::{self, Event, EventType};
use crate::store::realms::Realm;
use crate::store::sessions::{self, RefreshToken, Session};
use crate::store::users::{User, UserStatus};

/// Who asks about a token: a consumer key's validation is a sign-in of the consumer from there.
#[derive(Debug, Clone, Copy)]
pub struct Asker<'a> {
    pub address: IpAddr,
    pub user_agent: Option<&'a str>,
}

/// A refresh token that is still good, with its session and person.
async fn live_refresh_token(
    context: &Context,
    realm: &Realm,
    value: &str,
) -> Result<Option<(RefreshToken, Session, User)>, Error> {
    let pool = context.store.pool();
    let Some(id) = tokens::refresh_token_id(value) else { return Ok(None) };
    let found = sessions::find_refresh(pool, id).await?;
    let Some(token) = found.filter(|t| context.hasher.matches(value, &t.token_hash)) else { return Ok(None) };
    let Some((session, user)) = context.session_reads.find_with_person(&token.session_id).await? else {
        return Ok(None);
    };
    let now = context.clock.now();
    let live = session.realm_id == realm.id
        && session.is_live(now)
        && token.exchanged_at.is_none()
        && token.revoked_at.is_none()
        && token.expires_at > now;
    Ok(live.then_some((token, session, user)))
}

/// An access token as RFC 7662 §2.2 describes it: its own claims, instants as NumericDate.
fn describe_access(token: &ActiveToken, username: Option<String>) -> Value {
    let mut answer = json!({
        "active": true,
        "token_type": if token.claims.contains_key("cnf") { "DPoP" } else { "Bearer" },
        "client_id": token.client_id,
        "sub": token.subject,
        "exp": token.expires_at.timestamp(),
        "iat": token.issued_at.timestamp(),
        "jti": token.jti,
    });
    if let Some(object) = answer.as_object_mut() {
        // `cnf`: the key a DPoP-bound token is bound to (RFC 9449 §6.2).
        // `auth_time`, `acr` and `amr`: how the person signed in (RFC 9470 §4).
        let named =
            ["iss", "aud", "iat", "nbf", "scope", "sid", "act", "delegation_id", "cnf", "auth_time", "acr", "amr"];
        for claim in named {
            if let Some(value) = token.claims.get(claim) {
                object.insert(claim.into(), value.clone());
            }
        }
        if let Some(username) = username {
            object.insert("username".into(), json!(username));
        }
    }
    answer
}

fn describe_consumer(consumer: &Consumer) -> Value {
    let mut answer = json!({
        "active": true,
        "token_type": "api_key",
        "client_id": consumer.client_id,
        "sub": consumer.id,
        "consumer_id": consumer.id,
        "consumer_name": consumer.name,
        "iat": consumer.created_at.timestamp(),
    });
    if let Some(object) = answer.as_object_mut() {
        let scopes = consumer.scopes.clone();
        if !scopes.is_empty() {
            object.insert("scope".into(), json!(scopes.join(" ")));
        }
        if let Some(until) = consumer.expires_at {
            object.insert("exp".into(), json!(until.timestamp()));
        }
    }
    answer
}

/// What `client` is told of `token` (RFC 7662 §2.2), `hint` being its `token_type_hint`: an
/// access token of the realm, a refresh token or consumer key of the client's own, or
/// `{"active": false}`.
pub async fn describe(
    context: &Context,
    protection: &Protection,
    realm: &Realm,
    client: &Client,
    token: &str,
    hint: Option<&str>,
    asker: Asker<'_>,
) -> Result<Value, Error> {
    let refresh_first = hint == Some("refresh_token") || token.starts_with(tokens::REFRESH_TOKEN_PREFIX);

    // Consumer API keys are described only to their own client, the customer's API; each
    // validation is a sign-in of the consumer.
    if hint == Some("api_key") || token.starts_with(CONSUMER_KEY_PREFIX) {
        let now = context.clock.now();
        let key_hash = context.hasher.hash(token);
        let consumer = consumers::find_by_hash(context.store.pool(), &key_hash).await?;
        let consumer = consumer.filter(|c| c.realm_id == realm.id && c.client_id == client.id);
        let validated = match &consumer {
            Some(consumer) if consumer.is_usable(now) => Validated::Live(consumer),
            Some(consumer) => Validated::NotUsable(consumer),
            None => Validated::Unknown,
        };
        if consumer.is_some() || token.starts_with(CONSUMER_KEY_PREFIX) {
            let origin =
                Origin { ip_address: asker.address.to_string(), user_agent: asker.user_agent.map(str::to_owned) };
            consumer_keys::record(context, protection, realm, client, validated, &key_hash, &origin).await?;
            return Ok(match validated {
                Validated::Live(consumer) => describe_consumer(consumer),
                _ => json!({ "active": false }),
            });
        }
    }

    if !refresh_first && let Some(active) = tokens::active_access_token(context, &realm.id, token).await? {
        let username = active.person.as_ref().map(|(_, person)| person.username.clone());
        return Ok(describe_access(&active, username));
    }
    // Refresh tokens are described only to the client they were issued to.
    if let Some((refresh, session, person)) = live_refresh_token(context, realm, token).await?
        && session.client_id == client.id
        && person.status == UserStatus::Active
        && !client.revoked_token(refresh.created_at)
    {
        let scopes = refresh.scopes.clone();
        return Ok(json!({
            "active": true,
            "token_type": "refresh_token",
            "client_id": session.client_id,
            "sub": session.user_id,
            "sid": session.id,
            "scope": scopes.join(" "),
            "iat": refresh.created_at.timestamp(),
            "exp": refresh.expires_at.timestamp(),
        }));
    }
    Ok(json!({ "active": false }))
}

async fn announce_revocation(
    context: &Context,
    tx: &mut crate::store::Connection,
    realm: &Realm,
    client: &Client,
    data: Value,
) -> Result<(), Error> {
    let event = Event {
        event_type: EventType::TokenRevoked,
        account_id: &realm.account_id,
        realm_id: Some(&realm.id),
        client_id: Some(&client.id),
        data,
    };
    events::publish(tx, event, context.clock.now()).await?;
    Ok(())
}

/// RFC 7009: `client` revokes a refresh token of its own (ending the client's session it belongs
/// to, so the access tokens of that grant go inactive too, while the browser's sign-in and the
/// person's other clients are left alone: ending those is logout's work) or an access token of
/// its own. Unknown, foreign and already inactive tokens are no error (§2.2).
pub async fn revoke(
    context: &Context,
    realm: &Realm,
    client: &Client,
    token: &str,
    hint: Option<&str>,
) -> Result<(), Error> {
    let now = context.clock.now();

    if let Some((refresh, session, _)) = live_refresh_token(context, realm, token).await?
        && session.client_id == client.id
    {
        let mut tx = context.store.begin().await?;
        sessions::revoke_refresh(&mut *tx, &refresh.id, now).await?;
        sessions::end_alone(&mut tx, &session.id, "revoked", now).await?;
        let data = json!({
            "token_id": refresh.id,
            "subject": session.user_id,
            "session_id": session.id,
            "token_type_hint": hint,
        });
        announce_revocation(context, &mut tx, realm, client, data).await?;
        tx.commit().await?;
    } else if let Some(active) = tokens::active_access_token(context, &realm.id, token).await?
        && active.client_id == client.id
    {
        let mut tx = context.store.begin().await?;
        sessions::revoke_access(&mut *tx, &active.jti, &realm.id, now, active.expires_at).await?;
        let data = json!({
            "token_id": active.jti,
            "subject": active.subject,
            "session_id": active.session_id,
            "token_type_hint": hint,
        });
        announce_revocation(context, &mut tx, realm, client, data).await?;
        let revoked = Invalidation::Revoked(active.jti.clone(), active.expires_at);
        crate::runtime::changes::publish(context, tx, &revoked).await?;
    }
    Ok(())
}
