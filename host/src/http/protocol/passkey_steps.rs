//! Passkeys on the sign-in pages:
//!
//! - `POST …/auth/passkey`: the assertion the page's script got from the browser, posted with the
//!   authorization request and the form token its challenge is bound to. Verified, the browser is
//!   signed in and the client answered as after a password.
//! - `POST …/auth/passkey/options`: the credential ids to offer for a name the person typed
//!   (`allowCredentials`), for a browser without the passkey in its autofill.
//! - `GET /assets/passkeys.js`: the page's script, the service's own, run under the page's nonce.
//!
//! The login page's offer of a passkey, and the sign-up form's, are drawn here too.

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::authorize::{Page, Requested, answer_signed_in, origin_of, posted, refused};
use super::login_page;
use super::{Form, OAuthError};
use crate::http::AppState;
use crate::http::address::ClientAddress;
use crate::kernel::ids::PLATFORM_REALM;
use crate::oauth::second_factors::passkeys;
use crate::oauth::signin::passkey::{PasskeyAttempt, sign_in as verified};
use crate::oauth::signin::{PasswordOutcome, Refusal, SignInError, console};
use crate::runtime::rate_limit::{Class, source_key};

/// The script of the pages: passkey sign-in (by a button, by autofill, after a typed name) and
/// registration on the account page.
const SCRIPT: &str = include_str!("passkeys.js");

/// `POST …/auth/passkey`.
pub async fn sign_in(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Result<Form, OAuthError>,
) -> Response {
    let request = checked!(posted(&state, &realm_id, &headers, form));
    let (page, Requested { form, realm, authorization, .. }) = (request.page(&state, &headers), &request);
    let texts = page.texts();
    let origin = origin_of(address, &headers);
    let attempt = PasskeyAttempt {
        realm,
        client: &authorization.client,
        credential: form.get("credential").unwrap_or(""),
        binding: form.get("csrf").unwrap_or(""),
        origin: &origin,
    };
    let outcome = verified(&state, &state.protection, attempt).await;
    if let (true, Ok(PasswordOutcome::InBrowser(signed_in))) = (realm.id == PLATFORM_REALM, &outcome) {
        console_sign_in(&state, &signed_in.user, &origin.ip_address).await;
    }
    match outcome {
        Ok(PasswordOutcome::InBrowser(signed_in)) => answer_signed_in(&page, &signed_in, &origin).await,
        Ok(_) => refused(
            &state,
            realm,
            crate::runtime::error::Error::Internal(anyhow::anyhow!("a passkey opened no browser session")).into(),
        ),
        Err(SignInError::Refused(Refusal::SourceBlocked)) => {
            page.login("", Some((StatusCode::TOO_MANY_REQUESTS, texts.too_many_attempts)))
        }
        Err(SignInError::Refused(Refusal::UserDisabled)) => page.login("", Some((StatusCode::OK, texts.disabled))),
        Err(SignInError::Refused(_)) => page.login("", Some((StatusCode::OK, texts.passkey_refused))),
        Err(SignInError::Failed(failure)) => refused(&state, realm, failure.into()),
    }
}

/// A console sign-in by passkey at the platform realm, in the access log of the person's account.
/// A refused assertion names no one the service can tell, and is not written.
async fn console_sign_in(state: &AppState, user: &crate::store::users::User, address: &str) {
    let path = format!("/realms/{PLATFORM_REALM}/protocol/openid-connect/auth/passkey");
    let attempt = console::Attempted { login: &user.username, address, path: &path, at: state.clock.now() };
    if let Err(failure) = console::record_person(state, &state.access_log, attempt, Ok(())).await {
        tracing::error!(error = %failure, "a console sign-in by passkey was not written to the access log");
    }
}

/// `POST …/auth/passkey/options`: the passkey form of the page with `username`.
pub async fn options(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Result<Form, OAuthError>,
) -> Response {
    let request = checked!(posted(&state, &realm_id, &headers, form));
    let now = state.clock.now();
    if let Err(retry) = state.limiter.take(&source_key(address), Class::Standard, now).await {
        let mut answer = StatusCode::TOO_MANY_REQUESTS.into_response();
        if let Ok(value) = HeaderValue::from_str(&retry.to_string()) {
            answer.headers_mut().insert(header::RETRY_AFTER, value);
        }
        return answer;
    }
    let login = request.form.get("username").unwrap_or("");
    if login.trim().is_empty() || login.len() > 320 {
        return super::json_no_store(json!({ "allowCredentials": [] }));
    }
    match passkeys::for_name(&state, &request.realm, login).await {
        Ok(ids) => {
            let allowed: Vec<_> = ids.iter().map(|id| json!({ "type": "public-key", "id": id })).collect();
            super::json_no_store(json!({ "allowCredentials": allowed }))
        }
        Err(failure) => refused(&state, &request.realm, failure.into()),
    }
}

/// What the pages of a sign-in offer of passkeys.
impl Page<'_> {
    /// The passkey sign-in the login page offers, its challenge bound to the page's form token.
    pub(super) fn passkey_offer(&self, csrf: &str) -> login_page::PasskeyOffer {
        let now = self.state.clock.now();
        login_page::PasskeyOffer {
            challenge: passkeys::challenge(self.state, passkeys::Purpose::SignIn, csrf, now),
            rp_id: passkeys::Party::of(self.state).id,
            script: format!("{}/assets/passkeys.js", self.state.public_url),
        }
    }

    /// The passkey the sign-up form may create instead of a password, where the realm allows it:
    /// for a new account id, its challenge bound to the form token and that id.
    pub(super) fn passkey_sign_up_offer(&self, csrf: &str) -> Option<login_page::PasskeySignUpOffer> {
        if !crate::oauth::signin::signup::passkeys_open(self.state, self.realm) {
            return None;
        }
        let user_id = crate::kernel::ids::UserId::fresh().to_string();
        let binding = crate::oauth::signin::signup::passkey_binding(csrf, &user_id);
        let options = passkeys::sign_up_options(self.state, self.realm, &user_id, &binding).to_string();
        Some(login_page::PasskeySignUpOffer {
            options,
            user_id,
            script: format!("{}/assets/passkeys.js", self.state.public_url),
        })
    }
}

/// `GET /assets/passkeys.js`.
pub async fn script() -> Response {
    let mut response = SCRIPT.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/javascript; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=3600"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}
