//! Signing keys: generation (ES256 by default, RS256 selectable), sealing at rest, the JWKS, and
//! the per-host caches of ready-to-use signing and verification keys.
//!
//! Each client has keys of its own, so that revoking one client's keys touches no other client.
//! A key is published before it signs: a client's first key is created with the client, and a
//! rotation publishes the next key `NEXT_KEY_LEAD` before it starts signing, long after every
//! verifier that honours the JWKS `Cache-Control` has fetched it again. The key it replaces keeps
//! signing until then and stays published until the last token it signed has expired. Only a
//! rotation that revokes switches at once: its purpose is that earlier tokens stop verifying.

use std::sync::Arc;

use anyhow::Context as _;
use aws_lc_rs::encoding::AsDer as _;
use aws_lc_rs::rsa::{KeyPair as RsaKeyPair, KeySize};
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, TimeDelta, Utc};
use jsonwebtoken::jwk::{Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};
use serde_json::Value;

use crate::AppState;
use crate::crypto::Sealer;
use crate::error::Error;
use crate::ids::{ClientId, KeyId, RealmId};
use crate::store::events::EventType;
use crate::store::signing_keys::{self as key_store, KeyStatus, SigningKey};

/// The purpose the sealing key is derived for.
pub const SEALING_PURPOSE: &str = "signing keys";

/// How long verifiers may keep the JWKS (its `Cache-Control: max-age`).
pub const JWKS_MAX_AGE_SECONDS: i64 = 60;

/// How long a rotation publishes the next key before it signs: five times the JWKS lifetime, which
/// also covers verifiers that refetch on an unknown `kid` at most every few minutes.
pub const NEXT_KEY_LEAD: TimeDelta = TimeDelta::seconds(5 * JWKS_MAX_AGE_SECONDS);

/// Algorithms a client may sign with.
pub const ALGORITHMS: &[(&str, &str)] = &[("ES256", "ES256"), ("RS256", "RS256")];

/// A key ready to sign a client's tokens, until the instant another key takes over, if one is set.
pub struct Signer {
    pub kid: KeyId,
    pub algorithm: Algorithm,
    pub key: EncodingKey,
    pub until: Option<DateTime<Utc>>,
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
    pub client_id: ClientId,
    pub algorithm: Algorithm,
    pub status: KeyStatus,
    pub key: DecodingKey,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier").field("kid", &self.kid).field("status", &self.status).finish_non_exhaustive()
    }
}

fn algorithm_of(name: &str) -> anyhow::Result<Algorithm> {
    match name {
        "ES256" => Ok(Algorithm::ES256),
        "RS256" => Ok(Algorithm::RS256),
        other => anyhow::bail!("unsupported signing algorithm {other}"),
    }
}

fn pem(der: &[u8]) -> String {
    let body = STANDARD.encode(der);
    let mut text = String::from("-----BEGIN PRIVATE KEY-----\n");
    for line in body.as_bytes().chunks(64) {
        text.push_str(&String::from_utf8_lossy(line));
        text.push('\n');
    }
    text.push_str("-----END PRIVATE KEY-----\n");
    text
}

fn encoding_key(algorithm: Algorithm, pem: &[u8]) -> anyhow::Result<EncodingKey> {
    Ok(match algorithm {
        Algorithm::RS256 => EncodingKey::from_rsa_pem(pem)?,
        _ => EncodingKey::from_ec_pem(pem)?,
    })
}

/// A fresh key for the client, sealed, Active, signing from `now`.
pub fn generate(
    sealer: &Sealer,
    realm_id: &str,
    client_id: &str,
    algorithm_name: &str,
    now: DateTime<Utc>,
) -> anyhow::Result<SigningKey> {
    let algorithm = algorithm_of(algorithm_name)?;
    let der = match algorithm {
        Algorithm::RS256 => RsaKeyPair::generate(KeySize::Rsa2048)
            .context("RSA key generation failed")?
            .as_der()
            .context("RSA key encoding failed")?
            .as_ref()
            .to_vec(),
        _ => EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING)
            .context("EC key generation failed")?
            .to_pkcs8v1()
            .context("EC key encoding failed")?
            .as_ref()
            .to_vec(),
    };
    let pem = pem(&der);
    let kid = KeyId::fresh();
    let mut jwk = Jwk::from_encoding_key(&encoding_key(algorithm, pem.as_bytes())?, algorithm)?;
    jwk.common.key_id = Some(kid.to_string());
    jwk.common.public_key_use = Some(PublicKeyUse::Signature);
    jwk.common.key_algorithm =
        Some(if algorithm == Algorithm::RS256 { KeyAlgorithm::RS256 } else { KeyAlgorithm::ES256 });
    Ok(SigningKey {
        id: kid,
        realm_id: RealmId::known(realm_id),
        client_id: ClientId::known(client_id),
        algorithm: algorithm_name.to_owned(),
        sealed_key: sealer.seal(pem.as_bytes()),
        public_jwk: serde_json::to_string(&jwk)?,
        status: KeyStatus::Active,
        created_at: now,
        signs_from: now,
        retired_at: None,
        published_until: None,
    })
}

/// A client's new key, signing from `now`: generated before any transaction is opened, since an
/// RSA key takes a while.
pub fn fresh(
    state: &AppState,
    client: &crate::store::clients::Client,
    now: DateTime<Utc>,
) -> Result<SigningKey, Error> {
    let sealer = state.hasher.sealer(SEALING_PURPOSE);
    Ok(generate(&sealer, &client.realm_id, &client.id, &client.key_algorithm, now)?)
}

pub(crate) fn signer_of(sealer: &Sealer, key: &SigningKey, until: Option<DateTime<Utc>>) -> anyhow::Result<Signer> {
    let algorithm = algorithm_of(&key.algorithm)?;
    let pem = sealer.open(&key.sealed_key).with_context(|| format!("signing key {}", key.id))?;
    Ok(Signer { kid: key.id.clone(), algorithm, key: encoding_key(algorithm, &pem)?, until })
}

/// Of the client's keys that sign now or will (newest `signs_from` first), the one that signs at
/// `now`, and the instant that choice ends: the next key's start or this key's retirement.
fn signing_at(keys: &[SigningKey], now: DateTime<Utc>) -> Option<(&SigningKey, Option<DateTime<Utc>>)> {
    let current = keys.iter().find(|key| key.signs_from <= now)?;
    let next_start = keys.iter().filter(|key| key.signs_from > now).map(|key| key.signs_from).min();
    let retirement = current.retired_at.filter(|at| *at > now);
    let until = match (next_start, retirement) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    Some((current, until))
}

/// How a key stands at `now`, as the key listing shows it: `Next` (published, not signing yet),
/// `Active` (signing), `Retired` (published until its tokens expire) or `Revoked`.
pub fn stage(key: &SigningKey, now: DateTime<Utc>) -> &'static str {
    match key.status {
        KeyStatus::Revoked => "Revoked",
        _ if key.signs_from > now => "Next",
        KeyStatus::Retired if key.retired_at.is_none_or(|at| at <= now) => "Retired",
        _ => "Active",
    }
}

fn verifier_of(key: &SigningKey) -> anyhow::Result<Verifier> {
    let jwk: Jwk = serde_json::from_str(&key.public_jwk)?;
    Ok(Verifier {
        kid: key.id.clone(),
        realm_id: key.realm_id.clone(),
        client_id: key.client_id.clone(),
        algorithm: algorithm_of(&key.algorithm)?,
        status: key.status,
        key: DecodingKey::from_jwk(&jwk)?,
    })
}

/// The key that signs the client's tokens now. A client created before keys came with clients
/// gets its first one here, signing at once.
pub async fn signer(state: &AppState, realm_id: &str, client_id: &str, algorithm: &str) -> Result<Arc<Signer>, Error> {
    let now = state.clock.now();
    if let Some(signer) = state.caches.signer(realm_id, client_id).filter(|s| s.until.is_none_or(|until| now < until)) {
        return Ok(signer);
    }
    let sealer = state.hasher.sealer(SEALING_PURPOSE);
    let keys = key_store::signing(state.store.pool(), realm_id, client_id, now).await?;
    let signer = match signing_at(&keys, now) {
        Some((key, until)) => signer_of(&sealer, key, until)?,
        None => {
            let key = generate(&sealer, realm_id, client_id, algorithm, now)?;
            key_store::insert(state.store.writer(), &key).await?;
            let until = keys.iter().map(|next| next.signs_from).min();
            signer_of(&sealer, &key, until)?
        }
    };
    let signer = Arc::new(signer);
    state.caches.keep_signer(realm_id, client_id, signer.clone());
    Ok(signer)
}

/// The key with this `kid`, if it exists.
pub async fn verifier(state: &AppState, kid: &str) -> Result<Option<Arc<Verifier>>, Error> {
    if let Some(verifier) = state.caches.verifier(kid) {
        return Ok(Some(verifier));
    }
    let Some(key) = key_store::find(state.store.pool(), kid).await? else { return Ok(None) };
    let verifier = Arc::new(verifier_of(&key)?);
    state.caches.keep_verifier(verifier.clone());
    Ok(Some(verifier))
}

/// How a rotation came about, for the `keys_rotated` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rotation {
    /// By an administrator; earlier keys revoked at once or kept published.
    Manual { revoke: bool },
    /// By the schedule of the client's `rotationDays`.
    Scheduled { rotation_days: i64 },
}

/// The answer to a rotation: the new key and when it starts signing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotated {
    pub key_id: KeyId,
    pub signs_from: DateTime<Utc>,
    /// Keys withdrawn at once by a rotation that revokes.
    pub revoked: u64,
}

/// Rotates the client's signing key inside `tx`, `key` (from `fresh`) being the new one. It is
/// published now and signs `NEXT_KEY_LEAD` later; until then the key it replaces goes on signing,
/// then retires and stays in the JWKS until every token it signed has expired. A manual rotation
/// that revokes withdraws every earlier key from the JWKS at once (their tokens stop verifying) and
/// the new key signs at once; so does the first key of a client that had none. Writes the
/// `keys_rotated` event. `None` when a scheduled rotation found nothing left to rotate (another
/// host did it).
pub async fn rotate(
    state: &AppState,
    tx: &mut crate::store::Connection,
    account_id: &str,
    client: &crate::store::clients::Client,
    rotation: Rotation,
    mut key: SigningKey,
) -> Result<Option<Rotated>, Error> {
    let now = key.created_at;
    let lifetime = TimeDelta::seconds(i64::from(state.settings.access_token_seconds));
    let starts = now + NEXT_KEY_LEAD;
    let (realm, id) = (&client.realm_id, &client.id);
    let (retired, revoked) = match rotation {
        Rotation::Manual { revoke: true } => (0, key_store::revoke_all(&mut *tx, realm, id, now).await?),
        Rotation::Manual { revoke: false } => {
            (key_store::retire_all(&mut *tx, realm, id, starts, starts + lifetime).await?, 0)
        }
        Rotation::Scheduled { rotation_days } => {
            let cutoff = now - TimeDelta::days(rotation_days);
            match key_store::retire_older(&mut *tx, realm, id, cutoff, starts, starts + lifetime).await? {
                0 => return Ok(None),
                retired => (retired, 0),
            }
        }
    };
    key.signs_from = if retired > 0 { starts } else { now };
    key_store::insert(&mut *tx, &key).await?;
    let mut data = serde_json::json!({ "signing_key_id": key.id, "encryption_key_id": null });
    if let Some(object) = data.as_object_mut() {
        match rotation {
            Rotation::Manual { .. } => {
                object.insert("revoked_keys_count".into(), revoked.into());
            }
            Rotation::Scheduled { rotation_days } => {
                object.insert("rotation_days".into(), rotation_days.into());
                object.insert("automatic".into(), true.into());
            }
        }
    }
    let event = crate::store::events::Event {
        event_type: EventType::KeysRotated,
        account_id,
        realm_id: Some(&client.realm_id),
        client_id: Some(&client.id),
        data,
    };
    crate::store::events::publish(tx, event, now).await?;
    Ok(Some(Rotated { key_id: key.id, signs_from: key.signs_from, revoked }))
}

/// Rotates the keys of every client whose rotation period has run out (the scheduled job).
pub async fn rotate_due(state: &AppState, now: DateTime<Utc>) -> Result<usize, Error> {
    let due = key_store::due_for_rotation(state.store.pool(), now).await?;
    let mut rotated = 0;
    for (realm_id, client_id, rotation_days) in due {
        let Some(realm) = crate::store::realms::find(state.store.pool(), &realm_id).await? else { continue };
        let Some(client) = crate::store::clients::find(state.store.pool(), &realm_id, &client_id).await? else {
            continue;
        };
        let key = fresh(state, &client, now)?;
        let mut tx = state.store.begin().await?;
        let rotation = Rotation::Scheduled { rotation_days };
        if rotate(state, &mut tx, &realm.account_id, &client, rotation, key).await?.is_some() {
            let stale = crate::cache::Invalidation::Client(RealmId::known(realm_id), ClientId::known(client_id));
            crate::changes::publish(state, tx, &stale).await?;
            rotated += 1;
        }
    }
    Ok(rotated)
}

/// The realm's JWKS: every key whose tokens may still be alive.
pub async fn jwks(state: &AppState, realm_id: &str) -> Result<Value, Error> {
    let now = state.clock.now();
    let keys = key_store::published(state.store.pool(), realm_id, now).await?;
    let keys: Vec<Value> = keys.iter().filter_map(|key| serde_json::from_str(&key.public_jwk).ok()).collect();
    Ok(serde_json::json!({ "keys": keys }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::SecretHasher;

    #[test]
    fn generated_keys_sign_tokens_their_published_jwk_verifies() {
        let sealer = SecretHasher::new([3; 32]).sealer(SEALING_PURPOSE);
        for name in ["ES256", "RS256"] {
            let key = generate(&sealer, "realm", "client", name, DateTime::UNIX_EPOCH).unwrap();
            assert!(!key.sealed_key.contains("PRIVATE"), "the private key is sealed");
            let signer = signer_of(&sealer, &key, None).unwrap();
            let mut header = jsonwebtoken::Header::new(signer.algorithm);
            header.kid = Some(signer.kid.to_string());
            let token =
                jsonwebtoken::encode(&header, &serde_json::json!({"sub": "x", "exp": 4_000_000_000_u64}), &signer.key)
                    .unwrap();
            let verifier = verifier_of(&key).unwrap();
            let validation = jsonwebtoken::Validation::new(verifier.algorithm);
            let data = jsonwebtoken::decode::<Value>(&token, &verifier.key, &validation).unwrap();
            assert_eq!(data.claims["sub"], "x");
            let jwk: Value = serde_json::from_str(&key.public_jwk).unwrap();
            assert_eq!(jwk["kid"], key.id.as_str());
            assert_eq!(jwk["alg"], name);
            assert_eq!(jwk["use"], "sig");
            assert!(jwk.get("d").is_none(), "no private part is published");
        }
    }
}
