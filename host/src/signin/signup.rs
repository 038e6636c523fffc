//! Self sign-up on the login page, where the realm allows it: a person creates their account with
//! a username, an e-mail address and a password, and is signed in to the realm in the same step.
//! The account meets the rules of one the admin API creates (a username without spaces, a
//! well-formed address, the realm's password rules) and one more: neither the username nor the
//! address may be any account's username or address, so that whatever a person types at sign-in
//! names one account only. `user_created` names the client the account came through.

use super::{BrowserSignIn, Origin, Refusal};
use crate::AppState;
use crate::error::Error;
use crate::ids::UserId;
use crate::protection::Hold;
use crate::store::clients::Client;
use crate::store::events::{self, EventType};
use crate::store::realms::Realm;
use crate::store::users::{self as user_store, User, UserStatus};
use crate::validate::{is_email, is_username};

/// A sign-up, as typed.
#[derive(Debug, Clone, Copy)]
pub struct SignUp<'a> {
    pub realm: &'a Realm,
    pub client: &'a Client,
    pub username: &'a str,
    pub email: &'a str,
    pub password: &'a str,
    pub origin: &'a Origin,
}

/// Why a sign-up was refused; each but the first two concerns one field of the form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignUpRefusal {
    /// The realm does not let people create their own account.
    Closed,
    /// Attack protection blocked the source.
    SourceBlocked,
    UsernameInvalid,
    UsernameTaken,
    EmailInvalid,
    EmailTaken,
    /// The password breaks a rule of the realm (`PasswordLength`, `PasswordBreached`).
    Password(Refusal),
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

/// Creates the person's account and signs the browser in to the realm with it.
pub async fn sign_up(state: &AppState, attempt: SignUp<'_>) -> Result<BrowserSignIn, SignUpError> {
    let SignUp { realm, client, username, email, password, origin } = attempt;
    if !realm.settings.self_sign_up {
        return Err(SignUpRefusal::Closed.into());
    }
    let now = state.clock.now();
    if state.protection.refuses(Hold::SourceBlocked, &realm.id, &origin.ip_address, now).await {
        return Err(SignUpRefusal::SourceBlocked.into());
    }
    if !is_username(username) {
        return Err(SignUpRefusal::UsernameInvalid.into());
    }
    if !is_email(email) {
        return Err(SignUpRefusal::EmailInvalid.into());
    }
    super::recovery::acceptable(state, realm, password).await.map_err(SignUpRefusal::Password)?;
    let pool = state.store.pool();
    // Taken as anyone's username or address: either would make a sign-in name two accounts.
    if user_store::find_by_login(pool, &realm.id, username).await?.is_some() {
        return Err(SignUpRefusal::UsernameTaken.into());
    }
    if user_store::find_by_login(pool, &realm.id, email).await?.is_some() {
        return Err(SignUpRefusal::EmailTaken.into());
    }
    let password_hash = crate::passwords::hash(password.to_owned()).await.map_err(Error::Internal)?;
    let user = User {
        id: UserId::fresh(),
        realm_id: realm.id.clone(),
        username: username.to_owned(),
        email: Some(email.to_owned()),
        first_name: None,
        last_name: None,
        email_confirmed: false,
        status: UserStatus::Active,
        password_hash: Some(password_hash),
        must_change_password: false,
        created_at: now,
        updated_at: now,
    };
    let (session, cookie) = super::browser::new_browser_session(state, realm, &user, &["pwd"], origin, now);
    let mut tx = state.store.begin().await?;
    // The same name signed up at the same moment: the store's uniqueness decides.
    if !user_store::insert(&mut *tx, &user).await? {
        return Err(SignUpRefusal::UsernameTaken.into());
    }
    let data = events::user_data(&user, Some(&client.id));
    super::publish(&mut tx, realm, client, EventType::UserCreated, data, now).await?;
    crate::store::browser::insert_session(&mut *tx, &session).await?;
    tx.commit().await?;
    Ok(BrowserSignIn { session, user, cookie })
}
