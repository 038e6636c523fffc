//! The steps of a browser sign-in between the right password and the signed-in browser, where
//! the rule of the realm and client asks for a second factor (`signin::factor_rule`):
//!
//! - `POST …/auth/second-factor`: a code from the person's authenticator app (or a recovery
//!   code), or `action=phone` to have their phone confirm instead. Their passkey, offered on the
//!   same page, posts to `…/auth/passkey` and signs them in on its own.
//! - `POST …/auth/enrol`: a person who has no such factor adds one. `action=add-app` shows an
//!   authenticator app's QR code and key, `action=confirm-app` keeps the app with the code it
//!   shows (its recovery codes are then shown once, and `action=continue` goes on),
//!   `action=add-passkey` keeps the passkey the page's script made.
//!
//! Each form carries the authorization request, the step's ticket and a CSRF token bound to the
//! browser; a new passkey's challenge is bound to that token too.

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use maud::{PreEscaped, html};

use super::authorize::{Page, Requested, answer_signed_in, origin_of, posted, refused};
use super::cookies::session_cookie;
use super::login_page::{self, Document, Field, FormPage, branded, hidden_fields};
use super::sign_in_steps::{failed, refusal_text};
use super::{Form, OAuthError};
use crate::http::AppState;
use crate::http::address::ClientAddress;
use crate::oauth::second_factors::{passkeys, totp};
use crate::oauth::signin::enrolment::{self, Enrolling};
use crate::oauth::signin::factor_rule::Enrolled;
use crate::oauth::signin::second_factor::{self, CodeAttempt};
use crate::oauth::signin::{BrowserSignIn, PasswordOutcome, Refusal, SignInError};

type Posted = Result<Form, OAuthError>;

/// `POST …/auth/second-factor`. Right, the browser is signed in and the authorization goes on;
/// wrong, the step asks again, until the realm lockout holds the account.
pub async fn second_factor(
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
    let (client, ticket) = (&authorization.client, form.get("ticket").unwrap_or(""));
    let outcome = if form.get("action") == Some("phone") {
        second_factor::phone(&state, &state.protection, (realm, client), ticket, &origin).await
    } else {
        let code = form.get("code").unwrap_or("");
        let attempt = CodeAttempt { realm, client, ticket, code, origin: &origin };
        second_factor::code(&state, &state.protection, attempt).await
    };
    match outcome {
        Ok(PasswordOutcome::InBrowser(signed_in)) => answer_signed_in(&page, &signed_in, &origin).await,
        Ok(PasswordOutcome::ConfirmationAsked(asked)) => page.waiting_for(&asked),
        Ok(_) => failed(&state, realm, "a second factor opened no browser session"),
        Err(SignInError::Refused(Refusal::SecondFactorInvalid)) => {
            match second_factor::choices(&state, realm, client, ticket) {
                Some(choices) => page.second_factor(ticket, choices, Some(texts.wrong_code)),
                None => page.login("", Some((StatusCode::OK, texts.code_expired))),
            }
        }
        Err(SignInError::Refused(Refusal::SecondFactorExpired)) => {
            page.login("", Some((StatusCode::OK, texts.code_expired)))
        }
        Err(SignInError::Refused(refusal)) => page.login("", Some(refusal_text(&refusal, texts))),
        Err(SignInError::Failed(failure)) => refused(&state, realm, failure.into()),
    }
}

/// `POST …/auth/enrol`.
pub async fn enrol(
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
    if form.get("action") == Some("continue") {
        return match page.still_signed_in(&headers).await {
            Ok((session, user)) => super::authorize::answer_with_code(&page, &session, &user, &origin, None).await,
            Err(answer) => *answer,
        };
    }
    let (client, ticket) = (&authorization.client, form.get("ticket").unwrap_or(""));
    let enrolling = match enrolment::enrolling(&state, realm, client, ticket).await {
        Ok(enrolling) => enrolling,
        Err(SignInError::Refused(Refusal::UserDisabled)) => {
            return page.login("", Some((StatusCode::OK, texts.disabled)));
        }
        Err(SignInError::Refused(_)) => return page.login("", Some((StatusCode::OK, texts.took_too_long))),
        Err(SignInError::Failed(failure)) => return refused(&state, realm, failure.into()),
    };
    let outcome = match form.get("action") {
        Some("add-app") if !enrolling.passkey_only => {
            let app = totp::begin(&state, realm, &enrolling.user);
            return page.enrolment(ticket, &enrolling, Step::App(&app, None));
        }
        Some("confirm-app") => {
            let (token, code) = (form.get("enrolment").unwrap_or(""), form.get("code").unwrap_or(""));
            match enrolment::app(&state, (realm, client), &enrolling, (token, code), &origin).await {
                Ok((PasswordOutcome::InBrowser(signed_in), codes)) if !codes.is_empty() => {
                    return page.recovery_codes(&signed_in, &codes);
                }
                Err(SignInError::Refused(Refusal::SecondFactorInvalid)) => {
                    return match totp::pending(&state, realm, &enrolling.user, token) {
                        Some(app) => page.enrolment(ticket, &enrolling, Step::App(&app, Some(texts.app_not_added))),
                        None => page.enrolment(ticket, &enrolling, Step::Failed(texts.app_not_added)),
                    };
                }
                other => other.map(|(outcome, _)| outcome),
            }
        }
        Some("add-passkey") => {
            let (binding, credential) = (form.get("csrf").unwrap_or(""), form.get("credential").unwrap_or(""));
            match enrolment::passkey(&state, (realm, client), &enrolling, (binding, credential), &origin).await {
                Err(SignInError::Refused(Refusal::PasskeyInvalid)) => {
                    return page.enrolment(ticket, &enrolling, Step::Failed(texts.passkey_not_added));
                }
                other => other,
            }
        }
        _ => return page.enrolment(ticket, &enrolling, Step::Choosing),
    };
    match outcome {
        Ok(PasswordOutcome::InBrowser(signed_in)) => answer_signed_in(&page, &signed_in, &origin).await,
        Ok(_) => failed(&state, realm, "an enrolment opened no browser session"),
        Err(SignInError::Refused(refusal)) => page.login("", Some(refusal_text(&refusal, texts))),
        Err(SignInError::Failed(failure)) => refused(&state, realm, failure.into()),
    }
}

/// Where the page that adds a factor is.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// The ways to add one.
    Choosing,
    /// An authenticator app being added, again with why its last code was refused.
    App(&'a totp::Enrolment, Option<&'static str>),
    /// The ways to add one, after one that failed.
    Failed(&'static str),
}

impl Page<'_> {
    /// The second step: the factors `choices` names, each as the person uses it. A code from the
    /// app (or a recovery code) is the form's field, a phone its other button, or its one button
    /// without an app; a passkey is the page's passkey form, which signs the person in on its own.
    pub fn second_factor(&self, ticket: &str, choices: Enrolled, error: Option<&'static str>) -> Response {
        let texts = self.texts();
        let status = if error.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
        self.show(
            |frame| {
                let mut page = FormPage {
                    title: texts.second_factor_title.to_owned(),
                    intro: Some(texts.passkey_asked),
                    path: "second-factor",
                    hidden: vec![("ticket", ticket)],
                    problem: error.map(|text| login_page::Problem { text, field: Some("code") }),
                    links: vec![(frame.link(""), texts.back_to_sign_in)],
                    passkey: choices.passkey.then(|| self.passkey_offer(frame.csrf)),
                    ..FormPage::default()
                };
                if choices.app {
                    page.intro = Some(texts.second_factor_asked);
                    page.fields = vec![Field::text("code", texts.one_time_code, "one-time-code", "")];
                    page.button = texts.verify;
                    page.alternative = choices.phone.then_some(("phone", texts.confirm_with_phone));
                } else if choices.phone {
                    page.hidden.push(("action", "phone"));
                    page.button = texts.confirm_with_phone;
                }
                page
            },
            status,
        )
    }

    /// The step that has the person add a factor: a passkey (where the browser can make one, by
    /// the page's script), or an authenticator app (its QR code and key, then the code it shows).
    pub fn enrolment(&self, ticket: &str, enrolling: &Enrolling, step: Step<'_>) -> Response {
        let texts = self.texts();
        let (app, problem) = match step {
            Step::Choosing => (None, None),
            Step::App(app, problem) => (Some(app), problem),
            Step::Failed(problem) => (None, Some(problem)),
        };
        let status = if problem.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
        let intro = if enrolling.passkey_only { texts.enrol_passkey_asked } else { texts.enrol_asked };
        let script = format!("{}/assets/passkeys.js", self.state.public_url);
        self.drawn(|frame| {
            let action = format!("{}/enrol", frame.endpoint);
            let carried = html! {
                (hidden_fields(frame.carried))
                input type="hidden" name="csrf" value=(frame.csrf);
                input type="hidden" name="ticket" value=(ticket);
            };
            let options = passkeys::first_options(self.state, self.realm, &enrolling.user, frame.csrf).to_string();
            let main = html! {
                @if let Some(uri) = frame.logo_uri { img src=(uri) alt="" height="48"; }
                h1 { (texts.enrol_title) }
                p { (intro) }
                @if let Some(problem) = problem { p id="form-error" class="error" role="alert" { (problem) } }
                @if let Some(app) = app {
                    p { (texts.scan_app) }
                    // The service's own drawing of the URI: markup it wrote, with no script.
                    (PreEscaped(crate::http::qr::svg(&app.uri)))
                    p { (texts.app_secret) ": " code { (app.secret) } }
                    form method="post" action=(action) {
                        (carried)
                        input type="hidden" name="action" value="confirm-app";
                        input type="hidden" name="enrolment" value=(app.token);
                        label for="app-code" { (texts.app_code) }
                        input id="app-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code"
                            required autofocus aria-describedby=[problem.map(|_| "form-error")];
                        button type="submit" { (texts.keep_app) }
                    }
                }
                form id="passkey-register" method="post" action=(action) hidden data-options=(options) {
                    (carried)
                    input type="hidden" name="action" value="add-passkey";
                    input type="hidden" name="credential" value="";
                    button type="submit" { (texts.add_passkey) }
                    p id="passkey-error" class="error" role="alert" hidden { (texts.passkey_not_added) }
                }
                @if app.is_none() && !enrolling.passkey_only {
                    form id="app-add" method="post" action=(action) {
                        (carried)
                        button type="submit" name="action" value="add-app" class="secondary" { (texts.add_app) }
                    }
                }
                p { a href=(frame.link("")) { (texts.back_to_sign_in) } }
            };
            let (images, style) = branded(&frame.logo_uri, &frame.color);
            let document = Document {
                texts,
                title: texts.enrol_title,
                style: &style,
                main,
                images,
                form_targets: Some(frame.redirect_origin),
                refresh: None,
                script: Some(script.as_str()),
            };
            document.answer(status)
        })
    }

    /// The recovery codes of a person's first factor, shown this once to the browser just signed
    /// in, with a button that goes on to the application.
    pub fn recovery_codes(&self, signed_in: &BrowserSignIn, codes: &[String]) -> Response {
        let texts = self.texts();
        let mut response = self.drawn(|frame| {
            let main = html! {
                h1 { (texts.recovery_codes_title) }
                p { (texts.recovery_codes_once) }
                ul { @for code in codes { li { code { (code) } } } }
                form method="post" action={ (frame.endpoint) "/enrol" } {
                    (hidden_fields(frame.carried))
                    input type="hidden" name="csrf" value=(frame.csrf);
                    button type="submit" name="action" value="continue" autofocus { (texts.next) }
                }
            };
            let (images, style) = branded(&frame.logo_uri, &frame.color);
            let document = Document {
                texts,
                title: texts.recovery_codes_title,
                style: &style,
                main,
                images,
                form_targets: Some(frame.redirect_origin),
                refresh: None,
                script: None,
            };
            document.answer(StatusCode::OK)
        });
        let cookie = session_cookie(self.state, self.realm, &signed_in.cookie);
        response.headers_mut().append(header::SET_COOKIE, cookie);
        response
    }
}
