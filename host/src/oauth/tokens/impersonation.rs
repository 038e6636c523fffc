//! Impersonation: a person of the team opens an application as one of a realm's people, with a
//! short-lived access token that names them in `act`. It is kept in the trail and never announced.

use chrono::TimeDelta;
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::kernel::clock::iso;
use crate::kernel::ids::PLATFORM_REALM;
use crate::kernel::validate::{Body, Rule, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::realms::Realm;
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::users::{User, UserStatus};

#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ImpersonationInput {
    /// The client of the realm the token is for: the application opened as the user.
    pub(crate) client_id: String,
}

impl ImpersonationInput {
    pub(crate) fn read(body: &mut Body) -> Option<Self> {
        Some(Self { client_id: body.required("clientId", text(1, 255))? })
    }
}

/// What an impersonation hands the person of the team.
#[derive(Debug, Serialize, ToSchema)]
pub struct ImpersonationView {
    /// An access token for the user, naming the impersonator in `act`; no refresh token.
    pub access_token: String,
    pub token_type: &'static str,
    /// Seconds, at most 300.
    pub expires_in: i64,
}

/// The longest life of an impersonation token, in seconds (shorter when access tokens are).
pub const IMPERSONATION_SECONDS: i64 = 300;

/// An access token of `client_id` (a client of `realm`) for `user`, asked by the team's person
/// `acting`: only for an Active person at an Active client that does not fully suspend them.
pub async fn impersonate(
    context: &Context,
    realm: &Realm,
    user: &User,
    client_id: &str,
    acting: &str,
    by: Author<'_>,
) -> Result<ImpersonationView, Error> {
    let client = super::find_client(context, &realm.id, client_id)
        .await?
        .ok_or_else(|| Error::invalid("clientId", Rule::NotFound, "no client of the realm has this id"))?;
    if user.status != UserStatus::Active {
        return Err(Error::Conflict("the user is not Active".into()));
    }
    if client.status != Status::Active {
        return Err(Error::Conflict("the client is not Active".into()));
    }
    let now = context.clock.now();
    if crate::oauth::suspensions::refuses(context, &realm.id, &client.id, &user.id, now).await? {
        return Err(Error::Conflict("the user is under a Full suspension at the client".into()));
    }
    let act = json!({
        "sub": acting,
        "iss": super::issuer(context, PLATFORM_REALM),
    });
    let expires_at = now + TimeDelta::seconds(IMPERSONATION_SECONDS);
    let subject = super::Subject::Impersonated { user, act: &act, expires_at };
    let grant = super::Grant { client: &client, subject, scopes: &[], resource: None, dpop_jkt: None };
    let issued = super::access_token(context, &grant).await?;

    // In the trail, never announced.
    let tx = context.store.begin().await?;
    let change = Change::of(ChangeAction::Impersonate, user.place().of_client(&client.id), 200).details(json!({
        "client_id": client.id,
        "token_id": issued.jti,
        "expires_at": iso(issued.expires_at),
    }));
    changes::commit(context, by, tx, change).await?;
    Ok(ImpersonationView { access_token: issued.token, token_type: "Bearer", expires_in: issued.lifetime_seconds })
}
