//! Token introspection (RFC 7662) and revocation (RFC 7009), both client-authenticated.

use super::{Form, OAuthError, authenticate_client, json_no_store, no_store, realm};
use crate::http::AppState;
use crate::http::address::ClientAddress;
use crate::oauth::tokens::introspection::{self, Asker};
use axum::Extension;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};

pub async fn introspect(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Form,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let client = authenticate_client(&state, &realm, &headers, &form).await?;
    let token = form.require("token")?;
    let user_agent = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok());
    let asker = Asker { address, user_agent };
    let hint = form.get("token_type_hint");
    Ok(json_no_store(introspection::describe(&state, &state.protection, &realm, &client, token, hint, asker).await?))
}

/// RFC 7009: revokes a refresh token (ending the client's session it belongs to, so the access
/// tokens of that grant go inactive too, while the browser's sign-in and the person's other
/// clients are left alone: ending those is logout's work) or an access token of the calling
/// client. Unknown, foreign and already inactive tokens get the same 200 (§2.2).
pub async fn revoke(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    form: Form,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    // A public client revokes its own tokens naming itself by `client_id` (RFC 7009 §2.1).
    let public = !super::authenticates(&headers, &form)? && form.get("client_id").is_some();
    let client = if public {
        super::public_client(&state, &realm, &form).await?
    } else {
        authenticate_client(&state, &realm, &headers, &form).await?
    };
    let token = form.require("token")?;
    introspection::revoke(&state, &realm, &client, token, form.get("token_type_hint")).await?;
    let mut response = ().into_response();
    no_store(response.headers_mut());
    Ok(response)
}
