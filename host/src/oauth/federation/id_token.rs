//! An upstream provider's ID token, checked as OpenID Connect Core §3.1.3.7 asks before the person
//! it names is signed in here: signed with an asymmetric algorithm by a key of the provider's JWK
//! Set (never `none`, never a shared secret), issued by the provider's issuer, addressed to this
//! realm's client at the provider (and, when it names other audiences too, authorised for it by
//! `azp`), carrying the `nonce` this sign-in sent, not expired, and not issued in the future.

use chrono::{DateTime, TimeDelta, Utc};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{DecodingKey, Validation};
use serde_json::{Map, Value};

use crate::oauth::client_keys::proves_key;

/// The clock difference allowed between the provider and the service.
pub const LEEWAY: TimeDelta = TimeDelta::seconds(60);

/// What the token must say.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// The provider's issuer, as its discovery document gives it.
    pub issuer: &'a str,
    /// The client id the realm holds at the provider.
    pub audience: &'a str,
    /// The nonce the authorization request sent.
    pub nonce: &'a str,
    pub now: DateTime<Utc>,
}

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("the ID token is not a JWT")]
    Malformed,
    #[error("the ID token is signed with {0}, not an asymmetric algorithm")]
    Algorithm(String),
    #[error("no key of the provider verifies the ID token's signature")]
    Signature,
    #[error("the ID token was issued by {0}, not the provider")]
    Issuer(String),
    #[error("the ID token is not addressed to the realm's client at the provider")]
    Audience,
    #[error("the ID token's nonce is not the one this sign-in sent")]
    Nonce,
    #[error("the ID token has expired")]
    Expired,
    #[error("the ID token says it was issued in the future")]
    IssuedInTheFuture,
    #[error("the ID token names no subject")]
    Subject,
}

/// The token's claims once every check passed.
pub fn verify(token: &str, keys: &JwkSet, expected: Expected<'_>) -> Result<Map<String, Value>, Refused> {
    let header = jsonwebtoken::decode_header(token).map_err(|_| Refused::Malformed)?;
    if !proves_key(header.alg) {
        return Err(Refused::Algorithm(format!("{:?}", header.alg)));
    }
    // The signature alone first: every claim is checked below, each with its own refusal.
    let mut validation = Validation::new(header.alg);
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.required_spec_claims.clear();
    let candidates = keys.keys.iter().filter(|key| header.kid.is_none() || key.common.key_id == header.kid);
    let claims = candidates
        .filter_map(|key| DecodingKey::from_jwk(key).ok())
        .find_map(|key| jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation).ok())
        .map(|data| data.claims)
        .ok_or(Refused::Signature)?;
    let text = |name: &str| claims.get(name).and_then(Value::as_str);
    let issuer = text("iss").unwrap_or_default();
    if issuer != expected.issuer {
        return Err(Refused::Issuer(issuer.to_owned()));
    }
    let audiences: Vec<&str> = match claims.get("aud") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let authorised = text("azp").is_none_or(|azp| azp == expected.audience);
    if !audiences.contains(&expected.audience) || (audiences.len() > 1 && text("azp").is_none()) || !authorised {
        return Err(Refused::Audience);
    }
    if text("nonce") != Some(expected.nonce) {
        return Err(Refused::Nonce);
    }
    let instant = |name: &str| claims.get(name).and_then(Value::as_i64).and_then(|at| DateTime::from_timestamp(at, 0));
    if instant("exp").is_none_or(|exp| exp + LEEWAY <= expected.now) {
        return Err(Refused::Expired);
    }
    if instant("iat").is_some_and(|iat| iat > expected.now + LEEWAY) {
        return Err(Refused::IssuedInTheFuture);
    }
    if text("sub").is_none_or(str::is_empty) {
        return Err(Refused::Subject);
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::directory::keys::{self, SEALING_PURPOSE};
    use crate::kernel::crypto::SecretHasher;
    use crate::runtime::cache::keys::Signer;

    const ISSUER: &str = "https://upstream.example/realms/people";

    /// An upstream key: what signs its tokens, and the JWK Set it publishes.
    fn upstream(algorithm: &str) -> (Signer, JwkSet) {
        let sealer = SecretHasher::new([5; 32]).sealer(SEALING_PURPOSE);
        let key = keys::generate(&sealer, "people", Some("broker"), algorithm, DateTime::UNIX_EPOCH).unwrap();
        let signer = keys::signer_of(&sealer, &key, None).unwrap();
        let jwk: Value = serde_json::from_str(&key.public_jwk).unwrap();
        (signer, serde_json::from_value(json!({ "keys": [jwk] })).unwrap())
    }

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(2_000_000_000, 0).unwrap()
    }

    fn claims() -> Value {
        json!({ "iss": ISSUER, "aud": "acme-broker", "sub": "upstream-42", "nonce": "n-0S6_WzA2Mj",
                "iat": 2_000_000_000 - 10, "exp": 2_000_000_000 + 300, "email": "ada@example.com" })
    }

    fn sign(signer: &Signer, claims: &Value) -> String {
        signer.sign(None, claims).unwrap()
    }

    fn expected() -> Expected<'static> {
        Expected { issuer: ISSUER, audience: "acme-broker", nonce: "n-0S6_WzA2Mj", now: now() }
    }

    #[test]
    fn a_token_of_the_provider_for_this_sign_in_is_taken() {
        for algorithm in ["ES256", "RS256"] {
            let (signer, keys) = upstream(algorithm);
            let taken = verify(&sign(&signer, &claims()), &keys, expected()).unwrap();
            assert_eq!(taken["sub"], "upstream-42");
        }
    }

    #[test]
    fn each_wrong_claim_is_refused_with_its_reason() {
        let (signer, keys) = upstream("ES256");
        let with = |name: &str, value: Value| {
            let mut claims = claims();
            claims[name] = value;
            verify(&sign(&signer, &claims), &keys, expected())
        };
        assert_eq!(with("iss", json!("https://evil.example")), Err(Refused::Issuer("https://evil.example".into())));
        assert_eq!(with("aud", json!("another-client")), Err(Refused::Audience));
        assert_eq!(
            with("aud", json!(["acme-broker", "another"])),
            Err(Refused::Audience),
            "several audiences need azp"
        );
        assert_eq!(with("azp", json!("another")), Err(Refused::Audience));
        assert_eq!(with("nonce", json!("replayed")), Err(Refused::Nonce));
        assert_eq!(with("exp", json!(2_000_000_000 - 61)), Err(Refused::Expired));
        assert_eq!(with("iat", json!(2_000_000_000 + 3_600)), Err(Refused::IssuedInTheFuture));
        assert_eq!(with("sub", json!("")), Err(Refused::Subject));
        let mut several = claims();
        (several["aud"], several["azp"]) = (json!(["acme-broker", "another"]), json!("acme-broker"));
        assert!(verify(&sign(&signer, &several), &keys, expected()).is_ok(), "several audiences with azp");
    }

    #[test]
    fn a_token_not_signed_by_the_provider_is_refused() {
        let (signer, _) = upstream("ES256");
        let (_, other_keys) = upstream("ES256");
        assert_eq!(verify(&sign(&signer, &claims()), &other_keys, expected()), Err(Refused::Signature));

        let (signer, keys) = upstream("ES256");
        let token = sign(&signer, &claims());
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        let mut forged = claims();
        forged["sub"] = json!("admin");
        parts[1] = base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, forged.to_string());
        assert_eq!(
            verify(&parts.join("."), &keys, expected()),
            Err(Refused::Signature),
            "claims changed after signing"
        );

        let unsigned = format!(
            "{}.{}.",
            base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, r#"{"alg":"none"}"#),
            parts[1]
        );
        assert!(verify(&unsigned, &keys, expected()).is_err(), "alg none is never taken");
        let shared = jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            &claims(),
            &jsonwebtoken::EncodingKey::from_secret(b"the client secret"),
        )
        .unwrap();
        assert_eq!(verify(&shared, &keys, expected()), Err(Refused::Algorithm("HS256".into())));
        assert_eq!(verify("not a token", &keys, expected()), Err(Refused::Malformed));
    }
}
