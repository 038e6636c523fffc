//! The sign-in pages' cookies: a browser's realm session, the form cookie each form's CSRF token
//! derives from, the sign-in waiting for a phone; and the check that a form comes from a page this
//! browser was shown.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use super::form::Form;
use super::login_page;
use crate::http::AppState;
use crate::oauth::signin::browser;
use crate::store::realms::Realm;

/// The cookie naming a browser's realm session.
pub(super) const SESSION_COOKIE: &str = "castellan_session";
/// The cookie a form's CSRF token is derived from.
pub(super) const FORM_COOKIE: &str = "castellan_form";
/// The cookie naming the sign-in a browser waits for a phone to confirm.
pub(super) const PUSH_COOKIE: &str = "castellan_push";

/// A new form's CSRF token, and the cookie (as a `Set-Cookie` value) it is bound to.
pub(super) fn fresh_form(state: &AppState, realm: &Realm) -> (String, String) {
    let form_secret = crate::kernel::crypto::generate_secret("");
    (csrf_token(state, &form_secret), cookie_text(state, realm, FORM_COOKIE, &form_secret, None))
}

pub(super) fn append_cookie(response: &mut Response, text: &str) {
    if let Ok(value) = HeaderValue::from_str(text) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
}

/// Whether a form comes from a page this browser was shown: its token derives from the browser's
/// form cookie, which other sites can neither read nor send (SameSite=Lax).
pub(super) fn genuine_form(state: &AppState, headers: &HeaderMap, form: &Form) -> bool {
    cookie(headers, FORM_COOKIE).zip(form.get("csrf")).is_some_and(|(value, token)| {
        crate::kernel::crypto::constant_time_eq(csrf_token(state, value).as_bytes(), token.as_bytes())
    })
}

pub(super) fn expired_form() -> Response {
    login_page::problem(
        StatusCode::FORBIDDEN,
        "This sign-in form has expired",
        "Go back to the application and start signing in again.",
    )
}

pub(super) fn csrf_token(state: &AppState, form_secret: &str) -> String {
    state.hasher.hash(&format!("login-form:{form_secret}"))
}

pub(super) fn session_cookie(state: &AppState, realm: &Realm, value: &str) -> HeaderValue {
    let lifetime = browser::browser_session_lifetime(state).num_seconds();
    let text = cookie_text(state, realm, SESSION_COOKIE, value, Some(lifetime));
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// A cookie for the realm's paths only: HttpOnly, SameSite=Lax, and Secure when the service is
/// reached over https.
pub(super) fn cookie_text(state: &AppState, realm: &Realm, name: &str, value: &str, max_age: Option<i64>) -> String {
    let secure = if state.public_url.starts_with("https://") { "; Secure" } else { "" };
    let max_age = max_age.map(|seconds| format!("; Max-Age={seconds}")).unwrap_or_default();
    format!("{name}={value}; Path=/realms/{}/; HttpOnly; SameSite=Lax{secure}{max_age}", realm.id)
}

/// The value of the request's cookie `name`.
pub(crate) fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}
