//! Password recovery at `POST /realms/{realm}/account/recovery` (a reset code for a username or
//! e-mail address, always the same 202 answer) and `POST /realms/{realm}/account/recovery/reset`
//! (a new password with the code); the rules are `crate::oauth::signin::recovery`.

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use super::{Form, OAuthError, json_no_store, realm};
use crate::http::AppState;
use crate::http::address::ClientAddress;
use crate::oauth::signin::recovery;

pub async fn request(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    form: Form,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let (client_id, login) = (form.require("client_id")?, form.require("username")?);
    recovery::request(&state, &state.protection, &realm, client_id, login, &address.to_string()).await?;
    let mut answer = json_no_store(
        json!({ "message": "If the account exists and has an e-mail address, a reset code is on its way." }),
    );
    *answer.status_mut() = StatusCode::ACCEPTED;
    Ok(answer)
}

pub async fn reset(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    form: Form,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    recovery::reset(&state, &realm, form.require("token")?, form.require("password")?).await?;
    Ok(json_no_store(json!({ "message": "The password is changed." })))
}
