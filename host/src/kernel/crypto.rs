//! Secrets: generation, keyed hashing for storage, constant-time comparison.
//!
//! API keys and client secrets carry 256 random bits, so a fast keyed hash (HMAC-SHA256 with the
//! deployment's secret key) is the right storage form: a stolen table cannot be brute-forced
//! without the key, and a lookup costs microseconds.

use std::io::Write;
use std::path::Path;

use anyhow::Context as _;
use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, RandomizedNonceKey, UnboundKey};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;
use subtle::ConstantTimeEq;

const KEY_BYTES: usize = 32;

/// Hashes secrets for storage with the deployment's key.
#[derive(Clone)]
pub struct SecretHasher {
    key: [u8; KEY_BYTES],
}

impl std::fmt::Debug for SecretHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretHasher(..)")
    }
}

impl SecretHasher {
    pub fn new(key: [u8; KEY_BYTES]) -> Self {
        Self { key }
    }

    /// Reads the hex key from `path`, or creates the file (mode 0600) with a fresh key.
    pub fn load_or_create(path: &Path) -> anyhow::Result<(Self, bool)> {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let bytes = hex::decode(text.trim())
                    .with_context(|| format!("secret key file {} is not hex", path.display()))?;
                let key: [u8; KEY_BYTES] = bytes.try_into().map_err(|_| {
                    anyhow::anyhow!("secret key file {} must hold {KEY_BYTES} bytes as hex", path.display())
                })?;
                Ok((Self::new(key), false))
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let mut key = [0u8; KEY_BYTES];
                rand::rng().fill_bytes(&mut key);
                write_private_file(path, &hex::encode(key))
                    .with_context(|| format!("cannot create secret key file {}", path.display()))?;
                Ok((Self::new(key), true))
            }
            Err(error) => Err(error).with_context(|| format!("cannot read secret key file {}", path.display())),
        }
    }

    /// The stored form of a secret value: hex HMAC-SHA256 under the deployment key.
    pub fn hash(&self, value: &str) -> String {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
        mac.update(value.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    /// A sealer for data kept encrypted at rest, keyed by a key derived from the deployment key
    /// for `purpose` (each purpose gets its own key).
    pub fn sealer(&self, purpose: &str) -> Sealer {
        Sealer::new(&self.derive(purpose))
    }

    /// A sealer for values sealed at a high rate (authorization codes), each under a key of its own
    /// derived from the deployment key for `purpose`.
    pub fn salted_sealer(&self, purpose: &str) -> SaltedSealer {
        SaltedSealer { key: self.derive(purpose) }
    }

    fn derive(&self, purpose: &str) -> [u8; KEY_BYTES] {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
        mac.update(b"castellan key derivation\0");
        mac.update(purpose.as_bytes());
        mac.finalize().into_bytes().into()
    }

    /// Whether `value` hashes to `stored`, compared in constant time.
    pub fn matches(&self, value: &str, stored: &str) -> bool {
        constant_time_eq(self.hash(value).as_bytes(), stored.as_bytes())
    }

    /// Whether `value` is the current value of a rotated secret, or the previous one while it still
    /// authenticates (see [`hash_matches_rotated`]); the value is hashed once.
    pub fn matches_rotated(
        &self,
        value: &str,
        current: Option<&str>,
        previous: Option<&str>,
        previous_valid_until: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> bool {
        hash_matches_rotated(&self.hash(value), current, previous, previous_valid_until, now)
    }
}

/// Whether a presented value's keyed hash is the current hash of a rotated secret, or the previous
/// one while it still authenticates (`previous_valid_until`, after `now`).
/// Compared in constant time.
pub fn hash_matches_rotated(
    presented: &str,
    current: Option<&str>,
    previous: Option<&str>,
    previous_valid_until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> bool {
    let same = |stored: &str| constant_time_eq(presented.as_bytes(), stored.as_bytes());
    current.is_some_and(same) || previous_valid_until.is_some_and(|until| until > now) && previous.is_some_and(same)
}

/// AES-256-GCM with random nonces, for secrets that must be read back (signing keys, webhook
/// secrets). The sealed form is base64url of nonce ‖ ciphertext ‖ tag.
pub struct Sealer {
    key: RandomizedNonceKey,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer(..)")
    }
}

#[derive(Debug, thiserror::Error)]
#[error("sealed data cannot be opened: wrong key or altered data")]
pub struct SealError;

impl Sealer {
    fn new(key: &[u8; KEY_BYTES]) -> Self {
        let key = RandomizedNonceKey::new(&AES_256_GCM, key)
            .unwrap_or_else(|_| unreachable!("a 32-byte key suits AES-256-GCM"));
        Self { key }
    }

    pub fn seal(&self, plain: &[u8]) -> String {
        let mut data = plain.to_vec();
        let nonce = self
            .key
            .seal_in_place_append_tag(Aad::empty(), &mut data)
            .unwrap_or_else(|_| unreachable!("sealing fails only for inputs beyond 64 GiB"));
        let mut sealed = nonce.as_ref().to_vec();
        sealed.append(&mut data);
        URL_SAFE_NO_PAD.encode(sealed)
    }

    pub fn open(&self, sealed: &str) -> Result<Vec<u8>, SealError> {
        let mut bytes = URL_SAFE_NO_PAD.decode(sealed).map_err(|_| SealError)?;
        if bytes.len() < NONCE_LEN {
            return Err(SealError);
        }
        let mut data = bytes.split_off(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(&bytes).map_err(|_| SealError)?;
        let plain = self.key.open_in_place(nonce, Aad::empty(), &mut data).map_err(|_| SealError)?;
        Ok(plain.to_vec())
    }
}

/// Bytes of the random salt each [`SaltedSealer`] value carries.
const SALT_BYTES: usize = 16;

/// AES-256-GCM under a key of its own for each value: HMAC-SHA256 of a random 128-bit salt under
/// the sealer's key, so a key seals one value and its nonce can be fixed. A key of [`Sealer`]
/// draws a random 96-bit nonce per value, which keeps the chance of a repeated nonce (which would
/// give away the key's authentication) negligible for about 2³² values; values sealed by the
/// thousand a second would reach that within weeks. The sealed form is base64url of salt ‖
/// ciphertext ‖ tag.
pub struct SaltedSealer {
    key: [u8; KEY_BYTES],
}

impl std::fmt::Debug for SaltedSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SaltedSealer(..)")
    }
}

impl SaltedSealer {
    fn key_for(&self, salt: &[u8]) -> LessSafeKey {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
        mac.update(salt);
        let key = UnboundKey::new(&AES_256_GCM, &mac.finalize().into_bytes())
            .unwrap_or_else(|_| unreachable!("a 32-byte key suits AES-256-GCM"));
        LessSafeKey::new(key)
    }

    pub fn seal(&self, plain: &[u8]) -> String {
        let mut salt = [0u8; SALT_BYTES];
        rand::rng().fill_bytes(&mut salt);
        let mut data = plain.to_vec();
        // The key seals this value alone: a fixed nonce is safe.
        self.key_for(&salt)
            .seal_in_place_append_tag(Nonce::assume_unique_for_key([0; NONCE_LEN]), Aad::empty(), &mut data)
            .unwrap_or_else(|_| unreachable!("sealing fails only for inputs beyond 64 GiB"));
        let mut sealed = salt.to_vec();
        sealed.append(&mut data);
        URL_SAFE_NO_PAD.encode(sealed)
    }

    pub fn open(&self, sealed: &str) -> Result<Vec<u8>, SealError> {
        let mut bytes = URL_SAFE_NO_PAD.decode(sealed).map_err(|_| SealError)?;
        if bytes.len() < SALT_BYTES {
            return Err(SealError);
        }
        let mut data = bytes.split_off(SALT_BYTES);
        let nonce = Nonce::assume_unique_for_key([0; NONCE_LEN]);
        let plain = self.key_for(&bytes).open_in_place(nonce, Aad::empty(), &mut data).map_err(|_| SealError)?;
        Ok(plain.to_vec())
    }
}

pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.ct_eq(b).into()
}

/// A new secret value: `prefix` followed by 256 random bits in base64url.
pub fn generate_secret(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// The last four characters, shown in place of a secret after it was handed out.
pub fn last_four(value: &str) -> String {
    let count = value.chars().count();
    value.chars().skip(count.saturating_sub(4)).collect()
}

/// Writes a file readable by its owner only, creating parent folders.
pub fn write_private_file(path: &Path, contents: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(contents.as_bytes())?;
    file.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_keyed_and_match_only_their_value() {
        let a = SecretHasher::new([1; 32]);
        let b = SecretHasher::new([2; 32]);
        let value = generate_secret("cstl_");
        assert_ne!(a.hash(&value), b.hash(&value));
        assert!(a.matches(&value, &a.hash(&value)));
        assert!(!a.matches("other", &a.hash(&value)));
    }

    #[test]
    fn a_previous_value_matches_only_until_its_instant() {
        let hasher = SecretHasher::new([1; 32]);
        let (new, old) = (hasher.hash("new"), hasher.hash("old"));
        let at = |seconds| DateTime::from_timestamp(seconds, 0).unwrap();
        let check = |value, until: Option<i64>, now| {
            hasher.matches_rotated(value, Some(&new), Some(&old), until.map(at), at(now))
        };
        assert!(check("new", Some(10), 20));
        assert!(check("new", None, 20));
        assert!(check("old", Some(10), 9));
        assert!(!check("old", Some(10), 10));
        assert!(!check("old", None, 0));
        assert!(!check("other", Some(10), 0));
        assert!(!hasher.matches_rotated("new", None, Some(&old), Some(at(10)), at(0)));
    }

    #[test]
    fn sealed_data_opens_only_under_its_key_and_purpose() {
        let hasher = SecretHasher::new([7; 32]);
        let sealer = hasher.sealer("signing keys");
        let sealed = sealer.seal(b"private");
        assert_eq!(sealer.open(&sealed).unwrap(), b"private");
        assert_ne!(sealed, sealer.seal(b"private"), "every seal takes a fresh nonce");
        assert!(hasher.sealer("webhook secrets").open(&sealed).is_err());
        assert!(SecretHasher::new([8; 32]).sealer("signing keys").open(&sealed).is_err());
        let mut altered = sealed.into_bytes();
        altered[20] = if altered[20] == b'A' { b'B' } else { b'A' };
        assert!(sealer.open(&String::from_utf8(altered).unwrap()).is_err());
    }

    #[test]
    fn salted_values_open_only_under_their_key_and_purpose() {
        let hasher = SecretHasher::new([7; 32]);
        let sealer = hasher.salted_sealer("authorization codes");
        let sealed = sealer.seal(b"grant");
        assert_eq!(sealer.open(&sealed).unwrap(), b"grant");
        assert_ne!(sealed, sealer.seal(b"grant"), "every value takes a fresh salt, so a key of its own");
        assert!(hasher.salted_sealer("other").open(&sealed).is_err());
        assert!(hasher.sealer("authorization codes").open(&sealed).is_err());
        assert!(SecretHasher::new([8; 32]).salted_sealer("authorization codes").open(&sealed).is_err());
        for at in [2, 30, sealed.len() - 2] {
            let mut altered = sealed.clone().into_bytes();
            altered[at] = if altered[at] == b'A' { b'B' } else { b'A' };
            assert!(sealer.open(&String::from_utf8(altered).unwrap()).is_err(), "altered at {at}");
        }
        assert!(sealer.open("").is_err() && sealer.open("not base64!").is_err());
    }

    #[test]
    fn generated_secrets_are_long_and_distinct() {
        let one = generate_secret("p_");
        assert!(one.starts_with("p_") && one.len() == 2 + 43);
        assert_ne!(one, generate_secret("p_"));
        assert_eq!(last_four("abcdefgh"), "efgh");
    }
}
