//! Signing keys: generation (ES256 by default, RS256 selectable), sealing at rest, the JWKS, and
//! the per-host caches of ready-to-use signing and verification keys.
//!
//! A realm's tokens are signed with the realm's keys, one family per algorithm its clients sign
//! with, shared by every client that does not have keys of its own: so the realm's JWKS holds a
//! few keys (the current, the next and the retired of each family) whatever the number of its
//! clients, and a client that registered itself a moment ago is verified with a key every
//! verifier already holds. A client an administrator gives keys of its own (`SigningKeys::Own`)
//! signs with them once they are published, and its keys rotate and are revoked without touching
//! any other client.
//!
//! A key is published before it signs: a rotation publishes the next key `NEXT_KEY_LEAD` before it
//! starts signing, long after every verifier that honours the JWKS `Cache-Control` has fetched it
//! again, and a client's first own key waits as long (the realm's key signs its tokens meanwhile).
//! The key it replaces keeps signing until then and stays published until the last token it
//! signed has expired. Only a rotation that revokes switches at once: its purpose is that earlier
//! tokens stop verifying. The JWKS is built once per change and served from memory.

use crate::kernel::clock::iso;
use crate::kernel::crypto::Sealer;
use crate::kernel::ids::{ClientId, KeyId, RealmId};
use crate::kernel::validate::{Body, boolean};
use crate::runtime::cache::keys::{Jwks, KeyPair, Signer, Verifier};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::changes::Invalidation;
use crate::store::clients::{Client, SigningKeys};
use crate::store::events::EventType;
use crate::store::signing_keys::{self as key_store, KeyStatus, Owner, SigningKey};
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};
use anyhow::Context as _;
use aws_lc_rs::encoding::AsDer as _;
use aws_lc_rs::rsa::{KeyPair as RsaKeyPair, KeySize};
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, TimeDelta, Utc};
use jsonwebtoken::jwk::{Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};
use serde::Serialize;
use serde_json::{Value, json};
use std::sync::Arc;
use utoipa::ToSchema;

/// The purpose the sealing key is derived for.
pub const SEALING_PURPOSE: &str = "signing keys";

/// How long verifiers may keep the JWKS (its `Cache-Control: max-age`).
pub const JWKS_MAX_AGE_SECONDS: i64 = 60;

/// How long a rotation publishes the next key before it signs: five times the JWKS lifetime, which
/// also covers verifiers that refetch on an unknown `kid` at most every few minutes.
pub const NEXT_KEY_LEAD: TimeDelta = TimeDelta::seconds(5 * JWKS_MAX_AGE_SECONDS);

/// Algorithms a client may sign with.
pub const ALGORITHMS: &[(&str, &str)] = &[("ES256", "ES256"), ("RS256", "RS256")];

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

/// A fresh key of the realm (`client_id` none) or of a client, sealed, Active, signing from `now`.
pub fn generate(
    sealer: &Sealer,
    realm_id: &str,
    client_id: Option<&str>,
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
        client_id: client_id.map(ClientId::known),
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

/// A new key of `owner` for `algorithm`, signing from `now`: generated before any transaction is
/// opened, since an RSA key takes a while.
pub fn fresh(context: &Context, owner: Owner<'_>, algorithm: &str, now: DateTime<Utc>) -> Result<SigningKey, Error> {
    let sealer = context.hasher.sealer(SEALING_PURPOSE);
    let (realm_id, client_id) = match owner {
        Owner::Realm(realm) => (realm, None),
        Owner::Client(realm, client) => (realm, Some(client)),
    };
    Ok(generate(&sealer, realm_id, client_id, algorithm, now)?)
}

/// A client's first own key: published now, signing once verifiers have had time to fetch it.
pub fn first_own_key(context: &Context, client: &Client, now: DateTime<Utc>) -> Result<SigningKey, Error> {
    let mut key = fresh(context, Owner::Client(&client.realm_id, &client.id), &client.key_algorithm, now)?;
    key.signs_from = now + NEXT_KEY_LEAD;
    Ok(key)
}

pub(crate) fn signer_of(sealer: &Sealer, key: &SigningKey, until: Option<DateTime<Utc>>) -> anyhow::Result<Signer> {
    let algorithm = algorithm_of(&key.algorithm)?;
    let pem = sealer.open(&key.sealed_key).with_context(|| format!("signing key {}", key.id))?;
    let pair = KeyPair::of(algorithm, &encoding_key(algorithm, &pem)?)?;
    Ok(Signer { kid: key.id.clone(), algorithm, key: Arc::new(pair), until })
}

/// Of the keys that sign now or will (newest `signs_from` first), the one that signs at `now`, and
/// the instant that choice ends: the next key's start or this key's retirement.
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

/// How a key stands at `now`, as the key listings show it: `Next` (published, not signing yet),
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

/// The key that signs the client's tokens now: its own once one signs, else the realm's.
pub async fn signer(context: &Context, client: &Client) -> Result<Arc<Signer>, Error> {
    if client.signing_keys == SigningKeys::Own
        && let Some(own) = own_signer(context, client).await?
    {
        return Ok(own);
    }
    realm_signer(context, &client.realm_id, &client.key_algorithm).await
}

/// The client's own key that signs now; none while its first is not signing yet. A client that
/// has none at all (it was given its own keys without one) gets its first here, published now.
async fn own_signer(context: &Context, client: &Client) -> Result<Option<Arc<Signer>>, Error> {
    let now = context.clock.now();
    let (realm_id, client_id) = (client.realm_id.as_str(), client.id.as_str());
    if let Some(signer) = context.caches.signer(realm_id, client_id).filter(|s| s.until.is_none_or(|until| now < until))
    {
        return Ok(Some(signer));
    }
    let owner = Owner::Client(realm_id, client_id);
    let keys = key_store::signing(context.store.pool(), owner, now).await?;
    let Some((key, until)) = signing_at(&keys, now) else {
        if keys.is_empty() {
            let first = first_own_key(context, client, now)?;
            let mut tx = context.store.begin().await?;
            key_store::insert(&mut *tx, &first).await?;
            crate::runtime::changes::publish(context, tx, &Invalidation::Keys(client.realm_id.clone())).await?;
        }
        return Ok(None);
    };
    let signer = Arc::new(signer_of(&context.hasher.sealer(SEALING_PURPOSE), key, until)?);
    context.caches.keep_signer(realm_id, client_id, signer.clone());
    Ok(Some(signer))
}

/// The realm's key for `algorithm` that signs now. A realm without one gets its first here,
/// signing at once: no token of the realm was signed with that algorithm before it.
pub async fn realm_signer(context: &Context, realm_id: &str, algorithm: &str) -> Result<Arc<Signer>, Error> {
    let now = context.clock.now();
    if let Some(signer) =
        context.caches.realm_signer(realm_id, algorithm).filter(|s| s.until.is_none_or(|until| now < until))
    {
        return Ok(signer);
    }
    let sealer = context.hasher.sealer(SEALING_PURPOSE);
    let mut keys = key_store::signing(context.store.pool(), Owner::Realm(realm_id), now).await?;
    keys.retain(|key| key.algorithm == algorithm);
    let signer = match signing_at(&keys, now) {
        Some((key, until)) => signer_of(&sealer, key, until)?,
        // A family published for a client that moved to it does not sign yet: the realm's ES256
        // key signs meanwhile, until the new family's first key starts.
        None if algorithm != DEFAULT_ALGORITHM && !keys.is_empty() => {
            let starts = keys.iter().map(|key| key.signs_from).min();
            let meanwhile = Box::pin(realm_signer(context, realm_id, DEFAULT_ALGORITHM)).await?;
            let until = match (meanwhile.until, starts) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            Signer { kid: meanwhile.kid.clone(), algorithm: meanwhile.algorithm, key: meanwhile.key.clone(), until }
        }
        None => {
            let key = generate(&sealer, realm_id, None, algorithm, now)?;
            let mut tx = context.store.begin().await?;
            key_store::insert(&mut *tx, &key).await?;
            crate::runtime::changes::publish(context, tx, &Invalidation::Keys(RealmId::known(realm_id))).await?;
            let until = keys.iter().map(|next| next.signs_from).min();
            signer_of(&sealer, &key, until)?
        }
    };
    let signer = Arc::new(signer);
    context.caches.keep_realm_signer(realm_id, algorithm, signer.clone());
    Ok(signer)
}

/// The algorithm every realm signs with, and the one its first key is of.
pub const DEFAULT_ALGORITHM: &str = "ES256";

/// Publishes a family of realm keys for `algorithm` when the realm has none, inside `tx`: its first
/// key signs once verifiers have had time to fetch it, the realm's ES256 key signing meanwhile.
/// For a client of the realm that moves to an algorithm no client of the realm used before.
pub async fn publish_realm_family(
    context: &Context,
    tx: &mut crate::store::Connection,
    realm_id: &str,
    algorithm: &str,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let owner = Owner::Realm(realm_id);
    let present = key_store::of_owner(&mut *tx, owner).await?;
    if algorithm == DEFAULT_ALGORITHM || present.iter().any(|key| key.algorithm == algorithm) {
        return Ok(());
    }
    let mut key = fresh(context, owner, algorithm, now)?;
    key.signs_from = now + NEXT_KEY_LEAD;
    key_store::insert(&mut *tx, &key).await?;
    Ok(())
}

/// The key with this `kid`, if it exists.
pub async fn verifier(context: &Context, kid: &str) -> Result<Option<Arc<Verifier>>, Error> {
    if let Some(verifier) = context.caches.verifier(kid) {
        return Ok(Some(verifier));
    }
    let Some(key) = key_store::find(context.store.pool(), kid).await? else { return Ok(None) };
    let verifier = Arc::new(verifier_of(&key)?);
    context.caches.keep_verifier(verifier.clone());
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

/// The answer to a rotation: the new keys and when they start signing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotated {
    /// The new keys' `kid`s, one per algorithm rotated.
    pub key_ids: Vec<KeyId>,
    pub signs_from: DateTime<Utc>,
    /// Keys withdrawn at once by a rotation that revokes.
    pub revoked: u64,
}

/// Rotates `owner`'s keys at an administrator's asking, trailed as a change of its keys: fresh
/// keys of `algorithms` (the client's one, or each the realm signs with), earlier ones revoked
/// at once when `revoke` says so. A client that signs with its realm's keys has none to rotate.
pub async fn rotate_by_hand(
    context: &Context,
    owner: Owner<'_>,
    algorithms: &[String],
    revoke: bool,
    by: Author<'_>,
) -> Result<Rotated, Error> {
    let now = context.clock.now();
    let fresh =
        algorithms.iter().map(|algorithm| self::fresh(context, owner, algorithm, now)).collect::<Result<_, _>>()?;
    let mut tx = context.store.begin().await?;
    let rotated = rotate(context, &mut tx, owner, Rotation::Manual { revoke }, fresh)
        .await?
        .ok_or_else(|| Error::Internal(anyhow::anyhow!("a rotation by hand always rotates")))?;
    let first = rotated.key_ids.first().map(ToString::to_string).unwrap_or_default();
    let (place, details) = match owner {
        Owner::Client(realm_id, client_id) => (
            Place::in_realm(ResourceKind::SigningKey, &first, realm_id).of_client(client_id).under(client_id),
            json!({ "signing_key_id": first, "revoked_keys_count": rotated.revoked }),
        ),
        Owner::Realm(realm_id) => {
            let ids: Vec<String> = rotated.key_ids.iter().map(ToString::to_string).collect();
            (
                Place::in_realm(ResourceKind::SigningKey, &first, realm_id).under(realm_id),
                json!({ "signing_key_ids": ids, "revoked_keys_count": rotated.revoked }),
            )
        }
    };
    changes::commit(context, by, tx, Change::of(ChangeAction::Update, place, 200).details(details)).await?;
    Ok(rotated)
}

/// The algorithms of the realm's own keys that sign now or will, ES256 always among them: what a
/// rotation of the realm's keys replaces.
pub async fn realm_algorithms(context: &Context, realm_id: &str) -> Result<Vec<String>, Error> {
    let keys = key_store::signing(context.store.pool(), Owner::Realm(realm_id), context.clock.now()).await?;
    let mut algorithms = vec![DEFAULT_ALGORITHM.to_owned()];
    for key in keys {
        if !algorithms.contains(&key.algorithm) {
            algorithms.push(key.algorithm);
        }
    }
    Ok(algorithms)
}

/// Rotates `owner`'s signing keys inside `tx`, `keys` (from [`fresh`], one per algorithm) being
/// the new ones. They are published now and sign `NEXT_KEY_LEAD` later; until then the keys they
/// replace go on signing, then retire and stay in the JWKS until every token they signed has
/// expired. A manual rotation that revokes withdraws every earlier key from the JWKS at once
/// (their tokens stop verifying) and the new keys sign at once; so does an owner's first key.
/// Writes the `keys_rotated` event, the realm's (no client) for the realm's keys. `None`
/// when a scheduled rotation found nothing left to rotate (another host did it).
pub async fn rotate(
    context: &Context,
    tx: &mut crate::store::Connection,
    owner: Owner<'_>,
    rotation: Rotation,
    mut keys: Vec<SigningKey>,
) -> Result<Option<Rotated>, Error> {
    let Some(now) = keys.first().map(|key| key.created_at) else { return Ok(None) };
    let lifetime = TimeDelta::seconds(i64::from(context.settings.access_token_seconds));
    let starts = now + NEXT_KEY_LEAD;
    let (retired, revoked) = match rotation {
        Rotation::Manual { revoke: true } => (0, key_store::revoke_all(&mut *tx, owner, now).await?),
        Rotation::Manual { revoke: false } => {
            (key_store::retire_all(&mut *tx, owner, starts, starts + lifetime).await?, 0)
        }
        Rotation::Scheduled { rotation_days } => {
            let cutoff = now - TimeDelta::days(rotation_days);
            match key_store::retire_older(&mut *tx, owner, cutoff, starts, starts + lifetime).await? {
                0 => return Ok(None),
                retired => (retired, 0),
            }
        }
    };
    let signs_from = if retired > 0 { starts } else { now };
    for key in &mut keys {
        key.signs_from = signs_from;
        key_store::insert(&mut *tx, key).await?;
    }
    let (realm_id, client_id) = match owner {
        Owner::Realm(realm) => (RealmId::known(realm), None),
        Owner::Client(realm, client) => (RealmId::known(realm), Some(ClientId::known(client))),
    };
    let account = crate::store::realms::find(&mut *tx, &realm_id).await?.map(|realm| realm.account_id);
    let account = account.ok_or(Error::NotFound("realm"))?;
    let mut data = serde_json::json!({ "signing_key_id": keys[0].id, "encryption_key_id": null });
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
    // A realm's rotation is the realm's event (its endpoints hear it); a client's, the client's.
    let event = crate::store::events::Event {
        event_type: EventType::KeysRotated,
        account_id: &account,
        realm_id: Some(&realm_id),
        client_id: client_id.as_deref(),
        data,
    };
    crate::store::events::publish(tx, event, now).await?;
    Ok(Some(Rotated { key_ids: keys.into_iter().map(|key| key.id).collect(), signs_from, revoked }))
}

/// Rotates the keys of every client with keys of its own whose rotation period has run out (the
/// scheduled job).
pub async fn rotate_due(context: &Context, now: DateTime<Utc>) -> Result<usize, Error> {
    let due = key_store::due_for_rotation(context.store.pool(), now).await?;
    let mut rotated = 0;
    for (realm_id, client_id, rotation_days) in due {
        let Some(client) = crate::store::clients::find(context.store.pool(), &realm_id, &client_id).await? else {
            continue;
        };
        let owner = Owner::Client(&realm_id, &client_id);
        let key = fresh(context, owner, &client.key_algorithm, now)?;
        let mut tx = context.store.begin().await?;
        if rotate(context, &mut tx, owner, Rotation::Scheduled { rotation_days }, vec![key]).await?.is_some() {
            let stale = Invalidation::Client(RealmId::known(realm_id.as_str()), ClientId::known(client_id.as_str()));
            crate::runtime::changes::publish(context, tx, &stale).await?;
            rotated += 1;
        }
    }
    Ok(rotated)
}

/// A client's own keys stop signing (it signs with the realm's from now): each stays published
/// until the tokens it signed have expired.
pub async fn retire_own(
    context: &Context,
    tx: &mut crate::store::Connection,
    client: &Client,
    now: DateTime<Utc>,
) -> Result<u64, Error> {
    let lifetime = TimeDelta::seconds(i64::from(context.settings.access_token_seconds));
    let owner = Owner::Client(&client.realm_id, &client.id);
    Ok(key_store::retire_all(&mut *tx, owner, now, now + lifetime).await?)
}

/// The realm's JWKS: the keys whose tokens may still be alive, the realm's and its clients' own.
/// Built once and kept until a key of the realm changes or a retired one's publication ends.
pub async fn jwks(context: &Context, realm_id: &str) -> Result<Arc<Jwks>, Error> {
    let now = context.clock.now();
    if let Some(kept) = context.caches.jwks(realm_id).filter(|jwks| jwks.until.is_none_or(|until| now < until)) {
        return Ok(kept);
    }
    let keys = key_store::published(context.store.pool(), realm_id, now).await?;
    let until = keys.iter().filter(|key| key.status == KeyStatus::Retired).filter_map(|key| key.published_until).min();
    let keys: Vec<Value> = keys.iter().filter_map(|key| serde_json::from_str(&key.public_jwk).ok()).collect();
    let body = serde_json::json!({ "keys": keys }).to_string();
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, body.as_bytes());
    let etag = format!("\"{}\"", hex::encode(&digest.as_ref()[..16]));
    let jwks = Arc::new(Jwks { body, etag, until });
    context.caches.keep_jwks(realm_id, jwks.clone());
    Ok(jwks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::crypto::SecretHasher;

    #[test]
    fn generated_keys_sign_tokens_their_published_jwk_verifies() {
        let sealer = SecretHasher::new([3; 32]).sealer(SEALING_PURPOSE);
        for name in ["ES256", "RS256"] {
            let key = generate(&sealer, "realm", Some("client"), name, DateTime::UNIX_EPOCH).unwrap();
            assert!(!key.sealed_key.contains("PRIVATE"), "the private key is sealed");
            let signer = signer_of(&sealer, &key, None).unwrap();
            let claims = serde_json::json!({"sub": "x", "exp": 4_000_000_000_u64});
            let token = signer.sign(Some("at+jwt"), &claims).unwrap();
            let verifier = verifier_of(&key).unwrap();
            let validation = jsonwebtoken::Validation::new(verifier.algorithm);
            let data = jsonwebtoken::decode::<Value>(&token, &verifier.key, &validation).unwrap();
            assert_eq!(data.claims["sub"], "x");
            let header = jsonwebtoken::decode_header(&token).unwrap();
            let named = (header.alg, header.kid.as_deref(), header.typ.as_deref());
            assert_eq!(named, (signer.algorithm, Some(key.id.as_str()), Some("at+jwt")));
            let jwk: Value = serde_json::from_str(&key.public_jwk).unwrap();
            assert_eq!(jwk["kid"], key.id.as_str());
            assert_eq!(jwk["alg"], name);
            assert_eq!(jwk["use"], "sig");
            assert!(jwk.get("d").is_none(), "no private part is published");
        }
    }
}

/// A signing key as the admin API shows it (public part only).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SigningKeyView {
    /// The `kid` of the tokens it signs.
    pub id: String,
    /// Realm (a key of the realm, signing for every client without keys of its own) or Client (a
    /// client's own).
    pub owner: String,
    pub algorithm: String,
    /// Next (published, signs from `signsFrom`), Active (signs new tokens) or Retired (published
    /// until its tokens expire).
    pub status: String,
    /// The public JWK.
    #[schema(value_type = Object)]
    pub public_key: Value,
    pub created_at: String,
    /// When it starts signing: a rotation publishes the next key five minutes before.
    pub signs_from: String,
    /// When it stops signing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retired_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_until: Option<String>,
}

#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct RotateSigningKeysInput {
    /// Revoke every earlier key at once (its tokens stop verifying); default false keeps them
    /// published until their tokens expire.
    pub(crate) revoke_old_keys: Option<bool>,
}

impl RotateSigningKeysInput {
    pub(crate) fn read(body: &mut Body) -> Self {
        Self { revoke_old_keys: body.optional("revokeOldKeys", boolean) }
    }
}

/// The answer to a rotation of signing keys.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RotatedSigningKeys {
    /// The new key's `kid` (the first, for a realm with keys of two algorithms).
    pub signing_key_id: String,
    /// Every new key's `kid`, one per algorithm.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signing_key_ids: Vec<String>,
    /// When they start signing: five minutes on (they are published first, and the current keys
    /// sign until then), or at once when the rotation revokes.
    pub signs_from: String,
    /// Earlier keys withdrawn at once by a rotation that revokes.
    pub revoked_keys_count: u64,
}

pub(crate) fn views(found: Vec<SigningKey>, now: DateTime<Utc>) -> Vec<SigningKeyView> {
    let instant = |at: Option<DateTime<Utc>>| at.map(iso);
    found
        .into_iter()
        .map(|key| SigningKeyView {
            status: self::stage(&key, now).to_owned(),
            owner: if key.client_id.is_some() { "Client" } else { "Realm" }.to_owned(),
            public_key: serde_json::from_str(&key.public_jwk).unwrap_or(Value::Null),
            id: key.id.into(),
            algorithm: key.algorithm,
            created_at: iso(key.created_at),
            signs_from: iso(key.signs_from),
            retired_at: instant(key.retired_at),
            published_until: instant(key.published_until),
        })
        .collect()
}

pub(crate) fn answer(rotated: &self::Rotated) -> RotatedSigningKeys {
    let ids: Vec<String> = rotated.key_ids.iter().map(ToString::to_string).collect();
    RotatedSigningKeys {
        signing_key_id: ids.first().cloned().unwrap_or_default(),
        signing_key_ids: ids,
        signs_from: iso(rotated.signs_from),
        revoked_keys_count: rotated.revoked,
    }
}
