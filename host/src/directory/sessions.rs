//! Sessions of a realm's people: an administrator ends one here, trailed and announced. Its
//! refresh tokens are refused and its access tokens inactive from then on.

use crate::kernel::clock::iso;
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::sessions::{self as session_store, Session};
use crate::store::trail::{Change, ChangeAction, Placed};
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

/// Why a session an administrator ended ended, as the session keeps it.
pub const ENDED_BY_ADMINISTRATOR: &str = "revoked_by_administrator";

/// Ends `session` as an administrator asked; refused when it has ended already.
pub async fn end(context: &Context, session: &Session, by: Author<'_>) -> Result<(), Error> {
    let now = context.clock.now();
    let mut tx = context.store.begin().await?;
    if !session_store::end(&mut tx, &session.id, ENDED_BY_ADMINISTRATOR, now).await? {
        return Err(Error::Conflict("the session has already ended".into()));
    }
    changes::commit(
        context,
        by,
        tx,
        Change::of(ChangeAction::Delete, session.place(), 200).before(SessionView::of(session, context.clock.now())),
    )
    .await
}

/// A session as the admin API shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    pub id: String,
    pub realm_id: String,
    pub client_id: String,
    pub user_id: String,
    pub ip_address: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// How the person signed in (`pwd`, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub authentication_methods: Vec<String>,
    /// Active, Ended (revoked, signed out or ended on refresh-token reuse) or Expired.
    pub status: &'static str,
    pub created_at: String,
    pub last_active_at: String,
    pub expires_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
}

impl SessionView {
    pub(crate) fn of(session: &Session, now: DateTime<Utc>) -> Self {
        let status = match (session.ended_at, session.expires_at > now) {
            (Some(_), _) => "Ended",
            (None, false) => "Expired",
            (None, true) => "Active",
        };
        Self {
            id: session.id.clone().into(),
            realm_id: session.realm_id.to_string(),
            client_id: session.client_id.to_string(),
            user_id: session.user_id.to_string(),
            ip_address: session.ip_address.clone(),
            user_agent: session.user_agent.clone(),
            authentication_methods: session.authentication_methods.clone(),
            status,
            created_at: iso(session.created_at),
            last_active_at: iso(session.last_active_at),
            expires_at: iso(session.expires_at),
            ended_at: session.ended_at.map(iso),
            end_reason: session.end_reason.clone(),
        }
    }
}
