//! User passwords: Argon2id with the OWASP Password Storage Cheat Sheet's first configuration
//! (m = 19 MiB, t = 2, p = 1), stored in PHC string format so the parameters travel with each hash
//! and can be raised later without invalidating stored passwords.
//!
//! Hashing takes tens of milliseconds of one core by design; it runs on the blocking pool so the
//! request workers stay free.
//!
//! Realms with "Block breached passwords" refuse passwords found in [`BreachedPasswords`].
//!
//! Hashes imported from other providers ([`imported`]) are checked as they are, and replaced by
//! the service's own at the next sign-in ([`needs_rehash`]).

pub mod imported;

use argon2::password_hash::{Output, ParamsString, PasswordHash, Salt, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use rand::RngCore as _;
use sha1::{Digest as _, Sha1};
use std::collections::HashSet;
use std::path::Path;
use std::sync::{LazyLock, Mutex, PoisonError};
use tokio::sync::Semaphore;

/// Memory cost in KiB (19 MiB).
pub const MEMORY_KIB: u32 = 19 * 1024;
/// Passes over memory.
pub const ITERATIONS: u32 = 2;
/// Lanes.
pub const PARALLELISM: u32 = 1;

fn params() -> Params {
    Params::new(MEMORY_KIB, ITERATIONS, PARALLELISM, None)
        .unwrap_or_else(|_| unreachable!("the OWASP parameters are valid Argon2 parameters"))
}

fn argon2() -> Argon2<'static> {
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params())
}

/// Argon2's working memory (19 MiB a hash), kept between hashes, at most one buffer per hashing
/// slot. A buffer allocated for each hash would be faulted in and zeroed page by page every time
/// (a fifth of a hash's time without huge pages), and the allocator would keep it anyway.
static MEMORY: Mutex<Vec<Vec<Block>>> = Mutex::new(Vec::new());

/// Runs `work` with a working memory of Argon2's size, handed back for the next hash.
fn with_memory<T>(work: impl FnOnce(&mut [Block]) -> T) -> T {
    let kept = MEMORY.lock().unwrap_or_else(PoisonError::into_inner).pop();
    let mut blocks = kept.unwrap_or_else(|| vec![Block::default(); params().block_count()]);
    let done = work(&mut blocks);
    let mut memory = MEMORY.lock().unwrap_or_else(PoisonError::into_inner);
    if memory.len() < hashing_slots() {
        memory.push(blocks);
    }
    done
}

/// `password`'s Argon2id output under `salt`, `length` bytes long.
fn derive(password: &str, salt: &[u8], length: usize) -> argon2::password_hash::Result<Output> {
    Output::init_with(length, |out| {
        with_memory(|blocks| argon2().hash_password_into_with_memory(password.as_bytes(), salt, out, blocks))
            .map_err(Into::into)
    })
}

/// The PHC string of `password` under a fresh 128-bit salt. Blocking.
pub fn hash_blocking(password: &str) -> String {
    let mut salt = [0u8; 16];
    rand::rng().fill_bytes(&mut salt);
    let encoded = SaltString::encode_b64(&salt).unwrap_or_else(|_| unreachable!("16 bytes encode as a salt"));
    let output = derive(password, &salt, Params::DEFAULT_OUTPUT_LEN)
        .unwrap_or_else(|_| unreachable!("hashing with valid parameters and salt cannot fail"));
    let phc = PasswordHash {
        algorithm: argon2::ARGON2ID_IDENT,
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(&params()).unwrap_or_else(|_| unreachable!("the parameters have a PHC form")),
        salt: Some(encoded.as_salt()),
        hash: Some(output),
    };
    phc.to_string()
}

/// Whether `password` matches `stored`: the service's own PHC string, or an imported hash
/// (constant time in the comparison). Blocking.
pub fn verify_blocking(password: &str, stored: &str) -> bool {
    if needs_rehash(stored) {
        return imported::verify(password, stored);
    }
    let Ok(parsed) = PasswordHash::new(stored) else { return false };
    let (Some(salt), Some(expected)) = (parsed.salt, parsed.hash) else { return false };
    let mut buffer = [0u8; Salt::MAX_LENGTH];
    let Ok(salt) = salt.decode_b64(&mut buffer) else { return false };
    // `Output` compares in constant time.
    derive(password, salt, expected.len()).is_ok_and(|computed| computed == expected)
}

/// Whether `stored` is anything but an Argon2id hash with the service's parameters: an imported
/// hash, to be replaced once the person's password is known to match it.
pub fn needs_rehash(stored: &str) -> bool {
    !stored.starts_with(&own_prefix())
}

/// At most one hash per core at a time: more would only share the cores, add 19 MiB of memory
/// each, and make every sign-in slower.
static HASHING: LazyLock<Semaphore> = LazyLock::new(|| Semaphore::new(hashing_slots()));

/// How many hashes run at once: one per core.
fn hashing_slots() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Runs `work` on the blocking pool once a hashing slot is free.
async fn hashing<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> anyhow::Result<T> {
    let _slot = HASHING.acquire().await?;
    Ok(tokio::task::spawn_blocking(work).await?)
}

/// Hashes on the blocking pool.
pub async fn hash(password: String) -> anyhow::Result<String> {
    hashing(move || hash_blocking(&password)).await
}

/// The longest password accepted, in characters: longer inputs only cost hashing time.
pub const MAX_PASSWORD_LENGTH: usize = 1024;

/// Verifies on the blocking pool. With no stored hash (unknown account, or an account without a
/// password) a hash of the same cost is still computed, so timing does not tell whether an
/// account exists; where imported hashes cost more, [`RefusalFloors`] evens the rest out.
pub async fn verify(password: String, stored: Option<String>) -> anyhow::Result<bool> {
    hashing(move || match stored {
        Some(stored) => verify_blocking(&password, &stored),
        None => {
            let _ = hash_blocking(&password);
            false
        }
    })
    .await
}

/// The prefix of every hash with the service's own parameters.
pub fn own_prefix() -> String {
    format!("$argon2id$v=19$m={MEMORY_KIB},t={ITERATIONS},p={PARALLELISM}$")
}

/// What checking a password reads beyond the realm's own settings: the passwords known from
/// breaches, and the time a refusal takes at least in each realm.
#[derive(Debug, Default)]
pub struct PasswordChecks {
    pub breached: BreachedPasswords,
    pub refusal_floors: RefusalFloors,
}

/// How long a refused password takes, at least, in each realm whose people still hold imported
/// hashes: as long as checking the costliest of those hashes. Without it a wrong guess would
/// answer sooner for an unknown name, or an account that signed in since its import, than for
/// one still holding a slower imported hash, and the time would tell which accounts exist. The
/// difference is waited, not computed. A realm's floor is measured again every ten minutes, on the
/// blocking pool with the other hashes.
#[derive(Debug, Default)]
pub struct RefusalFloors {
    realms: std::sync::Mutex<std::collections::HashMap<String, (std::time::Instant, Option<std::time::Duration>)>>,
}

/// How long a realm's floor is kept before it is measured again.
const FLOOR_KEPT: std::time::Duration = std::time::Duration::from_secs(600);

impl RefusalFloors {
    /// The floor of the realm whose imported hashes are `imported` (read when the kept one is
    /// stale): `None` when checking its people's hashes costs alike.
    pub async fn floor<F, Fut>(&self, realm_id: &str, imported: F) -> anyhow::Result<Option<std::time::Duration>>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = anyhow::Result<Vec<String>>>,
    {
        if let Some(kept) = self.kept(realm_id) {
            return Ok(kept);
        }
        let costliest = imported().await?.into_iter().filter_map(|h| Some((imported::work(&h)?, h))).max();
        let floor = match costliest {
            // Measured on a check that fails, as the refusals it evens out do; with a margin for
            // a busier moment.
            Some((_, hash)) => Some(
                hashing(move || {
                    let started = std::time::Instant::now();
                    let _ = imported::verify("never the password", &hash);
                    started.elapsed() * 5 / 4
                })
                .await?,
            ),
            None => None,
        };
        let mut realms = self.realms.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        realms.insert(realm_id.to_owned(), (std::time::Instant::now(), floor));
        Ok(floor)
    }

    /// Has the realm's floor measured again at its next refusal (its people's hashes changed).
    pub fn forget(&self, realm_id: &str) {
        self.realms.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(realm_id);
    }

    /// The realm's floor as last measured, if it was.
    pub fn kept(&self, realm_id: &str) -> Option<Option<std::time::Duration>> {
        let realms = self.realms.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        realms.get(realm_id).filter(|(at, _)| at.elapsed() < FLOOR_KEPT).map(|(_, floor)| *floor)
    }
}

/// Passwords known from breaches: an offline list loaded at start (one password a line, `#`
/// comment lines skipped, compared case-insensitively), and optionally a range API compatible with
/// Have I Been Pwned's (`GET {address}{first five hex digits of the SHA-1}` answering
/// `SUFFIX:COUNT` lines), which learns only a 5-digit prefix of the password's hash.
#[derive(Debug, Default)]
pub struct BreachedPasswords {
    offline: HashSet<String>,
    range_api: Option<(reqwest::Client, String)>,
}

impl BreachedPasswords {
    /// Loads the list at `file` (a missing file is reported and leaves the list empty) and sets up
    /// the range API at `range_api`.
    pub fn load(file: Option<&Path>, range_api: Option<&str>) -> anyhow::Result<Self> {
        let mut offline = HashSet::new();
        if let Some(file) = file {
            match std::fs::read(file) {
                Ok(bytes) => {
                    let text = String::from_utf8_lossy(&bytes);
                    offline.extend(
                        text.lines()
                            .map(str::trim_end)
                            .filter(|line| !line.is_empty() && !line.starts_with('#'))
                            .map(str::to_lowercase),
                    );
                    tracing::info!(path = %file.display(), passwords = offline.len(), "breached-password list loaded");
                }
                Err(error) => tracing::warn!(
                    path = %file.display(), %error,
                    "no breached-password list: realms that block breached passwords check only the range API, if any"
                ),
            }
        }
        let range_api = match range_api {
            Some(address) => {
                let client = reqwest::Client::builder()
                    .timeout(std::time::Duration::from_secs(3))
                    .redirect(reqwest::redirect::Policy::none())
                    .build()?;
                Some((client, address.to_owned()))
            }
            None => None,
        };
        Ok(Self { offline, range_api })
    }

    /// Whether the password is known from a breach. A range API that cannot be reached is logged
    /// and the offline list decides alone.
    pub async fn contains(&self, password: &str) -> bool {
        if self.offline.contains(&password.to_lowercase()) {
            return true;
        }
        let Some((client, address)) = &self.range_api else { return false };
        let digest = hex::encode_upper(Sha1::digest(password.as_bytes()));
        let (prefix, suffix) = digest.split_at(5);
        let answer = match client.get(format!("{address}{prefix}")).header("Add-Padding", "true").send().await {
            Ok(response) if response.status().is_success() => response.text().await,
            Ok(response) => {
                tracing::warn!(status = %response.status(), "breached-password range API refused the query");
                return false;
            }
            Err(error) => {
                tracing::warn!(%error, "breached-password range API unreachable");
                return false;
            }
        };
        answer.is_ok_and(|body| {
            body.lines().filter_map(|line| line.trim().split_once(':')).any(|(hash, count)| {
                hash.eq_ignore_ascii_case(suffix) && count.trim().parse::<u64>().is_ok_and(|n| n > 0)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_argon2id_with_owasp_parameters_and_verify_only_their_password() {
        let stored = hash_blocking("correct horse battery staple");
        assert!(stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{stored}");
        assert!(verify_blocking("correct horse battery staple", &stored));
        assert!(!verify_blocking("correct horse battery stable", &stored));
        assert!(!verify_blocking("anything", "not a phc string"));
        assert_ne!(stored, hash_blocking("correct horse battery staple"), "salts differ");
        assert!(!needs_rehash(&stored));
        assert!(needs_rehash("$2b$04$abcdefghijklmnopqrstuu"));
    }

    /// Hashes made in kept working memory are the Argon2 crate's own, both ways: every hash stored
    /// before still verifies, and a hash stored now verifies anywhere Argon2id is read.
    #[test]
    fn hashes_in_kept_memory_are_those_of_the_argon2_crate() {
        use argon2::password_hash::{PasswordHasher as _, PasswordVerifier as _};
        let salt = SaltString::encode_b64(&[9; 16]).unwrap();
        let theirs = argon2().hash_password(b"correct horse battery staple", &salt).unwrap().to_string();
        assert!(verify_blocking("correct horse battery staple", &theirs));
        assert!(!verify_blocking("correct horse battery stable", &theirs));
        let ours = hash_blocking("correct horse battery staple");
        assert!(argon2().verify_password(b"correct horse battery staple", &PasswordHash::new(&ours).unwrap()).is_ok());
        // Memory handed back is reused, never more buffers than hashing slots.
        assert!(MEMORY.lock().unwrap().len() <= hashing_slots());
    }
}
