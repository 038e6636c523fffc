//! User passwords: Argon2id with the OWASP Password Storage Cheat Sheet's first configuration
//! (m = 19 MiB, t = 2, p = 1), stored in PHC string format so the parameters travel with each hash
//! and can be raised later without invalidating stored passwords.
//!
//! Hashing takes tens of milliseconds of one core by design; it runs on the blocking pool so the
//! request workers stay free.

use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use rand::RngCore as _;

/// Memory cost in KiB (19 MiB).
pub const MEMORY_KIB: u32 = 19 * 1024;
/// Passes over memory.
pub const ITERATIONS: u32 = 2;
/// Lanes.
pub const PARALLELISM: u32 = 1;

fn argon2() -> Argon2<'static> {
    let params = Params::new(MEMORY_KIB, ITERATIONS, PARALLELISM, None)
        .unwrap_or_else(|_| unreachable!("the OWASP parameters are valid Argon2 parameters"));
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// The PHC string of `password` under a fresh 128-bit salt. Blocking.
pub fn hash_blocking(password: &str) -> String {
    let mut salt = [0u8; 16];
    rand::rng().fill_bytes(&mut salt);
    let salt = SaltString::encode_b64(&salt).unwrap_or_else(|_| unreachable!("16 bytes encode as a salt"));
    argon2()
        .hash_password(password.as_bytes(), &salt)
        .unwrap_or_else(|_| unreachable!("hashing with valid parameters and salt cannot fail"))
        .to_string()
}

/// Whether `password` matches the PHC string `stored` (constant time in the comparison). Blocking.
pub fn verify_blocking(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored).is_ok_and(|parsed| argon2().verify_password(password.as_bytes(), &parsed).is_ok())
}

/// Hashes on the blocking pool.
pub async fn hash(password: String) -> anyhow::Result<String> {
    Ok(tokio::task::spawn_blocking(move || hash_blocking(&password)).await?)
}

/// Verifies on the blocking pool. With no stored hash (unknown account, or an account without a
/// password) a hash of the same cost is still computed, so timing does not tell whether an
/// account exists.
pub async fn verify(password: String, stored: Option<String>) -> anyhow::Result<bool> {
    Ok(tokio::task::spawn_blocking(move || match stored {
        Some(stored) => verify_blocking(&password, &stored),
        None => {
            let _ = hash_blocking(&password);
            false
        }
    })
    .await?)
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
    }
}
