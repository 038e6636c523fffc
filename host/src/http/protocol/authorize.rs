//! The authorization endpoint (RFC 6749 §3.1, OIDC Core §3.1.2). A request is checked by
//! `signin::browser`; a browser signed in to the realm is answered at once with a code, any other
//! is shown the login page (or with `prompt=create`, the sign-up form), whose steps are
//! `sign_in_steps`. Answers go to the client's registered redirect URI with `iss` (RFC 9207), or,
//! when the client or its redirect URI cannot be trusted, to a page. This module also holds what
//! every step shares: the request carried from page to page, the forms' CSRF tokens, and cookies.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{OriginalUri, Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use super::cookies::{SESSION_COOKIE, append_cookie, cookie, expired_form, fresh_form, genuine_form, session_cookie};
use super::login_page::{self, Field, FormPage, Frame, Problem};
use super::{Form, OAuthError};
use crate::http::AppState;
use crate::http::address::ClientAddress;
use crate::oauth::consent;
use crate::oauth::federation;
use crate::oauth::metadata_documents::{self, DocumentError};
use crate::oauth::registration::Asker;
use crate::oauth::signin::assurance::Level;
use crate::oauth::signin::browser::{self, Asked, Authorization, AuthorizationError, Denial, Unredirectable};
use crate::oauth::signin::texts::{Language, Texts};
use crate::oauth::signin::{BrowserSignIn, Origin, device};
use crate::oauth::tokens::issuer;
use crate::runtime::rate_limit::{Class, source_key};
use crate::store::browser::BrowserSession;
use crate::store::identity_providers::IdentityProvider;
use crate::store::realms::Realm;
use crate::store::trail::Request;
use crate::store::users::User;

/// The parameters of an authorization request that the login form carries back.
pub(super) const CARRIED: &[&str] = &[
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
    "resource",
    "acr_values",
    "claims",
    "device",
    "connect",
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
        resource: form.get("resource"),
        acr_values: form.get("acr_values"),
        claims: form.get("claims"),
        request: form.get("request"),
        request_uri: form.get("request_uri"),
        device: form.get("device"),
        connect: form.get("connect"),
    }
}

pub(super) fn origin_of(address: std::net::IpAddr, headers: &HeaderMap) -> Origin {
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
    uri: OriginalUri,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let asker = asker(address, "GET", &uri);
    match Form::from_query(query.as_deref()) {
        Ok(form) => {
            authorize(&state, &realm_id, (address, &asker), &origin_of(address, &headers), &headers, &form).await
        }
        Err(refused) => malformed(&refused),
    }
}

/// `POST …/auth`: the request as a form (OIDC Core §3.1.2.1).
pub async fn post(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    uri: OriginalUri,
    headers: HeaderMap,
    form: Result<Form, OAuthError>,
) -> Response {
    let asker = asker(address, "POST", &uri);
    match form {
        Ok(form) => {
            authorize(&state, &realm_id, (address, &asker), &origin_of(address, &headers), &headers, &form).await
        }
        Err(refused) => malformed(&refused),
    }
}

fn malformed(refused: &OAuthError) -> Response {
    login_page::problem(StatusCode::BAD_REQUEST, "This sign-in request cannot be read", &refused.description)
}

/// Who sent an authorization request, for the audit trail of a client its metadata document
/// brings in.
fn asker(address: std::net::IpAddr, method: &str, uri: &OriginalUri) -> Asker {
    Asker {
        ip_address: address.to_string(),
        request: Request { method: method.to_owned(), path: uri.path().to_owned() },
    }
}

async fn authorize(
    state: &AppState,
    realm_id: &str,
    (address, asker): (std::net::IpAddr, &Asker),
    origin: &Origin,
    headers: &HeaderMap,
    form: &Form,
) -> Response {
    let Ok(realm) = super::realm(state, realm_id).await else { return realm_not_found() };
    if let Some(client_id) = form.get("client_id") {
        // A client a document brings in for the first time counts against its source's
        // registrations, as a registration does.
        if metadata_documents::names_document(&realm, client_id) {
            let known = match crate::oauth::tokens::find_client(state, &realm.id, client_id).await {
                Ok(known) => known.is_some(),
                Err(failure) => return refused(state, &realm, failure.into()),
            };
            let source = source_key(address);
            if !known && state.limiter.take(&source, Class::ClientRegistration, state.clock.now()).await.is_err() {
                let why = "this address brought in as many new applications as it may for now";
                return login_page::problem(StatusCode::TOO_MANY_REQUESTS, "Try again later", why);
            }
        }
        match metadata_documents::refresh(state, &state.authz, &realm, client_id, asker).await {
            Ok(()) => {}
            Err(DocumentError::Refused(why)) => {
                return login_page::problem(StatusCode::BAD_REQUEST, "The application cannot be used", &why);
            }
            Err(DocumentError::Busy(full)) => {
                return login_page::problem(StatusCode::TOO_MANY_REQUESTS, "Try again later", &full.why);
            }
            Err(DocumentError::Failed(failure)) => return refused(state, &realm, failure.into()),
        }
    }
    let authorization = match browser::check(state, &state.authz, &realm, &asked(form)).await {
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
    // A browser signed in already, and the sign-up form, need no identity providers.
    let page = Page { state, realm: &realm, authorization: &authorization, form, headers, providers: &[] };
    if authorization.prompt_create {
        return page.sign_up("", "", None);
    }
    let now = state.clock.now();
    if let Some((session, user)) = signed_in.filter(|(session, _)| browser::satisfies(&authorization, session, now)) {
        return answer_with_code(&page, &session, &user, origin, None).await;
    }
    if authorization.prompt_none {
        return denied(state, &realm, &authorization, Denial::LoginRequired, "the person is not signed in");
    }
    let providers = match federation::offered_by_client(state, &realm, &authorization.client.id).await {
        Ok(providers) => providers,
        Err(failure) => return refused(state, &realm, failure.into()),
    };
    let page = Page { providers: &providers, ..page };
    // `idp_hint` names one of the providers the login page offers: the page is skipped. A
    // `login_hint` at an organization's domain goes to the organization's provider.
    if let Some(provider) = form.get("idp_hint").and_then(|hint| providers.iter().find(|p| p.id.as_str() == hint)) {
        return page.upstream(provider, None).await;
    }
    if let Some(hint) = authorization.login_hint.as_deref() {
        match federation::for_address(state, &realm, hint).await {
            Ok(Some(provider)) => return page.upstream(&provider, Some(hint)).await,
            Ok(None) => {}
            Err(failure) => return refused(state, &realm, failure.into()),
        }
    }
    page.login(authorization.login_hint.as_deref().unwrap_or(""), None)
}

/// The language of the pages for this request: its `ui_locales`, else the browser's.
pub(super) fn texts_for(form: &Form, headers: &HeaderMap) -> &'static Texts {
    let accepted = headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    Language::choose(form.get("ui_locales"), accepted).texts()
}

/// A browser just signed in to the realm: its session cookie is set, and the client answered.
pub(super) async fn answer_signed_in(page: &Page<'_>, signed_in: &BrowserSignIn, origin: &Origin) -> Response {
    let cookie = session_cookie(page.state, page.realm, &signed_in.cookie);
    answer_with_code(page, &signed_in.session, &signed_in.user, origin, Some(cookie)).await
}

/// Answers the client for the browser's person: with the consent page when the person must be
/// asked first, else by opening the client's session and redirecting with the code.
pub(super) async fn answer_with_code(
    page: &Page<'_>,
    session: &BrowserSession,
    user: &User,
    origin: &Origin,
    set_cookie: Option<HeaderValue>,
) -> Response {
    let Page { state, realm, authorization, .. } = *page;
    if !browser::reaches(authorization, session) {
        let why = "the sign-in did not reach the level of assurance the request asks for";
        let mut response = denied(state, realm, authorization, Denial::UnmetAuthenticationRequirements, why);
        if let Some(cookie) = set_cookie {
            response.headers_mut().append(header::SET_COOKIE, cookie);
        }
        return response;
    }
    let mut response = match consent::question(state, realm, authorization, user).await {
        Ok(Some(_)) if authorization.prompt_none => {
            denied(state, realm, authorization, Denial::ConsentRequired, "the person has not consented to this client")
        }
        Ok(Some(question)) => page.consent(&question),
        Ok(None) => code_response(page, session, user, origin).await,
        Err(failure) => refused(state, realm, failure.into()),
    };
    if let Some(cookie) = set_cookie {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    response
}

/// Opens the client's session from the browser's and redirects with the code; or first sends the
/// person to connect an account, when the request asks it.
pub(super) async fn code_response(page: &Page<'_>, session: &BrowserSession, user: &User, origin: &Origin) -> Response {
    let Page { state, realm, authorization, .. } = *page;
    if let Some(provider) = &authorization.connect {
        return page.connect(provider, user).await;
    }
    if let Some(device) = &authorization.device {
        let texts = device_texts(authorization);
        return match device::approve(state, realm, authorization, device, (session, user), origin).await {
            Ok(true) => login_page::shown(StatusCode::OK, texts.device_approved_title, texts.device_approved, texts),
            Ok(false) => login_page::shown(StatusCode::BAD_REQUEST, texts.device_title, texts.device_gone, texts),
            Err(failure) => refused(state, realm, failure.into()),
        };
    }
    match browser::authorize(state, realm, authorization, session, user, origin).await {
        Ok(code) => redirect(state, realm, &authorization.redirect_uri, &authorization.state, &[("code", &code)]),
        Err(failure) => refused(state, realm, failure),
    }
}

/// The language of the page ending a device's approval: the request's `ui_locales`.
fn device_texts(authorization: &Authorization) -> &'static Texts {
    Language::choose(authorization.ui_locales.as_deref(), None).texts()
}

/// What a page of the sign-in answers: the request it serves.
pub(super) struct Page<'a> {
    pub state: &'a AppState,
    pub realm: &'a Realm,
    pub authorization: &'a Authorization,
    pub form: &'a Form,
    pub headers: &'a HeaderMap,
    /// The identity providers the client's login page offers.
    pub providers: &'a [IdentityProvider],
}

impl Page<'_> {
    pub fn texts(&self) -> &'static Texts {
        texts_for(self.form, self.headers)
    }

    /// The login page, again with a message when there is one (the refusal of the last attempt, or
    /// news of a changed password).
    pub fn login(&self, username: &str, message: Option<(StatusCode, &'static str)>) -> Response {
        let texts = self.texts();
        let (status, problem) = match message {
            Some((status, text)) => (status, Some(Problem { text, field: None })),
            None => (StatusCode::OK, None),
        };
        self.show(
            |frame| {
                let mut links = vec![(frame.link("recovery"), texts.forgot_password)];
                if crate::oauth::signin::signup::open(self.state, self.realm) {
                    links.push((frame.link("register"), texts.create_account));
                }
                let others = self
                    .providers
                    .iter()
                    .map(|provider| {
                        let label = format!("{} {}", texts.sign_in_with, provider.display_name);
                        (frame.link(&format!("upstream/{}", provider.id)), label)
                    })
                    .collect();
                let passkey = Some(self.passkey_offer(frame.csrf));
                // A request asking for more than one factor says so.
                let intro = match self.authorization.least_level {
                    Some(level) if level >= Level::PhishingResistant => Some(texts.stronger_sign_in_passkey),
                    Some(Level::MultiFactor) => Some(texts.stronger_sign_in),
                    _ => None,
                };
                FormPage {
                    title: format!("{} {}", texts.sign_in_to, self.authorization.client.name),
                    intro,
                    path: "login",
                    others,
                    fields: vec![
                        Field::text("username", texts.username, "username webauthn", username),
                        Field::password("password", texts.password, "current-password"),
                    ],
                    passkey,
                    button: texts.sign_in,
                    problem,
                    links,
                    ..FormPage::default()
                }
            },
            status,
        )
    }

    /// The consent page: what the client asks and, for a third party, where it is served from.
    pub fn consent(&self, question: &consent::Question) -> Response {
        let texts = self.texts();
        let client = &self.authorization.client;
        let mut intro = String::new();
        if client.third_party() {
            intro = format!("{} {}. {}", texts.consent_served_from, question.host, texts.consent_not_operated);
        }
        if let Some(resource) = &question.resource {
            intro = format!("{intro} {} {resource}.", texts.consent_for_resource).trim().to_owned();
        }
        if self.authorization.device.is_some() {
            intro = format!("{} {intro}", texts.consent_device).trim().to_owned();
        }
        intro = format!("{} {}. {intro}", texts.signed_in_as, question.person).trim().to_owned();
        let shown = |scopes: &[String]| -> Vec<String> {
            scopes.iter().map(|scope| question.shown(scope, |name| texts.standard_scope(name))).collect()
        };
        self.show(
            |frame| FormPage {
                title: format!("{} {}", client.name, texts.consent_asks),
                intro: (!intro.is_empty()).then_some(intro.as_str()),
                path: "consent",
                lists: vec![
                    (texts.consent_new, shown(&question.missing)),
                    (texts.consent_earlier, shown(&question.allowed)),
                ],
                button: texts.allow,
                refusal: Some(texts.deny),
                // Another person at this browser signs in afresh for the same request.
                links: vec![(frame.link_prompting("login"), texts.not_you)],
                ..FormPage::default()
            },
            StatusCode::OK,
        )
    }

    /// The sign-up form, again with the refusal of the last try when there was one.
    pub fn sign_up(&self, username: &str, email: &str, problem: Option<Problem<'_>>) -> Response {
        let texts = self.texts();
        let status = if problem.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
        self.show(
            |frame| FormPage {
                title: format!("{} {}", texts.create_account_for, self.authorization.client.name),
                path: "register",
                passkey_sign_up: self.passkey_sign_up_offer(frame.csrf),
                fields: vec![
                    Field::text("username", texts.new_username, "username", username),
                    Field { kind: "email", ..Field::text("email", texts.email, "email", email) },
                    Field {
                        required: !crate::oauth::signin::signup::passkeys_open(self.state, self.realm),
                        ..Field::password("password", texts.password, "new-password")
                    },
                ],
                button: texts.create_account,
                problem,
                links: vec![(frame.link(""), texts.back_to_sign_in)],
                ..FormPage::default()
            },
            status,
        )
    }

    /// A form of the request, drawn by `page` within the request's frame, with a fresh CSRF token
    /// and the cookie it is bound to.
    pub fn show<'p>(&self, page: impl FnOnce(&Frame<'_>) -> FormPage<'p>, status: StatusCode) -> Response {
        self.drawn(|frame| login_page::form_page(frame, &page(frame), status))
    }

    /// A page of the request drawn by `draw` within the request's frame, with a fresh CSRF token
    /// and the cookie it is bound to.
    pub fn drawn(&self, draw: impl FnOnce(&Frame<'_>) -> Response) -> Response {
        let Page { state, realm, authorization, form, headers, .. } = *self;
        let (csrf, form_cookie) = fresh_form(state, realm);
        let carried = carried(form, CARRIED);
        let endpoint = format!("{}/protocol/openid-connect/auth", issuer(state, &realm.id));
        let redirect_origin = login_page::form_target(&authorization.redirect_uri);
        let frame = Frame {
            client_name: &authorization.client.name,
            endpoint: &endpoint,
            carried: &carried,
            csrf: &csrf,
            redirect_origin: &redirect_origin,
            texts: texts_for(form, headers),
            logo_uri: authorization.client.logo_uri.as_deref(),
            color: authorization.client.brand_color.as_deref(),
        };
        let mut response = draw(&frame);
        append_cookie(&mut response, &form_cookie);
        response
    }
}

/// The parameters among `names` that the form carries, to post back unchanged.
pub(super) fn carried<'f>(form: &'f Form, names: &[&'static str]) -> Vec<(&'static str, &'f str)> {
    names.iter().filter_map(|name| form.get(name).map(|value| (*name, value))).collect()
}

/// A form of the sign-in pages, read: its realm, its authorization request checked again, and its
/// token matched with this browser's; else the answer to give.
pub(super) async fn posted(
    state: &AppState,
    realm_id: &str,
    headers: &HeaderMap,
    form: Result<Form, OAuthError>,
) -> Result<Requested, Box<Response>> {
    let request = requested(state, realm_id, form).await?;
    if !genuine_form(state, headers, &request.form) {
        return Err(Box::new(expired_form()));
    }
    Ok(request)
}

/// The authorization request a page of the sign-in carries, checked again; else the answer to give.
pub(super) async fn requested(
    state: &AppState,
    realm_id: &str,
    form: Result<Form, OAuthError>,
) -> Result<Requested, Box<Response>> {
    let form = form.map_err(|refused| Box::new(malformed(&refused)))?;
    let Ok(realm) = super::realm(state, realm_id).await else { return Err(Box::new(realm_not_found())) };
    match browser::check(state, &state.authz, &realm, &asked(&form)).await {
        Ok(authorization) => match federation::offered_by_client(state, &realm, &authorization.client.id).await {
            Ok(providers) => Ok(Requested { form, realm, authorization, providers }),
            Err(failure) => Err(Box::new(refused(state, &realm, failure.into()))),
        },
        Err(error) => Err(Box::new(refused(state, &realm, error))),
    }
}

/// A page's form with the authorization request it carries, checked.
pub(super) struct Requested {
    pub form: Form,
    pub realm: Arc<Realm>,
    pub authorization: Authorization,
    pub providers: std::sync::Arc<Vec<IdentityProvider>>,
}

impl Requested {
    /// The pages this request is answered with, for this browser.
    pub fn page<'a>(&'a self, state: &'a AppState, headers: &'a HeaderMap) -> Page<'a> {
        let (realm, authorization, form) = (&self.realm, &self.authorization, &self.form);
        Page { state, realm, authorization, form, headers, providers: &self.providers }
    }
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
    login_page::see_other(url.as_str())
}

pub(super) fn denied(
    state: &AppState,
    realm: &Realm,
    authorization: &Authorization,
    denial: Denial,
    description: &str,
) -> Response {
    let params = [("error", denial.as_str()), ("error_description", description)];
    redirect(state, realm, &authorization.redirect_uri, &authorization.state, &params)
}

/// The person denied the request on the consent page: the client is told `access_denied`, or a
/// device is refused and the person told so.
pub(super) async fn declined(state: &AppState, realm: &Realm, authorization: &Authorization) -> Response {
    let Some(device) = &authorization.device else {
        return denied(state, realm, authorization, Denial::AccessDenied, "the person denied the request");
    };
    let texts = device_texts(authorization);
    match device::deny(state, device).await {
        Ok(true) => login_page::shown(StatusCode::OK, texts.device_denied_title, texts.device_denied, texts),
        Ok(false) => login_page::shown(StatusCode::BAD_REQUEST, texts.device_title, texts.device_gone, texts),
        Err(failure) => refused(state, realm, failure.into()),
    }
}

/// The answer to a refused authorization request: a redirect to a trusted redirect URI, else a page.
pub(super) fn refused(state: &AppState, realm: &Realm, error: AuthorizationError) -> Response {
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
                Unredirectable::DeviceNotWaiting => (
                    "This device request is not waiting",
                    "It has expired or was already answered. Start again on your device.",
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
