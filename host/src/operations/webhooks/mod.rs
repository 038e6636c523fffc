//! Webhooks. Events are written to the
//! outbox in the transaction of the change they announce. The worker fans each one out once (its
//! payload built by the payload component, one attempt scheduled per subscribed endpoint), then
//! claims due attempts, signs and sends them, and records every outcome.

pub mod captures;
pub mod delivery;
pub mod endpoints;
pub mod figures;
pub mod payloads;

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chrono::TimeDelta;
use hmac::{Hmac, Mac};
use rand::{Rng, RngCore};
use sha2::Sha256;
use tokio::sync::Notify;

use self::payloads::PayloadBuilder;
use crate::kernel::crypto::{Sealer, SecretHasher};
use crate::runtime::outbound::PublicWeb;
use crate::store::events::EventType;
use crate::store::webhooks::EndpointKind;

/// Prefix of every signing secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// Days the delivery history (attempts and fanned-out events) is kept.
pub const HISTORY_DAYS: i64 = 30;

/// Retries wait at most this long.
const LONGEST_RETRY_DELAY_SECONDS: f64 = 6.0 * 3600.0;

/// The names of the events an endpoint of `kind` can subscribe to (`ping` is sent to every
/// endpoint by Send test and cannot be subscribed to).
pub fn subscribable(kind: EndpointKind) -> impl Iterator<Item = &'static str> {
    EventType::ALL.into_iter().filter(move |event| event.heard_by() == Some(kind)).map(EventType::as_str)
}

/// Whether an endpoint of `kind` hears events named `name`.
pub fn heard_by(kind: EndpointKind, name: &str) -> bool {
    EventType::named(name).and_then(EventType::heard_by) == Some(kind)
}

/// A new signing secret: `whsec_` and 32 random bytes in standard base64, so that receivers of
/// both schools read it as they expect (Stripe's verifiers key with the whole string, Standard
/// Webhooks libraries with the bytes the base64 stands for).
pub fn mint_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes))
}

fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

/// The `X-Service-Signature` header (Stripe's scheme): `t=<unix seconds>,v1=<hex HMAC-SHA256 of
/// "<t>.<body>">`, keyed with the whole secret, `whsec_` prefix included.
pub fn signature(secret: &str, t: i64, body: &[u8]) -> String {
    let mac = hmac_sha256(secret.as_bytes(), &[t.to_string().as_bytes(), b".", body]);
    format!("t={t},v1={}", hex::encode(mac))
}

/// The `webhook-signature` header (Standard Webhooks): `v1,<base64 HMAC-SHA256 of
/// "<id>.<t>.<body>">`, keyed with the bytes the secret's base64 stands for. Secrets minted before
/// they were standard base64 are read in the URL-safe alphabet they were written in.
pub fn standard_signature(secret: &str, id: &str, t: i64, body: &[u8]) -> String {
    let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    let key = STANDARD
        .decode(encoded)
        .or_else(|_| URL_SAFE_NO_PAD.decode(encoded))
        .unwrap_or_else(|_| secret.as_bytes().to_vec());
    let mac = hmac_sha256(&key, &[id.as_bytes(), b".", t.to_string().as_bytes(), b".", body]);
    format!("v1,{}", STANDARD.encode(mac))
}

/// The wait before the `n`-th retry (n ≥ 1): first × 5^(n-1), at most 6 hours, varied by
/// `variation` (between -0.2 and 0.2), to the millisecond.
pub fn retry_delay(first_retry_after_seconds: i64, n: i64, variation: f64) -> TimeDelta {
    let exponent = i32::try_from((n - 1).clamp(0, 16)).unwrap_or(16);
    let base = (first_retry_after_seconds as f64 * 5f64.powi(exponent)).min(LONGEST_RETRY_DELAY_SECONDS);
    TimeDelta::milliseconds((base * (1.0 + variation.clamp(-0.2, 0.2)) * 1000.0).round() as i64)
}

/// A random variation of a retry delay, up to 20 % either way.
pub fn random_variation() -> f64 {
    rand::rng().random_range(-0.2..=0.2)
}

/// What the webhook machinery shares: the payload builder, the delivery client, the address
/// policy, and the bell that wakes the worker when something is due now.
#[derive(Clone)]
pub struct Webhooks {
    pub payloads: PayloadBuilder,
    /// The address-checked client the deliveries go through.
    pub web: PublicWeb,
    /// Seals and opens the endpoints' signing secrets.
    pub secrets: Arc<Sealer>,
    pub wake: Arc<Notify>,
}

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks").field("web", &self.web).finish_non_exhaustive()
    }
}

/// The key purpose the signing secrets are sealed under.
const SEALING_PURPOSE: &str = "webhook secrets";

impl Webhooks {
    pub fn new(
        settings: &crate::kernel::config::Settings,
        hasher: &SecretHasher,
        web: PublicWeb,
    ) -> anyhow::Result<Self> {
        let payloads = PayloadBuilder::load(settings.payloads_component.as_deref())?;
        let secrets = Arc::new(hasher.sealer(SEALING_PURPOSE));
        Ok(Self { payloads, web, secrets, wake: Arc::new(Notify::new()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_follows_the_published_scheme() {
        // Computed independently: printf '1700000000.{"id":"e"}' | openssl dgst -sha256 -hmac 'whsec_test'
        assert_eq!(
            signature("whsec_test", 1_700_000_000, br#"{"id":"e"}"#),
            "t=1700000000,v1=7d00fb8eebc2d72903387c74cb0a32f29849952b82c96e35325cc89d264f93c9"
        );
    }

    #[test]
    fn the_standard_signature_follows_the_standard_webhooks_scheme() {
        // The example of the Standard Webhooks specification's reference libraries.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            standard_signature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1_614_265_330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn a_minted_secret_is_standard_base64_of_32_bytes() {
        let secret = mint_secret();
        let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap();
        assert_eq!(STANDARD.decode(encoded).unwrap().len(), 32);
        assert_ne!(mint_secret(), secret);
    }

    #[test]
    fn retries_wait_five_times_longer_each_time_up_to_six_hours() {
        let minutes = |n| retry_delay(60, n, 0.0).num_minutes();
        assert_eq!([minutes(1), minutes(2), minutes(3), minutes(4), minutes(5)], [1, 5, 25, 125, 360]);
        assert_eq!(retry_delay(3600, 10, 0.0), TimeDelta::hours(6));
        assert_eq!(retry_delay(60, 1, 0.2), TimeDelta::seconds(72));
        assert_eq!(retry_delay(60, 1, -0.5), TimeDelta::seconds(48));
    }
}
