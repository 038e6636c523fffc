//! Refresh-token rotation: each refresh exchanges the presented token for a new one in the same
//! session; a token presented after it was exchanged means two parties hold it, so its session ends.

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::json;

use super::{
    Granted, Login, Origin, Refusal, SignInError, Tokens, login_data, next_refresh, person_tokens, publish,
    succeeded_event,
};
use crate::oauth::tokens;
use crate::runtime::context::Context;
use crate::store::clients::{Client, GrantType};
use crate::store::events::EventType;
use crate::store::realms::Realm;
use crate::store::sessions::{self, RefreshToken, Session};
use crate::store::users::UserStatus;
use crate::store::write_queue::Rotation;

/// A session's last activity is written at most this often (refreshes in between leave it).
const SESSION_ACTIVITY_GRANULARITY: TimeDelta = TimeDelta::minutes(1);

/// A refresh token presented by its (authenticated) client.
#[derive(Debug, Clone)]
pub struct RefreshAttempt<'a> {
    pub realm: &'a Realm,
    pub client: &'a Client,
    pub presented: &'a str,
    /// Scopes asked for, at most those the token was granted; all of them when `None`.
    pub scopes: Option<Vec<String>>,
    /// The resource named (RFC 8707): when named, the one the token was granted for.
    pub resource: Option<&'a str>,
    /// The thumbprint of the key of the request's DPoP proof: a token bound to a key refreshes
    /// only with a proof by it, and the new tokens are bound to the same key.
    pub dpop_jkt: Option<&'a str>,
    pub origin: &'a Origin,
}

pub async fn refresh(context: &Context, attempt: RefreshAttempt<'_>) -> Result<Tokens, SignInError> {
    let RefreshAttempt { realm, client, presented, scopes, resource, dpop_jkt, origin } = attempt;
    let pool = context.store.pool();
    let now = context.clock.now();
    let Some(id) = tokens::refresh_token_id(presented) else { return Err(Refusal::InvalidRefreshToken.into()) };
    let found = sessions::find_refresh_grant(pool, id).await?;
    let Some((token, session, user)) = found.filter(|(t, _, _)| context.hasher.matches(presented, &t.token_hash))
    else {
        return Err(Refusal::InvalidRefreshToken.into());
    };
    if session.realm_id != realm.id || session.client_id != client.id {
        return Err(Refusal::InvalidRefreshToken.into());
    }
    if token.exchanged_at.is_some() {
        return Err(reuse_detected(context, realm, client, &token, &session, origin, now).await);
    }
    // Everything that can refuse is read before the write transaction, which stays short.
    if token.revoked_at.is_some()
        || token.expires_at <= now
        || !session.is_live(now)
        || client.revoked_token(token.created_at)
        || user.status != UserStatus::Active
    {
        return Err(Refusal::InvalidRefreshToken.into());
    }
    if super::suspended(context, client, &user.id, now).await? {
        return Err(Refusal::Suspended.into());
    }
    if token.dpop_jkt.is_some() && token.dpop_jkt.as_deref() != dpop_jkt {
        return Err(Refusal::RefreshTokenBoundToKey.into());
    }
    // The new refresh token keeps the old one's binding (bound or not); the access token is bound
    // to the key of the proof presented now, if any.
    let refresh_binding = token.dpop_jkt.clone();
    if let Some(address) = resource.filter(|address| Some(*address) != token.resource.as_deref()) {
        return Err(Refusal::ResourceNotAllowed { address: address.to_owned() }.into());
    }
    let granted = token.scopes.clone();
    let scopes = match scopes {
        None => granted,
        Some(asked) => {
            let excess: Vec<String> = asked.iter().filter(|s| !granted.contains(s)).cloned().collect();
            if !excess.is_empty() {
                return Err(Refusal::ScopesBeyondGrant { excess }.into());
            }
            asked
        }
    };
    let next =
        next_refresh(context, client, &session, &scopes, token.resource.as_deref(), refresh_binding.as_deref(), now);
    let methods: Vec<String> = session.authentication_methods.clone();
    let methods: Vec<&str> = methods.iter().map(String::as_str).collect();
    let login = Login {
        grant_type: GrantType::RefreshToken.as_str(),
        resource: token.resource.as_deref(),
        user: Some(&user),
        session_id: Some(&session.id),
        failure_reason: None,
        scopes: &scopes,
        methods: &methods,
    };
    let event = succeeded_event(realm, client, login_data(login, origin), now);
    let rotation = Rotation {
        exchanged: token.id.clone().into(),
        session_id: session.id.clone(),
        touch: now - session.last_active_at >= SESSION_ACTIVITY_GRANULARITY,
        next: next.as_ref().map(|(row, _, _)| row.clone()),
        event,
    };
    // The exchange, the next token and the event commit together, in a group commit.
    if !context.writes.rotate(rotation).await? {
        // Another request exchanged it a moment ago.
        return Err(reuse_detected(context, realm, client, &token, &session, origin, now).await);
    }
    let refresh = next.map(|(_, value, expires_in)| (value, expires_in));
    let granted = Granted { scopes: &scopes, resource: token.resource.as_deref(), refresh, nonce: None, dpop_jkt };
    Ok(person_tokens(context, client, &user, &session, granted).await?)
}

/// A refresh token presented after it was exchanged: the session behind it ends (its tokens go
/// inactive) and `token_reuse_detected` is raised once. Answers the refusal, or the failure that
/// kept the session from ending.
async fn reuse_detected(
    context: &Context,
    realm: &Realm,
    client: &Client,
    token: &RefreshToken,
    session: &Session,
    origin: &Origin,
    now: DateTime<Utc>,
) -> SignInError {
    let ended = async {
        let mut tx = context.store.begin().await?;
        if sessions::end(&mut tx, &session.id, "refresh_token_reuse", now).await? {
            let data = json!({
                "token_id": token.id,
                "subject": session.user_id,
                "session_id": session.id,
                "ip_address": origin.ip_address,
                "user_agent": origin.user_agent,
            });
            publish(&mut tx, realm, client, EventType::TokenReuseDetected, data, now).await?;
        }
        tx.commit().await?;
        Ok::<(), SignInError>(())
    };
    match ended.await {
        Ok(()) => Refusal::RefreshTokenReused.into(),
        Err(failure) => failure,
    }
}
