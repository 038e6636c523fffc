//! The authorization code (RFC 6749 §4.1): issued to a signed-in browser's client, exchanged at the
//! token endpoint, good once, for a minute, for the client it was issued to, with its redirect URI
//! and the verifier of its PKCE challenge (RFC 7636).
//!
//! A code holds its own grant, sealed (AES-256-GCM under a key of its own for each code, derived
//! from the deployment key and a random salt the code carries): the client session it opens, the request's redirect URI, scopes, nonce, PKCE
//! challenge and resource, and when it expires. Nothing is stored when a code is issued. Its
//! exchange opens the client session under the id the code names, and that row is what makes the
//! code single use: a second presentation finds the session there, on any host.

use base64::Engine as _;
use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::issuance::{self, Granted};
use super::{Refusal, SignInError, Tokens};
use crate::kernel::ids::{BrowserSessionId, ClientId, RealmId, SessionId, UserId};
use crate::runtime::context::Context;
use crate::store::browser;
use crate::store::clients::Client;
use crate::store::realms::Realm;
use crate::store::sessions::{self, Session};
use crate::store::users::UserStatus;
use crate::store::write_queue::{Redeemed, Redemption};

/// How long a code may wait for its exchange.
pub const CODE_LIFETIME: TimeDelta = TimeDelta::seconds(60);

/// How long after its expiry a code presented again is still known as a second use (and ends the
/// session it opened): the life of an ended client session's row is longer.
const REUSE_KNOWN_FOR: TimeDelta = TimeDelta::hours(1);

/// What the codes are sealed for: their key is derived for this purpose alone.
const SEALING_PURPOSE: &str = "authorization codes";

/// What every code starts with, so that a leaked one is recognised as one.
const PREFIX: &str = "cstl_ac_";

/// What a code grants: everything its exchange checks, and the client session it opens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeGrant {
    #[serde(rename = "r")]
    pub realm_id: String,
    #[serde(rename = "c")]
    pub client_id: String,
    /// The client session the exchange opens.
    #[serde(rename = "s")]
    pub session_id: String,
    /// The browser's realm session the client session is part of.
    #[serde(rename = "b")]
    pub browser_session_id: String,
    #[serde(rename = "u")]
    pub redirect_uri: String,
    #[serde(rename = "sc")]
    pub scopes: Vec<String>,
    #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    /// The S256 PKCE challenge, when the request carried one.
    #[serde(rename = "pk", default, skip_serializing_if = "Option::is_none")]
    pub code_challenge: Option<String>,
    /// The resource server's address the request named (RFC 8707), the tokens' audience.
    #[serde(rename = "re", default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// When the person typed their credentials (`auth_time`), in milliseconds.
    #[serde(rename = "at")]
    pub authenticated_at: i64,
    /// `pwd`, and `push` when a phone confirmed it.
    #[serde(rename = "m")]
    pub methods: Vec<String>,
    /// The browser's address and user agent at the authorization request.
    #[serde(rename = "ip")]
    pub ip_address: String,
    #[serde(rename = "ua", default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// In milliseconds.
    #[serde(rename = "x")]
    pub expires_at: i64,
}

impl CodeGrant {
    /// The code that carries this grant.
    pub fn seal(&self, context: &Context) -> String {
        let plain = serde_json::to_vec(self).unwrap_or_else(|_| unreachable!("a code's grant is plain data"));
        format!("{PREFIX}{}", context.hasher.salted_sealer(SEALING_PURPOSE).seal(&plain))
    }

    /// The grant a code of `realm_id` carries: `None` for anything this deployment did not issue
    /// for the realm.
    pub fn open(context: &Context, realm_id: &str, code: &str) -> Option<Self> {
        let sealed = code.strip_prefix(PREFIX)?;
        let plain = context.hasher.salted_sealer(SEALING_PURPOSE).open(sealed).ok()?;
        serde_json::from_slice::<Self>(&plain).ok().filter(|grant| grant.realm_id == realm_id)
    }

    fn expires_at(&self) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(self.expires_at).unwrap_or(DateTime::<Utc>::MIN_UTC)
    }

    /// The client session the code opens, part of the browser's (which ends it no later).
    fn session(&self, user_id: &UserId, expires_at: DateTime<Utc>, now: DateTime<Utc>) -> Session {
        Session {
            id: SessionId::known(&self.session_id),
            realm_id: RealmId::known(&self.realm_id),
            client_id: ClientId::known(&self.client_id),
            user_id: user_id.clone(),
            ip_address: self.ip_address.clone(),
            user_agent: self.user_agent.clone(),
            authentication_methods: self.methods.clone(),
            created_at: DateTime::from_timestamp_millis(self.authenticated_at).unwrap_or(now),
            last_active_at: now,
            expires_at,
            ended_at: None,
            end_reason: None,
            browser_session_id: Some(BrowserSessionId::known(&self.browser_session_id)),
        }
    }
}

/// A code presented at the token endpoint by an authenticated client.
#[derive(Debug, Clone, Copy)]
pub struct CodeExchange<'a> {
    pub realm: &'a Realm,
    pub client: &'a Client,
    pub code: &'a str,
    pub redirect_uri: Option<&'a str>,
    pub code_verifier: Option<&'a str>,
    /// The resource named at the token endpoint (RFC 8707 §2.2): when named, the code's.
    pub resource: Option<&'a str>,
    /// The thumbprint of the DPoP key the tokens are bound to.
    pub dpop_jkt: Option<&'a str>,
}

/// Exchanges a code for the tokens of the client session it opens. A code is good once, for 60
/// seconds, for the client it was issued to, with the same redirect URI and the verifier of its
/// PKCE challenge, while the browser's sign-in it came from lasts; presented a second time, it ends
/// the session it opened, and every token issued from it. Any presentation uses the code up,
/// refused or not: a refused one records the session it would have opened, ended.
pub async fn exchange(context: &Context, exchange: CodeExchange<'_>) -> Result<Tokens, SignInError> {
    let CodeExchange { realm, client, code, .. } = exchange;
    let now = context.clock.now();
    let Some(grant) = CodeGrant::open(context, &realm.id, code) else {
        return Err(Refusal::InvalidAuthorizationCode.into());
    };
    if grant.expires_at() + REUSE_KNOWN_FOR <= now {
        return Err(Refusal::InvalidAuthorizationCode.into());
    }
    let browser_session = BrowserSessionId::known(&grant.browser_session_id);
    let found = browser::find_by_id_with_person(context.store.pool(), &realm.id, &browser_session).await?;
    let live = found.filter(|(browser, user)| browser.is_live(now) && user.status == UserStatus::Active);
    let Some((browser, user)) = live else { return signed_out(context, client, &grant).await };
    let refused = match refusal(&exchange, &grant, now) {
        Some(refusal) => Some(refusal),
        None if super::suspended(context, client, &user.id, now).await? => Some(Refusal::Suspended),
        None => None,
    };
    let mut session = grant.session(&user.id, browser.expires_at, now);
    if let Some(refusal) = refused {
        session.ended_at = Some(now);
        session.end_reason = Some("authorization_code_refused".into());
        let spent = Redemption { session, refresh: None, within_browser_session: false };
        return match context.writes.redeem(spent).await? {
            Redeemed::Reused => reused(context, client, &grant).await,
            Redeemed::Opened | Redeemed::SignedOut => Err(refusal.into()),
        };
    }
    let (scopes, resource, dpop_jkt) = (&grant.scopes, grant.resource.as_deref(), exchange.dpop_jkt);
    let refresh = issuance::next_refresh(context, client, &session, scopes, resource, dpop_jkt, now);
    let (row, refresh) = refresh.map(|(row, value, expires_in)| (row, (value, expires_in))).unzip();
    let opening = Redemption { session: session.clone(), refresh: row, within_browser_session: true };
    match context.writes.redeem(opening).await? {
        Redeemed::Opened => {}
        Redeemed::Reused => return reused(context, client, &grant).await,
        // The browser's sign-in ended between the read and the write.
        Redeemed::SignedOut => return signed_out(context, client, &grant).await,
    }
    let granted = Granted { scopes, resource, refresh, nonce: grant.nonce.as_deref(), dpop_jkt };
    Ok(issuance::person_tokens(context, client, &user, &session, granted).await?)
}

/// Why a first presentation of the code is refused, if it is: issued to another client (refused as
/// unknown, RFC 9700 §4.5: code injection), expired, with another redirect URI, without the
/// verifier of its challenge, or naming another resource.
fn refusal(exchange: &CodeExchange<'_>, grant: &CodeGrant, now: DateTime<Utc>) -> Option<Refusal> {
    let CodeExchange { client, redirect_uri, code_verifier, resource: named, .. } = *exchange;
    if grant.client_id != client.id.as_str()
        || grant.expires_at() <= now
        || redirect_uri != Some(grant.redirect_uri.as_str())
    {
        return Some(Refusal::InvalidAuthorizationCode);
    }
    match (&grant.code_challenge, code_verifier) {
        (Some(challenge), Some(verifier)) if is_verifier(verifier) && s256(verifier) == *challenge => {}
        // A verifier for a code issued without a challenge is a downgrade attempt (RFC 9700 §2.1.1).
        (None, None) => {}
        _ => return Some(Refusal::InvalidCodeVerifier),
    }
    let address = named.filter(|address| Some(*address) != grant.resource.as_deref())?;
    Some(Refusal::ResourceNotAllowed { address: address.to_owned() })
}

/// A code presented again: the session it opened ends, with every token issued from it, when its
/// own client presents it.
async fn reused(context: &Context, client: &Client, grant: &CodeGrant) -> Result<Tokens, SignInError> {
    if grant.client_id == client.id.as_str() {
        let mut tx = context.store.begin().await?;
        sessions::end(&mut tx, &grant.session_id, "authorization_code_reused", context.clock.now()).await?;
        tx.commit().await?;
    }
    Err(Refusal::AuthorizationCodeReused.into())
}

/// A code presented once the browser's sign-in it came from is over, and every client session of
/// it: nothing is left to open. It is known as used when its session was opened (a reuse may be
/// what ended the sign-in).
async fn signed_out(context: &Context, client: &Client, grant: &CodeGrant) -> Result<Tokens, SignInError> {
    if sessions::find(context.store.pool(), &grant.session_id).await?.is_some() {
        return reused(context, client, grant).await;
    }
    Err(Refusal::InvalidAuthorizationCode.into())
}

/// RFC 7636 §4.1: 43 to 128 unreserved characters.
fn is_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// BASE64URL(SHA256(verifier)).
pub fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}
