//! Clients that hold keys instead of secrets: `private_key_jwt` client authentication (RFC 7523
//! §2.2, OIDC Core §9). The client signs a short-lived JWT with its private key and sends it as
//! `client_assertion`; the service verifies it with the client's public keys, given by value
//! (`jwks`) or published at an https address (`jwks_uri`, fetched through the same address checks
//! as webhooks, size- and time-limited, kept as its `Cache-Control` says).
//!
//! An assertion is taken when it is signed by one of the client's keys with an asymmetric
//! algorithm, its `iss` and `sub` are the client, its `aud` names the realm's issuer or token
//! endpoint, it expires within ten minutes, and its `jti` was never presented before.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, TimeDelta, Utc};
use jsonwebtoken::jwk::JwkSet;

pub use crate::directory::client_fields::{check_jwks, has_private_part};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::runtime::outbound::documents::{self, Shelf};
use crate::store::assertions;
use crate::store::clients::Client;

/// The `client_assertion_type` of a JWT assertion (RFC 7523 §2.2).
pub const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// The algorithms an assertion (or a DPoP proof) may be signed with, as discovery announces them:
/// asymmetric only.
pub const ALGORITHMS: [&str; 5] = ["ES256", "ES384", "RS256", "PS256", "EdDSA"];
const SIGNING: [Algorithm; 5] =
    [Algorithm::ES256, Algorithm::ES384, Algorithm::RS256, Algorithm::PS256, Algorithm::EdDSA];

/// Whether a JWT signed with `algorithm` may prove a client's key: one of [`ALGORITHMS`].
pub fn proves_key(algorithm: Algorithm) -> bool {
    SIGNING.contains(&algorithm)
}

/// The longest an assertion may still live when presented.
const MAX_LIFETIME: TimeDelta = TimeDelta::minutes(10);
/// Clock difference tolerated between the client and the service.
const LEEWAY: TimeDelta = TimeDelta::seconds(30);
/// The largest JWK Set fetched from a `jwks_uri`.
pub(crate) const MAX_JWKS_BYTES: usize = 64 * 1024;
/// An assertion signed with a key the kept set lacks fetches the set again, at most this often.
pub(crate) const REFETCH_AFTER: TimeDelta = TimeDelta::seconds(60);

/// Why an assertion was not taken: every one is answered `invalid_client`, the reason logged.
#[derive(Debug)]
pub enum AssertionError {
    Refused(String),
    Failed(Error),
}

impl From<crate::store::Error> for AssertionError {
    fn from(error: crate::store::Error) -> Self {
        Self::Failed(error.into())
    }
}

fn refused(why: impl Into<String>) -> AssertionError {
    AssertionError::Refused(why.into())
}

/// The client an assertion says it comes from (its `sub`, read before anything is verified, to
/// find whose keys verify it).
pub fn named_client(assertion: &str) -> Option<String> {
    let payload = assertion.split('.').nth(1)?;
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    claims.get("sub").and_then(Value::as_str).map(str::to_owned)
}

/// Verifies `assertion` as `client`'s, at the token endpoint of the realm `issuer` names, and
/// records its `jti` so that it is never taken again.
pub async fn verify(context: &Context, issuer: &str, client: &Client, assertion: &str) -> Result<(), AssertionError> {
    let header = jsonwebtoken::decode_header(assertion).map_err(|_| refused("not a JWT"))?;
    if !proves_key(header.alg) {
        return Err(refused(format!("{:?} is not an algorithm assertions may use", header.alg)));
    }
    let now = context.clock.now();
    let mut keys = keys_of(context, client, now, false).await?;
    if !has_key(&keys, header.kid.as_deref()) && client.jwks_uri.is_some() {
        keys = keys_of(context, client, now, true).await?;
    }
    let mut validation = Validation::new(header.alg);
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.required_spec_claims.clear();
    validation.set_issuer(&[client.id.as_str()]);
    validation.sub = Some(client.id.to_string());
    // The audience is checked below: the issuer identifier alone, as one string.
    validation.validate_aud = false;
    let candidates = keys.keys.iter().filter(|key| header.kid.is_none() || key.common.key_id == header.kid);
    let mut claims = None;
    for key in candidates {
        let Ok(decoding) = DecodingKey::from_jwk(key) else { continue };
        if let Ok(data) = jsonwebtoken::decode::<Value>(assertion, &decoding, &validation) {
            claims = Some(data.claims);
            break;
        }
    }
    let claims = claims.ok_or_else(|| refused("no key of the client verifies it, or its iss or sub is wrong"))?;
    // The realm's issuer identifier, as a single string: an array naming another server too, or
    // an endpoint's address, could be an assertion made for someone else and replayed here (the
    // audience injection of RFC 7523's update).
    if claims.get("aud").and_then(Value::as_str) != Some(issuer) {
        return Err(refused("its aud must be the issuer identifier, as a single string"));
    }
    let expires_at = claims
        .get("exp")
        .and_then(Value::as_i64)
        .and_then(|exp| DateTime::from_timestamp(exp, 0))
        .ok_or_else(|| refused("it has no exp"))?;
    if expires_at + LEEWAY <= now {
        return Err(refused("it has expired"));
    }
    if expires_at > now + MAX_LIFETIME + LEEWAY {
        return Err(refused("it lives longer than ten minutes"));
    }
    let jti = claims.get("jti").and_then(Value::as_str).filter(|jti| !jti.is_empty() && jti.len() <= 256);
    let jti = jti.ok_or_else(|| refused("it has no jti"))?;
    if !assertions::record_once(context.store.writer(), &client.realm_id, &client.id, jti, expires_at + LEEWAY).await? {
        return Err(refused("its jti was presented before"));
    }
    Ok(())
}

fn has_key(keys: &JwkSet, kid: Option<&str>) -> bool {
    kid.is_none_or(|kid| keys.keys.iter().any(|key| key.common.key_id.as_deref() == Some(kid)))
}

/// The client's public keys: given by value, or fetched from its `jwks_uri` (kept as long as the
/// answer allows; `again` fetches anew unless the kept copy is younger than a minute).
async fn keys_of(
    context: &Context,
    client: &Client,
    now: DateTime<Utc>,
    again: bool,
) -> Result<Arc<JwkSet>, AssertionError> {
    if let Some(jwks) = &client.jwks {
        return serde_json::from_str(jwks).map(Arc::new).map_err(|_| refused("the client's JWK Set cannot be read"));
    }
    let Some(uri) = &client.jwks_uri else { return Err(refused("the client has no keys")) };
    let kept = &context.outbound.kept;
    if let Some(keys) = kept.kept::<JwkSet>((Shelf::Clients, uri), now, again.then_some(REFETCH_AFTER)) {
        return Ok(keys);
    }
    let fetched = documents::fetch(context, "the client's jwks_uri", uri, MAX_JWKS_BYTES).await.map_err(refused)?;
    let keys: JwkSet =
        serde_json::from_slice(&fetched.body).map_err(|_| refused("the client's jwks_uri holds no JWK Set"))?;
    let keys = Arc::new(keys);
    kept.keep((Shelf::Clients, uri), keys.clone(), now, fetched.keep);
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_symmetric_keys_are_refused() {
        let public = serde_json::json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": "a",
            "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]});
        assert!(check_jwks(&public).is_ok());
        let mut private = public.clone();
        private["keys"][0]["d"] = Value::from("jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI");
        assert!(check_jwks(&private).is_err());
        let symmetric = serde_json::json!({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]});
        assert!(check_jwks(&symmetric).is_err());
        assert!(check_jwks(&serde_json::json!({"keys": []})).is_err());
        assert!(check_jwks(&serde_json::json!("keys")).is_err());
    }
}
