//! The steps of a browser sign-in after the first page, each a form posted under the authorization
//! endpoint with the request carried along and a CSRF token bound to the browser:
//!
//! - `POST …/auth/login`: the password, checked by the password grant's own operation
//!   (`signin::password`); at the platform realm, the console's sign-in, in the account's access log.
//! - `POST …/auth/second-factor`, `POST …/auth/enrol`: a second factor after the right password,
//!   or one added where every sign-in asks one (see `factor_steps`).
//! - `POST …/auth/password`: the new password of a person who must change theirs.
//! - `GET|POST …/auth/push`: the page that waits for the person's phone, reloading every two seconds.
//! - `GET|POST …/auth/recovery`, `POST …/auth/recovery/reset`: password recovery, the code sent by
//!   e-mail typed here with the new password.
//! - `GET|POST …/auth/register`, `POST …/auth/register/confirm`: self sign-up, where the realm
//!   allows it and e-mail goes out: the code sent to the address typed here.
//! - `POST …/auth/consent`: the person's answer on the consent page.
//!
//! A sign-in through an external identity provider has its own steps: see `upstream`.

use axum::Extension;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::authorize::{
    Page, Requested, answer_signed_in, code_response, declined, origin_of, posted, refused, requested,
};
use super::cookies::{PUSH_COOKIE, SESSION_COOKIE, append_cookie, cookie, cookie_text};
use super::login_page::{Field, FormPage, Problem};
use super::{Form, OAuthError};
use crate::http::AppState;
use crate::http::address::ClientAddress;
use crate::kernel::ids::PLATFORM_REALM;
use crate::oauth::signin::browser;
use crate::oauth::signin::signup::{self, SignUp, SignUpError, SignUpRefusal};
use crate::oauth::signin::texts::Texts;
use crate::oauth::signin::{
    self, Opens, PasswordAttempt, PasswordOutcome, PhoneConfirmation, Refusal, SignInError, console, recovery,
};
use crate::runtime::error::Error;
use crate::runtime::rate_limit::{Class, source_key};
use crate::store::browser::BrowserSession;
use crate::store::realms::Realm;
use crate::store::users::User;

type Posted = Result<Form, OAuthError>;

/// `POST …/auth/consent`: the person allows the client what the consent page asked, or denies it.
/// The browser must still be signed in as the person the page was shown to, recently enough for
/// the request's `max_age`.
pub async fn consent(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Posted,
) -> Response {
    let request = checked!(posted(&state, &realm_id, &headers, form));
    let (page, Requested { form, realm, authorization, .. }) = (request.page(&state, &headers), &request);
    let (session, user) = match page.still_signed_in(&headers).await {
        Ok(signed_in) => signed_in,
        Err(answer) => return *answer,
    };
    match form.get("decision") {
        Some("allow") => {
            if let Err(failure) = crate::oauth::consent::give(&state, authorization, &user, state.clock.now()).await {
                return refused(&state, realm, failure.into());
            }
            code_response(&page, &session, &user, &origin_of(address, &headers)).await
        }
        Some("deny") => declined(&state, realm, authorization).await,
        _ => super::login_page::problem(
            StatusCode::BAD_REQUEST,
            "This answer cannot be read",
            "Allow or deny the request with one of the page's buttons.",
        ),
    }
}

/// `POST …/auth/login`: the login form.
pub async fn login(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Posted,
) -> Response {
    let request = checked!(posted(&state, &realm_id, &headers, form));
    let (page, Requested { form, realm, authorization, .. }) = (request.page(&state, &headers), &request);
    let username = form.get("username").unwrap_or("");
    let origin = origin_of(address, &headers);
    // An address at an organization's domain signs in through the organization's provider: the
    // password, if one was typed, is neither checked nor sent anywhere.
    match crate::oauth::federation::for_address(&state, realm, username).await {
        Ok(Some(provider)) => return page.upstream(&provider, Some(username.trim())).await,
        Ok(None) => {}
        Err(failure) => return refused(&state, realm, failure.into()),
    }
    let attempt = PasswordAttempt {
        realm,
        client: &authorization.client,
        username,
        password: form.get("password").unwrap_or(""),
        scopes: Some(authorization.scopes.clone()),
        resource: None,
        phone: PhoneConfirmation::IfEnrolled,
        origin: &origin,
        opens: Opens::BrowserSession,
        dpop_jkt: None,
    };
    let outcome = if realm.id == PLATFORM_REALM {
        let path = format!("/realms/{PLATFORM_REALM}/protocol/openid-connect/auth/login");
        let answered = |refused: &SignInError| {
            let (code, _) = OAuthError::answer_to(refused);
            let status = match refused {
                SignInError::Refused(refusal) => refusal_text(refusal, page.texts()).0,
                SignInError::Failed(_) => StatusCode::SERVICE_UNAVAILABLE,
            };
            console::Answered { status: status.as_u16(), code: code.as_str() }
        };
        console::password(&state, &state.protection, &state.access_log, attempt, &path, answered).await
    } else {
        signin::password(&state, &state.protection, attempt).await
    };
    match outcome {
        Ok(PasswordOutcome::InBrowser(signed_in)) => answer_signed_in(&page, &signed_in, &origin).await,
        Ok(PasswordOutcome::ConfirmationAsked(asked)) => page.waiting_for(&asked),
        Ok(PasswordOutcome::MustChangePassword { ticket }) => page.change(&ticket, None),
        Ok(PasswordOutcome::SecondFactorAsked { ticket, choices }) => page.second_factor(&ticket, choices, None),
        Ok(PasswordOutcome::EnrolmentAsked { ticket, enrolling }) => {
            page.enrolment(&ticket, &enrolling, super::factor_steps::Step::Choosing)
        }
        Ok(PasswordOutcome::SignedIn(_)) => failed(&state, realm, "a password sign-in opened no browser session"),
        Err(SignInError::Refused(refusal)) => page.login(username, Some(refusal_text(&refusal, page.texts()))),
        Err(SignInError::Failed(failure)) => refused(&state, realm, failure.into()),
    }
}

/// What the login page says of a refused sign-in: never which of the name or password was wrong.
pub(super) fn refusal_text(refusal: &Refusal, texts: &'static Texts) -> (StatusCode, &'static str) {
    match refusal {
        Refusal::SourceBlocked => (StatusCode::TOO_MANY_REQUESTS, texts.too_many_attempts),
        Refusal::LockedOut => (StatusCode::OK, texts.locked_out),
        Refusal::UserDisabled => (StatusCode::OK, texts.disabled),
        Refusal::PasswordChangeRequired => (StatusCode::OK, texts.change_password),
        _ => (StatusCode::OK, texts.wrong_credentials),
    }
}

pub(super) fn failed(state: &AppState, realm: &Realm, what: &'static str) -> Response {
    refused(state, realm, Error::Internal(anyhow::anyhow!(what)).into())
}

/// `POST …/auth/password`: the new password of a person who had to change it, with the ticket
/// their sign-in was given. Set, it leads back to the login form.
pub async fn change_password(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    form: Posted,
) -> Response {
    let request = checked!(posted(&state, &realm_id, &headers, form));
    let (page, Requested { form, realm, .. }) = (request.page(&state, &headers), &request);
    let texts = page.texts();
    let (ticket, password) = (form.get("ticket").unwrap_or(""), form.get("new_password").unwrap_or(""));
    match recovery::reset(&state, realm, ticket, password).await {
        Ok(()) => page.login("", Some((StatusCode::OK, texts.password_changed))),
        Err(SignInError::Refused(refusal)) => match password_refused(&refusal, texts) {
            Some(text) => page.change(ticket, Some(text)),
            None => page.login("", Some((StatusCode::OK, texts.took_too_long))),
        },
        Err(SignInError::Failed(failure)) => refused(&state, realm, failure.into()),
    }
}

/// What the pages say of a new password the realm's rules refuse; `None` for any other refusal.
pub(super) fn password_refused(refusal: &Refusal, texts: &'static Texts) -> Option<&'static str> {
    match refusal {
        Refusal::PasswordLength { .. } => Some(texts.password_length),
        Refusal::PasswordBreached => Some(texts.password_breached),
        _ => None,
    }
}

/// The waiting page's binding to the sign-in it waits for: the request's id with the service's
/// keyed hash of it, kept in a cookie, so that only the browser that typed the password collects
/// the sign-in its phone approves.
fn push_binding(state: &AppState, request_id: &str) -> String {
    format!("{request_id}.{}", state.hasher.hash(&format!("push-wait:{request_id}")))
}

/// The request a waiting browser's cookie names, when its binding holds.
fn bound_request<'c>(state: &AppState, headers: &'c HeaderMap) -> Option<&'c str> {
    let presented = cookie(headers, PUSH_COOKIE)?;
    let (request_id, _) = presented.split_once('.')?;
    let expected = push_binding(state, request_id);
    crate::kernel::crypto::constant_time_eq(expected.as_bytes(), presented.as_bytes()).then_some(request_id)
}

/// `GET …/auth/push`: the waiting page reloading itself.
pub async fn wait_reloaded(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let form = Form::from_query(query.as_deref());
    wait(&state, &realm_id, address, &headers, form).await
}

/// `POST …/auth/push`: the waiting page's button.
pub async fn wait_continued(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Posted,
) -> Response {
    wait(&state, &realm_id, address, &headers, form).await
}

/// Once the phone approved, the browser is signed in and the client answered; until then the
/// page waits; refused or lapsed, the login page says so.
async fn wait(
    state: &AppState,
    realm_id: &str,
    address: std::net::IpAddr,
    headers: &HeaderMap,
    form: Posted,
) -> Response {
    let request = checked!(posted(state, realm_id, headers, form));
    let (page, Requested { realm, authorization, .. }) = (request.page(state, headers), &request);
    let texts = page.texts();
    let outcome = match bound_request(state, headers) {
        Some(request_id) => {
            signin::push::collect(state, realm, &authorization.client, request_id, Opens::BrowserSession).await
        }
        None => Err(Refusal::PushRequestUnknown.into()),
    };
    let mut response = match outcome {
        Ok(PasswordOutcome::InBrowser(signed_in)) => {
            answer_signed_in(&page, &signed_in, &origin_of(address, headers)).await
        }
        Ok(_) => failed(state, realm, "a confirmed browser sign-in opened no browser session"),
        Err(SignInError::Refused(Refusal::PushPending)) => return page.waiting(),
        Err(SignInError::Refused(Refusal::PushRefused)) => page.login("", Some((StatusCode::OK, texts.phone_refused))),
        Err(SignInError::Refused(Refusal::PushExpired)) => page.login("", Some((StatusCode::OK, texts.phone_expired))),
        Err(SignInError::Refused(_)) => page.login("", Some((StatusCode::OK, texts.took_too_long))),
        Err(SignInError::Failed(failure)) => refused(state, realm, failure.into()),
    };
    // The sign-in it named is over, one way or the other.
    append_cookie(&mut response, &cookie_text(state, realm, PUSH_COOKIE, "", Some(0)));
    response
}

/// `GET …/auth/recovery`: the form asking for a reset code.
pub async fn recovery_form(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let form = Form::from_query(query.as_deref());
    let request = checked!(requested(&state, &realm_id, form));
    let page = request.page(&state, &headers);
    page.recovery("", None)
}

/// `POST …/auth/recovery`: a reset code for the account named, sent by e-mail; the answer is the
/// same whatever the account, and asks for the code.
pub async fn recovery_asked(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Posted,
) -> Response {
    let request = checked!(posted(&state, &realm_id, &headers, form));
    let (page, Requested { form, realm, authorization, .. }) = (request.page(&state, &headers), &request);
    let login = form.get("username").unwrap_or("").trim();
    match recovery::request(&state, &state.protection, realm, &authorization.client.id, login, &address.to_string())
        .await
    {
        Ok(()) => page.recovery_code(None),
        Err(SignInError::Refused(Refusal::SourceBlocked)) => {
            page.recovery(login, Some(Problem { text: page.texts().too_many_attempts, field: None }))
        }
        Err(SignInError::Refused(other)) => {
            refused(&state, realm, Error::Internal(anyhow::anyhow!("{other:?}")).into())
        }
        Err(SignInError::Failed(failure)) => refused(&state, realm, failure.into()),
    }
}

/// `POST …/auth/recovery/reset`: the code and the new password. Set, it leads back to the login
/// form, the request still carried.
pub async fn recovery_reset(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    form: Posted,
) -> Response {
    let request = checked!(posted(&state, &realm_id, &headers, form));
    let (page, Requested { form, realm, .. }) = (request.page(&state, &headers), &request);
    let texts = page.texts();
    let (code, password) = (form.get("code").unwrap_or("").trim(), form.get("new_password").unwrap_or(""));
    let problem = match recovery::reset(&state, realm, code, password).await {
        Ok(()) => return page.login("", Some((StatusCode::OK, texts.password_changed))),
        Err(SignInError::Refused(refusal)) => match password_refused(&refusal, texts) {
            Some(text) => (text, "new_password"),
            None => (texts.code_invalid, "code"),
        },
        Err(SignInError::Failed(failure)) => return refused(&state, realm, failure.into()),
    };
    page.recovery_code(Some(Problem { text: problem.0, field: Some(problem.1) }))
}

/// `GET …/auth/register`: the sign-up form, where the realm allows it; the login page elsewhere.
pub async fn register_form(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let form = Form::from_query(query.as_deref());
    let request = checked!(requested(&state, &realm_id, form));
    let (page, Requested { realm, .. }) = (request.page(&state, &headers), &request);
    if signup::open(&state, realm) { page.sign_up("", "", None) } else { page.login("", None) }
}

/// `POST …/auth/register`: a new account asked for; the page then takes the code sent to the
/// address, and says the same whatever another account holds.
pub async fn register(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Posted,
) -> Response {
    let request = checked!(posted(&state, &realm_id, &headers, form));
    let (page, Requested { form, realm, authorization, .. }) = (request.page(&state, &headers), &request);
    let texts = page.texts();
    let origin = origin_of(address, &headers);
    let (username, email) = (form.get("username").unwrap_or("").trim(), form.get("email").unwrap_or("").trim());
    // A source asking for many accounts at once is slowed before anything is looked up.
    let now = state.clock.now();
    if state.limiter.take(&source_key(address), Class::SignUp, now).await.is_err() {
        return page.sign_up(username, email, Some(Problem { text: texts.too_many_attempts, field: None }));
    }
    // A passkey the page's script made instead of a password.
    let passkey = form.get("credential").filter(|credential| !credential.is_empty()).map(|credential| {
        let (user_id, binding) = (form.get("user_handle").unwrap_or(""), form.get("csrf").unwrap_or(""));
        signup::PasskeySignUp { user_id, binding, credential }
    });
    let attempt = SignUp {
        realm,
        client: &authorization.client,
        username,
        email,
        password: form.get("password").unwrap_or(""),
        passkey,
        origin: &origin,
    };
    let (text, field) = match signup::ask(&state, &state.protection, attempt).await {
        Ok(()) => return page.sign_up_code(None),
        Err(SignUpError::Refused(refusal)) => match refusal {
            SignUpRefusal::Closed => return page.login("", None),
            SignUpRefusal::UsernameInvalid => (texts.username_invalid, Some("username")),
            SignUpRefusal::EmailInvalid => (texts.email_invalid, Some("email")),
            SignUpRefusal::Password(refusal) => {
                (password_refused(&refusal, texts).unwrap_or(texts.password_length), Some("password"))
            }
            SignUpRefusal::PasskeyInvalid => (texts.passkey_not_added, None),
            SignUpRefusal::SourceBlocked | SignUpRefusal::CodeInvalid | SignUpRefusal::Taken => {
                (texts.too_many_attempts, None)
            }
        },
        Err(SignUpError::Failed(failure)) => return refused(&state, realm, failure.into()),
    };
    page.sign_up(username, email, Some(Problem { text, field }))
}

/// `POST …/auth/register/confirm`: the code from the e-mail; the account is made and the browser
/// signed in with it.
pub async fn register_confirm(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Posted,
) -> Response {
    let request = checked!(posted(&state, &realm_id, &headers, form));
    let (page, Requested { form, realm, authorization, .. }) = (request.page(&state, &headers), &request);
    let texts = page.texts();
    let origin = origin_of(address, &headers);
    let code = form.get("code").unwrap_or("");
    let text = match signup::confirm(&state, &state.protection, realm, &authorization.client, code, &origin).await {
        Ok(signed_in) => return answer_signed_in(&page, &signed_in, &origin).await,
        Err(SignUpError::Refused(refusal)) => match refusal {
            SignUpRefusal::Closed => return page.login("", None),
            SignUpRefusal::Taken => texts.sign_up_taken,
            SignUpRefusal::SourceBlocked => texts.too_many_attempts,
            _ => texts.code_invalid,
        },
        Err(SignUpError::Failed(failure)) => return refused(&state, realm, failure.into()),
    };
    page.sign_up_code(Some(Problem { text, field: Some("code") }))
}

impl Page<'_> {
    /// The browser's person, when it is still signed in as the request needs (recently enough, at
    /// its level, as the person it names); else the login page saying it took too long.
    pub(super) async fn still_signed_in(&self, headers: &HeaderMap) -> Result<(BrowserSession, User), Box<Response>> {
        let (state, realm) = (self.state, self.realm);
        let signed_in = match cookie(headers, SESSION_COOKIE) {
            Some(value) => {
                browser::signed_in(state, realm, value).await.map_err(|f| Box::new(refused(state, realm, f.into())))?
            }
            None => None,
        };
        let now = state.clock.now();
        signed_in
            .filter(|(session, _)| browser::still_answers(self.authorization, session, now))
            .ok_or_else(|| Box::new(self.login("", Some((StatusCode::OK, self.texts().took_too_long)))))
    }

    /// The change-password step, again with the refusal of the last new password when there was one.
    pub fn change(&self, ticket: &str, error: Option<&'static str>) -> Response {
        let texts = self.texts();
        let status = if error.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
        self.show(
            |_| FormPage {
                title: texts.choose_password.to_owned(),
                path: "password",
                fields: vec![Field::password("new_password", texts.new_password, "new-password")],
                hidden: vec![("ticket", ticket)],
                button: texts.save_password,
                problem: error.map(|text| Problem { text, field: Some("new_password") }),
                ..FormPage::default()
            },
            status,
        )
    }

    /// The page that waits for the phone `asked` was sent to, with the cookie that binds this
    /// browser to the request.
    pub fn waiting_for(&self, asked: &signin::push::Asked) -> Response {
        let mut response = self.waiting();
        let binding = push_binding(self.state, asked.request_id.as_str());
        let text = cookie_text(self.state, self.realm, PUSH_COOKIE, &binding, Some(asked.expires_in));
        append_cookie(&mut response, &text);
        response
    }

    /// The page that waits for the person's phone: it reloads itself, and a button does the same
    /// where reloading is turned off.
    pub fn waiting(&self) -> Response {
        let texts = self.texts();
        self.show(
            |frame| {
                let token: String = url::form_urlencoded::byte_serialize(frame.csrf.as_bytes()).collect();
                FormPage {
                    title: texts.confirm_on_phone.to_owned(),
                    intro: Some(texts.phone_asked),
                    path: "push",
                    button: texts.continue_on,
                    refresh: Some(format!("{}&csrf={token}", frame.link("push"))),
                    ..FormPage::default()
                }
            },
            StatusCode::OK,
        )
    }

    /// A step with a way back to the login form, answered `status`.
    fn step_back(&self, page: FormPage<'_>, status: StatusCode) -> Response {
        let back = self.texts().back_to_sign_in;
        self.show(|frame| FormPage { links: vec![(frame.link(""), back)], ..page }, status)
    }

    /// The form asking for a reset code.
    pub fn recovery(&self, login: &str, problem: Option<Problem<'_>>) -> Response {
        let texts = self.texts();
        let status = if problem.is_some() { StatusCode::TOO_MANY_REQUESTS } else { StatusCode::OK };
        let page = FormPage {
            title: texts.reset_password.to_owned(),
            intro: Some(texts.reset_asked),
            path: "recovery",
            fields: vec![Field::text("username", texts.username, "username", login)],
            button: texts.send_code,
            problem,
            ..FormPage::default()
        };
        self.step_back(page, status)
    }

    /// The form taking the code a sign-up's e-mail carries.
    pub fn sign_up_code(&self, problem: Option<Problem<'_>>) -> Response {
        let texts = self.texts();
        let status = if problem.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
        let page = FormPage {
            title: texts.confirm_email.to_owned(),
            intro: Some(texts.confirm_email_sent),
            path: "register/confirm",
            fields: vec![Field::text("code", texts.confirmation_code, "one-time-code", "")],
            button: texts.finish_sign_up,
            problem,
            ..FormPage::default()
        };
        self.step_back(page, status)
    }

    /// The form taking the code from the e-mail and the new password.
    pub fn recovery_code(&self, problem: Option<Problem<'_>>) -> Response {
        let texts = self.texts();
        let status = if problem.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
        let page = FormPage {
            title: texts.reset_password.to_owned(),
            intro: Some(texts.code_sent),
            path: "recovery/reset",
            fields: vec![
                Field::text("code", texts.reset_code, "one-time-code", ""),
                Field::password("new_password", texts.new_password, "new-password"),
            ],
            button: texts.save_password,
            problem,
            ..FormPage::default()
        };
        self.step_back(page, status)
    }
}
