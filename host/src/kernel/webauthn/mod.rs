//! The relying party's side of WebAuthn Level 3 (§7.1 registering a credential, §7.2 verifying an
//! assertion), on the service's own `aws-lc-rs`: no I/O here, only the checks of what a browser
//! and an authenticator sent.
//!
//! - The client data: its `type`, its `origin` (the service's public origin, never a frame of
//!   another site), and its `challenge`, which the caller checks (a challenge is single use and
//!   bound to the browser it was given to, which only the caller knows).
//! - The authenticator data: the hash of the relying party id, user presence and user verification
//!   (always required), the backup flags (a credential backed up must be eligible for backup), the
//!   signature counter, and at registration the credential id and its COSE public key.
//! - The signature of an assertion over the authenticator data and the client data's hash.
//!
//! Attestation is not asked for (`none`): the attestation statement is not trusted, so it is not
//! checked, and its format is kept for the record only.

pub mod cbor;
mod cose;

use serde::Deserialize;
use sha2::{Digest, Sha256};

pub use self::cose::{Algorithm, PublicKey};

/// Who the credentials are for: the relying party id (the service's public host) and the origin
/// pages of the service are served from.
#[derive(Debug, Clone, Copy)]
pub struct RelyingParty<'a> {
    pub id: &'a str,
    pub origin: &'a str,
}

/// Why a registration or an assertion is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("the credential cannot be read: {0}")]
    Malformed(&'static str),
    #[error("the client data is not of a {0}")]
    WrongType(&'static str),
    #[error("the challenge is not one this service gave, or it was used or has expired")]
    Challenge,
    #[error("the credential was made for another origin")]
    Origin,
    #[error("the credential was made inside another site's frame")]
    CrossOrigin,
    #[error("the credential is for another relying party")]
    RelyingParty,
    #[error("the authenticator did not test the person's presence")]
    UserNotPresent,
    #[error("the authenticator did not verify the person (a PIN, a fingerprint, a face)")]
    UserNotVerified,
    #[error("the authenticator says the credential is backed up but cannot be")]
    BackupState,
    #[error("the credential's public key uses an algorithm this service does not take")]
    Algorithm,
    #[error("the signature does not verify")]
    Signature,
}

/// The flags of authenticator data (WebAuthn §6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags {
    pub user_present: bool,
    pub user_verified: bool,
    /// The credential may be synced to other devices (a synced passkey).
    pub backup_eligible: bool,
    /// It is synced now.
    pub backed_up: bool,
}

impl Flags {
    fn of(byte: u8) -> Self {
        Self {
            user_present: byte & 0x01 != 0,
            user_verified: byte & 0x04 != 0,
            backup_eligible: byte & 0x08 != 0,
            backed_up: byte & 0x10 != 0,
        }
    }
}

const ATTESTED_DATA: u8 = 0x40;

/// A credential registered: what the relying party keeps of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCredential {
    pub id: Vec<u8>,
    pub public_key: PublicKey,
    /// The authenticator's model, when it says (all zeros when it does not).
    pub aaguid: [u8; 16],
    pub counter: u32,
    pub flags: Flags,
    /// The attestation statement's format, kept but not trusted.
    pub format: String,
}

/// An assertion verified: the authenticator's counter and flags now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asserted {
    pub counter: u32,
    pub flags: Flags,
}

/// The longest credential id the specification allows (§5.8.3).
const MAX_CREDENTIAL_ID: usize = 1023;

/// Verifies a registration (§7.1): the client data (`webauthn.create`, whose challenge
/// `challenge_good` accepts) and the attestation object's authenticator data. The credential.
pub fn registration(
    party: RelyingParty<'_>,
    client_data_json: &[u8],
    attestation_object: &[u8],
    challenge_good: impl FnOnce(&[u8]) -> bool,
) -> Result<NewCredential, Refused> {
    client_data(party, client_data_json, "webauthn.create", challenge_good)?;
    let object = cbor::decode(attestation_object).map_err(|_| Refused::Malformed("the attestation object"))?;
    let format = object.field("fmt").and_then(cbor::Value::as_text).ok_or(Refused::Malformed("fmt"))?;
    let data = object.field("authData").and_then(cbor::Value::as_bytes).ok_or(Refused::Malformed("authData"))?;
    let parsed = authenticator_data(party, data)?;
    if parsed.attested & ATTESTED_DATA == 0 {
        return Err(Refused::Malformed("the authenticator data holds no credential"));
    }
    let rest = parsed.rest;
    if rest.len() < 18 {
        return Err(Refused::Malformed("the attested credential data"));
    }
    let mut aaguid = [0u8; 16];
    aaguid.copy_from_slice(&rest[..16]);
    let length = usize::from(u16::from_be_bytes([rest[16], rest[17]]));
    if length == 0 || length > MAX_CREDENTIAL_ID || rest.len() < 18 + length {
        return Err(Refused::Malformed("the credential id"));
    }
    let id = rest[18..18 + length].to_vec();
    // The COSE key; extensions may follow it, which this service does not ask for.
    let key_bytes = &rest[18 + length..];
    let (_, after) = cbor::decode_prefix(key_bytes).map_err(|_| Refused::Malformed("the public key"))?;
    let public_key = PublicKey::from_cose(&key_bytes[..key_bytes.len() - after.len()])?;
    Ok(NewCredential {
        id,
        public_key,
        aaguid,
        counter: parsed.counter,
        flags: parsed.flags,
        format: format.to_owned(),
    })
}

/// Verifies an assertion (§7.2) by the credential whose public key is `key`: the client data
/// (`webauthn.get`, whose challenge `challenge_good` accepts), the authenticator data and the
/// signature over both.
pub fn assertion(
    party: RelyingParty<'_>,
    key: &PublicKey,
    client_data_json: &[u8],
    authenticator_data_bytes: &[u8],
    signature: &[u8],
    challenge_good: impl FnOnce(&[u8]) -> bool,
) -> Result<Asserted, Refused> {
    client_data(party, client_data_json, "webauthn.get", challenge_good)?;
    let parsed = authenticator_data(party, authenticator_data_bytes)?;
    let mut signed = Vec::with_capacity(authenticator_data_bytes.len() + 32);
    signed.extend_from_slice(authenticator_data_bytes);
    signed.extend_from_slice(&Sha256::digest(client_data_json));
    key.verify(&signed, signature)?;
    Ok(Asserted { counter: parsed.counter, flags: parsed.flags })
}

/// Whether a counter an assertion reports shows a cloned authenticator (§6.1.1): once either the
/// stored or the new counter is not zero, it must go up.
pub fn counter_went_back(stored: u32, reported: u32) -> bool {
    (stored != 0 || reported != 0) && reported <= stored
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClientData<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    challenge: &'a str,
    origin: &'a str,
    #[serde(default)]
    cross_origin: bool,
}

fn client_data(
    party: RelyingParty<'_>,
    json: &[u8],
    kind: &'static str,
    challenge_good: impl FnOnce(&[u8]) -> bool,
) -> Result<(), Refused> {
    use base64::Engine as _;
    let data: ClientData<'_> = serde_json::from_slice(json).map_err(|_| Refused::Malformed("the client data"))?;
    if data.kind != kind {
        return Err(Refused::WrongType(if kind == "webauthn.create" { "registration" } else { "sign-in" }));
    }
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(data.challenge)
        .map_err(|_| Refused::Malformed("the challenge"))?;
    if !challenge_good(&challenge) {
        return Err(Refused::Challenge);
    }
    if data.origin != party.origin {
        return Err(Refused::Origin);
    }
    if data.cross_origin {
        return Err(Refused::CrossOrigin);
    }
    Ok(())
}

struct Parsed<'a> {
    flags: Flags,
    /// The raw flags byte, for the attested-data bit.
    attested: u8,
    counter: u32,
    /// What follows the counter: the attested credential data, the extensions.
    rest: &'a [u8],
}

fn authenticator_data<'a>(party: RelyingParty<'_>, data: &'a [u8]) -> Result<Parsed<'a>, Refused> {
    if data.len() < 37 {
        return Err(Refused::Malformed("the authenticator data"));
    }
    let expected = Sha256::digest(party.id.as_bytes());
    if !bool::from(subtle::ConstantTimeEq::ct_eq(&data[..32], expected.as_slice())) {
        return Err(Refused::RelyingParty);
    }
    let flags = Flags::of(data[32]);
    if !flags.user_present {
        return Err(Refused::UserNotPresent);
    }
    if !flags.user_verified {
        return Err(Refused::UserNotVerified);
    }
    if flags.backed_up && !flags.backup_eligible {
        return Err(Refused::BackupState);
    }
    let counter = u32::from_be_bytes([data[33], data[34], data[35], data[36]]);
    Ok(Parsed { flags, attested: data[32], counter, rest: &data[37..] })
}

#[cfg(test)]
mod tests;
