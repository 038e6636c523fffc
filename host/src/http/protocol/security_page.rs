//! `GET|POST /realms/{realm}/account/security`: the page where a person signed in to the realm in
//! this browser sees their sign-in methods beyond the password (passkeys, authenticator apps,
//! recovery codes), adds a passkey and removes any of them. The browser's realm session names the
//! person; each change is a form with a CSRF token bound to the browser (a new passkey's
//! challenge is bound to that token too), and needs a sign-in of the last fifteen minutes: a
//! browser left signed in, or a stolen session cookie, cannot add a passkey of its own.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::applications_page::no_realm;
use super::authorize::texts_for;
use super::cookies::{SESSION_COOKIE, append_cookie, cookie, fresh_form, genuine_form};
use super::login_page::{self, Enrolling, Method, Registering, Said};
use super::{Form, OAuthError};
use crate::http::AppState;
use crate::oauth::second_factors::{self, By, passkeys, totp};
use crate::oauth::signin::browser;
use crate::oauth::signin::texts::Texts;
use crate::oauth::tokens::issuer;
use crate::runtime::error::Error;
use crate::store::authenticators::AuthenticatorKind;
use crate::store::realms::Realm;
use crate::store::users::User;

/// `GET`: the list, and the form adding a passkey.
pub async fn shown(State(state): State<AppState>, Path(realm_id): Path<String>, headers: HeaderMap) -> Response {
    let texts = texts_for(&Form::default(), &headers);
    let Ok(realm) = super::realm(&state, &realm_id).await else { return no_realm() };
    match signed_in(&state, &realm, &headers).await {
        Ok(Some((_, user))) => page(&state, &realm, &user, texts, Said::default()).await,
        Ok(None) => login_page::shown(StatusCode::UNAUTHORIZED, texts.not_signed_in, texts.sign_in_first, texts),
        Err(response) => response,
    }
}

/// `POST`: `action=add-passkey` with the browser's `credential` (and a `name`), or
/// `action=remove` with the `authenticator`; then the list again, saying what happened.
pub async fn changed(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    form: Result<Form, OAuthError>,
) -> Response {
    let texts = texts_for(&Form::default(), &headers);
    let Ok(realm) = super::realm(&state, &realm_id).await else { return no_realm() };
    let (session, user) = match signed_in(&state, &realm, &headers).await {
        Ok(Some(found)) => found,
        Ok(None) => {
            return login_page::shown(StatusCode::UNAUTHORIZED, texts.not_signed_in, texts.sign_in_first, texts);
        }
        Err(response) => return response,
    };
    let Ok(form) = form else { return page(&state, &realm, &user, texts, said(texts.form_expired)).await };
    if !genuine_form(&state, &headers, &form) {
        return page(&state, &realm, &user, texts, said(texts.form_expired)).await;
    }
    // A browser left signed in is not enough to change how the person signs in.
    if state.clock.now() - session.authenticated_at > RECENT_SIGN_IN {
        return page(&state, &realm, &user, texts, said(texts.sign_in_again_to_change)).await;
    }
    let outcome = match form.get("action") {
        Some("add-passkey") => {
            let (binding, credential) = (form.get("csrf").unwrap_or(""), form.get("credential").unwrap_or(""));
            match passkeys::register(&state, &realm, &user, binding, credential, form.get("name")).await {
                Ok(_) => Ok(said(texts.passkey_added)),
                Err(Error::Validation(_) | Error::Conflict(_)) => Ok(said(texts.passkey_not_added)),
                Err(failure) => Err(failure),
            }
        }
        Some("add-app") => {
            let enrolment = totp::begin(&state, &realm, &user);
            let qr_code = crate::http::qr::svg(&enrolment.uri);
            let app = Enrolling { qr_code: &qr_code, secret: &enrolment.secret, enrolment: &enrolment.token };
            return page(&state, &realm, &user, texts, Said { enrolling: Some(app), ..Said::default() }).await;
        }
        Some("confirm-app") => {
            let (token, code) = (form.get("enrolment").unwrap_or(""), form.get("code").unwrap_or(""));
            match totp::confirm(&state, &realm, &user, token, code, form.get("name")).await {
                Ok(confirmed) => {
                    let codes = confirmed.recovery_codes.unwrap_or_default();
                    let shown = Said { notice: Some(texts.app_added), recovery_codes: Some(&codes), ..Said::default() };
                    return page(&state, &realm, &user, texts, shown).await;
                }
                Err(Error::Validation(_) | Error::Conflict(_)) => Ok(said(texts.app_not_added)),
                Err(failure) => Err(failure),
            }
        }
        Some("remove") => {
            let id = form.get("authenticator").unwrap_or("");
            match second_factors::remove(&state, &realm, &user, id, By::Owner).await {
                Ok(()) | Err(Error::NotFound(_)) => Ok(said(texts.removed)),
                Err(failure) => Err(failure),
            }
        }
        _ => Ok(said(texts.form_expired)),
    };
    match outcome {
        Ok(shown) => page(&state, &realm, &user, texts, shown).await,
        Err(failure) => unavailable(&failure),
    }
}

/// A page saying `notice`.
fn said(notice: &str) -> Said<'_> {
    Said { notice: Some(notice), ..Said::default() }
}

/// How recent a sign-in must be to add or remove a sign-in method.
const RECENT_SIGN_IN: chrono::TimeDelta = chrono::TimeDelta::minutes(15);

/// The browser's realm session and its person, if any.
async fn signed_in(
    state: &AppState,
    realm: &Realm,
    headers: &HeaderMap,
) -> Result<Option<(crate::store::browser::BrowserSession, User)>, Response> {
    let Some(value) = cookie(headers, SESSION_COOKIE) else { return Ok(None) };
    browser::signed_in(state, realm, value).await.map_err(|failure| unavailable(&failure))
}

async fn page(state: &AppState, realm: &Realm, user: &User, texts: &'static Texts, said: Said<'_>) -> Response {
    let listed = match second_factors::list(state, user).await {
        Ok(listed) => listed,
        Err(failure) => return unavailable(&failure),
    };
    let methods: Vec<Method> = listed
        .iter()
        .map(|one| {
            let mut line = format!("{} {}", texts.added_on, day(&one.created_at));
            if let Some(used) = &one.last_used_at {
                line = format!("{line}, {} {}", texts.last_used, day(used));
            }
            if let (AuthenticatorKind::RecoveryCodes, Some(left)) = (one.kind, one.codes_left) {
                line = format!("{line} ({left}/10)");
            }
            Method { id: one.id.clone(), name: one.name.clone(), line }
        })
        .collect();
    let (csrf, form_cookie) = fresh_form(state, realm);
    let options = match passkeys::registration_options(state, realm, user, &csrf).await {
        Ok(options) => options.to_string(),
        Err(failure) => return unavailable(&failure),
    };
    let action = format!("{}/account/security", issuer(state, &realm.id));
    let script = format!("{}/assets/passkeys.js", state.public_url);
    let registering = Registering { options: &options, script: &script };
    let mut response = login_page::sign_in_methods(texts, (&action, &csrf), &methods, registering, said);
    append_cookie(&mut response, &form_cookie);
    response
}

/// The day of an RFC 3339 instant.
fn day(instant: &str) -> &str {
    instant.get(..10).unwrap_or(instant)
}

fn unavailable(failure: &Error) -> Response {
    tracing::error!(error = %failure, "the sign-in methods page failed");
    login_page::problem(StatusCode::SERVICE_UNAVAILABLE, "This is not possible right now", "Try again in a moment.")
}
