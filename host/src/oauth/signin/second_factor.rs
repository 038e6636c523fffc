//! The second step of a browser sign-in: after the right password, a person is asked for one of
//! the second factors the rule lets them use ([`super::factor_rule`]): a code their authenticator
//! app shows (or one of their recovery codes), their passkey (a sign-in of its own, see
//! [`super::passkey`]), or their phone's confirmation. The step carries a ticket sealed with the
//! deployment key (the person, the realm, the client and the factors it takes, for five minutes);
//! each wrong code counts against the realm lockout as a wrong password does, so a locked second
//! factor is answered as a locked account is, and a code is accepted once.

use chrono::{DateTime, Utc};

use super::factor_rule::Enrolled;
use super::login_events::{Login, login_data, publish};
use super::step_tickets;
use super::{Counting, Opens, Origin, PasswordOutcome, Refusal, SignIn, SignInError, count_failure, open, push};
use crate::oauth::second_factors::{recovery_codes, totp};
use crate::protection::detection::{AttemptKind, Outcome};
use crate::protection::incidents::{self, Attack, Recorded};
use crate::protection::{Hold, Protection, Seen};
use crate::runtime::context::Context;
use crate::store::clients::{Client, GrantType};
use crate::store::events::EventType;
use crate::store::lockout;
use crate::store::realms::Realm;
use crate::store::users::User;

const TICKET_SEAL: &str = "second factor tickets";

/// The ticket of a sign-in whose password was right, for the factors `choices` names.
pub(super) fn ticket(
    context: &Context,
    (realm, client, user): (&Realm, &Client, &User),
    choices: Enrolled,
    now: DateTime<Utc>,
) -> String {
    step_tickets::seal(context, TICKET_SEAL, (realm, client, user), choices, now)
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
    let user = ticket_user(context, realm, client, ticket, |choices| choices.app).await?;
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
        refuse(context, protection, (realm, client, &user), origin, failures, now).await?;
        return Err(Refusal::SecondFactorInvalid.into());
    };
    let tx = context.store.begin().await?;
    let signed_in = SignIn { realm, client, user: &user, scopes: &[], resource: None, methods, dpop_jkt: None };
    Ok(open(context, tx, &signed_in, origin, Opens::BrowserSession, now).await?)
}

/// Asks the person's phone to confirm the sign-in of the second step, where the step takes it:
/// the browser then waits for the phone as after a password whose one factor is a phone.
pub async fn phone(
    context: &Context,
    protection: &Protection,
    (realm, client): (&Realm, &Client),
    ticket: &str,
    origin: &Origin,
) -> Result<PasswordOutcome, SignInError> {
    let now = context.clock.now();
    if protection.refuses(Hold::SourceBlocked, &realm.id, &origin.ip_address, now).await {
        return Err(Refusal::SourceBlocked.into());
    }
    let user = ticket_user(context, realm, client, ticket, |choices| choices.phone).await?;
    let signed_in =
        SignIn { realm, client, user: &user, scopes: &[], resource: None, methods: &["pwd"], dpop_jkt: None };
    let mut tx = context.store.begin().await?;
    let (asked, deliveries) = push::ask(protection, &mut tx, &signed_in, origin, now).await?;
    tx.commit().await?;
    push::deliver(context, deliveries);
    Ok(PasswordOutcome::ConfirmationAsked(asked))
}

/// The factors a ticket of this realm and client takes, while it is good.
pub fn choices(context: &Context, realm: &Realm, client: &Client, ticket: &str) -> Option<Enrolled> {
    step_tickets::open(context, TICKET_SEAL, (realm, client), ticket).map(|(_, choices)| choices)
}

/// The Active person a good ticket names, where it takes the factor `takes` picks; else why not.
async fn ticket_user(
    context: &Context,
    realm: &Realm,
    client: &Client,
    ticket: &str,
    takes: impl Fn(&Enrolled) -> bool,
) -> Result<User, SignInError> {
    let opened = step_tickets::open::<Enrolled>(context, TICKET_SEAL, (realm, client), ticket);
    let user_id = opened.filter(|(_, choices)| takes(choices)).map(|(user_id, _)| user_id);
    step_tickets::person(context, realm, user_id.as_deref()).await
}

/// Records a wrong code: `login_failed`, a failure counted against the lockout, and the attempt
/// as attack protection sees it (wrong codes after the right password, from addresses the account
/// was never approved at, expose that password).
async fn refuse(
    context: &Context,
    protection: &Protection,
    (realm, client, user): (&Realm, &Client, &User),
    origin: &Origin,
    failures: Option<lockout::Failures>,
    now: DateTime<Utc>,
) -> Result<(), SignInError> {
    let address = origin.ip_address.as_str();
    let approved = lockout::is_approved(context.store.pool(), &user.id, address).await?;
    let seen = Seen {
        realm_id: &realm.id,
        kind: AttemptKind::SecondFactor,
        outcome: Outcome::Failed,
        source: address,
        account: &user.id,
        account_known: true,
        approved,
    };
    let decision = protection.judge(&context.store, &seen, now).await?;
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
    let recorded = match &decision {
        Some(decision) => {
            let attack = Attack { realm, client, user: Some(user), address };
            incidents::record(context, protection, &mut tx, &attack, decision, now).await?
        }
        None => Recorded::default(),
    };
    publish(&mut tx, realm, client, EventType::LoginFailed, login_data(login, origin), now).await?;
    context.metrics.sign_in_failed(refusal.reason());
    if realm.settings.lockout_enabled {
        let target = lockout::Target::Account { user_id: &user.id };
        let counting = Counting { realm, client, user: Some(user), target, address: &origin.ip_address };
        count_failure(context, &mut tx, &counting, failures, now).await?;
    }
    tx.commit().await?;
    crate::protection::send_letters(context, recorded.letters);
    Ok(())
}
