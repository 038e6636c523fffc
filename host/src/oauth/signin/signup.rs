//! Self sign-up on the login page, where the realm allows it and the service can send e-mail: a
//! person asks for an account with a username, an e-mail address and a password, and the account
//! exists once the code sent to that address comes back. Until then nothing of the person exists,
//! so an address proved to no one can never be linked to an upstream identity or found by a
//! sign-in.
//!
//! The answer to the form is the same whether the username or the address was free or taken
//! (one of attack protection's flows, so that nobody learns who has an account here): the code
//! goes out only when both are free; otherwise the address's owner is told by e-mail what
//! happened. Whatever a person types at sign-in still names one account only: no username may be
//! an address (no `@`), and neither may be any account's username or address. The account meets
//! the rules of one the admin API creates (a username without spaces, a well-formed address, the
//! realm's password rules), its address confirmed, and `user_created` names the client it came
//! through.

use chrono::TimeDelta;

use super::{BrowserSignIn, Origin, Refusal};
use crate::directory::people::{self, Arrival};
use crate::kernel::crypto::generate_secret;
use crate::kernel::ids::{SignUpId, UserId};
use crate::kernel::validate::{is_email, is_username};
use crate::oauth::second_factors::passkeys::Verified;
use crate::protection::Protection;
use crate::protection::detection::{AttemptKind, Outcome};
use crate::protection::incidents::{self, Attack};
use crate::protection::{Hold, Seen};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::runtime::outbound::mail::Letter;
use crate::store::clients::Client;
use crate::store::realms::Realm;
use crate::store::sign_ups::{self as store, SignUp as Pending};
use crate::store::users::{self as user_store, User, UserStatus};

/// How long the code sent to the address works.
pub const CONFIRM_MINUTES: i64 = 30;
/// Prefix of the codes.
pub const SIGN_UP_CODE_PREFIX: &str = "cstl_signup_";

/// Whether people may sign up to the realm here: the realm allows it and the service can send the
/// e-mail that confirms their address.
pub fn open(context: &Context, realm: &Realm) -> bool {
    realm.settings.self_sign_up && context.outbound.mailer.configured()
}

/// A sign-up, as typed.
#[derive(Debug, Clone, Copy)]
pub struct SignUp<'a> {
    pub realm: &'a Realm,
    pub client: &'a Client,
    pub username: &'a str,
    pub email: &'a str,
    /// Ignored with a passkey.
    pub password: &'a str,
    /// A passkey instead of a password, where the realm allows it.
    pub passkey: Option<PasskeySignUp<'a>>,
    pub origin: &'a Origin,
}

/// The passkey a sign-up page's browser made: for the account id `user_id`, from options bound
/// to `binding` (see [`passkey_binding`]), and the credential as JSON.
#[derive(Debug, Clone, Copy)]
pub struct PasskeySignUp<'a> {
    pub user_id: &'a str,
    pub binding: &'a str,
    pub credential: &'a str,
}

/// What the challenge of a sign-up's passkey is bound to: the page's form token and the id the
/// account will have, so that neither can be swapped.
pub fn passkey_binding(form_token: &str, user_id: &str) -> String {
    format!("sign-up:{form_token}:{user_id}")
}

/// Whether people may sign up to the realm with a passkey and no password.
pub fn passkeys_open(context: &Context, realm: &Realm) -> bool {
    open(context, realm) && realm.settings.passkey_sign_up
}

/// Why a sign-up was refused; each but the first two concerns one field of the form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignUpRefusal {
    /// The realm does not let people create their own account here.
    Closed,
    /// Attack protection blocked the source.
    SourceBlocked,
    UsernameInvalid,
    EmailInvalid,
    /// The password breaks a rule of the realm (`PasswordLength`, `PasswordBreached`).
    Password(Refusal),
    /// The passkey does not verify, or was not made for this sign-up.
    PasskeyInvalid,
    /// The code is not one sent for this realm, was used, or lapsed.
    CodeInvalid,
    /// Between the request and its code, another account took the username or the address.
    Taken,
}

#[derive(Debug, thiserror::Error)]
pub enum SignUpError {
    #[error("sign-up refused: {0:?}")]
    Refused(SignUpRefusal),
    #[error(transparent)]
    Failed(#[from] Error),
}

impl From<SignUpRefusal> for SignUpError {
    fn from(refusal: SignUpRefusal) -> Self {
        Self::Refused(refusal)
    }
}

impl From<crate::store::Error> for SignUpError {
    fn from(error: crate::store::Error) -> Self {
        Self::Failed(error.into())
    }
}

/// Asks for an account: once the fields are well formed, it answers alike whatever another
/// account holds, and the e-mail says the rest.
pub async fn ask(context: &Context, protection: &Protection, attempt: SignUp<'_>) -> Result<(), SignUpError> {
    let SignUp { realm, client, username, email, password, passkey, origin } = attempt;
    if !open(context, realm) {
        return Err(SignUpRefusal::Closed.into());
    }
    let now = context.clock.now();
    let address = origin.ip_address.as_str();
    if protection.refuses(Hold::SourceBlocked, &realm.id, address, now).await {
        return Err(SignUpRefusal::SourceBlocked.into());
    }
    // A username that is an address would make a sign-in name two accounts (`find_by_login`).
    if !is_username(username) || username.contains('@') {
        return Err(SignUpRefusal::UsernameInvalid.into());
    }
    if !is_email(email) {
        return Err(SignUpRefusal::EmailInvalid.into());
    }
    let verified = match passkey {
        Some(_) if !passkeys_open(context, realm) => return Err(SignUpRefusal::Closed.into()),
        Some(made) => {
            let binding = passkey_binding(made.binding, made.user_id);
            match crate::oauth::second_factors::passkeys::verified(context, &binding, made.credential, None).await {
                Ok(verified) => Some((made.user_id.to_owned(), verified)),
                Err(Error::Validation(_)) => return Err(SignUpRefusal::PasskeyInvalid.into()),
                Err(failure) => return Err(failure.into()),
            }
        }
        None => {
            super::recovery::acceptable(context, realm, password).await.map_err(SignUpRefusal::Password)?;
            None
        }
    };
    let pool = context.store.pool();
    let by_username = user_store::find_by_login(pool, &realm.id, username).await?;
    let by_email = user_store::find_by_login(pool, &realm.id, email).await?;
    let typed = email.to_lowercase();
    let seen = Seen {
        realm_id: &realm.id,
        kind: AttemptKind::SignUp,
        outcome: Outcome::Requested,
        source: address,
        account: &typed,
        account_known: by_email.is_some(),
        approved: false,
    };
    let decision = protection.judge(&context.store, &seen, now).await?;
    // The password is hashed whatever was taken, so that the answer takes as long either way.
    let password_hash = match &verified {
        Some(_) => String::new(),
        None => crate::kernel::passwords::hash(password.to_owned()).await.map_err(Error::Internal)?,
    };
    let (user_id, passkey) = match verified {
        Some((user_id, made)) => {
            (Some(user_id), Some(serde_json::to_string(&made).map_err(|e| Error::Internal(e.into()))?))
        }
        None => (None, None),
    };
    let code = generate_secret(SIGN_UP_CODE_PREFIX);
    let pending = Pending {
        id: SignUpId::fresh(),
        realm_id: realm.id.clone(),
        client_id: client.id.clone(),
        username: username.to_owned(),
        email: email.to_owned(),
        password_hash,
        code_hash: context.hasher.hash(&code),
        created_at: now,
        expires_at: now + TimeDelta::minutes(CONFIRM_MINUTES),
        used_at: None,
        user_id,
        passkey,
    };
    let mut letters = Vec::new();
    let mut tx = context.store.begin().await?;
    if let Some(decision) = &decision {
        let attack = Attack { realm, client, user: None, address };
        letters.extend(incidents::record(context, protection, &mut tx, &attack, decision, now).await?.letters);
    }
    store::insert(&mut *tx, &pending).await?;
    tx.commit().await?;
    // A source this very request got blocked hears what any blocked source hears, and no e-mail
    // goes out for it.
    if decision.as_ref().is_some_and(|judged| judged.blocks_source()) {
        crate::protection::send_letters(context, letters);
        return Err(SignUpRefusal::SourceBlocked.into());
    }
    letters.push(letter(client, &pending, &code, by_username.is_some(), by_email.as_ref()));
    crate::protection::send_letters(context, letters);
    Ok(())
}

/// The e-mail to the address: the code when the account can be made, else what stands in its way.
fn letter(client: &Client, pending: &Pending, code: &str, username_taken: bool, holder: Option<&User>) -> Letter {
    let name = &client.name;
    let to = pending.email.clone();
    if holder.is_some() {
        return Letter {
            to,
            subject: format!("{name}: you already have an account"),
            body: format!(
                "Hello,\n\nSomeone asked to create a {name} account with this e-mail address, which already has \
                 one. If it was you, sign in to it; if you forgot its password, reset it from the sign-in page.\n\n\
                 If it was not you, ignore this message: nothing was created and nothing changed.\n"
            ),
        };
    }
    if username_taken {
        return Letter {
            to,
            subject: format!("{name}: choose another username"),
            body: format!(
                "Hello,\n\nSomeone asked to create a {name} account for this e-mail address with the username \
                 {}, which another account has. If it was you, start again with another username.\n\nIf it was \
                 not you, ignore this message: nothing was created.\n",
                pending.username
            ),
        };
    }
    Letter {
        to,
        subject: format!("{name}: confirm your e-mail address"),
        body: format!(
            "Hello {},\n\nTo finish creating your {name} account, type this code on the page that asked for it \
             within {CONFIRM_MINUTES} minutes:\n\n{code}\n\nIf you did not ask for an account, ignore this \
             message: nothing is created without the code.\n",
            pending.username
        ),
    }
}

/// Creates the account a code was sent for, its address confirmed, and signs the browser in to the
/// realm with it.
pub async fn confirm(
    context: &Context,
    protection: &Protection,
    realm: &Realm,
    client: &Client,
    code: &str,
    origin: &Origin,
) -> Result<BrowserSignIn, SignUpError> {
    if !open(context, realm) {
        return Err(SignUpRefusal::Closed.into());
    }
    let now = context.clock.now();
    if protection.refuses(Hold::SourceBlocked, &realm.id, &origin.ip_address, now).await {
        return Err(SignUpRefusal::SourceBlocked.into());
    }
    let pool = context.store.pool();
    let pending = store::find_open(pool, &realm.id, &context.hasher.hash(code.trim()), now)
        .await?
        .ok_or(SignUpRefusal::CodeInvalid)?;
    if user_store::find_by_login(pool, &realm.id, &pending.username).await?.is_some()
        || user_store::find_by_login(pool, &realm.id, &pending.email).await?.is_some()
    {
        return Err(SignUpRefusal::Taken.into());
    }
    // A sign-up with a passkey makes the account its passkey was made for, with no password.
    let passkey: Option<Verified> = match &pending.passkey {
        Some(text) => Some(serde_json::from_str(text).map_err(|e| Error::Internal(e.into()))?),
        None => None,
    };
    let id = match (&passkey, &pending.user_id) {
        (Some(_), Some(id)) => UserId::known(id.clone()),
        _ => UserId::fresh(),
    };
    let user = User {
        id,
        realm_id: realm.id.clone(),
        username: pending.username.clone(),
        email: Some(pending.email.clone()),
        first_name: None,
        last_name: None,
        // The code came back from the address: this service confirmed it.
        email_confirmed: true,
        status: UserStatus::Active,
        password_hash: passkey.is_none().then(|| pending.password_hash.clone()),
        must_change_password: false,
        created_at: now,
        updated_at: now,
    };
    let methods = passkey.as_ref().map_or(&["pwd"][..], Verified::methods);
    let (session, cookie) = super::browser::new_browser_session(context, realm, &user, methods, origin, now);
    let mut tx = context.store.begin().await?;
    if !store::use_once(&mut *tx, &pending.id, now).await? {
        return Err(SignUpRefusal::CodeInvalid.into());
    }
    // The same name confirmed at the same moment: the store's uniqueness decides.
    if !people::add(&mut tx, realm, &user, Arrival::SignedUp { client: &client.id }, now).await? {
        return Err(SignUpRefusal::Taken.into());
    }
    if let Some(made) = &passkey {
        let authenticator = made.authenticator(realm, &user, now);
        crate::oauth::second_factors::passkeys::keep(&mut tx, realm, &user, &authenticator, now)
            .await
            .map_err(|_| SignUpRefusal::Taken)?;
    }
    crate::store::browser::insert_session(&mut *tx, &session).await?;
    tx.commit().await?;
    Ok(BrowserSignIn { session, user, cookie })
}
