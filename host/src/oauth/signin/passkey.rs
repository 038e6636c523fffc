//! Signing a browser in with a passkey: the assertion a page's script got from
//! `navigator.credentials.get()` for a challenge of the page, bound to the page's form token.
//!
//! The credential names the passkey, the passkey its person; the assertion must verify with the
//! passkey's public key ([`crate::kernel::webauthn`]), its user handle (when sent) must be the
//! person's, and its challenge is then used up. An authenticator whose counter goes back holds a
//! copied key: the sign-in is refused and reported (`login_failed`, `cloned_authenticator`). A
//! passkey is phishing-resistant and cannot be guessed, so its failures do not count against the
//! realm lockout, which a stranger could otherwise use to shut a person out; a blocked source is
//! refused as for a password. The browser is signed in with `hwk` (or `swk` for a passkey that
//! syncs between devices) and `mfa`: user verification was required.

use chrono::{DateTime, Utc};

use super::login_events::{Login, login_data, publish};
use super::{BrowserSignIn, Origin, PasswordOutcome, Refusal, SignInError};
use crate::kernel::webauthn::{self, RelyingParty};
use crate::oauth::second_factors::passkeys::{self, Credential, Kept, Party, Purpose, decoded, user_handle};
use crate::protection::{Hold, Protection};
use crate::runtime::context::Context;
use crate::store::authenticators as store;
use crate::store::clients::{Client, GrantType};
use crate::store::events::EventType;
use crate::store::realms::Realm;
use crate::store::users::{self as user_store, User, UserStatus};
use crate::store::write_queue::{PasskeyUse, PasskeyUsed};

/// An assertion posted by a sign-in page.
#[derive(Debug, Clone, Copy)]
pub struct PasskeyAttempt<'a> {
    pub realm: &'a Realm,
    pub client: &'a Client,
    /// The credential as JSON (`PublicKeyCredential.toJSON()`).
    pub credential: &'a str,
    /// What the page's challenge was bound to: its form token.
    pub binding: &'a str,
    pub origin: &'a Origin,
}

/// Verifies the assertion and signs the browser in.
pub async fn sign_in(
    context: &Context,
    protection: &Protection,
    attempt: PasskeyAttempt<'_>,
) -> Result<PasswordOutcome, SignInError> {
    let PasskeyAttempt { realm, client, credential, binding, origin } = attempt;
    let now = context.clock.now();
    if protection.refuses(Hold::SourceBlocked, &realm.id, &origin.ip_address, now).await {
        return Err(Refusal::SourceBlocked.into());
    }
    let credential = Credential::read(credential).ok_or(Refusal::PasskeyInvalid)?;
    let pool = context.store.pool();
    let id = credential.id.trim_end_matches('=');
    let Some(stored) = store::passkey(pool, &realm.id, id).await? else {
        context.metrics.sign_in_failed(Refusal::PasskeyInvalid.reason());
        return Err(Refusal::PasskeyInvalid.into());
    };
    let user = user_store::find(pool, &realm.id, &stored.user_id).await?.ok_or(Refusal::PasskeyInvalid)?;
    if user.status != UserStatus::Active {
        return Err(Refusal::UserDisabled.into());
    }
    let failed = |refusal: Refusal| Failure { realm, client, user: &user, origin, refusal, now };
    let Some((kept, key)) = Kept::of(&stored).and_then(|kept| kept.public_key().map(|key| (kept, key))) else {
        tracing::error!(authenticator = %stored.id, "a stored passkey's public key cannot be read");
        return Err(failed(Refusal::PasskeyInvalid).record(context).await);
    };
    let response = &credential.response;
    let parts = (
        decoded(&response.client_data_json),
        response.authenticator_data.as_deref().and_then(decoded),
        response.signature.as_deref().and_then(decoded),
    );
    let (Some(client_data), Some(data), Some(signature)) = parts else {
        return Err(failed(Refusal::PasskeyInvalid).record(context).await);
    };
    if response.user_handle.as_deref().is_some_and(|handle| handle.trim_end_matches('=') != user_handle(&user)) {
        return Err(failed(Refusal::PasskeyInvalid).record(context).await);
    }
    let party = Party::of(context);
    let relying_party = RelyingParty { id: &party.id, origin: &party.origin };
    let mut challenge = None;
    let checker = passkeys::challenge_checker(context, Purpose::SignIn, binding, now, &mut challenge);
    let asserted = match webauthn::assertion(relying_party, &key, &client_data, &data, &signature, checker) {
        Ok(asserted) => asserted,
        Err(why) => {
            tracing::info!(authenticator = %stored.id, reason = %why, "a passkey's sign-in was refused");
            return Err(failed(Refusal::PasskeyInvalid).record(context).await);
        }
    };
    let Some(challenge) = challenge else { return Err(failed(Refusal::PasskeyInvalid).record(context).await) };
    let stored_counter = u32::try_from(stored.counter.unwrap_or(0)).unwrap_or(u32::MAX);
    if webauthn::counter_went_back(stored_counter, asserted.counter)
        || kept.backup_eligible != asserted.flags.backup_eligible
    {
        return Err(failed(Refusal::PasskeyCloned).record(context).await);
    }
    // The challenge, the counter and the browser's session are written in the group commit of
    // the write queue, each only if the one before took place.
    let data = serde_json::to_string(&kept.with(asserted.flags)).map_err(anyhow::Error::from)?;
    let (session, cookie) = super::browser::new_browser_session(context, realm, &user, kept.methods(), origin, now);
    let used = PasskeyUse {
        nonce: challenge.nonce,
        challenge_expires_at: challenge.expires_at,
        authenticator_id: stored.id.to_string(),
        counter: i64::from(asserted.counter),
        data,
        at: now,
        session: session.clone(),
    };
    match context.writes.use_passkey(used).await? {
        PasskeyUsed::SignedIn => Ok(PasswordOutcome::InBrowser(Box::new(BrowserSignIn { session, user, cookie }))),
        PasskeyUsed::ChallengeUsed => Err(failed(Refusal::PasskeyInvalid).record(context).await),
        // Another assertion with this counter got in first.
        PasskeyUsed::CounterBehind => Err(failed(Refusal::PasskeyCloned).record(context).await),
    }
}

/// A refused assertion of a known passkey.
struct Failure<'a> {
    realm: &'a Realm,
    client: &'a Client,
    user: &'a User,
    origin: &'a Origin,
    refusal: Refusal,
    now: DateTime<Utc>,
}

impl Failure<'_> {
    /// Publishes `login_failed` with the reason, and answers the refusal (or the failure to record
    /// it).
    async fn record(self, context: &Context) -> SignInError {
        let Failure { realm, client, user, origin, refusal, now } = self;
        if refusal == Refusal::PasskeyCloned {
            tracing::warn!(user = %user.id, realm = %realm.id, "a passkey's counter went back: refused as a cloned authenticator");
        }
        let login = Login {
            grant_type: GrantType::AuthorizationCode.as_str(),
            resource: None,
            user: Some(user),
            session_id: None,
            failure_reason: Some(refusal.reason()),
            scopes: &[],
            methods: &["hwk"],
        };
        context.metrics.sign_in_failed(refusal.reason());
        let published = async {
            let mut tx = context.store.begin().await?;
            publish(&mut tx, realm, client, EventType::LoginFailed, login_data(login, origin), now).await?;
            tx.commit().await?;
            Ok::<_, crate::runtime::error::Error>(())
        };
        match published.await {
            Ok(()) => refusal.into(),
            Err(failure) => SignInError::Failed(failure),
        }
    }
}
