//! Initial access tokens: what a realm hands out so that a client may register itself where the
//! realm asks for one (RFC 7591 §3), each good for a number of registrations and days.

use crate::kernel::clock::iso;
use crate::kernel::crypto::generate_secret;
use crate::kernel::validate::{Body, integer};
use crate::oauth::registration::INITIAL_ACCESS_TOKEN_PREFIX;
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::realms::Realm;
use crate::store::registration::{self as token_store, InitialAccessToken};
use crate::store::trail::{Change, ChangeAction, Placed};
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use utoipa::ToSchema;

/// The longest an initial access token may live, and the default.
pub const INITIAL_ACCESS_TOKEN_DAYS: (i64, i64) = (1, 365);

pub const DEFAULT_INITIAL_ACCESS_TOKEN_DAYS: i64 = 7;

/// The most registrations one initial access token may make.
pub const INITIAL_ACCESS_TOKEN_USES: (i64, i64) = (1, 1000);

/// A new initial access token of the realm: the row, and the token (shown once).
pub fn new_initial_access_token(
    context: &Context,
    realm: &Realm,
    days: i64,
    uses: i64,
    now: DateTime<Utc>,
) -> (InitialAccessToken, String) {
    let token = generate_secret(INITIAL_ACCESS_TOKEN_PREFIX);
    let row = InitialAccessToken {
        id: crate::kernel::ids::InitialAccessTokenId::fresh(),
        realm_id: realm.id.clone(),
        token_hash: context.hasher.hash(&token),
        remaining_uses: uses,
        expires_at: now + TimeDelta::days(days),
        created_at: now,
    };
    (row, token)
}

/// An initial access token as the admin API shows it; `token` appears once, in the creation answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitialAccessTokenView {
    pub id: String,
    pub realm_id: String,
    /// The token, sent by a registering client as a bearer token. Shown once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Registrations it may still make.
    pub remaining_registrations: i64,
    pub expires_at: String,
    pub created_at: String,
}

impl InitialAccessTokenView {
    pub(crate) fn of(token: &InitialAccessToken) -> Self {
        Self {
            id: token.id.to_string(),
            realm_id: token.realm_id.to_string(),
            token: None,
            remaining_registrations: token.remaining_uses,
            expires_at: iso(token.expires_at),
            created_at: iso(token.created_at),
        }
    }
}

/// The body of an initial access token's creation; both optional.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct InitialAccessTokenInput {
    /// Days until it expires: 1–365, default 7.
    #[schema(value_type = Option<i64>)]
    pub(crate) expires_in_days: i64,
    /// How many clients it may register: 1–1000, default 1.
    #[schema(value_type = Option<i64>)]
    pub(crate) registrations: i64,
}

impl InitialAccessTokenInput {
    /// The fields `body` gives, with the defaults of those it does not.
    pub(crate) fn read(body: &mut Body) -> Self {
        let (lo, hi) = INITIAL_ACCESS_TOKEN_DAYS;
        let expires_in_days =
            body.optional("expiresInDays", integer(lo, hi)).unwrap_or(DEFAULT_INITIAL_ACCESS_TOKEN_DAYS);
        let (lo, hi) = INITIAL_ACCESS_TOKEN_USES;
        let registrations = body.optional("registrations", integer(lo, hi)).unwrap_or(1);
        Self { expires_in_days, registrations }
    }
}

/// A new initial access token of `realm`, good for `days` and `registrations` registrations, its
/// value shown in the answer and never again.
pub async fn issue(
    context: &Context,
    realm: &Realm,
    days: i64,
    registrations: i64,
    by: Author<'_>,
) -> Result<InitialAccessTokenView, Error> {
    let (row, token) = new_initial_access_token(context, realm, days, registrations, context.clock.now());
    let mut tx = context.store.begin().await?;
    token_store::insert(&mut *tx, &row).await?;
    let change = Change::of(ChangeAction::Create, row.place(), 201).after(InitialAccessTokenView::of(&row));
    changes::commit(context, by, tx, change).await?;
    let mut view = InitialAccessTokenView::of(&row);
    view.token = Some(token);
    Ok(view)
}

/// Deletes `token`: it registers no more clients.
pub async fn withdraw(context: &Context, token: &InitialAccessToken, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    token_store::delete(&mut *tx, &token.realm_id, &token.id).await?;
    let change = Change::of(ChangeAction::Delete, token.place(), 200).before(InitialAccessTokenView::of(token));
    changes::commit(context, by, tx, change).await
}
