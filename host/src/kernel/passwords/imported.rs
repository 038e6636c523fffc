//! Password hashes brought from other providers: bcrypt (`$2a$`, `$2b$`, `$2y$`), Argon2 in PHC
//! form (any variant), PBKDF2 with HMAC-SHA-512, -SHA-256 or -SHA-1 as Keycloak stores it (base64
//! hash and salt, iterations: `pbkdf2-sha512` is its default since version 24), and
//! salted SHA-256 (a hex or base64 digest of the salt before or after the password). They are
//! stored as imported, checked as they are at the person's next sign-in, and replaced then by the
//! service's own Argon2id hash.
//!
//! Costs are bounded at what the service would accept for a hash of its own, so that no imported
//! hash makes a wrong guess cost a core for long: bcrypt up to cost 12 (Rails' default); Argon2 up
//! to 64 MiB and 3 passes (the costlier of RFC 9106's recommended settings, argon2-cffi's default);
//! PBKDF2 up to the iterations OWASP's
//! Password Storage Cheat Sheet gives each digest (1,300,000 for SHA-1, 600,000 for SHA-256,
//! 210,000 for SHA-512, Keycloak's default). A stored hash beyond them, imported before they
//! held, is never checked: it matches no password, and its person resets it.

use std::num::NonZeroU32;

use argon2::password_hash::{PasswordHash, PasswordVerifier as _};
use argon2::{Argon2, Params};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

/// The most costly bcrypt accepted.
const MAX_BCRYPT_COST: u32 = 12;
/// The most memory (KiB) and passes of an Argon2 hash accepted.
const MAX_ARGON2_KIB: u32 = 64 * 1024;
const MAX_ARGON2_PASSES: u32 = 3;
/// The prefixes of the stored forms this module writes.
const PBKDF2_PREFIX: &str = "$pbkdf2-";
const SHA256_PREFIX: &str = "$sha256$";

/// A hash as another provider exported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exported<'a> {
    Bcrypt(&'a str),
    Argon2(&'a str),
    /// Keycloak's `pbkdf2-sha512`, `pbkdf2-sha256` and `pbkdf2` (SHA-1) credentials: base64 digest
    /// and salt, and the iteration count.
    Pbkdf2 {
        digest: Pbkdf2Digest,
        value: &'a str,
        salt: &'a str,
        iterations: u32,
    },
    /// SHA-256 of the salt and the password: the digest in hex or base64, the salt as text, before
    /// (`prefix`) or after the password.
    Sha256 {
        value: &'a str,
        salt: &'a str,
        salt_first: bool,
    },
}

/// The HMAC of a PBKDF2 hash, by the name Keycloak gives its algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pbkdf2Digest {
    Sha1,
    Sha256,
    Sha512,
}

impl Pbkdf2Digest {
    /// The most iterations accepted.
    pub fn max_iterations(self) -> u32 {
        match self {
            Self::Sha1 => 1_300_000,
            Self::Sha256 => 600_000,
            Self::Sha512 => 210_000,
        }
    }

    /// `pbkdf2` (SHA-1), `pbkdf2-sha256`, `pbkdf2-sha512`.
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "pbkdf2" | "pbkdf2-sha1" => Some(Self::Sha1),
            "pbkdf2-sha256" => Some(Self::Sha256),
            "pbkdf2-sha512" => Some(Self::Sha512),
            _ => None,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Sha1 => "sha1",
            Self::Sha256 => "sha256",
            Self::Sha512 => "sha512",
        }
    }

    fn algorithm(self) -> aws_lc_rs::pbkdf2::Algorithm {
        match self {
            Self::Sha1 => aws_lc_rs::pbkdf2::PBKDF2_HMAC_SHA1,
            Self::Sha256 => aws_lc_rs::pbkdf2::PBKDF2_HMAC_SHA256,
            Self::Sha512 => aws_lc_rs::pbkdf2::PBKDF2_HMAC_SHA512,
        }
    }
}

/// The stored form of an exported hash; why it cannot be used otherwise.
pub fn stored_form(exported: &Exported<'_>) -> Result<String, String> {
    match *exported {
        Exported::Bcrypt(hash) => {
            let parts: Vec<&str> = hash.split('$').collect();
            let cost = match parts.as_slice() {
                ["", "2a" | "2b" | "2y", cost, rest] if rest.len() == 53 => cost.parse::<u32>().ok(),
                _ => None,
            };
            match cost {
                Some(cost) if (4..=MAX_BCRYPT_COST).contains(&cost) => Ok(hash.to_owned()),
                Some(cost) => Err(format!("bcrypt cost {cost} is outside 4 to {MAX_BCRYPT_COST}")),
                None => Err("not a bcrypt hash ($2a$, $2b$ or $2y$, cost, 53 characters)".into()),
            }
        }
        Exported::Argon2(hash) => {
            let parsed = PasswordHash::new(hash).map_err(|_| "not an Argon2 hash in PHC form".to_owned())?;
            if !["argon2id", "argon2i", "argon2d"].contains(&parsed.algorithm.as_str()) {
                return Err(format!("{} is not an Argon2 variant", parsed.algorithm));
            }
            let params = Params::try_from(&parsed).map_err(|_| "the Argon2 parameters are invalid".to_owned())?;
            if !argon2_within_bounds(&params) {
                return Err(format!(
                    "Argon2 costs above {MAX_ARGON2_KIB} KiB of memory or {MAX_ARGON2_PASSES} passes are refused"
                ));
            }
            Ok(hash.to_owned())
        }
        Exported::Pbkdf2 { digest: hmac, value, salt, iterations } => {
            let most = hmac.max_iterations();
            if !(1..=most).contains(&iterations) {
                return Err(format!("iterations must be 1 to {most} for {}", hmac.label()));
            }
            let digest = STANDARD.decode(value).map_err(|_| "the PBKDF2 value is not base64".to_owned())?;
            let salt = STANDARD.decode(salt).map_err(|_| "the PBKDF2 salt is not base64".to_owned())?;
            if digest.is_empty() || salt.is_empty() {
                return Err("the PBKDF2 value and salt must not be empty".into());
            }
            Ok(format!(
                "{PBKDF2_PREFIX}{}$i={iterations}${}${}",
                hmac.label(),
                STANDARD_NO_PAD.encode(salt),
                STANDARD_NO_PAD.encode(digest)
            ))
        }
        Exported::Sha256 { value, salt, salt_first } => {
            let digest = if value.len() == 64 {
                hex::decode(value).map_err(|_| "the SHA-256 value is not hex".to_owned())?
            } else {
                STANDARD.decode(value).map_err(|_| "the SHA-256 value is neither hex nor base64".to_owned())?
            };
            if digest.len() != 32 {
                return Err("a SHA-256 digest has 32 bytes".into());
            }
            let position = if salt_first { "prefix" } else { "suffix" };
            Ok(format!(
                "{SHA256_PREFIX}{position}${}${}",
                STANDARD_NO_PAD.encode(salt.as_bytes()),
                STANDARD_NO_PAD.encode(digest)
            ))
        }
    }
}

/// Whether `stored` is an imported hash (anything but the service's own Argon2id).
pub fn is_imported(stored: &str) -> bool {
    stored.starts_with("$2") || stored.starts_with(PBKDF2_PREFIX) || stored.starts_with(SHA256_PREFIX)
}

fn argon2_within_bounds(params: &Params) -> bool {
    params.m_cost() <= MAX_ARGON2_KIB && params.t_cost() <= MAX_ARGON2_PASSES
}

fn bcrypt_cost(stored: &str) -> Option<u32> {
    stored.split('$').nth(2)?.parse().ok()
}

/// What checking `stored` costs, roughly in microseconds of one core on the machines the bounds
/// were chosen on: enough to tell the costliest of a realm's imported hashes. `None` for a hash
/// that is never checked.
pub fn work(stored: &str) -> Option<u64> {
    if stored.starts_with("$2") {
        return bcrypt_cost(stored).filter(|cost| *cost <= MAX_BCRYPT_COST).map(|cost| 73_000 << cost >> 10);
    }
    if let Some(rest) = stored.strip_prefix(PBKDF2_PREFIX) {
        let mut parts = rest.split('$');
        let per_iteration_ns = match parts.next()? {
            "sha1" => 250,
            "sha256" => 370,
            _ => 720,
        };
        let iterations: u64 = parts.next()?.strip_prefix("i=")?.parse().ok()?;
        return Some(iterations * per_iteration_ns / 1000);
    }
    if stored.starts_with(SHA256_PREFIX) {
        return Some(1);
    }
    let parsed = PasswordHash::new(stored).ok()?;
    let params = Params::try_from(&parsed).ok().filter(argon2_within_bounds)?;
    Some(u64::from(params.m_cost()) * u64::from(params.t_cost()) * 77 / 100)
}

/// Whether `password` matches the imported hash `stored`. Blocking. A hash beyond the bounds
/// matches nothing: checking it would cost more than any sign-in may.
pub fn verify(password: &str, stored: &str) -> bool {
    if stored.starts_with("$2") {
        return bcrypt_cost(stored).is_some_and(|cost| cost <= MAX_BCRYPT_COST)
            && bcrypt::verify(password, stored).unwrap_or(false);
    }
    if let Some(rest) = stored.strip_prefix(PBKDF2_PREFIX) {
        return verify_pbkdf2(password, rest).unwrap_or(false);
    }
    if let Some(rest) = stored.strip_prefix(SHA256_PREFIX) {
        return verify_sha256(password, rest).unwrap_or(false);
    }
    // Argon2 of any variant, within the bounds, read from the hash itself.
    PasswordHash::new(stored).is_ok_and(|parsed| {
        Params::try_from(&parsed).is_ok_and(|params| argon2_within_bounds(&params))
            && Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok()
    })
}

fn verify_pbkdf2(password: &str, rest: &str) -> Option<bool> {
    let mut parts = rest.split('$');
    let hmac = match parts.next()? {
        "sha1" => Pbkdf2Digest::Sha1,
        "sha256" => Pbkdf2Digest::Sha256,
        "sha512" => Pbkdf2Digest::Sha512,
        _ => return None,
    };
    let iterations: u32 = parts.next()?.strip_prefix("i=")?.parse().ok()?;
    if iterations > hmac.max_iterations() {
        return Some(false);
    }
    let salt = STANDARD_NO_PAD.decode(parts.next()?).ok()?;
    let digest = STANDARD_NO_PAD.decode(parts.next()?).ok()?;
    let iterations = NonZeroU32::new(iterations)?;
    Some(aws_lc_rs::pbkdf2::verify(hmac.algorithm(), iterations, &salt, password.as_bytes(), &digest).is_ok())
}

fn verify_sha256(password: &str, rest: &str) -> Option<bool> {
    let mut parts = rest.split('$');
    let salt_first = parts.next()? == "prefix";
    let salt = STANDARD_NO_PAD.decode(parts.next()?).ok()?;
    let digest = STANDARD_NO_PAD.decode(parts.next()?).ok()?;
    let mut hasher = Sha256::new();
    if salt_first {
        hasher.update(&salt);
        hasher.update(password.as_bytes());
    } else {
        hasher.update(password.as_bytes());
        hasher.update(&salt);
    }
    Some(bool::from(hasher.finalize().as_slice().ct_eq(&digest)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWORD: &str = "correct horse battery staple";

    fn stored(exported: Exported<'_>) -> String {
        stored_form(&exported).unwrap_or_else(|why| panic!("{why}"))
    }

    #[test]
    fn bcrypt_hashes_verify_their_password_and_costs_are_bounded() {
        let hash = bcrypt::hash(PASSWORD, 4).unwrap();
        let kept = stored(Exported::Bcrypt(&hash));
        assert!(is_imported(&kept));
        assert!(verify(PASSWORD, &kept));
        assert!(!verify("correct horse battery stable", &kept));
        let costly = hash.replacen("$04$", "$13$", 1);
        assert!(stored_form(&Exported::Bcrypt(&costly)).is_err());
        assert!(!verify(PASSWORD, &costly), "a stored hash beyond the bounds is never checked");
        assert!(stored_form(&Exported::Bcrypt("$2b$10$short")).is_err());
    }

    #[test]
    fn argon2_hashes_of_any_variant_verify_with_their_own_parameters() {
        use argon2::password_hash::{PasswordHasher as _, SaltString};
        let salt = SaltString::encode_b64(b"sixteen byte salt").unwrap();
        let params = Params::new(8 * 1024, 3, 1, None).unwrap();
        let argon2i = Argon2::new(argon2::Algorithm::Argon2i, argon2::Version::V0x13, params);
        let hash = argon2i.hash_password(PASSWORD.as_bytes(), &salt).unwrap().to_string();
        let kept = stored(Exported::Argon2(&hash));
        assert!(verify(PASSWORD, &kept));
        assert!(!verify("wrong", &kept));
        // The hash of the attack: one wrong guess would cost 12 seconds of a core.
        let huge = hash.replace("m=8192,t=3", "m=262144,t=10");
        assert!(stored_form(&Exported::Argon2(&huge)).unwrap_err().contains("refused"));
        assert!(!verify(PASSWORD, &huge), "nor checked when it was stored before the bounds held");
        let rfc = hash.replace("m=8192,t=3", "m=65536,t=3");
        assert!(stored_form(&Exported::Argon2(&rfc)).is_ok(), "RFC 9106's costlier recommendation");
        let longer = hash.replace("m=8192,t=3", "m=65536,t=4");
        assert!(stored_form(&Exported::Argon2(&longer)).is_err());
        assert!(stored_form(&Exported::Argon2("$scrypt$ln=16,r=8,p=1$c2FsdA$aGFzaA")).is_err());
    }

    #[test]
    fn keycloak_pbkdf2_credentials_of_each_digest_verify() {
        let salt = b"0123456789abcdef";
        for (digest, length, prefix) in [
            (Pbkdf2Digest::Sha512, 64, "$pbkdf2-sha512$i=27500$"),
            (Pbkdf2Digest::Sha256, 32, "$pbkdf2-sha256$i=27500$"),
            (Pbkdf2Digest::Sha1, 20, "$pbkdf2-sha1$i=27500$"),
        ] {
            let mut derived = vec![0u8; length];
            let iterations = NonZeroU32::new(27_500).unwrap();
            aws_lc_rs::pbkdf2::derive(digest.algorithm(), iterations, salt, PASSWORD.as_bytes(), &mut derived);
            let (value, salt) = (STANDARD.encode(&derived), STANDARD.encode(salt));
            let kept = stored(Exported::Pbkdf2 { digest, value: &value, salt: &salt, iterations: 27_500 });
            assert!(kept.starts_with(prefix), "{kept}");
            assert!(verify(PASSWORD, &kept));
            assert!(!verify("wrong", &kept));
            let other = if digest == Pbkdf2Digest::Sha1 { "sha256" } else { "sha1" };
            assert!(!verify(PASSWORD, &kept.replacen(digest.label(), other, 1)), "the digest is part of the hash");
            let slow = Exported::Pbkdf2 { digest, value: &value, salt: &salt, iterations: digest.max_iterations() + 1 };
            assert!(stored_form(&slow).is_err());
            let bound = Exported::Pbkdf2 { digest, value: &value, salt: &salt, iterations: digest.max_iterations() };
            assert!(stored_form(&bound).is_ok());
        }
        assert_eq!(Pbkdf2Digest::named("pbkdf2"), Some(Pbkdf2Digest::Sha1));
        assert_eq!(Pbkdf2Digest::named("pbkdf2-md5"), None);
    }

    #[test]
    fn the_costliest_hash_is_told_apart_by_its_estimated_work() {
        let bcrypt10 = "$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy";
        let bcrypt12 = bcrypt10.replacen("$10$", "$12$", 1);
        let pbkdf2 = "$pbkdf2-sha512$i=210000$c2FsdA$aGFzaA";
        let argon2 = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA";
        let costs: Vec<u64> = [bcrypt10, &bcrypt12, pbkdf2, argon2].iter().map(|h| work(h).unwrap()).collect();
        assert!(costs[1] > costs[0] && costs[0] > costs[3], "{costs:?}");
        assert!(costs[2] > costs[3], "{costs:?}");
        assert_eq!(work(&bcrypt10.replacen("$10$", "$13$", 1)), None, "beyond the bounds");
    }

    #[test]
    fn salted_sha256_verifies_with_the_salt_on_its_side() {
        let digest = hex::encode(Sha256::digest(format!("pepper{PASSWORD}").as_bytes()));
        let before = stored(Exported::Sha256 { value: &digest, salt: "pepper", salt_first: true });
        assert!(verify(PASSWORD, &before));
        let after = stored(Exported::Sha256 { value: &digest, salt: "pepper", salt_first: false });
        assert!(!verify(PASSWORD, &after), "the salt's side matters");
        let encoded = STANDARD.encode(Sha256::digest(format!("{PASSWORD}pepper").as_bytes()));
        let suffixed = stored(Exported::Sha256 { value: &encoded, salt: "pepper", salt_first: false });
        assert!(verify(PASSWORD, &suffixed));
        assert!(stored_form(&Exported::Sha256 { value: "abcd", salt: "", salt_first: true }).is_err());
    }
}
