//! DPoP (RFC 9449): tokens bound to a key the client holds. A client sends, with each token
//! request and each use of a token, a proof: a JWT it signs with its key, naming the method and
//! address of the request, fresh, never used before, carrying the service's nonce, and at a
//! resource the hash of the access token. Tokens issued on a proof carry the key's thumbprint
//! (`cnf.jkt`, RFC 7638) and are refused without a proof by that key; a refresh token issued on a
//! proof refreshes only with one by the same key.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, TimeDelta, Utc};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{DecodingKey, Validation};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::assertions;

/// The algorithms a proof may be signed with, as discovery announces them: those of client
/// assertions.
pub use crate::oauth::client_keys::ALGORITHMS;
/// How long a nonce the service gave is good for.
const NONCE_LIFETIME: TimeDelta = TimeDelta::minutes(5);
/// How old a proof's `iat` may be, and how far ahead of the service's clock.
const MAX_AGE: TimeDelta = TimeDelta::minutes(5);
const LEEWAY: TimeDelta = TimeDelta::seconds(30);

/// Why a proof was not taken.
#[derive(Debug)]
pub enum ProofError {
    /// Answered `invalid_dpop_proof`, with the reason.
    Invalid(String),
    /// The proof carries no nonce of the service, or an old one: answered `use_dpop_nonce` with a
    /// fresh one in `DPoP-Nonce`.
    NonceNeeded,
    Failed(Error),
}

impl From<crate::store::Error> for ProofError {
    fn from(error: crate::store::Error) -> Self {
        Self::Failed(error.into())
    }
}

fn invalid(why: impl Into<String>) -> ProofError {
    ProofError::Invalid(why.into())
}

/// A proof taken: the thumbprint of the key that signed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proven {
    pub jkt: String,
}

/// The request a proof must name.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub method: &'a str,
    /// The address of the request, without query or fragment.
    pub url: &'a str,
    /// At a resource, the access token presented with the proof.
    pub access_token: Option<&'a str>,
    /// Whether the proof must carry a nonce the service gave: at the token endpoint, where a
    /// proof would otherwise be made ahead of time; not at the service's resources, which take a
    /// fresh proof once.
    pub nonce_required: bool,
}

/// A nonce for proofs to carry: the instant it was made, with a keyed hash of it, so any host of
/// the service checks it without keeping anything.
pub fn nonce(context: &Context, now: DateTime<Utc>) -> String {
    let at = now.timestamp();
    format!("{at}.{}", context.hasher.hash(&format!("dpop-nonce:{at}")))
}

fn nonce_is_fresh(context: &Context, nonce: &str, now: DateTime<Utc>) -> bool {
    let Some((at, _)) = nonce.split_once('.') else { return false };
    let Ok(seconds) = at.parse::<i64>() else { return false };
    let Some(made) = DateTime::from_timestamp(seconds, 0) else { return false };
    let genuine = crate::kernel::crypto::constant_time_eq(self::nonce(context, made).as_bytes(), nonce.as_bytes());
    genuine && made <= now + LEEWAY && now - made <= NONCE_LIFETIME
}

/// The JWK thumbprint (RFC 7638) of a public key: SHA-256 of its required members in order.
pub fn thumbprint(jwk: &Value) -> Option<String> {
    let text = |name: &str| jwk.get(name).and_then(Value::as_str);
    let canonical = match text("kty")? {
        "EC" => json!({ "crv": text("crv")?, "kty": "EC", "x": text("x")?, "y": text("y")? }),
        "RSA" => json!({ "e": text("e")?, "kty": "RSA", "n": text("n")? }),
        "OKP" => json!({ "crv": text("crv")?, "kty": "OKP", "x": text("x")? }),
        _ => return None,
    };
    // The members in lexicographic order, without whitespace, as RFC 7638 asks.
    Some(URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.to_string().as_bytes())))
}

/// The hash of an access token a proof at a resource carries (`ath`).
pub fn token_hash(access_token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(access_token.as_bytes()))
}

/// Verifies a proof for `request` and records its `jti`, so that it is never taken again.
pub async fn verify(context: &Context, proof: &str, request: Request<'_>) -> Result<Proven, ProofError> {
    let header = jsonwebtoken::decode_header(proof).map_err(|_| invalid("the DPoP proof is not a JWT"))?;
    if header.typ.as_deref() != Some("dpop+jwt") {
        return Err(invalid("a DPoP proof has typ dpop+jwt"));
    }
    if !crate::oauth::client_keys::proves_key(header.alg) {
        return Err(invalid(format!("{:?} is not an algorithm DPoP proofs may use", header.alg)));
    }
    // The key as sent, to refuse private members and to compute the thumbprint over its text.
    let raw = proof.split('.').next().and_then(|part| URL_SAFE_NO_PAD.decode(part).ok());
    let raw: Value = raw.and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default();
    let sent = raw.get("jwk").ok_or_else(|| invalid("the DPoP proof carries no jwk"))?;
    if crate::oauth::client_keys::has_private_part(sent) {
        return Err(invalid("the DPoP proof's jwk must be a public key"));
    }
    let jwk: Jwk = serde_json::from_value(sent.clone()).map_err(|_| invalid("the DPoP proof's jwk cannot be read"))?;
    let key = DecodingKey::from_jwk(&jwk).map_err(|_| invalid("the DPoP proof's jwk cannot verify signatures"))?;
    let jkt = thumbprint(sent).ok_or_else(|| invalid("the DPoP proof's jwk is of no known kind"))?;
    let mut validation = Validation::new(header.alg);
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.required_spec_claims.clear();
    let claims = jsonwebtoken::decode::<Value>(proof, &key, &validation)
        .map_err(|_| invalid("the DPoP proof's signature does not verify with its jwk"))?
        .claims;
    let text = |name: &str| claims.get(name).and_then(Value::as_str);
    if text("htm") != Some(request.method) {
        return Err(invalid(format!("the DPoP proof's htm must be {}", request.method)));
    }
    let htu = text("htu").and_then(|htu| url::Url::parse(htu).ok()).map(|mut url| {
        url.set_query(None);
        url.set_fragment(None);
        url.to_string()
    });
    if htu.as_deref() != Some(request.url) {
        return Err(invalid(format!("the DPoP proof's htu must be {}", request.url)));
    }
    let now = context.clock.now();
    let issued = claims.get("iat").and_then(Value::as_i64).and_then(|iat| DateTime::from_timestamp(iat, 0));
    let issued = issued.ok_or_else(|| invalid("the DPoP proof has no iat"))?;
    if issued > now + LEEWAY || now - issued > MAX_AGE {
        return Err(invalid("the DPoP proof's iat is too far from now"));
    }
    if let Some(token) = request.access_token
        && text("ath") != Some(token_hash(token).as_str())
    {
        return Err(invalid("the DPoP proof's ath is not the hash of the access token"));
    }
    if request.nonce_required && !text("nonce").is_some_and(|nonce| nonce_is_fresh(context, nonce, now)) {
        return Err(ProofError::NonceNeeded);
    }
    let jti = text("jti").filter(|jti| !jti.is_empty() && jti.len() <= 256);
    let jti = jti.ok_or_else(|| invalid("the DPoP proof has no jti"))?;
    if !assertions::record_proof_once(context.store.writer(), &jkt, jti, issued + MAX_AGE + LEEWAY).await? {
        return Err(invalid("the DPoP proof was used before"));
    }
    Ok(Proven { jkt })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thumbprint_is_rfc_7638s() {
        // RFC 7638 §3.1's example key and thumbprint.
        let key = json!({
            "kty": "RSA", "e": "AQAB", "alg": "RS256", "kid": "2011-04-29",
            "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
        });
        assert_eq!(thumbprint(&key).as_deref(), Some("NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"));
        assert_eq!(thumbprint(&json!({ "kty": "oct", "k": "c2VjcmV0" })), None);
    }
}
