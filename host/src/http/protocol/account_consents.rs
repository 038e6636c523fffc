//! `GET /realms/{realm}/account/consents` and `DELETE /realms/{realm}/account/consents/{client}`:
//! a person lists the consents they gave third-party clients and withdraws one, with an access
//! token of theirs from one of the realm's own clients (a third party's token cannot read what
//! the person allowed others).

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::json;

use super::{OAuthError, json_no_store, no_content_no_store, realm};
use crate::http::AppState;
use crate::kernel::clock::iso;
use crate::oauth::consent;
use crate::runtime::error::OAuthCode;
use crate::store::users::User;

/// The person whose access token the request carries, issued to one of the realm's own clients.
pub(super) async fn person(
    state: &AppState,
    realm_id: &str,
    headers: &HeaderMap,
    request: (&str, &str),
) -> Result<User, OAuthError> {
    Ok(person_and_session(state, realm_id, headers, request).await?.1)
}

/// The same person, with the session their token comes from.
pub(super) async fn person_and_session(
    state: &AppState,
    realm_id: &str,
    headers: &HeaderMap,
    request: (&str, &str),
) -> Result<(crate::store::sessions::Session, User), OAuthError> {
    let needed = "an access token of the person, from one of the realm's own clients, is required";
    let (session, user, client_id) =
        super::discovery::bearer_session(state, realm_id, headers, request, needed).await?;
    match crate::oauth::tokens::find_client(state, realm_id, &client_id).await? {
        Some(client) if !client.third_party() => Ok((session, user)),
        _ => Err(OAuthError::new(OAuthCode::InvalidToken, needed)),
    }
}

pub async fn list(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let user = person(&state, &realm.id, &headers, ("GET", "/account/consents")).await?;
    let consents: Vec<_> = consent::of_person(&state, &user)
        .await?
        .iter()
        .map(|c| {
            json!({
                "client_id": c.client_id,
                "resource": (!c.resource.is_empty()).then_some(&c.resource),
                "scopes": c.scopes,
                "created_at": iso(c.created_at),
                "updated_at": iso(c.updated_at),
            })
        })
        .collect();
    Ok(json_no_store(json!({ "consents": consents })))
}

pub async fn withdraw(
    State(state): State<AppState>,
    Path((realm_id, client_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let path = format!("/account/consents/{client_id}");
    let user = person(&state, &realm.id, &headers, ("DELETE", &path)).await?;
    if !consent::withdraw(&state, &user, &client_id, None).await? {
        return Err(OAuthError::new(OAuthCode::ConsentNotFound, "no consent to this client"));
    }
    Ok(no_content_no_store())
}
