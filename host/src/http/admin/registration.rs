//! `/realms/{realm}/initial-access-tokens`: the tokens an administrator hands out for clients to
//! register with (RFC 7591 §3) at a realm whose `clientRegistration` is InitialAccessToken; and
//! `/realms/{realm}/users/{userId}/consents`: what a person allowed self-registered clients.

use crate::oauth::initial_access_tokens;
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;

use super::ListQuery;
use super::reach::{ClientCreate, ClientRead, Found, InRealm, UserRead, UserUpdate};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::oauth::consent;
use crate::oauth::consent::ConsentView;
use crate::oauth::initial_access_tokens::InitialAccessTokenInput;
use crate::oauth::initial_access_tokens::InitialAccessTokenView;
use crate::runtime::error::Error;
use crate::store::registration::{self as token_store};
use crate::store::users::User;

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
    let issued = initial_access_tokens::issue(&state, &realm, expires_in_days, registrations, caller.author());
    Ok(envelope::created(issued.await?))
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
    initial_access_tokens::withdraw(&state, &token, caller.author()).await?;
    Ok(envelope::done())
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
