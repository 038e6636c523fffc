//! Enrolment at sign-in: where the rule asks every sign-in for a second factor
//! ([`super::factor_rule`]) and the person has none yet, their right password leads to a step
//! that has them add one (an authenticator app or a passkey; a passkey only where the rule is
//! phishing-resistant) before the browser is signed in, with the password and the new factor.
//!
//! The step carries a ticket of its own, sealed with the deployment key (the person, the realm,
//! the client, for five minutes); a second step's ticket, which would let a person with a factor
//! skip it, is never taken here. The person must still lack such a factor when the new one is
//! kept: a ticket cannot add a factor beside one the person enrolled meanwhile.

use chrono::{DateTime, Utc};

use super::factor_rule::Enrolled;
use super::step_tickets;
use super::{Opens, Origin, PasswordOutcome, Refusal, SignIn, SignInError, open};
use crate::oauth::second_factors::{passkeys, totp};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients::Client;
use crate::store::realms::{Realm, SecondFactor};
use crate::store::users::User;

const TICKET_SEAL: &str = "second factor enrolment tickets";

/// The ticket of a sign-in whose password was right and whose person must enrol a factor.
pub(super) fn ticket(
    context: &Context,
    (realm, client, user): (&Realm, &Client, &User),
    passkey_only: bool,
    now: DateTime<Utc>,
) -> String {
    step_tickets::seal(context, TICKET_SEAL, (realm, client, user), passkey_only, now)
}

/// The person a good ticket names, and whether only a passkey will do.
#[derive(Debug, Clone)]
pub struct Enrolling {
    pub user: User,
    pub passkey_only: bool,
}

/// The person of a ticket of this realm and client, while it is good and they still lack the
/// factor it asks them to add.
pub async fn enrolling(
    context: &Context,
    realm: &Realm,
    client: &Client,
    ticket: &str,
) -> Result<Enrolling, SignInError> {
    let opened = step_tickets::open::<bool>(context, TICKET_SEAL, (realm, client), ticket);
    let user = step_tickets::person(context, realm, opened.as_ref().map(|(user_id, _)| user_id.as_str())).await?;
    let passkey_only = opened.is_some_and(|(_, passkey_only)| passkey_only);
    let rule = if passkey_only { SecondFactor::PhishingResistant } else { SecondFactor::Always };
    let enrolled = Enrolled::of(context, &user.id, rule).await?;
    if enrolled.passkey || (!passkey_only && enrolled.app) {
        return Err(Refusal::SecondFactorExpired.into());
    }
    Ok(Enrolling { user, passkey_only })
}

/// Keeps the authenticator app of `enrolment` (see [`totp::begin`]) once `code` is right for it,
/// and signs the browser in with the password and the app. Answers the sign-in and the recovery
/// codes made with the person's first factor, to be shown once.
pub async fn app(
    context: &Context,
    (realm, client): (&Realm, &Client),
    enrolling: &Enrolling,
    (enrolment, code): (&str, &str),
    origin: &Origin,
) -> Result<(PasswordOutcome, Vec<String>), SignInError> {
    let Enrolling { user, passkey_only } = enrolling;
    if *passkey_only {
        return Err(Refusal::SecondFactorExpired.into());
    }
    let confirmed = match totp::confirm(context, realm, user, enrolment, code, None).await {
        Ok(confirmed) => confirmed,
        Err(Error::Validation(_) | Error::Conflict(_)) => return Err(Refusal::SecondFactorInvalid.into()),
        Err(failure) => return Err(failure.into()),
    };
    let outcome = signed_in(context, (realm, client, user), &["pwd", "otp"], origin).await?;
    Ok((outcome, confirmed.recovery_codes.unwrap_or_default()))
}

/// Keeps the passkey a browser created from options bound to `binding`, and signs the browser in
/// with the password and the passkey.
pub async fn passkey(
    context: &Context,
    (realm, client): (&Realm, &Client),
    enrolling: &Enrolling,
    (binding, credential): (&str, &str),
    origin: &Origin,
) -> Result<PasswordOutcome, SignInError> {
    let user = &enrolling.user;
    let methods = match passkeys::register(context, realm, user, binding, credential, None).await {
        Ok((_, methods)) => methods,
        Err(Error::Validation(_) | Error::Conflict(_)) => return Err(Refusal::PasskeyInvalid.into()),
        Err(failure) => return Err(failure.into()),
    };
    let mut with_password = vec!["pwd"];
    with_password.extend(methods.iter().filter(|method| **method != "pwd"));
    signed_in(context, (realm, client, user), &with_password, origin).await
}

async fn signed_in(
    context: &Context,
    (realm, client, user): (&Realm, &Client, &User),
    methods: &[&str],
    origin: &Origin,
) -> Result<PasswordOutcome, SignInError> {
    let now = context.clock.now();
    let tx = context.store.begin().await?;
    let signed_in = SignIn { realm, client, user, scopes: &[], resource: None, methods, dpop_jkt: None };
    Ok(open(context, tx, &signed_in, origin, Opens::BrowserSession, now).await?)
}
