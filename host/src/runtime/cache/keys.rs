//! The forms the caches keep signing keys in: ready to sign, ready to verify, and a realm's JWK Set
//! as served. The directory's signing keys (`crate::directory::keys`) make them from the stored
//! keys.

use std::sync::Arc;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::KeyPair as RsaKeyPair;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, RSA_PKCS1_SHA256};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};
use serde::Serialize;

use crate::kernel::ids::{ClientId, KeyId, RealmId};
use crate::store::signing_keys::KeyStatus;

/// A key ready to sign tokens, until the instant another key takes over, if one is set.
pub struct Signer {
    pub kid: KeyId,
    pub algorithm: Algorithm,
    pub key: Arc<KeyPair>,
    pub until: Option<DateTime<Utc>>,
}

impl Signer {
    /// `claims` as a compact JWS signed with this key, its header naming the algorithm, the key
    /// and the token's `typ`.
    pub fn sign(&self, typ: Option<&str>, claims: &impl Serialize) -> anyhow::Result<String> {
        let mut header = jsonwebtoken::Header::new(self.algorithm);
        header.typ = typ.map(str::to_owned);
        header.kid = Some(self.kid.to_string());
        let mut token = String::with_capacity(640);
        URL_SAFE_NO_PAD.encode_string(serde_json::to_vec(&header)?, &mut token);
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(serde_json::to_vec(claims)?, &mut token);
        let signature = self.key.sign(token.as_bytes())?;
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(signature, &mut token);
        Ok(token)
    }
}

/// A private key parsed once. Parsing checks the key, which costs as much as a signature: a key
/// parsed for every token doubled the cost of signing it.
pub enum KeyPair {
    Ecdsa(EcdsaKeyPair),
    Rsa(RsaKeyPair),
}

impl KeyPair {
    /// The key pair `key` holds for `algorithm` (PKCS#8 for ES256, PKCS#1 for RS256, as
    /// jsonwebtoken reads them from PEM).
    pub fn of(algorithm: Algorithm, key: &EncodingKey) -> anyhow::Result<Self> {
        match algorithm {
            Algorithm::ES256 => EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, key.as_bytes())
                .map(Self::Ecdsa)
                .map_err(|rejected| anyhow::anyhow!("not an ES256 private key: {rejected}")),
            Algorithm::RS256 => RsaKeyPair::from_der(key.as_bytes())
                .map(Self::Rsa)
                .map_err(|rejected| anyhow::anyhow!("not an RS256 private key: {rejected}")),
            other => anyhow::bail!("no key pair for {other:?}"),
        }
    }

    fn sign(&self, message: &[u8]) -> anyhow::Result<Vec<u8>> {
        let failed = |_| anyhow::anyhow!("the signature failed");
        match self {
            Self::Ecdsa(pair) => Ok(pair.sign(&SystemRandom::new(), message).map_err(failed)?.as_ref().to_vec()),
            Self::Rsa(pair) => {
                let mut signature = vec![0; pair.public_modulus_len()];
                pair.sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), message, &mut signature).map_err(failed)?;
                Ok(signature)
            }
        }
    }
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer").field("kid", &self.kid).field("algorithm", &self.algorithm).finish_non_exhaustive()
    }
}

/// A key ready to verify tokens, with what decides whether its tokens are still good.
pub struct Verifier {
    pub kid: KeyId,
    pub realm_id: RealmId,
    /// The client whose own key it is: only that client's tokens verify with it. None for a key
    /// of the realm, which signs for any client of the realm.
    pub client_id: Option<ClientId>,
    pub algorithm: Algorithm,
    pub status: KeyStatus,
    pub key: DecodingKey,
}

impl Verifier {
    /// Whether the key may have signed a token of `client_id`.
    pub fn signs_for(&self, client_id: &str) -> bool {
        self.client_id.as_ref().is_none_or(|own| own.as_str() == client_id)
    }
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier").field("kid", &self.kid).field("status", &self.status).finish_non_exhaustive()
    }
}

/// A realm's JWK Set as served: its JSON and its entity tag.
#[derive(Debug)]
pub struct Jwks {
    pub body: String,
    pub etag: String,
    /// When a retired key leaves it, if one will.
    pub until: Option<DateTime<Utc>>,
}
