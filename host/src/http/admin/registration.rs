//! `/realms/{realm}/initial-access-tokens`: the tokens an administrator hands out for clients to
//! register with (RFC 7591 §3) at a realm whose `clientRegistration` is InitialAccessToken; and
//! `/realms/{realm}/users/{userId}/consents`: what a person allowed self-registered clients.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use serde::Serialize;
use utoipa::ToSchema;

use super::reach::{ClientCreate, ClientRead, Found, InRealm, UserRead, UserUpdate};
use super::{ListQuery, commit};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::clock::iso;
use crate::kernel::validate::{Body, integer};
use crate::oauth::consent;
use crate::oauth::registration::{
    DEFAULT_INITIAL_ACCESS_TOKEN_DAYS, INITIAL_ACCESS_TOKEN_DAYS, INITIAL_ACCESS_TOKEN_USES, new_initial_access_token,
};
use crate::runtime::error::Error;
use crate::store::consents::Consent;
use crate::store::registration::{self as token_store, InitialAccessToken};
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::users::User;

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
    fn of(token: &InitialAccessToken) -> Self {
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
    expires_in_days: i64,
    /// How many clients it may register: 1–1000, default 1.
    #[schema(value_type = Option<i64>)]
    registrations: i64,
}

impl InitialAccessTokenInput {
    /// The fields `body` gives, with the defaults of those it does not.
    fn read(body: &mut Body) -> Self {
        let (lo, hi) = INITIAL_ACCESS_TOKEN_DAYS;
        let expires_in_days =
            body.optional("expiresInDays", integer(lo, hi)).unwrap_or(DEFAULT_INITIAL_ACCESS_TOKEN_DAYS);
        let (lo, hi) = INITIAL_ACCESS_TOKEN_USES;
        let registrations = body.optional("registrations", integer(lo, hi)).unwrap_or(1);
        Self { expires_in_days, registrations }
    }
}

#[utoipa::path(post, path = "/realms/{realm}/initial-access-tokens", tag = "Client registration",
    params(("realm" = String, Path)), request_body = InitialAccessTokenInput,
    responses((status = 201, description = "The token (shown once), in `data`", body = InitialAccessTokenView), (status = 400), (status = 403)),
    security(("apiKey" = [])))]
pub async fn create_initial_access_token(
    State(state): State<AppState>,
    InRealm { realm, caller, .. }: InRealm<ClientCreate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let InitialAccessTokenInput { expires_in_days, registrations } = InitialAccessTokenInput::read(&mut body);
    body.finish()?;
    let now = state.clock.now();
    let (row, token) = new_initial_access_token(&state, &realm, expires_in_days, registrations, now);
    let mut tx = state.store.begin().await?;
    token_store::insert(&mut *tx, &row).await?;
    let change = Change::of(ChangeAction::Create, row.place(), 201).after(InitialAccessTokenView::of(&row));
    commit(&state, &caller, tx, change).await?;
    let mut view = InitialAccessTokenView::of(&row);
    view.token = Some(token);
    Ok(envelope::created(view))
}

#[utoipa::path(get, path = "/realms/{realm}/initial-access-tokens", tag = "Client registration",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("sortBy" = Option<String>, Query, description = "createdAt, expiresAt"), ("sortDirection" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's initial access tokens, in `pagination`", body = [InitialAccessTokenView])),
    security(("apiKey" = [])))]
pub async fn list_initial_access_tokens(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<ClientRead>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    let list = ListQuery::parse(query, &[])?;
    let found = token_store::page(&state.store, &realm.id, &list.page).await?;
    Ok(envelope::paged(found.map(|token| InitialAccessTokenView::of(&token))))
}

#[utoipa::path(delete, path = "/realms/{realm}/initial-access-tokens/{tokenId}", tag = "Client registration",
    params(("realm" = String, Path), ("tokenId" = String, Path)),
    responses((status = 200, description = "Deleted: it registers no more clients"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete_initial_access_token(
    State(state): State<AppState>,
    InRealm { realm, caller, .. }: InRealm<ClientCreate>,
    Path((_, token_id)): Path<(String, String)>,
) -> Result<Response, Error> {
    let token = token_store::find(state.store.pool(), &realm.id, &token_id)
        .await?
        .ok_or(Error::NotFound("initial access token"))?;
    let mut tx = state.store.begin().await?;
    token_store::delete(&mut *tx, &realm.id, &token.id).await?;
    let change = Change::of(ChangeAction::Delete, token.place(), 200).before(InitialAccessTokenView::of(&token));
    commit(&state, &caller, tx, change).await?;
    Ok(envelope::done())
}

/// What a person allowed a client for one resource server.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsentView {
    pub client_id: String,
    /// The resource server's address the tokens carry as their audience; absent for tokens
    /// without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl ConsentView {
    pub fn of(consent: &Consent) -> Self {
        Self {
            client_id: consent.client_id.to_string(),
            resource: (!consent.resource.is_empty()).then(|| consent.resource.clone()),
            scopes: consent.scopes.clone(),
            created_at: iso(consent.created_at),
            updated_at: iso(consent.updated_at),
        }
    }
}

#[utoipa::path(get, path = "/realms/{realm}/users/{userId}/consents", tag = "Users",
    params(("realm" = String, Path), ("userId" = String, Path)),
    responses((status = 200, description = "Every consent the person gave, in `data`", body = [ConsentView]), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn user_consents(
    State(state): State<AppState>,
    Found { item: user, .. }: Found<User, UserRead>,
) -> Result<Response, Error> {
    let consents = consent::of_person(&state, &user).await?;
    Ok(envelope::ok(consents.iter().map(ConsentView::of).collect::<Vec<_>>()))
}

#[utoipa::path(delete, path = "/realms/{realm}/users/{userId}/consents/{client}", tag = "Users",
    params(("realm" = String, Path), ("userId" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "Withdrawn: the client's sessions of the person ended, and its next sign-in asks again"),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn withdraw_user_consent(
    State(state): State<AppState>,
    Found { item: user, caller, .. }: Found<User, UserUpdate>,
    Path((_, _, client_id)): Path<(String, String, String)>,
) -> Result<Response, Error> {
    let withdrawn = consent::withdraw(&state, &user, &client_id, Some(caller.author())).await?;
    if withdrawn { Ok(envelope::done()) } else { Err(Error::NotFound("consent")) }
}
