//! Enrolling an app that shows one-time passwords. The enrolment is two steps and keeps nothing
//! until the second: `begin` makes a secret and answers it (as text, as an `otpauth://` URI for a
//! QR code, and sealed in an enrolment token bound to the person and lasting ten minutes);
//! `confirm` takes the token back with a code the app now shows, and only then is the factor
//! kept, its secret sealed at rest. A person's first second factor comes with ten recovery codes,
//! shown once.

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use super::{AuthenticatorView, By, announce, checked_name, recovery_codes, refused};
use crate::kernel::ids::AuthenticatorId;
use crate::kernel::totp::{Parameters, Totp};
use crate::kernel::validate::Rule;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::authenticators::{self as store, Authenticator, AuthenticatorKind};
use crate::store::events::EventType;
use crate::store::realms::Realm;
use crate::store::users::User;

/// How long an enrolment waits for its code.
pub const ENROLMENT_SECONDS: i64 = 600;
pub use crate::kernel::totp::MAX_APPS;

/// The purposes of the deployment key's sealers: enrolment tokens, and secrets at rest.
const ENROLMENT_SEAL: &str = "totp enrolments";
use crate::kernel::totp::SECRET_SEAL;

/// A secret made for the person, waiting for a code from their app.
#[derive(Debug, Clone)]
pub struct Enrolment {
    /// Given back with the code: the sealed secret, bound to the person, until `expires_at`.
    pub token: String,
    /// The secret in base32, for an app that cannot scan.
    pub secret: String,
    /// The `otpauth://` URI a QR code carries.
    pub uri: String,
    pub parameters: Parameters,
    pub expires_at: DateTime<Utc>,
}

/// What the enrolment token seals.
#[derive(Serialize, Deserialize)]
struct Pending {
    realm: String,
    user: String,
    secret: String,
    expires: i64,
}

/// A kept factor, and the recovery codes made with it when it is the person's first.
#[derive(Debug, Clone)]
pub struct Confirmed {
    pub authenticator: AuthenticatorView,
    pub recovery_codes: Option<Vec<String>>,
}

/// Makes a secret for the person to add to an app. The issuer the app shows is the realm's name.
pub fn begin(context: &Context, realm: &Realm, user: &User) -> Enrolment {
    let totp = Totp::generate();
    let expires_at = context.clock.now() + TimeDelta::seconds(ENROLMENT_SECONDS);
    let pending = Pending {
        realm: realm.id.to_string(),
        user: user.id.to_string(),
        secret: totp.base32(),
        expires: expires_at.timestamp(),
    };
    let sealed = serde_json::to_vec(&pending).unwrap_or_else(|_| unreachable!("a pending enrolment serialises"));
    let token = context.hasher.sealer(ENROLMENT_SEAL).seal(&sealed);
    enrolment(realm, user, &totp, token, expires_at)
}

/// The enrolment `token` seals, again, while it is the person's and has not expired: what the
/// page shows once more after a wrong code.
pub fn pending(context: &Context, realm: &Realm, user: &User, token: &str) -> Option<Enrolment> {
    let pending = opened(context, realm, user, token, context.clock.now())?;
    let totp = Totp::from_base32(&pending.secret, Parameters::default()).ok()?;
    let expires_at = DateTime::from_timestamp(pending.expires, 0)?;
    Some(enrolment(realm, user, &totp, token.to_owned(), expires_at))
}

fn enrolment(realm: &Realm, user: &User, totp: &Totp, token: String, expires_at: DateTime<Utc>) -> Enrolment {
    let issuer = if realm.display_name.is_empty() { realm.id.as_str() } else { realm.display_name.as_str() };
    Enrolment {
        token,
        secret: totp.base32(),
        uri: totp.uri(issuer, &user.username),
        parameters: totp.parameters(),
        expires_at,
    }
}

/// What an enrolment token of the person seals, while it has not expired.
fn opened(context: &Context, realm: &Realm, user: &User, token: &str, now: DateTime<Utc>) -> Option<Pending> {
    let plain = context.hasher.sealer(ENROLMENT_SEAL).open(token).ok()?;
    let pending = serde_json::from_slice::<Pending>(&plain).ok()?;
    (pending.realm == realm.id.as_str() && pending.user == user.id.as_str() && pending.expires > now.timestamp())
        .then_some(pending)
}

/// Keeps the factor of an enrolment once `code` is right for it; `name` is what the person calls
/// the app ("Authenticator app" when not given).
pub async fn confirm(
    context: &Context,
    realm: &Realm,
    user: &User,
    token: &str,
    code: &str,
    name: Option<&str>,
) -> Result<Confirmed, Error> {
    let now = context.clock.now();
    let name = checked_name(name, "Authenticator app")?;
    let pending = opened(context, realm, user, token, now)
        .ok_or_else(|| refused("enrolment", Rule::Format, "the enrolment is unknown or has expired: begin again"))?;
    let totp = Totp::from_base32(&pending.secret, Parameters::default())
        .map_err(|_| refused("enrolment", Rule::Format, "the enrolment is unknown or has expired: begin again"))?;
    let step = totp
        .verify(code, now.timestamp(), None)
        .ok_or_else(|| refused("code", Rule::Format, "the code is not the one the app shows now"))?;

    let mut tx = context.store.begin().await?;
    let existing = store::of_user(&mut *tx, &user.id).await?;
    if existing.iter().filter(|a| a.kind == AuthenticatorKind::Totp).count() >= MAX_APPS {
        return Err(Error::Conflict(format!("a person may keep at most {MAX_APPS} authenticator apps")));
    }
    let authenticator = Authenticator {
        id: AuthenticatorId::fresh(),
        realm_id: realm.id.clone(),
        user_id: user.id.clone(),
        kind: AuthenticatorKind::Totp,
        name,
        secret_sealed: Some(context.hasher.sealer(SECRET_SEAL).seal(totp.secret())),
        data: serde_json::to_string(&totp.parameters()).unwrap_or_else(|_| unreachable!("parameters serialise")),
        counter: Some(step),
        // A keyed hash of the secret: an enrolment confirmed twice is refused by the realm's
        // uniqueness of credential ids.
        credential_id: Some(context.hasher.hash(&format!("totp {}", totp.base32()))),
        created_at: now,
        last_used_at: None,
    };
    if !store::insert(&mut *tx, &authenticator).await? {
        return Err(refused("enrolment", Rule::Duplicate, "this enrolment was confirmed already"));
    }
    announce(&mut tx, realm, user, &authenticator, EventType::AuthenticatorAdded, By::Owner, now).await?;
    let first = !existing.iter().any(|a| a.kind == AuthenticatorKind::RecoveryCodes);
    let codes = if first { Some(recovery_codes::make(context, &mut tx, realm, user, now).await?) } else { None };
    tx.commit().await?;
    Ok(Confirmed { authenticator: AuthenticatorView::of(&authenticator, None), recovery_codes: codes })
}

/// Checks a code from one of the person's apps at `now`: the app it came from, or `None` when no
/// app shows it (or it was accepted before). The code is used up by this check.
pub async fn check(
    context: &Context,
    user: &User,
    code: &str,
    now: DateTime<Utc>,
) -> Result<Option<AuthenticatorId>, Error> {
    let sealer = context.hasher.sealer(SECRET_SEAL);
    for authenticator in store::of_user(context.store.pool(), &user.id).await? {
        if authenticator.kind != AuthenticatorKind::Totp {
            continue;
        }
        let Some(totp) = unsealed(&sealer, &authenticator) else {
            tracing::error!(authenticator = %authenticator.id, "a TOTP secret cannot be opened with this deployment key");
            continue;
        };
        if let Some(step) = totp.verify(code, now.timestamp(), authenticator.counter)
            && store::use_step(context.store.pool(), &authenticator.id, step, now).await?
        {
            return Ok(Some(authenticator.id));
        }
    }
    Ok(None)
}

/// A stored factor's secret with its parameters.
fn unsealed(sealer: &crate::kernel::crypto::Sealer, authenticator: &Authenticator) -> Option<Totp> {
    let secret = sealer.open(authenticator.secret_sealed.as_deref()?).ok()?;
    let parameters = serde_json::from_str(&authenticator.data).ok()?;
    Totp::from_secret(secret, parameters).ok()
}
