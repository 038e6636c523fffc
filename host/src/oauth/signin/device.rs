//! The device authorization grant (RFC 8628), for agents and devices without a browser: the
//! client asks for a device code and a user code; the person opens the verification page on any
//! browser, types the user code, signs in like at any login page (attack protection, lockout and
//! all) and approves what the client asked for; meanwhile the client polls the token endpoint
//! with its device code until the person has answered.
//!
//! The user code is eight letters of an alphabet without vowels (no words, no look-alikes),
//! shown as `BCDF-GHJK`; both codes are kept as keyed hashes. Entering user codes is limited per
//! source address (by the edge) and refused to a source attack protection blocked; a device code
//! lives ten minutes; a client polling faster than its interval is told `slow_down` and its
//! interval grows by five seconds; the tokens are handed out once.

use chrono::{DateTime, TimeDelta, Utc};
use rand::Rng as _;

use super::browser::{Authorization, Opening};
use super::{Granted, Origin, Refusal, SignInError, Tokens};
use crate::kernel::crypto::generate_secret;
use crate::protection::Hold;
use crate::protection::Protection;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::browser::BrowserSession;
use crate::store::clients::{Client, GrantType};
use crate::store::devices::{self, DeviceAuthorization, DeviceStatus};
use crate::store::realms::Realm;
use crate::store::users::User;

/// How long a device may wait for the person's answer.
pub const LIFETIME: TimeDelta = TimeDelta::minutes(10);
/// The seconds a device waits between two polls, at first.
pub const INTERVAL_SECONDS: i64 = 5;
/// The letters of user codes: no vowels, so that no code spells a word, and none that reads as a
/// digit.
const ALPHABET: &[u8] = b"BCDFGHJKLMNPQRSTVWXZ";
const USER_CODE_LETTERS: usize = 8;

/// A device authorization just started: what the device is told.
#[derive(Debug)]
pub struct Started {
    pub device_code: String,
    /// As shown to the person: `BCDF-GHJK`.
    pub user_code: String,
    pub expires_in: i64,
    pub interval: i64,
}

/// A user code as the person may type it (any case, with or without its dash or spaces),
/// normalised; none when it cannot be one.
pub fn normalised(typed: &str) -> Option<String> {
    let letters: String = typed.chars().filter(|c| !matches!(c, '-' | ' ')).map(|c| c.to_ascii_uppercase()).collect();
    let valid = letters.len() == USER_CODE_LETTERS && letters.bytes().all(|b| ALPHABET.contains(&b));
    valid.then_some(letters)
}

fn new_user_code() -> String {
    let mut random = rand::rng();
    (0..USER_CODE_LETTERS).map(|_| char::from(ALPHABET[random.random_range(0..ALPHABET.len())])).collect()
}

/// The keyed hash a user code is found by: the realm's own, so that one realm's codes say nothing
/// of another's.
pub fn user_code_hash(context: &Context, realm: &Realm, user_code: &str) -> String {
    context.hasher.hash(&format!("device-user-code:{}:{user_code}", realm.id))
}

/// Starts a device authorization of `client` for `scopes` (the client's when none are named) and
/// the resource server at `resource`.
pub async fn start(
    context: &Context,
    realm: &Realm,
    client: &Client,
    scopes: Option<Vec<String>>,
    resource: Option<&str>,
) -> Result<Started, SignInError> {
    let server = super::requested_resource(context, client, resource).await.map_err(SignInError::from)?;
    let scopes = super::requested_scopes(client, scopes, true, server.as_ref())?;
    let now = context.clock.now();
    let device_code = generate_secret("cstl_dc_");
    for _ in 0..5 {
        let user_code = new_user_code();
        let device = DeviceAuthorization {
            device_code_hash: context.hasher.hash(&device_code),
            realm_id: realm.id.clone(),
            user_code_hash: user_code_hash(context, realm, &user_code),
            client_id: client.id.clone(),
            scopes: scopes.clone(),
            resource: server.as_ref().map(|server| server.address.clone()),
            status: DeviceStatus::Pending,
            session_id: None,
            interval_seconds: INTERVAL_SECONDS,
            polled_at: None,
            created_at: now,
            expires_at: now + LIFETIME,
        };
        if devices::insert(context.store.writer(), &device).await? {
            let shown = format!("{}-{}", &user_code[..4], &user_code[4..]);
            return Ok(Started {
                device_code,
                user_code: shown,
                expires_in: LIFETIME.num_seconds(),
                interval: INTERVAL_SECONDS,
            });
        }
    }
    Err(Error::Internal(anyhow::anyhow!("no free user code after five draws")).into())
}

/// The pending authorization a person's typed user code names, unless attack protection holds
/// the source; none for a code that is unknown, settled or expired.
pub async fn entered(
    context: &Context,
    protection: &Protection,
    realm: &Realm,
    typed: &str,
    origin: &Origin,
) -> Result<Option<DeviceAuthorization>, SignInError> {
    let now = context.clock.now();
    if protection.refuses(Hold::SourceBlocked, &realm.id, &origin.ip_address, now).await {
        return Err(Refusal::SourceBlocked.into());
    }
    let Some(user_code) = normalised(typed) else { return Ok(None) };
    pending(context, realm, &user_code_hash(context, realm, &user_code), now).await.map_err(SignInError::from)
}

/// The pending authorization whose user code hashes to `user_code_hash`.
pub async fn pending(
    context: &Context,
    realm: &Realm,
    user_code_hash: &str,
    now: DateTime<Utc>,
) -> Result<Option<DeviceAuthorization>, Error> {
    Ok(devices::pending_by_user_code(context.store.pool(), &realm.id, user_code_hash, now).await?)
}

/// The person approves the device: the client session opens (`login_succeeded`), and the
/// device's next poll gets the tokens. `false` when the authorization was answered or expired
/// meanwhile.
pub async fn approve(
    context: &Context,
    realm: &Realm,
    authorization: &Authorization,
    device: &DeviceAuthorization,
    (browser, user): (&BrowserSession, &User),
    origin: &Origin,
) -> Result<bool, Error> {
    let now = context.clock.now();
    let opening = Opening { realm, authorization, browser, user, origin, grant_type: GrantType::DeviceCode };
    let session = opening.session(now);
    let mut tx = context.store.begin().await?;
    let approved =
        devices::settle(&mut *tx, &device.device_code_hash, DeviceStatus::Approved, Some(&session.id), now).await?;
    if !approved {
        return Ok(false);
    }
    opening.open(&mut tx, &session, now).await?;
    tx.commit().await?;
    Ok(true)
}

/// The person denies the device: its next poll is told `access_denied`.
pub async fn deny(context: &Context, device: &DeviceAuthorization) -> Result<bool, Error> {
    let now = context.clock.now();
    Ok(devices::settle(context.store.writer(), &device.device_code_hash, DeviceStatus::Denied, None, now).await?)
}

/// A device code presented at the token endpoint by its client.
#[derive(Debug, Clone, Copy)]
pub struct Poll<'a> {
    pub realm: &'a Realm,
    pub client: &'a Client,
    pub device_code: &'a str,
    /// The thumbprint of the DPoP key the tokens are bound to.
    pub dpop_jkt: Option<&'a str>,
}

/// Answers a device's poll (RFC 8628 §3.5): the tokens once, after the person approved;
/// `authorization_pending` before; `slow_down` to a device polling faster than its interval.
pub async fn poll(context: &Context, poll: Poll<'_>) -> Result<Tokens, SignInError> {
    let Poll { realm, client, device_code, dpop_jkt } = poll;
    let now = context.clock.now();
    let hash = context.hasher.hash(device_code);
    let device = devices::find(context.store.pool(), &realm.id, &hash)
        .await?
        .filter(|device| device.client_id == client.id)
        .ok_or(Refusal::DeviceCodeUnknown)?;
    match device.status {
        DeviceStatus::Issued => return Err(Refusal::DeviceCodeUnknown.into()),
        DeviceStatus::Denied => return Err(Refusal::DeviceDenied.into()),
        DeviceStatus::Pending | DeviceStatus::Approved if device.expires_at <= now => {
            return Err(Refusal::DeviceExpired.into());
        }
        DeviceStatus::Pending | DeviceStatus::Approved => {}
    }
    let interval = TimeDelta::seconds(device.interval_seconds);
    if device.polled_at.is_some_and(|last| now - last < interval) {
        let slower = device.interval_seconds + 5;
        devices::polled(context.store.writer(), &hash, slower, now).await?;
        return Err(Refusal::DeviceSlowDown.into());
    }
    devices::polled(context.store.writer(), &hash, device.interval_seconds, now).await?;
    if device.status == DeviceStatus::Pending {
        return Err(Refusal::DevicePending.into());
    }
    if !devices::issue(context.store.writer(), &hash).await? {
        return Err(Refusal::DeviceCodeUnknown.into());
    }
    let Some(session_id) = &device.session_id else { return Err(Refusal::DeviceCodeUnknown.into()) };
    let resource = device.resource.as_deref();
    let granted = Granted { scopes: &device.scopes, resource, refresh: None, nonce: None, dpop_jkt };
    super::redeem(context, (realm, client), session_id, granted, Refusal::DeviceCodeUnknown).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_code_is_typed_in_any_case_with_or_without_its_dash() {
        assert_eq!(normalised("bcdf-ghjk").as_deref(), Some("BCDFGHJK"));
        assert_eq!(normalised(" BCDF GHJK ").as_deref(), Some("BCDFGHJK"));
        assert_eq!(normalised("BCDFGHJ"), None, "too short");
        assert_eq!(normalised("ABCDEFGH"), None, "vowels are not in the alphabet");
        let drawn = new_user_code();
        assert_eq!(normalised(&drawn).as_deref(), Some(drawn.as_str()));
    }
}
