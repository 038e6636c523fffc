//! The authorization code's exchange at the token endpoint (RFC 6749 §4.1.3): good once, for a
//! minute, for the client it was issued to, with its redirect URI and the verifier of its PKCE
//! challenge (RFC 7636).

use base64::Engine as _;
use sha2::{Digest, Sha256};

use chrono::{DateTime, Utc};

use super::issuance::{self, Granted};
use super::{Refusal, SignInError, Tokens};
use crate::runtime::context::Context;
use crate::store::browser::{self, AuthorizationCode};
use crate::store::clients::Client;
use crate::store::realms::Realm;
use crate::store::sessions;
use crate::store::write_queue::Redemption;

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

/// Exchanges a code for the tokens of its session. A code is good once, for 60 seconds, for the
/// client it was issued to, with the same redirect URI and the verifier of its PKCE challenge;
/// presented a second time, it ends the session it opened, and every token issued from it. Any
/// presentation uses the code up, refused or not.
pub async fn exchange(context: &Context, exchange: CodeExchange<'_>) -> Result<Tokens, SignInError> {
    let CodeExchange { realm, client, code, .. } = exchange;
    let now = context.clock.now();
    let hash = context.hasher.hash(code);
    let Some(code) = browser::find_code(context.store.pool(), &realm.id, &hash).await? else {
        return Err(Refusal::InvalidAuthorizationCode.into());
    };
    if code.used_at.is_some() {
        return reused(context, client, &code).await;
    }
    let live = match refusal(&exchange, &code, now) {
        Some(refusal) => Err(refusal.into()),
        None => {
            issuance::live_session(context, (realm, client), &code.session_id, Refusal::InvalidAuthorizationCode).await
        }
    };
    let (session, user) = match live {
        Ok(live) => live,
        Err(refused) => {
            // Writes go through the writer: on SQLite, the one connection that writes.
            browser::mark_used(context.store.writer(), &[hash.as_str()], now).await?;
            return Err(refused);
        }
    };
    let (scopes, resource, dpop_jkt) = (&code.scopes, code.resource.as_deref(), exchange.dpop_jkt);
    let refresh = issuance::next_refresh(context, client, &session, scopes, resource, dpop_jkt, now);
    let (row, refresh) = refresh.map(|(row, value, expires_in)| (row, (value, expires_in))).unzip();
    if !context.writes.redeem(Redemption { code_hash: hash, refresh: row, at: now }).await? {
        // Another presentation used the code meanwhile.
        return reused(context, client, &code).await;
    }
    let granted = Granted { scopes, resource, refresh, nonce: code.nonce.as_deref(), dpop_jkt };
    Ok(issuance::person_tokens(context, client, &user, &session, granted).await?)
}

/// Why a first presentation of the code is refused, if it is: issued to another client (refused as
/// unknown, RFC 9700 §4.5: code injection), expired, with another redirect URI, without the
/// verifier of its challenge, or naming another resource.
fn refusal(exchange: &CodeExchange<'_>, code: &AuthorizationCode, now: DateTime<Utc>) -> Option<Refusal> {
    let CodeExchange { client, redirect_uri, code_verifier, resource: named, .. } = *exchange;
    if code.client_id != client.id || code.expires_at <= now || redirect_uri != Some(code.redirect_uri.as_str()) {
        return Some(Refusal::InvalidAuthorizationCode);
    }
    match (&code.code_challenge, code_verifier) {
        (Some(challenge), Some(verifier)) if is_verifier(verifier) && s256(verifier) == *challenge => {}
        // A verifier for a code issued without a challenge is a downgrade attempt (RFC 9700 §2.1.1).
        (None, None) => {}
        _ => return Some(Refusal::InvalidCodeVerifier),
    }
    let address = named.filter(|address| Some(*address) != code.resource.as_deref())?;
    Some(Refusal::ResourceNotAllowed { address: address.to_owned() })
}

/// A code presented again: the session it opened ends, with every token issued from it, when its
/// own client presents it.
async fn reused(context: &Context, client: &Client, code: &AuthorizationCode) -> Result<Tokens, SignInError> {
    if code.client_id == client.id {
        let mut tx = context.store.begin().await?;
        sessions::end(&mut tx, &code.session_id, "authorization_code_reused", context.clock.now()).await?;
        tx.commit().await?;
    }
    Err(Refusal::AuthorizationCodeReused.into())
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
