//! `GET|POST /realms/{realm}/account/security`: the page where a person signed in to the realm in
//! this browser sees their sign-in methods beyond the password (passkeys, authenticator apps,
//! recovery codes), adds a passkey or an authenticator app, and removes any of them; the page is
//! drawn here too, on the sign-in pages' document. The browser's realm session names the person;
//! each change is a form with a CSRF token bound to the browser (a new passkey's challenge is bound
//! to that token too), and needs a sign-in of the last fifteen minutes: a browser left signed in,
//! or a stolen session cookie, cannot add a factor of its own.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use maud::{PreEscaped, html};

use super::applications_page::no_realm;
use super::authorize::texts_for;
use super::cookies::{SESSION_COOKIE, append_cookie, cookie, fresh_form, genuine_form};
use super::login_page::{self, Document};
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
    let mut response = sign_in_methods(texts, (&action, &csrf), &methods, registering, said);
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

/// One authenticator on the page of a person's sign-in methods: the value its removal posts, its
/// name, and a line about it.
#[derive(Debug, Clone)]
pub struct Method {
    pub id: String,
    pub name: String,
    pub line: String,
}

/// What the page of sign-in methods needs to register a passkey: the options of
/// `navigator.credentials.create()` as JSON, and the passkey script's address.
#[derive(Debug, Clone, Copy)]
pub struct Registering<'a> {
    pub options: &'a str,
    pub script: &'a str,
}

/// An authenticator app being added on the page of sign-in methods: the QR code of its
/// `otpauth://` URI (SVG the service drew), its key as text, and the enrolment to send back with
/// the code the app shows.
#[derive(Debug, Clone, Copy)]
pub struct Enrolling<'a> {
    pub qr_code: &'a str,
    pub secret: &'a str,
    pub enrolment: &'a str,
}

/// What the page of sign-in methods says beyond the list: a notice, an app being added, the
/// recovery codes of a first second factor (shown once).
#[derive(Debug, Clone, Copy, Default)]
pub struct Said<'a> {
    pub notice: Option<&'a str>,
    pub enrolling: Option<Enrolling<'a>>,
    pub recovery_codes: Option<&'a [String]>,
}

/// The page of a person's sign-in methods: their passkeys and authenticator apps, each with a
/// button that removes it, a form that adds a passkey (shown by the script where the browser has
/// WebAuthn) and one that adds an authenticator app. Every form posts to `action` with the CSRF
/// token.
pub fn sign_in_methods(
    texts: &'static Texts,
    (action, csrf): (&str, &str),
    methods: &[Method],
    registering: Registering<'_>,
    said: Said<'_>,
) -> Response {
    let Said { notice, enrolling, recovery_codes } = said;
    let main = html! {
        h1 { (texts.sign_in_methods) }
        @if let Some(notice) = notice { p role="status" { (notice) } }
        @if let Some(codes) = recovery_codes {
            p { (texts.recovery_codes_once) }
            ul { @for code in codes { li { code { (code) } } } }
        }
        @if let Some(app) = enrolling {
            section {
                h2 { (texts.add_app) }
                p { (texts.scan_app) }
                // The service's own drawing of the URI: markup it wrote, with no script.
                (PreEscaped(app.qr_code))
                p { (texts.app_secret) ": " code { (app.secret) } }
                form id="app-confirm" method="post" action=(action) {
                    input type="hidden" name="csrf" value=(csrf);
                    input type="hidden" name="action" value="confirm-app";
                    input type="hidden" name="enrolment" value=(app.enrolment);
                    label for="app-code" { (texts.app_code) }
                    input id="app-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required autofocus;
                    label for="app-name" { (texts.app_name) }
                    input id="app-name" name="name" type="text" autocomplete="off";
                    button type="submit" { (texts.keep_app) }
                }
            }
        }
        @if methods.is_empty() { p { (texts.no_sign_in_methods) } }
        @for method in methods {
            section {
                h2 { (method.name) }
                p { (method.line) }
                form method="post" action=(action) {
                    input type="hidden" name="csrf" value=(csrf);
                    input type="hidden" name="authenticator" value=(method.id);
                    button type="submit" name="action" value="remove" class="secondary" { (texts.remove) " " (method.name) }
                }
            }
        }
        form id="passkey-register" method="post" action=(action) hidden data-options=(registering.options) {
            input type="hidden" name="csrf" value=(csrf);
            input type="hidden" name="action" value="add-passkey";
            input type="hidden" name="credential" value="";
            label for="passkey-name" { (texts.passkey_name) }
            input id="passkey-name" name="name" type="text" autocomplete="off";
            button type="submit" { (texts.add_passkey) }
            p id="passkey-error" class="error" role="alert" hidden { (texts.passkey_not_added) }
        }
        @if enrolling.is_none() {
            form id="app-add" method="post" action=(action) {
                input type="hidden" name="csrf" value=(csrf);
                button type="submit" name="action" value="add-app" class="secondary" { (texts.add_app) }
            }
        }
    };
    let style = "h2{font-size:1.1rem;margin:1.5rem 0 .5rem}section+section{border-top:1px solid #dadce0}";
    let document = Document {
        texts,
        title: texts.sign_in_methods,
        style,
        main,
        images: None,
        form_targets: Some(""),
        refresh: None,
        script: Some(registering.script),
    };
    document.answer(StatusCode::OK)
}
