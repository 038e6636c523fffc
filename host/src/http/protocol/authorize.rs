//! The authorization endpoint (RFC 6749 §3.1, OIDC Core §3.1.2) and its login form. A request is
//! checked by `signin::browser`; a browser signed in to the realm is answered at once with a code,
//! any other is shown the login page, whose form runs the password sign-in of `signin::password`.
//! Answers go to the client's registered redirect URI with `iss` (RFC 9207), or, when the client or
//! its redirect URI cannot be trusted, to a page.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::login_page::{self, Language, LoginForm, Texts};
use super::{Form, OAuthError};
use crate::AppState;
use crate::error::Error;
use crate::http::address::ClientAddress;
use crate::signin::browser::{self, Asked, Authorization, AuthorizationError, Denial, Unredirectable};
use crate::signin::{self, Opens, Origin, PasswordAttempt, PasswordOutcome, Refusal, SignInError};
use crate::store::browser::BrowserSession;
use crate::store::realms::Realm;
use crate::store::users::User;
use crate::tokens::issuer;

/// The cookie naming a browser's realm session.
pub(super) const SESSION_COOKIE: &str = "castellan_session";
/// The cookie a form's CSRF token is derived from.
pub(super) const FORM_COOKIE: &str = "castellan_form";

/// The parameters of an authorization request that the login form carries back.
const CARRIED: &[&str] = &[
    "client_id",
    "redirect_uri",
    "response_type",
    "scope",
    "state",
    "nonce",
    "code_challenge",
    "code_challenge_method",
    "prompt",
    "max_age",
    "login_hint",
    "ui_locales",
    "id_token_hint",
];

fn asked(form: &Form) -> Asked<'_> {
    Asked {
        client_id: form.get("client_id"),
        redirect_uri: form.get("redirect_uri"),
        response_type: form.get("response_type"),
        scope: form.get("scope"),
        state: form.get("state"),
        nonce: form.get("nonce"),
        code_challenge: form.get("code_challenge"),
        code_challenge_method: form.get("code_challenge_method"),
        prompt: form.get("prompt"),
        max_age: form.get("max_age"),
        login_hint: form.get("login_hint"),
        ui_locales: form.get("ui_locales"),
        id_token_hint: form.get("id_token_hint"),
        request: form.get("request"),
        request_uri: form.get("request_uri"),
    }
}

fn origin_of(address: std::net::IpAddr, headers: &HeaderMap) -> Origin {
    Origin {
        ip_address: address.to_string(),
        user_agent: headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).map(str::to_owned),
    }
}

/// `GET …/auth`: the request in the query string.
pub async fn get(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    match Form::from_query(query.as_deref().unwrap_or("")) {
        Ok(form) => authorize(&state, &realm_id, &origin_of(address, &headers), &headers, &form).await,
        Err(refused) => malformed(&refused),
    }
}

/// `POST …/auth`: the request as a form (OIDC Core §3.1.2.1).
pub async fn post(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Result<Form, OAuthError>,
) -> Response {
    match form {
        Ok(form) => authorize(&state, &realm_id, &origin_of(address, &headers), &headers, &form).await,
        Err(refused) => malformed(&refused),
    }
}

fn malformed(refused: &OAuthError) -> Response {
    login_page::problem(StatusCode::BAD_REQUEST, "This sign-in request cannot be read", &refused.description)
}

async fn authorize(state: &AppState, realm_id: &str, origin: &Origin, headers: &HeaderMap, form: &Form) -> Response {
    let Ok(realm) = super::realm(state, realm_id).await else { return realm_not_found() };
    let authorization = match browser::check(state, &realm, &asked(form)).await {
        Ok(authorization) => authorization,
        Err(error) => return refused(state, &realm, error),
    };
    let signed_in = match cookie(headers, SESSION_COOKIE) {
        Some(value) => match browser::signed_in(state, &realm, value).await {
            Ok(found) => found,
            Err(failure) => return refused(state, &realm, failure.into()),
        },
        None => None,
    };
    let now = state.clock.now();
    if let Some((session, user)) = signed_in.filter(|(session, _)| browser::satisfies(&authorization, session, now)) {
        return answer_with_code(state, &realm, &authorization, &session, &user, origin, None).await;
    }
    if authorization.prompt_none {
        return denied(state, &realm, &authorization, Denial::LoginRequired, "the person is not signed in");
    }
    let username = authorization.login_hint.clone().unwrap_or_default();
    Page { state, realm: &realm, authorization: &authorization, form, headers }.login(&username, None)
}

/// `POST …/auth/login`: the login form, with the request's parameters carried back.
pub async fn login(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Result<Form, OAuthError>,
) -> Response {
    let (form, realm, authorization) = match posted(&state, &realm_id, &headers, form).await {
        Ok(posted) => posted,
        Err(answer) => return *answer,
    };
    let username = form.get("username").unwrap_or("");
    let origin = origin_of(address, &headers);
    let attempt = PasswordAttempt {
        realm: &realm,
        client: &authorization.client,
        username,
        password: form.get("password").unwrap_or(""),
        scopes: Some(authorization.scopes.clone()),
        resource: None,
        confirm_on_phone: false,
        origin: &origin,
        opens: Opens::BrowserSession,
    };
    match signin::password(&state, attempt).await {
        Ok(PasswordOutcome::InBrowser(signed_in)) => {
            let cookie = session_cookie(&state, &realm, &signed_in.cookie);
            let session = &signed_in.session;
            answer_with_code(&state, &realm, &authorization, session, &signed_in.user, &origin, Some(cookie)).await
        }
        Ok(PasswordOutcome::MustChangePassword { ticket }) => {
            let page =
                Page { state: &state, realm: &realm, authorization: &authorization, form: &form, headers: &headers };
            page.change(&ticket, None)
        }
        Ok(_) => refused(
            &state,
            &realm,
            Error::Internal(anyhow::anyhow!("a password sign-in opened no browser session")).into(),
        ),
        Err(SignInError::Refused(refusal)) => {
            let message = refusal_text(&refusal, texts_for(&form, &headers));
            let page =
                Page { state: &state, realm: &realm, authorization: &authorization, form: &form, headers: &headers };
            page.login(username, Some(message))
        }
        Err(SignInError::Failed(failure)) => refused(&state, &realm, failure.into()),
    }
}

/// What the login page says of a refused sign-in: never which of the name or password was wrong.
fn refusal_text(refusal: &Refusal, texts: &'static Texts) -> (StatusCode, &'static str) {
    match refusal {
        Refusal::SourceBlocked => (StatusCode::TOO_MANY_REQUESTS, texts.too_many_attempts),
        Refusal::LockedOut => (StatusCode::OK, texts.locked_out),
        Refusal::UserDisabled => (StatusCode::OK, texts.disabled),
        Refusal::PasswordChangeRequired => (StatusCode::OK, texts.change_password),
        _ => (StatusCode::OK, texts.wrong_credentials),
    }
}

/// The language of the pages for this request: its `ui_locales`, else the browser's.
pub(super) fn texts_for(form: &Form, headers: &HeaderMap) -> &'static Texts {
    let accepted = headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    Language::choose(form.get("ui_locales"), accepted).texts()
}

/// Opens the client's session from the browser's and redirects with the code.
async fn answer_with_code(
    state: &AppState,
    realm: &Realm,
    authorization: &Authorization,
    session: &BrowserSession,
    user: &User,
    origin: &Origin,
    set_cookie: Option<HeaderValue>,
) -> Response {
    match browser::authorize(state, realm, authorization, session, user, origin).await {
        Ok(code) => {
            let mut response =
                redirect(state, realm, &authorization.redirect_uri, &authorization.state, &[("code", &code)]);
            if let Some(cookie) = set_cookie {
                response.headers_mut().append(header::SET_COOKIE, cookie);
            }
            response
        }
        Err(failure) => refused(state, realm, failure.into()),
    }
}

/// `POST …/auth/password`: the new password of a person who had to change it, with the ticket
/// their sign-in was given. Set, it leads back to the login form.
pub async fn change_password(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    form: Result<Form, OAuthError>,
) -> Response {
    let (form, realm, authorization) = match posted(&state, &realm_id, &headers, form).await {
        Ok(posted) => posted,
        Err(answer) => return *answer,
    };
    let texts = texts_for(&form, &headers);
    let (ticket, password) = (form.get("ticket").unwrap_or(""), form.get("new_password").unwrap_or(""));
    let page = Page { state: &state, realm: &realm, authorization: &authorization, form: &form, headers: &headers };
    match signin::recovery::reset(&state, &realm, ticket, password).await {
        Ok(()) => page.login("", Some((StatusCode::OK, texts.password_changed))),
        Err(SignInError::Refused(Refusal::PasswordLength { .. })) => page.change(ticket, Some(texts.password_length)),
        Err(SignInError::Refused(Refusal::PasswordBreached)) => page.change(ticket, Some(texts.password_breached)),
        Err(SignInError::Refused(_)) => page.login("", Some((StatusCode::OK, texts.took_too_long))),
        Err(SignInError::Failed(failure)) => refused(&state, &realm, failure.into()),
    }
}

/// What a page of the sign-in answers: the request it serves.
struct Page<'a> {
    state: &'a AppState,
    realm: &'a Realm,
    authorization: &'a Authorization,
    form: &'a Form,
    headers: &'a HeaderMap,
}

impl Page<'_> {
    /// The login page, again with a message when there is one (the refusal of the last attempt, or
    /// news of a changed password).
    fn login(&self, username: &str, message: Option<(StatusCode, &'static str)>) -> Response {
        let (status, error) = match message {
            Some((status, text)) => (status, Some(text)),
            None => (StatusCode::OK, None),
        };
        self.render("login", username, error, |page| login_page::login(page, status))
    }

    /// The change-password step, again with the refusal of the last new password when there was one.
    fn change(&self, ticket: &str, error: Option<&str>) -> Response {
        let status = if error.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
        self.render("password", "", error, |page| login_page::change_password(page, ticket, status))
    }

    /// A form of the request posting to `…/auth/{path}`, drawn by `draw`, with a fresh CSRF token
    /// and the cookie it is bound to.
    fn render(
        &self,
        path: &str,
        username: &str,
        error: Option<&str>,
        draw: impl FnOnce(&LoginForm<'_>) -> Response,
    ) -> Response {
        let Page { state, realm, authorization, form, headers } = *self;
        let (csrf, form_cookie) = fresh_form(state, realm);
        let carried = carried(form, CARRIED);
        let action = format!("{}/protocol/openid-connect/auth/{path}", issuer(state, &realm.id));
        let redirect_origin = login_page::form_target(&authorization.redirect_uri);
        let page = LoginForm {
            client_name: &authorization.client.name,
            action: &action,
            carried: &carried,
            csrf: &csrf,
            username,
            error,
            redirect_origin: &redirect_origin,
            texts: texts_for(form, headers),
            logo_uri: authorization.client.logo_uri.as_deref(),
            color: authorization.client.brand_color.as_deref(),
        };
        let mut response = draw(&page);
        append_cookie(&mut response, &form_cookie);
        response
    }
}

/// The parameters among `names` that the form carries, to post back unchanged.
pub(super) fn carried<'f>(form: &'f Form, names: &[&'static str]) -> Vec<(&'static str, &'f str)> {
    names.iter().filter_map(|name| form.get(name).map(|value| (*name, value))).collect()
}

/// A new form's CSRF token, and the cookie (as a `Set-Cookie` value) it is bound to.
pub(super) fn fresh_form(state: &AppState, realm: &Realm) -> (String, String) {
    let form_secret = crate::crypto::generate_secret("");
    (csrf_token(state, &form_secret), cookie_text(state, realm, FORM_COOKIE, &form_secret, None))
}

pub(super) fn append_cookie(response: &mut Response, text: &str) {
    if let Ok(value) = HeaderValue::from_str(text) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
}

/// A form of the sign-in pages, read: its realm, its authorization request checked again, and its
/// token matched with this browser's; else the answer to give.
async fn posted(
    state: &AppState,
    realm_id: &str,
    headers: &HeaderMap,
    form: Result<Form, OAuthError>,
) -> Result<(Form, Arc<Realm>, Authorization), Box<Response>> {
    let form = form.map_err(|refused| Box::new(malformed(&refused)))?;
    let Ok(realm) = super::realm(state, realm_id).await else { return Err(Box::new(realm_not_found())) };
    let authorization = match browser::check(state, &realm, &asked(&form)).await {
        Ok(authorization) => authorization,
        Err(error) => return Err(Box::new(refused(state, &realm, error))),
    };
    if !genuine_form(state, headers, &form) {
        return Err(Box::new(expired_form()));
    }
    Ok((form, realm, authorization))
}

/// Whether a form comes from a page this browser was shown: its token derives from the browser's
/// form cookie, which other sites can neither read nor send (SameSite=Lax).
pub(super) fn genuine_form(state: &AppState, headers: &HeaderMap, form: &Form) -> bool {
    cookie(headers, FORM_COOKIE).zip(form.get("csrf")).is_some_and(|(value, token)| {
        crate::crypto::constant_time_eq(csrf_token(state, value).as_bytes(), token.as_bytes())
    })
}

fn expired_form() -> Response {
    login_page::problem(
        StatusCode::FORBIDDEN,
        "This sign-in form has expired",
        "Go back to the application and start signing in again.",
    )
}

pub(super) fn csrf_token(state: &AppState, form_secret: &str) -> String {
    state.hasher.hash(&format!("login-form:{form_secret}"))
}

fn session_cookie(state: &AppState, realm: &Realm, value: &str) -> HeaderValue {
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
pub(super) fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// A 303 to the client's redirect URI with `params`, `state` and `iss` added to its query.
fn redirect(
    state: &AppState,
    realm: &Realm,
    redirect_uri: &str,
    request_state: &Option<String>,
    params: &[(&str, &str)],
) -> Response {
    let Ok(mut url) = url::Url::parse(redirect_uri) else {
        return login_page::problem(StatusCode::BAD_REQUEST, "The application's address is not valid", redirect_uri);
    };
    {
        let mut query = url.query_pairs_mut();
        for (name, value) in params {
            query.append_pair(name, value);
        }
        if let Some(request_state) = request_state {
            query.append_pair("state", request_state);
        }
        query.append_pair("iss", &issuer(state, &realm.id));
    }
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(location) = HeaderValue::from_str(url.as_str()) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    login_page::secure(response.headers_mut());
    response
}

fn denied(
    state: &AppState,
    realm: &Realm,
    authorization: &Authorization,
    denial: Denial,
    description: &str,
) -> Response {
    let params = [("error", denial.as_str()), ("error_description", description)];
    redirect(state, realm, &authorization.redirect_uri, &authorization.state, &params)
}

/// The answer to a refused authorization request: a redirect to a trusted redirect URI, else a page.
fn refused(state: &AppState, realm: &Realm, error: AuthorizationError) -> Response {
    match error {
        AuthorizationError::Unredirectable(why) => {
            let (title, explanation) = match why {
                Unredirectable::ClientMissing => ("The application is not named", "The request names no client_id."),
                Unredirectable::ClientUnknown => {
                    ("The application is not known", "No active client of this realm has this client_id.")
                }
                Unredirectable::RedirectUriMissing => {
                    ("The return address is missing", "The request names no redirect_uri.")
                }
                Unredirectable::RedirectUriNotRegistered => (
                    "The return address is not registered",
                    "The redirect_uri is not one of the client's registered redirect URIs.",
                ),
            };
            login_page::problem(StatusCode::BAD_REQUEST, title, explanation)
        }
        AuthorizationError::Denied { redirect_uri, state: request_state, denial, description } => {
            let params = [("error", denial.as_str()), ("error_description", description.as_str())];
            redirect(state, realm, &redirect_uri, &request_state, &params)
        }
        AuthorizationError::Failed(failure) => {
            tracing::error!(error = %failure, "an authorization request failed");
            login_page::problem(
                StatusCode::SERVICE_UNAVAILABLE,
                "Signing in is not possible right now",
                "Try again in a moment.",
            )
        }
    }
}

fn realm_not_found() -> Response {
    login_page::problem(StatusCode::NOT_FOUND, "No such realm", "This address names no active realm.")
}
