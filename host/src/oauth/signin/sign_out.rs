//! Signing a browser out of a realm (RP-Initiated Logout 1.0): which ID token hints may sign it
//! out without asking, and the end of its realm session with every client session opened from it.

use crate::kernel::ids::SessionId;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::browser;
use crate::store::realms::Realm;
use crate::store::sessions;

/// Whether an ID token hint names this browser's own sign-in: its `sid` is a client session opened
/// from the realm session the browser's cookie holds, so the hint can only come from an
/// application this browser signed in to. Only such a hint signs the browser out without asking
/// (RP-Initiated Logout 1.0 §2): another person's ID token, one of another browser, or one without
/// a session is no proof that this person asked.
pub async fn hint_names_this_browser(
    context: &Context,
    realm: &Realm,
    cookie: Option<&str>,
    hinted_session: Option<&SessionId>,
) -> Result<bool, Error> {
    let (Some(cookie), Some(hinted)) = (cookie, hinted_session) else { return Ok(false) };
    let pool = context.store.pool();
    let Some(signed_in) = browser::find_session(pool, &realm.id, &context.hasher.hash(cookie)).await? else {
        return Ok(false);
    };
    let hinted = sessions::find(pool, hinted).await?.filter(|s| s.realm_id == realm.id);
    Ok(hinted.is_some_and(|s| s.user_id == signed_in.user_id && s.browser_session_id.as_ref() == Some(&signed_in.id)))
}

/// Signs a browser out of the realm (RP-Initiated Logout): ends its realm session, named by its
/// cookie or by the client session an ID token hint names, and every client session opened from
/// it, whose tokens go inactive at once. `false` when nothing was signed in.
pub async fn sign_out(
    context: &Context,
    realm: &Realm,
    cookie: Option<&str>,
    hinted_session: Option<&SessionId>,
) -> Result<bool, Error> {
    let now = context.clock.now();
    let pool = context.store.pool();
    let mut browsers = Vec::new();
    if let Some(cookie) = cookie
        && let Some(session) = browser::find_session(pool, &realm.id, &context.hasher.hash(cookie)).await?
    {
        browsers.push(session.id);
    }
    let mut hinted = None;
    if let Some(session_id) = hinted_session
        && let Some(session) = sessions::find(pool, session_id).await?.filter(|s| s.realm_id == realm.id)
    {
        browsers.extend(session.browser_session_id.clone());
        hinted = Some(session.id);
    }
    let mut ended = false;
    let mut tx = context.store.begin().await?;
    for id in &browsers {
        ended |= browser::end_session(&mut tx, id, "logout", now).await?;
    }
    if let Some(id) = hinted {
        ended |= sessions::end(&mut tx, &id, "logout", now).await?;
    }
    tx.commit().await?;
    Ok(ended)
}
