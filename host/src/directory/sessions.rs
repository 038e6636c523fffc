//! Sessions of a realm's people: an administrator ends one here, trailed and announced. Its
//! refresh tokens are refused and its access tokens inactive from then on.

use serde::Serialize;

use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::sessions::{self as session_store, Session};
use crate::store::trail::{Change, ChangeAction, Placed};

/// Why a session an administrator ended ended, as the session keeps it.
pub const ENDED_BY_ADMINISTRATOR: &str = "revoked_by_administrator";

/// Ends `session` as an administrator asked; refused when it has ended already.
pub async fn end<View: Serialize>(
    context: &Context,
    session: &Session,
    by: Author<'_>,
    describe: impl Fn(&Session) -> View,
) -> Result<(), Error> {
    let now = context.clock.now();
    let mut tx = context.store.begin().await?;
    if !session_store::end(&mut tx, &session.id, ENDED_BY_ADMINISTRATOR, now).await? {
        return Err(Error::Conflict("the session has already ended".into()));
    }
    changes::commit(context, by, tx, Change::of(ChangeAction::Delete, session.place(), 200).before(describe(session)))
        .await
}
