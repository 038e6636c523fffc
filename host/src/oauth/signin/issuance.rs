//! What a person's client session is issued: the access token, the ID token with `openid`, and
//! a refresh token when the client has the grant; and the redemption of a session a browser's
//! sign-in opened (an authorization code's, an approved device's).

use chrono::{DateTime, TimeDelta, Utc};

use super::{Refusal, SignInError, Tokens};
use crate::kernel::ids::{RefreshTokenId, SessionId};
use crate::oauth::tokens::{self, Grant, Subject};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients::{Client, GrantType};
use crate::store::realms::Realm;
use crate::store::sessions::{self, RefreshToken, Session};
use crate::store::users::{User, UserStatus};

/// A new refresh token in the session when the client uses the refresh grant, never outliving the
/// session: the row to store, the value to hand out, and its lifetime in seconds.
pub(super) fn next_refresh(
    context: &Context,
    client: &Client,
    session: &Session,
    scopes: &[String],
    resource: Option<&str>,
    dpop_jkt: Option<&str>,
    now: DateTime<Utc>,
) -> Option<(RefreshToken, String, i64)> {
    if !client.allows(GrantType::RefreshToken) {
        return None;
    }
    let id = RefreshTokenId::fresh();
    let value = tokens::new_refresh_token(&id);
    let expires_at =
        (now + TimeDelta::seconds(i64::from(context.settings.refresh_token_seconds))).min(session.expires_at);
    let token = RefreshToken {
        id,
        session_id: session.id.clone(),
        token_hash: context.hasher.hash(&value),
        scopes: scopes.to_vec(),
        resource: resource.map(str::to_owned),
        created_at: now,
        expires_at,
        exchanged_at: None,
        revoked_at: None,
        dpop_jkt: dpop_jkt.map(str::to_owned),
    };
    Some((token, value, (expires_at - now).num_seconds()))
}

/// The tokens of the client session a browser's sign-in opened (an approved device's), with a
/// refresh token when the client has the grant; refused with `gone` once that session ended or its
/// person is no longer active.
pub(super) async fn redeem(
    context: &Context,
    (realm, client): (&Realm, &Client),
    session_id: &SessionId,
    mut granted: Granted<'_>,
    gone: Refusal,
) -> Result<Tokens, SignInError> {
    let now = context.clock.now();
    let (session, user) = live_session(context, (realm, client), session_id, gone).await?;
    let refresh = next_refresh(context, client, &session, granted.scopes, granted.resource, granted.dpop_jkt, now);
    if let Some((row, _, _)) = &refresh {
        sessions::insert_refresh(context.store.writer(), row).await?;
    }
    granted.refresh = refresh.map(|(_, value, expires_in)| (value, expires_in));
    Ok(person_tokens(context, client, &user, &session, granted).await?)
}

/// The client session a browser's sign-in opened and its person, while it may still be issued
/// tokens: refused with `gone` once the session ended or its person is no longer active, and as
/// suspended while a Full suspension of the person at the client is in force.
pub(super) async fn live_session(
    context: &Context,
    (realm, client): (&Realm, &Client),
    session_id: &SessionId,
    gone: Refusal,
) -> Result<(Session, User), SignInError> {
    let now = context.clock.now();
    let found = sessions::find_with_person(context.store.pool(), &realm.id, session_id).await?;
    let live = found.filter(|(session, user)| session.is_live(now) && user.status == UserStatus::Active);
    let Some((session, user)) = live else { return Err(gone.into()) };
    if super::suspended(context, client, &user.id, now).await? {
        return Err(Refusal::Suspended.into());
    }
    Ok((session, user))
}

/// What a person's session is granted at one issuance.
#[derive(Debug, Clone)]
pub(super) struct Granted<'a> {
    pub scopes: &'a [String],
    pub resource: Option<&'a str>,
    pub refresh: Option<(String, i64)>,
    /// The authorization request's `nonce`, for the ID token of a code's exchange.
    pub nonce: Option<&'a str>,
    /// The thumbprint of the DPoP key the access token is bound to.
    pub dpop_jkt: Option<&'a str>,
}

/// The access token (and ID token with `openid`) of a person's session.
pub(super) async fn person_tokens(
    context: &Context,
    client: &Client,
    user: &User,
    session: &Session,
    granted: Granted<'_>,
) -> Result<Tokens, Error> {
    let Granted { scopes, resource, refresh, nonce, dpop_jkt } = granted;
    let auth_time = session.created_at;
    let methods = &session.authentication_methods;
    let subject = Subject::Person { user, session_id: &session.id, auth_time, methods };
    let grant = Grant { client, subject, scopes, resource, dpop_jkt };
    let access = tokens::access_token(context, &grant).await?;
    // The scopes the access token carries: a suspension may withhold some of those granted.
    let scopes = access.scopes.as_slice();
    let id_token = if scopes.iter().any(|s| s == "openid") {
        let token = tokens::IdToken {
            client,
            user,
            session_id: &session.id,
            auth_time,
            scopes,
            methods: &session.authentication_methods,
            nonce,
            access_token: &access.token,
        };
        Some(tokens::id_token(context, &token).await?)
    } else {
        None
    };
    Ok(Tokens { scopes: scopes.to_vec(), access, refresh, id_token })
}
