//! Signing in to the console and out of it. Signing in goes through the platform realm's login
//! page with the authorization code flow and PKCE; the verifier and the `state` wait in a short
//! cookie of the console's own path until the browser comes back with the code.

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use percent_encoding::percent_decode_str;

use super::{Console, page};
use crate::http::AppState;
use crate::http::protocol::cookies::cookie;
use crate::kernel::crypto::{constant_time_eq, generate_secret};
use crate::kernel::ids::PLATFORM_REALM;
use crate::oauth::signin::codes::s256;
use crate::oauth::signin::{SignInError, console, console_sessions};
use crate::runtime::error::Error;

/// The cookie that names the console session.
const SESSION_COOKIE: &str = "castellan_console";
/// The cookie that carries a sign-in under way: `state.verifier.next`.
const SIGN_IN_COOKIE: &str = "castellan_console_sign_in";
/// How long a sign-in may take on the login page.
const SIGN_IN_SECONDS: i64 = 600;

/// The session value the browser presents.
pub fn cookie_value(headers: &HeaderMap) -> Option<&str> {
    cookie(headers, SESSION_COOKIE).filter(|value| !value.is_empty())
}

/// Where a request without a session goes: to sign in, then back to `next`.
pub fn to_sign_in(next: &str) -> Response {
    page::see_other(&format!("/console/sign-in?next={}", super::encode(next)))
}

/// A console address to come back to: only a path of the console itself, never another site.
fn local(next: Option<&str>) -> &str {
    next.filter(|next| {
        (*next == "/console" || next.starts_with("/console/") || next.starts_with("/console?"))
            && !next.contains("//")
            && !next.contains('\\')
    })
    .unwrap_or("/console")
}

/// Starts a sign-in: to the platform realm's login page, with a fresh `state` and PKCE challenge.
pub async fn sign_in(State(state): State<AppState>, RawQuery(query): RawQuery) -> Response {
    let query = query.unwrap_or_default();
    let next = url::form_urlencoded::parse(query.as_bytes()).find(|(name, _)| name == "next").map(|(_, v)| v);
    let next = local(next.as_deref()).to_owned();
    let (request_state, verifier) = (generate_secret(""), generate_secret(""));
    let address = format!("{}/realms/{PLATFORM_REALM}/protocol/openid-connect/auth", state.public_url);
    let Ok(mut login) = url::Url::parse(&address) else {
        return page::failure(&Error::Internal(anyhow::anyhow!("the login page's address does not parse: {address}")));
    };
    login
        .query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", PLATFORM_REALM)
        .append_pair("redirect_uri", &console::redirect_uri(&state))
        .append_pair("state", &request_state)
        .append_pair("code_challenge", &s256(&verifier))
        .append_pair("code_challenge_method", "S256");
    let pending = format!("{request_state}.{verifier}.{}", super::encode(&next));
    let mut response = page::see_other(login.as_str());
    set_cookie(&mut response, &state, SIGN_IN_COOKIE, &pending, Some(SIGN_IN_SECONDS));
    response
}

/// The browser comes back from the login page with a code: the console session opens.
pub async fn callback(State(state): State<AppState>, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let query = query.unwrap_or_default();
    let param = |wanted: &str| {
        url::form_urlencoded::parse(query.as_bytes()).find(|(name, _)| name == wanted).map(|(_, v)| v.into_owned())
    };
    let again = Some(("/console/sign-in", "Sign in again"));
    let pending = cookie(&headers, SIGN_IN_COOKIE).and_then(|value| {
        let mut parts = value.splitn(3, '.');
        Some((parts.next()?, parts.next()?, parts.next()?))
    });
    let Some((expected, verifier, next)) = pending else {
        let message = "This sign-in was not started in this browser, or took too long.";
        return page::plain(StatusCode::BAD_REQUEST, "Sign-in expired", message, again);
    };
    let same = param("state").is_some_and(|got| constant_time_eq(got.as_bytes(), expected.as_bytes()));
    if !same {
        let message = "The answer of the login page does not belong to this sign-in.";
        return page::plain(StatusCode::BAD_REQUEST, "Sign-in not recognised", message, again);
    }
    let Some(code) = param("code") else {
        let message = param("error_description").unwrap_or_else(|| "The login page did not sign you in.".into());
        return page::plain(StatusCode::BAD_REQUEST, "Not signed in", &message, again);
    };
    let next = local(percent_decode_str(next).decode_utf8().ok().as_deref()).to_owned();
    let mut response = match console_sessions::open(&state, &code, verifier).await {
        Ok(Some(opened)) => {
            let mut response = page::see_other(&next);
            let lifetime = console_sessions::LIFETIME.num_seconds();
            set_cookie(&mut response, &state, SESSION_COOKIE, &opened.cookie, Some(lifetime));
            response
        }
        Ok(None) => {
            let message = "You signed in, but you are on no account's team: the console has nothing for you.";
            page::plain(StatusCode::FORBIDDEN, "No team", message, None)
        }
        Err(SignInError::Refused(_)) => {
            let message = "The login page's code was not accepted: it was used already or has expired.";
            page::plain(StatusCode::BAD_REQUEST, "Not signed in", message, again)
        }
        Err(SignInError::Failed(error)) => page::failure(&error),
    };
    set_cookie(&mut response, &state, SIGN_IN_COOKIE, "", Some(0));
    response
}

/// Signs out of the console and of the platform session behind it.
pub async fn sign_out(State(state): State<AppState>, console: Console, body: Bytes) -> Response {
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().collect();
    if !console.genuine(&form) {
        return forged();
    }
    if let Err(error) = console_sessions::end(&state, &console.session).await {
        return page::failure(&error);
    }
    let message = "You are signed out of the console.";
    let mut response = page::plain(StatusCode::OK, "Signed out", message, Some(("/console", "Sign in again")));
    set_cookie(&mut response, &state, SESSION_COOKIE, "", Some(0));
    response
}

/// The answer to a form without the session's CSRF token.
pub fn forged() -> Response {
    let message = "This form did not come from your console session. Reload the page and try again.";
    page::plain(StatusCode::FORBIDDEN, "Form refused", message, Some(("/console", "Back to the console")))
}

/// Adds a cookie of the console's path: HttpOnly, SameSite=Lax, Secure behind HTTPS.
fn set_cookie(response: &mut Response, state: &AppState, name: &str, value: &str, max_age: Option<i64>) {
    let secure = if state.public_url.starts_with("https://") { "; Secure" } else { "" };
    let max_age = max_age.map(|seconds| format!("; Max-Age={seconds}")).unwrap_or_default();
    let text = format!("{name}={value}; Path=/console; HttpOnly; SameSite=Lax{secure}{max_age}");
    if let Ok(value) = HeaderValue::from_str(&text) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
}
