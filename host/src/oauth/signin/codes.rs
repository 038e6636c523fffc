//! The authorization code's exchange at the token endpoint (RFC 6749 §4.1.3): good once, for a
//! minute, for the client it was issued to, with its redirect URI and the verifier of its PKCE
//! challenge (RFC 7636).

use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::{Refusal, SignInError, Tokens};
use crate::runtime::context::Context;
use crate::store::browser::{self, Taken};
use crate::store::clients::Client;
use crate::store::realms::Realm;
use crate::store::sessions;

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
/// presented a second time, it ends the session it opened, and every token issued from it.
pub async fn exchange(context: &Context, exchange: CodeExchange<'_>) -> Result<Tokens, SignInError> {
    let CodeExchange { realm, client, code, redirect_uri, code_verifier, resource: named, dpop_jkt } = exchange;
    let now = context.clock.now();
    // Writes go through the writer: on SQLite, the one connection that writes.
    let code = match browser::take_code(context.store.writer(), &realm.id, &context.hasher.hash(code), now).await? {
        Taken::First(code) => code,
        Taken::Again(code) => {
            if code.client_id == client.id {
                let mut tx = context.store.begin().await?;
                sessions::end(&mut tx, &code.session_id, "authorization_code_reused", now).await?;
                tx.commit().await?;
            }
            return Err(Refusal::AuthorizationCodeReused.into());
        }
        Taken::Unknown => return Err(Refusal::InvalidAuthorizationCode.into()),
    };
    // A code issued to another client is refused as unknown (RFC 9700 §4.5: code injection).
    if code.client_id != client.id || code.expires_at <= now {
        return Err(Refusal::InvalidAuthorizationCode.into());
    }
    if redirect_uri != Some(code.redirect_uri.as_str()) {
        return Err(Refusal::InvalidAuthorizationCode.into());
    }
    match (&code.code_challenge, code_verifier) {
        (Some(challenge), Some(verifier)) if is_verifier(verifier) && s256(verifier) == *challenge => {}
        // A verifier for a code issued without a challenge is a downgrade attempt (RFC 9700 §2.1.1).
        (None, None) => {}
        _ => return Err(Refusal::InvalidCodeVerifier.into()),
    }
    let resource = code.resource.as_deref();
    if let Some(address) = named.filter(|address| Some(*address) != resource) {
        return Err(Refusal::ResourceNotAllowed { address: address.to_owned() }.into());
    }
    let granted =
        super::Granted { scopes: &code.scopes, resource, refresh: None, nonce: code.nonce.as_deref(), dpop_jkt };
    super::redeem(context, (realm, client), &code.session_id, granted, Refusal::InvalidAuthorizationCode).await
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
