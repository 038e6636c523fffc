//! The second step of a browser sign-in: after the right password, a person with an authenticator
//! app is asked for a code it shows, or for one of their recovery codes, before the browser is
//! signed in. The step carries a ticket sealed with the deployment key (the person, the realm and
//! the client, for five minutes); each wrong code counts against the realm lockout as a wrong
//! password does, so a locked second factor is answered as a locked account is, and a code is
//! accepted once.

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use super::login_events::{Login, login_data, publish};
use super::{Counting, Opens, Origin, PasswordOutcome, Refusal, SignIn, SignInError, count_failure, open};
use crate::oauth::second_factors::{recovery_codes, totp};
use crate::protection::{Hold, Protection};
use crate::runtime::context::Context;
use crate::store::authenticators::{self as authenticator_store, AuthenticatorKind};
use crate::store::clients::{Client, GrantType};
use crate::store::events::EventType;
use crate::store::lockout;
use crate::store::realms::Realm;
use crate::store::users::{self as user_store, User, UserStatus};

/// How long the step waits for a code after the password.
pub const TICKET_SECONDS: i64 = 300;
const TICKET_SEAL: &str = "second factor tickets";

/// What a ticket seals.
#[derive(Serialize, Deserialize)]
struct Ticket {
    realm: String,
    client: String,
    user: String,
    expires: i64,
}

/// Whether the person's sign-in asks for a code: they have an authenticator app.
pub(super) async fn asked_of(context: &Context, user_id: &str) -> Result<bool, crate::runtime::error::Error> {
    let all = authenticator_store::of_user(context.store.pool(), user_id).await?;
    Ok(all.iter().any(|a| a.kind == AuthenticatorKind::Totp))
}

/// The ticket of a sign-in whose password was right.
pub(super) fn ticket(context: &Context, realm: &Realm, client: &Client, user: &User, now: DateTime<Utc>) -> String {
    let ticket = Ticket {
        realm: realm.id.to_string(),
        client: client.id.to_string(),
        user: user.id.to_string(),
        expires: (now + TimeDelta::seconds(TICKET_SECONDS)).timestamp(),
    };
    let plain = serde_json::to_vec(&ticket).unwrap_or_else(|_| unreachable!("a ticket serialises"));
    context.hasher.sealer(TICKET_SEAL).seal(&plain)
}

/// A code typed on the second step.
#[derive(Debug, Clone, Copy)]
pub struct CodeAttempt<'a> {
    pub realm: &'a Realm,
    pub client: &'a Client,
    pub ticket: &'a str,
    pub code: &'a str,
    pub origin: &'a Origin,
}

/// Checks the code of the second step and, when it is right, signs the browser in with `pwd` and
/// `otp` (a recovery code: `pwd` and `mfa`).
pub async fn code(
    context: &Context,
    protection: &Protection,
    attempt: CodeAttempt<'_>,
) -> Result<PasswordOutcome, SignInError> {
    let CodeAttempt { realm, client, ticket, code, origin } = attempt;
    let now = context.clock.now();
    let address = origin.ip_address.as_str();
    if protection.refuses(Hold::SourceBlocked, &realm.id, address, now).await {
        return Err(Refusal::SourceBlocked.into());
    }
    let user = match opened(context, realm, client, ticket, now) {
        Some(user_id) => user_store::find(context.store.pool(), &realm.id, &user_id).await?,
        None => None,
    };
    let Some(user) = user else { return Err(Refusal::SecondFactorExpired.into()) };
    if user.status != UserStatus::Active {
        return Err(Refusal::UserDisabled.into());
    }
    let target = lockout::Target::Account { user_id: &user.id };
    let failures = lockout::failures(context.store.pool(), target, address).await?;
    if failures.as_ref().and_then(|f| f.locked_until).is_some_and(|until| until > now) {
        return Err(Refusal::LockedOut.into());
    }
    let methods: &[&str] = if totp::check(context, &user, code, now).await?.is_some() {
        &["pwd", "otp"]
    } else if recovery_codes::check(context, &user, code, now).await?.is_some() {
        &["pwd", "mfa"]
    } else {
        refuse(context, realm, client, &user, origin, failures, now).await?;
        return Err(Refusal::SecondFactorInvalid.into());
    };
    let tx = context.store.begin().await?;
    let signed_in = SignIn { realm, client, user: &user, scopes: &[], resource: None, methods, dpop_jkt: None };
    Ok(open(context, tx, &signed_in, origin, Opens::BrowserSession, now).await?)
}

/// The person a ticket names, when it is of this realm and client and still good.
fn opened(context: &Context, realm: &Realm, client: &Client, ticket: &str, now: DateTime<Utc>) -> Option<String> {
    let plain = context.hasher.sealer(TICKET_SEAL).open(ticket).ok()?;
    let ticket: Ticket = serde_json::from_slice(&plain).ok()?;
    let good =
        ticket.realm == realm.id.as_str() && ticket.client == client.id.as_str() && ticket.expires > now.timestamp();
    good.then_some(ticket.user)
}

/// Records a wrong code: `login_failed`, and a failure counted against the lockout.
async fn refuse(
    context: &Context,
    realm: &Realm,
    client: &Client,
    user: &User,
    origin: &Origin,
    failures: Option<lockout::Failures>,
    now: DateTime<Utc>,
) -> Result<(), SignInError> {
    let refusal = Refusal::SecondFactorInvalid;
    let login = Login {
        grant_type: GrantType::Password.as_str(),
        resource: None,
        user: Some(user),
        session_id: None,
        failure_reason: Some(refusal.reason()),
        scopes: &[],
        methods: &["pwd", "otp"],
    };
    let mut tx = context.store.begin().await?;
    publish(&mut tx, realm, client, EventType::LoginFailed, login_data(login, origin), now).await?;
    context.metrics.sign_in_failed(refusal.reason());
    if realm.settings.lockout_enabled {
        let target = lockout::Target::Account { user_id: &user.id };
        let counting = Counting { realm, client, user: Some(user), target, address: &origin.ip_address };
        count_failure(context, &mut tx, &counting, failures, now).await?;
    }
    tx.commit().await?;
    Ok(())
}
