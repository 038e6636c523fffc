//! Sign-in: a person's password sign-in (the realm lockout, smart lockout, exposed passwords,
//! confirmation on a phone), the session it opens and its tokens, refresh-token rotation and reuse,
//! and a client's sign-in with its own credentials. Every outcome commits with its
//! `login_succeeded` or `login_failed` event. The token endpoint calls these operations, and any
//! other edge that signs people in calls the same ones: the rules live here once.

pub mod assurance;
pub mod browser;
pub mod client_address;
pub mod client_refusals;
pub mod codes;
pub mod console;
pub mod console_sessions;
pub mod consumer_keys;
pub mod device;
pub mod enrolment;
pub mod factor_rule;
mod failures;
pub mod federated;
mod issuance;
mod login_events;
pub mod passkey;
pub mod push;
pub mod recovery;
mod refresh;
mod scopes;
pub mod second_factor;
pub mod sign_out;
pub mod signup;
mod step_tickets;
pub mod texts;

use chrono::{DateTime, TimeDelta, Utc};

use self::failures::{Counting, count_failure, even_out_refusal};
use self::issuance::{Granted, next_refresh, person_tokens, redeem};
pub use self::login_events::{Login, login_data};
use self::login_events::{publish, succeeded_event};
pub use self::refresh::{RefreshAttempt, refresh};
pub use self::scopes::{MAX_SCOPES, ResourceError, requested_resource, requested_scopes};
use crate::kernel::ids::SessionId;
use crate::oauth::tokens::{self, Grant, Issued, Subject};
use crate::protection::Protection;
use crate::protection::detection::{AttemptKind, Outcome};
use crate::protection::incidents::{self, Attack, Recorded};
use crate::protection::{Hold, Seen};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Transaction;
use crate::store::clients::{Client, GrantType};
use crate::store::events::EventType;
use crate::store::exposures;
use crate::store::lockout;
use crate::store::realms::Realm;
use crate::store::sessions::{self, Session};
use crate::store::users::{self as user_store, User, UserStatus};

/// Where a sign-in came from.
#[derive(Debug, Clone)]
pub struct Origin {
    pub ip_address: String,
    pub user_agent: Option<String>,
}

/// Why a sign-in was refused. Each edge answers every refusal in its own form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Attack protection blocked the source: answered like a rate limit, whatever was typed.
    SourceBlocked,
    /// A wrong password, a name the realm does not have, or a right password that must not count
    /// (an account closed to the address, a password exposed by an attack).
    InvalidCredentials,
    /// The realm lockout holds the account (or name) at this address.
    LockedOut,
    UserDisabled,
    /// A Full suspension of the person at the client is in force.
    Suspended,
    PasswordChangeRequired,
    /// Confirmation on a phone was asked of an account with none enrolled.
    PushDeviceMissing,
    InvalidRefreshToken,
    /// An exchanged refresh token came back: its session has ended.
    RefreshTokenReused,
    /// The refresh token is bound to a DPoP key, and the request has no proof by that key.
    RefreshTokenBoundToKey,
    /// Scopes the client may not request (for the resource, when one was named).
    ScopesNotAllowed {
        excess: Vec<String>,
        for_resource: bool,
    },
    /// Scopes beyond those a refresh token was granted.
    ScopesBeyondGrant {
        excess: Vec<String>,
    },
    /// No resource server this client may request tokens for has this address.
    ResourceNotAllowed {
        address: String,
    },
    /// No phone has answered the pushed request yet.
    PushPending,
    PushExpired,
    PushRefused,
    PushRequestUnknown,
    /// A phone answered a request that is not waiting for it (unknown, answered or lapsed).
    PushRequestNotWaiting,
    /// The client named by a public request is unknown or not Active, or an account client secret
    /// is unknown, wrong or expired.
    ClientUnknown,
    /// The client does not allow the address the request came from (its allowed IPs).
    ClientAddressNotAllowed,
    /// An account client secret was presented with another grant than `client_credentials`.
    SecretOnlyForClientCredentials,
    /// A reset code that is unknown, used or expired.
    RecoveryCodeInvalid,
    /// A new password shorter than the realm's minimum or longer than the service's maximum.
    PasswordLength {
        minimum: usize,
        maximum: usize,
    },
    /// A new password found in the list of breached passwords.
    PasswordBreached,
    /// An authorization code that is unknown, expired, or not the presenting client's, or presented
    /// with another redirect URI.
    InvalidAuthorizationCode,
    /// An authorization code presented a second time: the session it opened has ended.
    AuthorizationCodeReused,
    /// A PKCE verifier that is missing, malformed or does not match the code's challenge, or one
    /// sent for a code issued without a challenge.
    InvalidCodeVerifier,
    /// A code on the second step that no authenticator app of the person shows (or showed before)
    /// and that is none of their unused recovery codes.
    SecondFactorInvalid,
    /// A person with an authenticator app signing in where no second step can ask for its code
    /// (the password grant without a phone's confirmation).
    SecondFactorRequired,
    /// A second step whose ticket is unknown, another client's, or older than five minutes.
    SecondFactorExpired,
    /// A passkey's assertion that is not of a passkey of the realm, or whose challenge, origin,
    /// flags or signature do not hold.
    PasskeyInvalid,
    /// A passkey's counter went back (or stayed): another authenticator holds a copy of its key.
    PasskeyCloned,
    /// No person has answered the device authorization yet.
    DevicePending,
    /// The device polled sooner than its interval allows.
    DeviceSlowDown,
    DeviceExpired,
    DeviceDenied,
    /// A device code that is unknown, another client's, or already exchanged.
    DeviceCodeUnknown,
}

impl Refusal {
    /// The `failure_reason` of `login_failed`.
    fn reason(&self) -> &'static str {
        match self {
            Self::LockedOut => "user_locked_out",
            Self::UserDisabled => "user_disabled",
            Self::Suspended => "user_suspended",
            Self::PasswordChangeRequired => "password_change_required",
            Self::SecondFactorInvalid => "invalid_second_factor",
            Self::SecondFactorRequired => "second_factor_required",
            Self::PasskeyInvalid => "invalid_passkey",
            Self::PasskeyCloned => "cloned_authenticator",
            _ => "invalid_credentials",
        }
    }
}

/// A sign-in that did not succeed: refused by a rule, or failed in the service itself.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    #[error("sign-in refused: {0:?}")]
    Refused(Refusal),
    #[error(transparent)]
    Failed(#[from] Error),
}

impl From<Refusal> for SignInError {
    fn from(refusal: Refusal) -> Self {
        Self::Refused(refusal)
    }
}

impl From<crate::store::Error> for SignInError {
    fn from(error: crate::store::Error) -> Self {
        Self::Failed(error.into())
    }
}

impl From<anyhow::Error> for SignInError {
    fn from(error: anyhow::Error) -> Self {
        Self::Failed(Error::Internal(error))
    }
}

/// The tokens of a sign-in.
#[derive(Debug, Clone)]
pub struct Tokens {
    pub access: Issued,
    pub scopes: Vec<String>,
    /// The refresh token and its lifetime in seconds, when the client uses the refresh grant.
    pub refresh: Option<(String, i64)>,
    pub id_token: Option<String>,
}

/// A password sign-in, as typed.
#[derive(Debug, Clone)]
pub struct PasswordAttempt<'a> {
    pub realm: &'a Realm,
    pub client: &'a Client,
    pub username: &'a str,
    pub password: &'a str,
    /// The scopes asked for, when the request names any.
    pub scopes: Option<Vec<String>>,
    /// The resource server's address, when the request names one (RFC 8707).
    pub resource: Option<&'a str>,
    /// Whether a phone confirms the sign-in before it opens anything.
    pub phone: PhoneConfirmation,
    pub origin: &'a Origin,
    /// What a successful sign-in opens.
    pub opens: Opens,
    /// The thumbprint of the DPoP key its tokens are bound to.
    pub dpop_jkt: Option<&'a str>,
}

/// Whether a password sign-in waits for the account's phone to confirm it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhoneConfirmation {
    /// Never: the password grant without `confirmation=push`.
    NotAsked,
    /// Always; an account without a phone is refused (`confirmation=push`).
    Required,
    /// When the account has a phone enrolled: the login page, where an enrolled phone is the
    /// person's second factor.
    IfEnrolled,
}

/// What a successful password sign-in opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opens {
    /// A session of the client, and its tokens (the password grant).
    ClientSession,
    /// The browser's realm session, from which clients are then authorized (the login page).
    BrowserSession,
}

/// A browser signed in to a realm by its login page.
#[derive(Debug, Clone)]
pub struct BrowserSignIn {
    pub session: crate::store::browser::BrowserSession,
    pub user: User,
    /// The value of the cookie that names the session; only its keyed hash is stored.
    pub cookie: String,
}

/// What a password sign-in that was not refused led to.
#[derive(Debug, Clone)]
pub enum PasswordOutcome {
    SignedIn(Tokens),
    /// The password is right; a phone must confirm (see [`push`]).
    ConfirmationAsked(push::Asked),
    /// The browser is signed in to the realm.
    InBrowser(Box<BrowserSignIn>),
    /// The password is right but must be changed first (browser sign-ins only): `ticket` sets a
    /// new one once, within minutes (see [`recovery::reset`]).
    MustChangePassword {
        ticket: String,
    },
    /// The password is right; one of the person's second factors must confirm it (browser
    /// sign-ins only): `ticket` carries the sign-in to the factor (see [`second_factor`]).
    SecondFactorAsked {
        ticket: String,
        /// The factors the person may choose among.
        choices: factor_rule::Enrolled,
    },
    /// The password is right; the person must add a second factor before the sign-in ends
    /// (browser sign-ins only): `ticket` carries the sign-in to it (see [`enrolment`]).
    EnrolmentAsked {
        ticket: String,
        enrolling: Box<enrolment::Enrolling>,
    },
}

/// A client signing in as itself with its credentials (`client_credentials`); the client is
/// already authenticated.
pub async fn client_credentials(
    context: &Context,
    realm: &Realm,
    client: &Client,
    asked: Option<Vec<String>>,
    resource: Option<&str>,
    dpop_jkt: Option<&str>,
    origin: &Origin,
) -> Result<Tokens, SignInError> {
    let server = requested_resource(context, client, resource).await?;
    let scopes = requested_scopes(client, asked, false, server.as_ref())?;
    let resource = server.as_ref().map(|s| s.address.as_str());
    let grant = Grant { client, subject: Subject::Client, scopes: &scopes, resource, dpop_jkt };
    let access = tokens::access_token(context, &grant).await?;
    let login = Login {
        grant_type: GrantType::ClientCredentials.as_str(),
        resource,
        user: None,
        session_id: None,
        failure_reason: None,
        scopes: &scopes,
        methods: &["client_secret"],
    };
    // Nothing else changes with this sign-in: its event goes through the group commit.
    let event = succeeded_event(realm, client, login_data(login, origin), context.clock.now());
    context.writes.publish(event).await?;
    Ok(Tokens { access, scopes, refresh: None, id_token: None })
}

/// A person's password sign-in by `client`: attack protection decides on every attempt, the realm
/// lockout and smart lockout apply at addresses the account never signed in from, and a refusal
/// answers a name the realm does not have exactly as an account.
pub async fn password(
    context: &Context,
    protection: &Protection,
    attempt: PasswordAttempt<'_>,
) -> Result<PasswordOutcome, SignInError> {
    let PasswordAttempt { realm, client, username, password, scopes, resource, phone, origin, opens, dpop_jkt } =
        attempt;
    let now = context.clock.now();
    let address = origin.ip_address.as_str();
    // A blocked source is refused before anything else, whatever it typed.
    if protection.refuses(Hold::SourceBlocked, &realm.id, address, now).await {
        return Err(Refusal::SourceBlocked.into());
    }
    let server = requested_resource(context, client, resource).await?;
    let scopes = requested_scopes(client, scopes, true, server.as_ref())?;
    let resource = server.as_ref().map(|s| s.address.as_str());
    let pool = context.store.pool();
    let user = user_store::find_by_login(pool, &realm.id, username).await?;

    let approved = match &user {
        Some(user) => lockout::is_approved(pool, &user.id, address).await?,
        None => false,
    };
    let typed = username.to_lowercase();
    // A name the realm does not have is locked out exactly like an account, so that the lockout's
    // answer never tells which accounts exist (refusals are identical whatever name was typed).
    let name_hash;
    let target = match &user {
        Some(user) => lockout::Target::Account { user_id: &user.id },
        None => {
            name_hash = context.hasher.hash(&typed);
            lockout::Target::UnknownName { realm_id: &realm.id, name_hash: &name_hash }
        }
    };
    // The realm lockout applies at an address the account never signed in from.
    let guarded = realm.settings.lockout_enabled && !approved;
    let mut failures = if guarded { lockout::failures(pool, target, address).await? } else { None };
    let locked = failures.as_ref().and_then(|f| f.locked_until).is_some_and(|until| until > now);
    // Smart lockout: an account closed to the addresses it was never approved at.
    let closed = match &user {
        Some(user) if !approved => protection.refuses(Hold::ClosedToUnknownAddresses, &realm.id, &user.id, now).await,
        _ => false,
    };
    let stored = user.as_ref().and_then(|u| u.password_hash.clone());
    let checking = std::time::Instant::now();
    let matched =
        !locked && crate::kernel::passwords::verify(password.to_owned(), stored.clone()).await? && user.is_some();
    if !locked && !matched {
        even_out_refusal(context, realm, checking).await?;
    }
    // An imported hash that matched gives way to the service's own, hashed before the transaction.
    let rehashed = match &stored {
        Some(stored) if matched && !closed && crate::kernel::passwords::needs_rehash(stored) => {
            Some((stored.clone(), crate::kernel::passwords::hash(password.to_owned()).await?))
        }
        _ => None,
    };

    let seen = Seen {
        realm_id: &realm.id,
        kind: AttemptKind::Password,
        outcome: if matched && !closed { Outcome::Succeeded } else { Outcome::Failed },
        source: address,
        account: user.as_ref().map_or(typed.as_str(), |u| u.id.as_str()),
        account_known: user.is_some(),
        approved,
    };
    // Every attempt counts, those the realm lockout refuses included.
    let decision = protection.judge(&context.store, &seen, now).await?;
    // Read before the transaction, which holds the one write connection on SQLite.
    let suspended = match &user {
        Some(user) if matched && opens == Opens::ClientSession => suspended(context, client, &user.id, now).await?,
        _ => false,
    };
    // What the rule asks after the right password: a browser goes on to a second step, to enrol a
    // factor or to the phone; the password grant, which has no step, is refused where a factor
    // would be asked, unless a phone confirms where a phone is enough.
    let rule = factor_rule::rule(realm, client);
    let next = match &user {
        Some(user) if matched && !closed => {
            let enrolled = factor_rule::Enrolled::of(context, &user.id, rule).await?;
            Some((enrolled, factor_rule::next(rule, enrolled)))
        }
        _ => None,
    };
    let in_browser = opens == Opens::BrowserSession;
    let phone_confirms = phone == PhoneConfirmation::Required;
    let code_missing =
        !in_browser && next.is_some_and(|(enrolled, _)| factor_rule::refuses_grant(rule, enrolled, phone_confirms));
    let confirm_on_phone = phone_confirms
        || (phone == PhoneConfirmation::IfEnrolled && next.is_some_and(|(_, next)| next == factor_rule::Next::Phone));
    let mut tx = context.store.begin().await?;
    let recorded = match &decision {
        Some(decision) => {
            let attack = Attack { realm, client, user: user.as_ref(), address };
            incidents::record(context, protection, &mut tx, &attack, decision, now).await?
        }
        None => Recorded::default(),
    };
    let refusal = match &user {
        _ if locked => Some(Refusal::LockedOut),
        // Closed to this address, or the correct password from an attack: refused as if wrong.
        _ if !matched || closed || recorded.password_exposed => Some(Refusal::InvalidCredentials),
        Some(user) if user.status != UserStatus::Active => Some(Refusal::UserDisabled),
        Some(_) if suspended => Some(Refusal::Suspended),
        Some(user) if user.must_change_password => {
            // An exposed password is told apart from a wrong one only where the account signed in
            // before: anywhere else it may be the attacker holding it.
            let exposure = exposures::exposure_of(pool, &user.id).await?;
            if !approved && exposure.is_some_and(|e| e.resolved_at.is_none()) {
                Some(Refusal::InvalidCredentials)
            } else {
                Some(Refusal::PasswordChangeRequired)
            }
        }
        Some(_) if code_missing => Some(Refusal::SecondFactorRequired),
        _ => None,
    };

    if let Some(refusal) = refusal {
        let login = Login {
            grant_type: GrantType::Password.as_str(),
            resource,
            user: user.as_ref(),
            session_id: None,
            failure_reason: Some(refusal.reason()),
            scopes: &scopes,
            methods: &["pwd"],
        };
        publish(&mut tx, realm, client, EventType::LoginFailed, login_data(login, origin), now).await?;
        context.metrics.sign_in_failed(refusal.reason());
        if guarded && refusal == Refusal::InvalidCredentials {
            let counting = Counting { realm, client, user: user.as_ref(), target, address };
            count_failure(context, &mut tx, &counting, failures.take(), now).await?;
        }
        // A browser whose person typed the right password goes on to choosing a new one, with a
        // ticket that sets it once; the token endpoint answers the refusal.
        let ticket = match (&user, &refusal, opens) {
            (Some(user), Refusal::PasswordChangeRequired, Opens::BrowserSession) => {
                Some(recovery::change_ticket(context, &mut tx, realm, client, user, now).await?)
            }
            _ => None,
        };
        tx.commit().await?;
        crate::protection::send_letters(context, recorded.letters);
        return match ticket {
            Some(ticket) => Ok(PasswordOutcome::MustChangePassword { ticket }),
            None => Err(refusal.into()),
        };
    }
    let Some(user) = user else { return Err(Refusal::InvalidCredentials.into()) };
    if let Some((imported, own)) = &rehashed {
        user_store::replace_password_hash(&mut *tx, &user.id, imported, own).await?;
    }
    let asked = match next.map(|(_, next)| next).filter(|_| in_browser) {
        Some(factor_rule::Next::Choose(choices)) => Some(PasswordOutcome::SecondFactorAsked {
            ticket: second_factor::ticket(context, (realm, client, &user), choices, now),
            choices,
        }),
        Some(factor_rule::Next::Enrol { passkey_only }) => Some(PasswordOutcome::EnrolmentAsked {
            ticket: enrolment::ticket(context, (realm, client, &user), passkey_only, now),
            enrolling: Box::new(enrolment::Enrolling { user: user.clone(), passkey_only }),
        }),
        _ => None,
    };
    if let Some(asked) = asked {
        tx.commit().await?;
        crate::protection::send_letters(context, recorded.letters);
        return Ok(asked);
    }
    let signed_in = SignIn { realm, client, user: &user, scopes: &scopes, resource, methods: &["pwd"], dpop_jkt };
    if confirm_on_phone {
        // The password is right; the person confirms on a phone before anything opens.
        let (asked, deliveries) = push::ask(protection, &mut tx, &signed_in, origin, now).await?;
        tx.commit().await?;
        push::deliver(context, deliveries);
        crate::protection::send_letters(context, recorded.letters);
        return Ok(PasswordOutcome::ConfirmationAsked(asked));
    }
    let outcome = open(context, tx, &signed_in, origin, opens, now).await;
    crate::protection::send_letters(context, recorded.letters);
    Ok(outcome?)
}

/// Opens what a successful sign-in opens, in `tx`: a client session and its tokens, or the
/// browser's realm session.
async fn open(
    context: &Context,
    mut tx: Transaction,
    signed_in: &SignIn<'_>,
    origin: &Origin,
    opens: Opens,
    now: DateTime<Utc>,
) -> Result<PasswordOutcome, Error> {
    match opens {
        Opens::ClientSession => open_session(context, tx, signed_in, origin, now).await.map(PasswordOutcome::SignedIn),
        Opens::BrowserSession => {
            let SignIn { realm, user, methods, .. } = *signed_in;
            let (session, cookie) = browser::new_browser_session(context, realm, user, methods, origin, now);
            crate::store::browser::insert_session(&mut *tx, &session).await?;
            tx.commit().await?;
            let user = user.clone();
            Ok(PasswordOutcome::InBrowser(Box::new(BrowserSignIn { session, user, cookie })))
        }
    }
}

/// Whether a Full suspension of the person at the client is in force: no sign-in, no token.
async fn suspended(context: &Context, client: &Client, user_id: &str, now: DateTime<Utc>) -> Result<bool, Error> {
    crate::oauth::suspensions::refuses(context, &client.realm_id, &client.id, user_id, now).await
}

/// A person whose sign-in succeeded, and how.
#[derive(Debug, Clone, Copy)]
pub struct SignIn<'a> {
    pub realm: &'a Realm,
    pub client: &'a Client,
    pub user: &'a User,
    pub scopes: &'a [String],
    pub resource: Option<&'a str>,
    /// `pwd`, and `push` when a phone confirmed it.
    pub methods: &'a [&'a str],
    /// The thumbprint of the DPoP key the session's tokens are bound to.
    pub dpop_jkt: Option<&'a str>,
}

/// Opens the session of a successful sign-in in `tx`: the address is approved for the account,
/// `login_succeeded` is published, and the tokens are issued once it commits.
pub async fn open_session(
    context: &Context,
    mut tx: Transaction,
    signed_in: &SignIn<'_>,
    origin: &Origin,
    now: DateTime<Utc>,
) -> Result<Tokens, Error> {
    let SignIn { realm, client, user, scopes, resource, methods, dpop_jkt } = *signed_in;
    let methods_list: Vec<String> = methods.iter().map(|m| (*m).to_owned()).collect();
    let session = Session {
        id: SessionId::fresh(),
        realm_id: realm.id.clone(),
        client_id: client.id.clone(),
        user_id: user.id.clone(),
        ip_address: origin.ip_address.clone(),
        user_agent: origin.user_agent.clone(),
        authentication_methods: methods_list.clone(),
        created_at: now,
        last_active_at: now,
        expires_at: now + TimeDelta::seconds(i64::from(context.settings.session_seconds)),
        ended_at: None,
        end_reason: None,
        browser_session_id: None,
    };
    sessions::insert(&mut *tx, &session).await?;
    lockout::approve(&mut tx, &user.id, &origin.ip_address, now).await?;
    let refresh = next_refresh(context, client, &session, scopes, resource, dpop_jkt, now);
    if let Some((row, _, _)) = &refresh {
        sessions::insert_refresh(&mut *tx, row).await?;
    }
    let refresh = refresh.map(|(_, value, expires_in)| (value, expires_in));
    let login = Login {
        grant_type: GrantType::Password.as_str(),
        resource,
        user: Some(user),
        session_id: Some(&session.id),
        failure_reason: None,
        scopes,
        methods,
    };
    publish(&mut tx, realm, client, EventType::LoginSucceeded, login_data(login, origin), now).await?;
    tx.commit().await?;
    person_tokens(context, client, user, &session, Granted { scopes, resource, refresh, nonce: None, dpop_jkt }).await
}
