//! The forms the caches keep signing keys in: ready to sign, ready to verify, and a realm's JWK Set
//! as served. The directory's signing keys (`crate::directory::keys`) make them from the stored
//! keys.

use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};

use crate::kernel::ids::{ClientId, KeyId, RealmId};
use crate::store::signing_keys::KeyStatus;

/// A key ready to sign tokens, until the instant another key takes over, if one is set.
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
