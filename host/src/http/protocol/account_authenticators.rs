//! `/realms/{realm}/account/authenticators`: a person lists and manages their own authenticators
//! beyond the password, with an access token of theirs from one of the realm's own clients:
//!
//! - `GET`: the list (kind, name, added, last used; never a secret).
//! - `POST …/totp`: begins enrolling an authenticator app: the secret, its `otpauth://` URI, the
//!   URI as a QR code (SVG), and the enrolment token to send back.
//! - `POST …/totp/confirm` (`enrolment`, `code`, optional `name`): keeps the app once the code it
//!   shows is right; the first second factor comes with ten recovery codes, answered once.
//! - `POST …/recovery-codes`: a new set of recovery codes, the old set no longer accepted.
//! - `POST …/passkey`: the options of `navigator.credentials.create()` for a new passkey, whose
//!   challenge is bound to the person; `POST …/passkey/confirm` (`credential`, the browser's
//!   answer as JSON, and an optional `name`) keeps it.
//! - `DELETE …/{authenticatorId}`: removes one.
//!
//! Each change (a confirmation, new recovery codes, a removal) needs a sign-in of the last fifteen
//! minutes behind the token; older, it is answered `401 insufficient_user_authentication` with
//! `max_age` (RFC 9470).

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::json;

use super::account_consents::person;
use super::{Form, OAuthError, RECENT_SIGN_IN, json_no_store, no_content_no_store, realm};
use crate::http::AppState;
use crate::kernel::clock::iso;
use crate::oauth::second_factors::{self, By, passkeys, recovery_codes, totp};
use crate::runtime::error::{Error, OAuthCode};

pub async fn list(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let user = person(&state, &realm.id, &headers, ("GET", "/account/authenticators")).await?;
    let authenticators = second_factors::list(&state, &user).await?;
    Ok(json_no_store(json!({ "authenticators": authenticators })))
}

pub async fn begin_totp(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let user = person(&state, &realm.id, &headers, ("POST", "/account/authenticators/totp")).await?;
    let enrolment = totp::begin(&state, &realm, &user);
    let parameters = enrolment.parameters;
    Ok(json_no_store(json!({
        "enrolment": enrolment.token,
        "secret": enrolment.secret,
        "uri": enrolment.uri,
        "qr_code": crate::http::qr::svg(&enrolment.uri),
        "algorithm": parameters.algorithm.as_str(),
        "digits": parameters.digits,
        "period": parameters.period,
        "expires_at": iso(enrolment.expires_at),
    })))
}

pub async fn confirm_totp(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    form: Result<Form, OAuthError>,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let user =
        recently_signed_in(&state, &realm.id, &headers, ("POST", "/account/authenticators/totp/confirm")).await?;
    let form = form?;
    let (Some(token), Some(code)) = (form.get("enrolment"), form.get("code")) else {
        return Err(OAuthError::new(OAuthCode::MissingParameter, "enrolment and code are required"));
    };
    let confirmed = totp::confirm(&state, &realm, &user, token, code, form.get("name")).await.map_err(refused)?;
    let mut response =
        json_no_store(json!({ "authenticator": confirmed.authenticator, "recovery_codes": confirmed.recovery_codes }));
    *response.status_mut() = StatusCode::CREATED;
    Ok(response)
}

pub async fn begin_passkey(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let user = person(&state, &realm.id, &headers, ("POST", "/account/authenticators/passkey")).await?;
    let options = passkeys::registration_options(&state, &realm, &user, &api_binding(&user.id)).await?;
    Ok(json_no_store(options))
}

pub async fn confirm_passkey(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    form: Result<Form, OAuthError>,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let user =
        recently_signed_in(&state, &realm.id, &headers, ("POST", "/account/authenticators/passkey/confirm")).await?;
    let form = form?;
    let Some(credential) = form.get("credential") else {
        return Err(OAuthError::new(OAuthCode::MissingParameter, "credential is required"));
    };
    let binding = api_binding(&user.id);
    let (kept, _) =
        passkeys::register(&state, &realm, &user, &binding, credential, form.get("name")).await.map_err(refused)?;
    let mut response = json_no_store(json!({ "authenticator": kept }));
    *response.status_mut() = StatusCode::CREATED;
    Ok(response)
}

/// What a registration's challenge is bound to on the account API: the person.
fn api_binding(user_id: &str) -> String {
    format!("account API:{user_id}")
}

pub async fn renew_recovery_codes(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let user =
        recently_signed_in(&state, &realm.id, &headers, ("POST", "/account/authenticators/recovery-codes")).await?;
    let codes = recovery_codes::renew(&state, &realm, &user).await.map_err(refused)?;
    Ok(json_no_store(json!({ "recovery_codes": codes })))
}

pub async fn remove(
    State(state): State<AppState>,
    Path((realm_id, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let path = format!("/account/authenticators/{id}");
    let user = recently_signed_in(&state, &realm.id, &headers, ("DELETE", &path)).await?;
    second_factors::remove(&state, &realm, &user, &id, By::Owner).await.map_err(refused)?;
    Ok(no_content_no_store())
}

/// The person of the token, when their sign-in behind it is recent enough to change how they sign
/// in: a token that leaked, or a browser left signed in, cannot add a factor of its own or take
/// the person's away. Older, the answer is RFC 9470's: `insufficient_user_authentication` with
/// `max_age`, and the client signs the person in again.
async fn recently_signed_in(
    state: &AppState,
    realm_id: &str,
    headers: &HeaderMap,
    request: (&str, &str),
) -> Result<crate::store::users::User, OAuthError> {
    let (session, user) = super::account_consents::person_and_session(state, realm_id, headers, request).await?;
    if state.clock.now() - session.created_at > RECENT_SIGN_IN {
        let why = "sign in again to change how you sign in";
        return Err(OAuthError::new(OAuthCode::InsufficientUserAuthentication, why));
    }
    Ok(user)
}

/// The answer to what the operations refuse, in the protocol's error format with the reason.
fn refused(error: Error) -> OAuthError {
    match error {
        Error::Validation(notes) => {
            let note = notes.into_iter().next();
            let code = match note.as_ref().map(|n| n.field.as_str()) {
                Some("enrolment" | "credential") => OAuthCode::InvalidEnrolment,
                Some("code") => OAuthCode::InvalidOneTimeCode,
                _ => OAuthCode::InvalidName,
            };
            OAuthError::new(code, note.map(|n| n.message).unwrap_or_default())
        }
        Error::Conflict(message) => OAuthError::new(OAuthCode::AuthenticatorRefused, message),
        Error::NotFound(_) => OAuthError::new(OAuthCode::AuthenticatorNotFound, "no such authenticator of yours"),
        other => other.into(),
    }
}
