//! The console's server-side sessions. A person signs in on the platform realm's login page; the
//! console exchanges the code it is sent back with (the platform client as a public client, with
//! its PKCE verifier) and keeps a session of its own, bound to the person's platform session: the
//! browser holds only a random value in a cookie. Signing out of the console ends both.

use chrono::{DateTime, Duration, Utc};

use super::codes::{self, CodeExchange};
use super::{SignInError, console};
use crate::kernel::crypto::generate_secret;
use crate::kernel::ids::PLATFORM_REALM;
use crate::oauth::tokens;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::console_sessions::{self, ConsoleSession};
use crate::store::{accounts, realms};

/// The longest a console session lasts, however active; the platform session may end it sooner.
pub const LIFETIME: Duration = Duration::hours(12);

/// A session just opened: the value for the browser's cookie, and the session.
#[derive(Debug)]
pub struct Opened {
    pub cookie: String,
    pub session: ConsoleSession,
}

/// Opens a console session from a code of the platform realm's login page. `None` when the person
/// who signed in is on no account's team: there is nothing for them in the console.
pub async fn open(context: &Context, code: &str, verifier: &str) -> Result<Option<Opened>, SignInError> {
    let pool = context.store.pool();
    let realm = realms::find(pool, PLATFORM_REALM).await?.ok_or(Error::NotFound("realm"))?;
    let platform = console::for_browsers(context, &console::platform_client(context).await?);
    let redirect_uri = console::redirect_uri(context);
    let exchange = CodeExchange {
        realm: &realm,
        client: &platform,
        code,
        redirect_uri: Some(&redirect_uri),
        code_verifier: Some(verifier),
        resource: None,
        dpop_jkt: None,
    };
    let tokens = codes::exchange(context, exchange).await?;
    let active = tokens::active_access_token(context, PLATFORM_REALM, &tokens.access.token).await?;
    let Some((platform_session, person)) = active.and_then(|token| token.person) else {
        return Err(SignInError::Refused(super::Refusal::InvalidAuthorizationCode));
    };
    if accounts::membership(pool, &person.id).await?.is_none() {
        return Ok(None);
    }
    let now = context.clock.now();
    let cookie = generate_secret("");
    let session = ConsoleSession {
        id: context.hasher.hash(&cookie),
        session_id: platform_session.id.clone(),
        user_id: person.id.clone(),
        csrf_token: generate_secret(""),
        created_at: now,
        expires_at: (now + LIFETIME).min(platform_session.expires_at),
    };
    console_sessions::insert(context.store.writer(), &session).await?;
    Ok(Some(Opened { cookie, session }))
}

/// The session a browser's cookie names, unless it has expired.
pub async fn find(context: &Context, cookie: &str, now: DateTime<Utc>) -> Result<Option<ConsoleSession>, Error> {
    Ok(console_sessions::find(context.store.pool(), &context.hasher.hash(cookie), now).await?)
}

/// Signs out: forgets the console session and ends the platform session it was bound to, with
/// the browser's sign-in at the platform realm, so that the next visit asks for the password.
pub async fn end(context: &Context, session: &ConsoleSession) -> Result<(), Error> {
    console_sessions::delete(context.store.writer(), &session.id).await?;
    if let Some(realm) = realms::find(context.store.pool(), PLATFORM_REALM).await? {
        super::sign_out::sign_out(context, &realm, None, Some(&session.session_id)).await?;
    }
    Ok(())
}
