//! Time-based one-time passwords: RFC 6238's TOTP over RFC 4226's HOTP, the codes an
//! authenticator app shows. A code is the HMAC of the number of periods since the epoch (the
//! step), truncated to six or eight digits. Apps default to HMAC-SHA1, six digits and 30 seconds;
//! secrets imported from elsewhere may say otherwise, and keep their parameters.
//!
//! A code is accepted at the current step or one step either side (a clock a little off, a code
//! typed as it turned over), and only at a step later than the last one accepted, so a code seen
//! over a shoulder cannot be used again.

use aws_lc_rs::hmac;
use data_encoding::BASE32_NOPAD;
use rand::RngCore as _;
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq as _;

/// The purpose of the deployment key's sealer for TOTP secrets at rest.
pub const SECRET_SEAL: &str = "totp secrets";
/// Apps a person may keep at once.
pub const MAX_APPS: usize = 10;

/// The secret of a new factor: 160 bits, HMAC-SHA1's block-free key size RFC 4226 recommends.
const NEW_SECRET_BYTES: usize = 20;
/// Imported secrets shorter than this are refused: RFC 4226 asks for at least 128 bits.
const MIN_SECRET_BYTES: usize = 16;
/// And longer than this: no app writes more than a SHA-512 block.
const MAX_SECRET_BYTES: usize = 128;
/// Steps accepted either side of the current one.
const DRIFT_STEPS: i64 = 1;

/// The HMAC of a factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "UPPERCASE")]
pub enum Algorithm {
    #[default]
    Sha1,
    Sha256,
    Sha512,
}

impl Algorithm {
    fn hmac(self) -> hmac::Algorithm {
        match self {
            Self::Sha1 => hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY,
            Self::Sha256 => hmac::HMAC_SHA256,
            Self::Sha512 => hmac::HMAC_SHA512,
        }
    }

    /// Its name in an `otpauth://` URI and in Keycloak's export.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sha1 => "SHA1",
            Self::Sha256 => "SHA256",
            Self::Sha512 => "SHA512",
        }
    }

    /// Reads `SHA1`, `HmacSHA1` (Keycloak's spelling) and the like, in any case.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.to_ascii_uppercase();
        match text.strip_prefix("HMAC").unwrap_or(&text) {
            "SHA1" => Some(Self::Sha1),
            "SHA256" => Some(Self::Sha256),
            "SHA512" => Some(Self::Sha512),
            _ => None,
        }
    }
}

/// How a factor's codes are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parameters {
    pub algorithm: Algorithm,
    /// 6 or 8.
    pub digits: u32,
    /// Seconds a code lasts: 30 in every app, 60 in some imports.
    pub period: i64,
}

impl Default for Parameters {
    fn default() -> Self {
        Self { algorithm: Algorithm::Sha1, digits: 6, period: 30 }
    }
}

impl Parameters {
    /// The parameters of an imported factor, checked: six or eight digits, a period of 15 to 300
    /// seconds.
    pub fn checked(algorithm: Algorithm, digits: u32, period: i64) -> Result<Self, TotpError> {
        if !matches!(digits, 6 | 8) {
            return Err(TotpError::Digits);
        }
        if !(15..=300).contains(&period) {
            return Err(TotpError::Period);
        }
        Ok(Self { algorithm, digits, period })
    }
}

/// Why a secret or its parameters were refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TotpError {
    #[error("the secret is not base32")]
    NotBase32,
    #[error("the secret must hold {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes")]
    SecretLength,
    #[error("a code has 6 or 8 digits")]
    Digits,
    #[error("a code lasts 15 to 300 seconds")]
    Period,
}

/// A factor's shared secret with its parameters. Its `Debug` never shows the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Totp {
    secret: Vec<u8>,
    parameters: Parameters,
}

impl std::fmt::Debug for Totp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Totp").field("parameters", &self.parameters).finish_non_exhaustive()
    }
}

impl Totp {
    /// A new factor's secret, with the parameters every app reads.
    pub fn generate() -> Self {
        let mut secret = vec![0; NEW_SECRET_BYTES];
        rand::rng().fill_bytes(&mut secret);
        Self { secret, parameters: Parameters::default() }
    }

    /// A secret written in base32, as apps and exports write it: any case, spaces and padding
    /// ignored.
    pub fn from_base32(text: &str, parameters: Parameters) -> Result<Self, TotpError> {
        let normal: String =
            text.chars().filter(|c| !c.is_ascii_whitespace() && *c != '=').map(|c| c.to_ascii_uppercase()).collect();
        let secret = BASE32_NOPAD.decode(normal.as_bytes()).map_err(|_| TotpError::NotBase32)?;
        if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&secret.len()) {
            return Err(TotpError::SecretLength);
        }
        Ok(Self { secret, parameters })
    }

    /// The secret in base32 without padding: what a person types into an app that cannot scan.
    pub fn base32(&self) -> String {
        BASE32_NOPAD.encode(&self.secret)
    }

    pub fn parameters(&self) -> Parameters {
        self.parameters
    }

    /// The step (the number of periods since the epoch) of the instant `unix_seconds`.
    pub fn step_at(&self, unix_seconds: i64) -> i64 {
        unix_seconds.div_euclid(self.parameters.period)
    }

    /// The code of `step` (RFC 4226 section 5.3: dynamic truncation).
    pub fn code(&self, step: i64) -> String {
        let key = hmac::Key::new(self.parameters.algorithm.hmac(), &self.secret);
        let tag = hmac::sign(&key, &step.to_be_bytes());
        let mac = tag.as_ref();
        let offset = usize::from(mac[mac.len() - 1] & 0x0f);
        let binary = u32::from_be_bytes([mac[offset] & 0x7f, mac[offset + 1], mac[offset + 2], mac[offset + 3]]);
        let digits = self.parameters.digits as usize;
        format!("{:0digits$}", binary % 10u32.pow(self.parameters.digits))
    }

    /// The step at which `code` is right at `unix_seconds`, one step either side accepted, and
    /// only a step after `last_used` (the step of the last code accepted). `None` for a wrong
    /// code, a code used already, or one not of digits. Each candidate is compared in constant
    /// time.
    pub fn verify(&self, code: &str, unix_seconds: i64, last_used: Option<i64>) -> Option<i64> {
        let code = code.trim();
        if code.len() != self.parameters.digits as usize || !code.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let now = self.step_at(unix_seconds);
        let mut matched = None;
        for step in now - DRIFT_STEPS..=now + DRIFT_STEPS {
            let right = bool::from(self.code(step).as_bytes().ct_eq(code.as_bytes()));
            if right && last_used.is_none_or(|last| step > last) {
                matched = Some(step);
            }
        }
        matched
    }

    /// The `otpauth://` URI an app scans (Google Authenticator's key URI format): the label is
    /// `issuer:account`, and the issuer is repeated as a parameter, as apps expect.
    pub fn uri(&self, issuer: &str, account: &str) -> String {
        let label = format!("{}:{}", escape(issuer), escape(account));
        let Parameters { algorithm, digits, period } = self.parameters;
        format!(
            "otpauth://totp/{label}?secret={}&issuer={}&algorithm={}&digits={digits}&period={period}",
            self.base32(),
            escape(issuer),
            algorithm.as_str()
        )
    }

    /// The raw secret, to be sealed for storage.
    pub fn secret(&self) -> &[u8] {
        &self.secret
    }

    /// A factor from its unsealed secret and stored parameters.
    pub fn from_secret(secret: Vec<u8>, parameters: Parameters) -> Result<Self, TotpError> {
        if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&secret.len()) {
            return Err(TotpError::SecretLength);
        }
        Ok(Self { secret, parameters })
    }
}

/// Percent-encodes all but RFC 3986's unreserved characters.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238 appendix B: the seeds of its test vectors, ASCII "1234567890" repeated to the
    /// hash's size, eight digits, 30 seconds.
    fn rfc_6238(algorithm: Algorithm) -> Totp {
        let length = match algorithm {
            Algorithm::Sha1 => 20,
            Algorithm::Sha256 => 32,
            Algorithm::Sha512 => 64,
        };
        let secret = b"1234567890".iter().copied().cycle().take(length).collect();
        Totp::from_secret(secret, Parameters { algorithm, digits: 8, period: 30 }).unwrap()
    }

    #[test]
    fn codes_are_those_of_rfc_6238() {
        let vectors = [
            (59, "94287082", "46119246", "90693936"),
            (1_111_111_109, "07081804", "68084774", "25091201"),
            (1_111_111_111, "14050471", "67062674", "99943326"),
            (1_234_567_890, "89005924", "91819424", "93441116"),
            (2_000_000_000, "69279037", "90698825", "38618901"),
            (20_000_000_000, "65353130", "77737706", "47863826"),
        ];
        for (time, sha1, sha256, sha512) in vectors {
            for (algorithm, expected) in
                [(Algorithm::Sha1, sha1), (Algorithm::Sha256, sha256), (Algorithm::Sha512, sha512)]
            {
                let totp = rfc_6238(algorithm);
                assert_eq!(totp.code(totp.step_at(time)), expected, "{algorithm:?} at {time}");
            }
        }
    }

    #[test]
    fn one_step_of_drift_is_accepted_each_way_and_no_more() {
        let totp = Totp::generate();
        let now = 1_800_000_015;
        let step = totp.step_at(now);
        for (offset, accepted) in [(-2, false), (-1, true), (0, true), (1, true), (2, false)] {
            let code = totp.code(step + offset);
            assert_eq!(totp.verify(&code, now, None).is_some(), accepted, "offset {offset}");
        }
    }

    #[test]
    fn a_code_is_accepted_once_and_no_earlier_code_after_it() {
        let totp = Totp::generate();
        let now = 1_800_000_015;
        let step = totp.step_at(now);
        let used = totp.verify(&totp.code(step), now, None).unwrap();
        assert_eq!(used, step);
        assert_eq!(totp.verify(&totp.code(step), now, Some(used)), None, "the same code again");
        assert_eq!(totp.verify(&totp.code(step - 1), now, Some(used)), None, "the code before it");
        assert_eq!(totp.verify(&totp.code(step + 1), now, Some(used)), Some(step + 1), "the next one");
    }

    #[test]
    fn codes_not_of_digits_or_of_another_length_are_wrong() {
        let totp = Totp::generate();
        let now = 1_800_000_015;
        let code = totp.code(totp.step_at(now));
        assert!(totp.verify(&format!(" {code} "), now, None).is_some(), "spaces around are forgiven");
        assert_eq!(totp.verify(&code[..5], now, None), None);
        assert_eq!(totp.verify(&format!("{code}0"), now, None), None);
        assert_eq!(totp.verify("12345a", now, None), None);
        assert_eq!(totp.verify("", now, None), None);
    }

    #[test]
    fn secrets_read_as_apps_write_them() {
        let totp = Totp::generate();
        let written = totp.base32().to_lowercase();
        let spaced: String =
            written.as_bytes().chunks(4).map(|c| std::str::from_utf8(c).unwrap()).collect::<Vec<_>>().join(" ");
        assert_eq!(Totp::from_base32(&spaced, Parameters::default()).unwrap(), totp);
        assert_eq!(Totp::from_base32("not base32!", Parameters::default()), Err(TotpError::NotBase32));
        assert_eq!(Totp::from_base32("GEZDGNBV", Parameters::default()), Err(TotpError::SecretLength));
    }

    #[test]
    fn the_uri_names_the_issuer_twice_and_escapes_the_label() {
        let totp = Totp::from_base32("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", Parameters::default()).unwrap();
        assert_eq!(
            totp.uri("Acme Corp", "ada@example.com"),
            "otpauth://totp/Acme%20Corp:ada%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ\
             &issuer=Acme%20Corp&algorithm=SHA1&digits=6&period=30"
        );
    }

    #[test]
    fn parameters_outside_what_apps_use_are_refused() {
        assert_eq!(Parameters::checked(Algorithm::Sha1, 7, 30), Err(TotpError::Digits));
        assert_eq!(Parameters::checked(Algorithm::Sha1, 6, 5), Err(TotpError::Period));
        assert!(Parameters::checked(Algorithm::Sha256, 8, 60).is_ok());
        assert_eq!(Algorithm::parse("HmacSHA256"), Some(Algorithm::Sha256));
        assert_eq!(Algorithm::parse("sha1"), Some(Algorithm::Sha1));
        assert_eq!(Algorithm::parse("MD5"), None);
    }
}
