//! `GET /realms/{realm}/account/connections` and `DELETE /realms/{realm}/account/connections/{id}`:
//! a person lists the accounts they connected at the realm's connection providers and removes
//! one, with an access token of theirs from one of the realm's own clients. The upstream tokens
//! are never shown.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::json;

use super::account_consents::person;
use super::{OAuthError, json_no_store, no_content_no_store, realm};
use crate::http::AppState;
use crate::kernel::clock::iso;
use crate::oauth::federation::connections;
use crate::runtime::error::OAuthCode;

pub async fn list(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let user = person(&state, &realm.id, &headers, ("GET", "/account/connections")).await?;
    let listed: Vec<_> = connections::of_person(&state, &user)
        .await?
        .iter()
        .map(|connection| {
            json!({
                "id": connection.id,
                "provider_id": connection.provider_id,
                "status": connection.status,
                "scopes": connection.scopes,
                "expires_at": connection.expires_at.map(crate::kernel::clock::iso),
                "last_used_at": connection.last_used_at.map(crate::kernel::clock::iso),
                "created_at": iso(connection.created_at),
                "updated_at": iso(connection.updated_at),
            })
        })
        .collect();
    Ok(json_no_store(json!({ "connections": listed })))
}

pub async fn remove(
    State(state): State<AppState>,
    Path((realm_id, connection_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let path = format!("/account/connections/{connection_id}");
    let user = person(&state, &realm.id, &headers, ("DELETE", &path)).await?;
    if !connections::remove_own(&state, &user, &connection_id).await? {
        return Err(OAuthError::new(OAuthCode::ConnectionNotFound, "the person has no such connection"));
    }
    Ok(no_content_no_store())
}
