//! The admin operations on a realm's sessions: listed, read and ended.

use crate::directory::listing::ListQuery;
use crate::directory::reach::Admin;
use crate::directory::reach::{Found, InRealm, SessionDelete, SessionRead};
use crate::directory::sessions;
use crate::directory::sessions::SessionView;
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;
use crate::store::sessions::{self as session_store, Session};

/// `GET /realms/{realm}/sessions`: a page of the realm's open sessions.
pub async fn list(
    admin: &Admin<'_>,
    InRealm { realm, .. }: InRealm<SessionRead>,
    query: Option<String>,
) -> Result<Answer<SessionView>, Error> {
    let list = ListQuery::parse(query, &["userId", "clientId"])?;
    let now = admin.clock.now();
    let filter = session_store::SessionFilter { user_id: list.filter("userId"), client_id: list.filter("clientId") };
    let found = session_store::page(&admin.store, &realm.id, now, filter, &list.page).await?;
    Ok(Answer::Paged(found.map(|session| SessionView::of(&session, now))))
}

/// `GET /realms/{realm}/sessions/{sessionId}`: the session, open or not.
pub async fn read(
    admin: &Admin<'_>,
    Found { item: session, .. }: Found<Session, SessionRead>,
) -> Result<Answer<SessionView>, Error> {
    Ok(Answer::Ok(SessionView::of(&session, admin.clock.now())))
}

/// `DELETE /realms/{realm}/sessions/{sessionId}`: revoked: its refresh tokens are refused and its
/// access tokens inactive at once.
pub async fn revoke(
    admin: &Admin<'_>,
    Found { item: session, caller, .. }: Found<Session, SessionDelete>,
) -> Result<Answer<()>, Error> {
    sessions::end(admin, &session, caller.author()).await?;
    Ok(Answer::Done)
}
