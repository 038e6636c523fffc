//! The console: server-rendered pages for the people of an account's team, under `/console`.
//!
//! The console is the second edge of the admin operations, beside the JSON API. A page reads and
//! acts by calling the same operations the API's routes call, as the signed-in person, so it can
//! show nothing and do nothing the API would not: the same policy decisions (on the operation the
//! page calls), validation, change trail, refusals kept in the trail, and the admission of every
//! request (the account's networks, its rate limits, the access log). Pages ask the policies only
//! to decide which actions to offer; a forged form still meets the operation's refusal. The
//! browser holds a random session value in an HttpOnly cookie; the session, its CSRF token and
//! the person's platform session stay on the server.

mod account;
mod audit;
mod captures;
mod chart;
mod clients;
mod delegation;
mod exposures;
mod identity_providers;
mod incident;
mod notifications;
mod organizations;
mod page;
mod people;
mod protection;
mod realms;
mod roles;
mod session;
mod signature;
mod webhooks;

use axum::Router;
use axum::extract::{FromRequestParts, OriginalUri, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::Response;
use axum::routing::{get, post};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::authz::Resource;
use crate::http::AppState;
use crate::http::auth::{self, Caller, ConsolePerson, Unadmitted};
use crate::http::envelope::Answer;
use crate::oauth::signin::console_sessions;
use crate::runtime::error::Error;
use crate::store::console_sessions::ConsoleSession;

/// A page of a list, as an operation answers it.
type Listed<T> = crate::store::page::Page<T>;

/// The console's routes: signing in, and the pages of a signed-in person.
pub fn routes(state: &AppState) -> Router<AppState> {
    let signed_in = Router::new()
        .route("/console/sign-out", post(session::sign_out))
        .route("/console/attack-protection", get(protection::summary))
        .route("/console/attack-protection/incidents", get(protection::incidents))
        .route("/console/attack-protection/exposures", get(exposures::list))
        .route("/console/realms/{realm}/users/{userId}/threat-standing", get(exposures::standing))
        .route("/console/attack-protection/incidents/{id}", get(incident::page))
        .route("/console/attack-protection/incidents/{id}/dismiss", post(incident::dismiss))
        .route("/console/attack-protection/measures/{id}/lift", post(incident::lift))
        .route("/console/attack-protection/readings/{id}/retry", post(incident::retry))
        .route("/console/attack-protection/readings/{id}/recommendations/{index}/apply", post(incident::apply))
        .route("/console/attack-protection/actions/{id}/revert", post(incident::revert))
        .route("/console/attack-protection/readings/{id}/report", get(incident::report))
        .route("/console/webhooks/signature-check", get(signature::page))
        .route("/console/webhooks/captures", get(captures::list).post(captures::create))
        .route("/console/webhooks/captures/{id}", get(captures::capture))
        .route("/console/secrets", get(account::secrets).post(account::create_secret))
        .route("/console/secrets/{id}/rotate", post(account::rotate_secret))
        .route("/console/team", get(account::team))
        .route("/console/team/members/{userId}", post(account::member_roles))
        .route("/console/team/invitations", post(account::invite))
        .route("/console/team/invitations/{id}/revoke", post(account::revoke_invitation))
        .route("/console/audit-trail", get(audit::trail))
        .route("/console/access-logs", get(audit::access_logs))
        .route("/console/realms", get(realms::list))
        .route("/console/realms/{realm}", get(realms::realm).post(realms::update))
        .route("/console/realms/{realm}/users", get(people::list).post(people::create))
        .route("/console/realms/{realm}/users/{userId}", get(people::person).post(people::update))
        .route("/console/realms/{realm}/users/{userId}/end-sessions", post(people::end_sessions))
        .route("/console/realms/{realm}/users/{userId}/suspend", post(people::suspend))
        .route("/console/realms/{realm}/clients/{client}", get(clients::client))
        .route("/console/realms/{realm}/clients/{client}/rotate-secret", post(clients::rotate))
        .route("/console/roles", get(roles::roles).post(roles::create))
        .route("/console/roles/{id}", post(roles::update))
        .route("/console/roles/{id}/delete", post(roles::delete))
        .route("/console/realms/{realm}/organizations", get(organizations::organizations).post(organizations::create))
        .route("/console/realms/{realm}/organizations/{id}", post(organizations::update))
        .route("/console/realms/{realm}/organizations/{id}/delete", post(organizations::delete))
        .route(
            "/console/realms/{realm}/identity-providers",
            get(identity_providers::providers).post(identity_providers::create),
        )
        .route("/console/realms/{realm}/identity-providers/{id}", post(identity_providers::update))
        .route("/console/realms/{realm}/identity-providers/{id}/delete", post(identity_providers::delete))
        .route("/console/notifications", get(notifications::notifications).post(notifications::preferences))
        .route("/console/realms/{realm}/delegation-grants", get(delegation::grants).post(delegation::create))
        .route("/console/realms/{realm}/delegation-grants/{grantId}/withdraw", post(delegation::withdraw))
        .route("/console/realms/{realm}/webhooks", get(webhooks::list).post(webhooks::register))
        .route("/console/realms/{realm}/clients/{client}/webhooks", get(webhooks::list).post(webhooks::register))
        .merge(endpoint_routes("/console/realms/{realm}/webhooks/{webhookId}"))
        .merge(endpoint_routes("/console/realms/{realm}/clients/{client}/webhooks/{webhookId}"))
        .route(
            "/console/realms/{realm}/clients/{client}/webhooks/{webhookId}/deliveries/{deliveryId}/replay",
            post(webhooks::replay),
        )
        .route_layer(from_fn_with_state(state.clone(), admit));
    Router::new()
        .route("/console", get(|| async { page::see_other("/console/attack-protection") }))
        .route("/console/sign-in", get(session::sign_in))
        .route("/console/callback", get(session::callback))
        .merge(signed_in)
}

/// The pages of one webhook endpoint, at `base`.
fn endpoint_routes(base: &str) -> Router<AppState> {
    Router::new()
        .route(base, get(webhooks::endpoint).post(webhooks::update))
        .route(&format!("{base}/status"), post(webhooks::status))
        .route(&format!("{base}/test"), post(webhooks::test))
        .route(&format!("{base}/rotate-secret"), post(webhooks::rotate))
        .route(&format!("{base}/delete"), post(webhooks::delete))
}

/// Admits a request of a signed-in person: their console session, then the admission every admin
/// request gets (the account's networks, its rate limits, the access log), as that person. A
/// request without a live session is sent to sign in, and back.
async fn admit(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let here = request.extensions().get::<OriginalUri>().map_or_else(|| request.uri().clone(), |uri| uri.0.clone());
    let back = if request.method() == Method::GET { here.to_string() } else { "/console".to_owned() };
    let Some(value) = session::cookie_value(request.headers()) else { return session::to_sign_in(&back) };
    let session = match console_sessions::find(&state, value, state.clock.now()).await {
        Ok(Some(session)) => session,
        Ok(None) => return session::to_sign_in(&back),
        Err(error) => return page::failure(&error),
    };
    let person = ConsolePerson { session_id: session.session_id.clone(), user_id: session.user_id.clone() };
    request.extensions_mut().insert(person);
    request.extensions_mut().insert(session);
    let response = auth::authenticate(State(state), request, next).await;
    if response.extensions().get::<Unadmitted>().is_none() {
        return response;
    }
    let back_to_console = Some(("/console", "Back to the console"));
    match response.status() {
        // The platform session ended, or the person is on no team any more.
        StatusCode::UNAUTHORIZED => session::to_sign_in(&back),
        StatusCode::TOO_MANY_REQUESTS => {
            let message = "You made many requests in a short time. Try again in a minute.";
            page::plain(StatusCode::TOO_MANY_REQUESTS, "Too many requests", message, back_to_console)
        }
        StatusCode::FORBIDDEN => {
            let message = "Your account admits its team from the networks it names only, and this address is not \
                           among them.";
            page::plain(StatusCode::FORBIDDEN, "Not permitted from this network", message, None)
        }
        status => {
            let message = "The service could not answer this page. Try again in a moment.";
            page::plain(status, "Something went wrong", message, back_to_console)
        }
    }
}

/// A request of a signed-in person: their console session and the caller the policies see.
struct Console {
    session: ConsoleSession,
    caller: Caller,
    /// The browser's languages, which some words are given in.
    language: Option<HeaderValue>,
}

impl FromRequestParts<AppState> for Console {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &AppState) -> Result<Self, Response> {
        let session = parts.extensions.get::<ConsoleSession>().cloned();
        let caller = parts.extensions.get::<Caller>().cloned();
        let (Some(session), Some(caller)) = (session, caller) else {
            return Err(page::failure(&Error::Internal(anyhow::anyhow!("a console page was not admitted"))));
        };
        let language = parts.headers.get(header::ACCEPT_LANGUAGE).cloned();
        Ok(Self { session, caller, language })
    }
}

// The helpers below answer `Page`s, whose error is a whole response (the page of a refusal), so
// that `?` in a page answers it; they lie on the refusal path only, where its size costs nothing.

/// What an operation answered, or the page that tells its refusal.
#[allow(clippy::result_large_err)]
fn answered<T>(answered: Result<Answer<T>, Error>) -> Page<Answer<T>> {
    answered.map_err(|error| page::refused(&error))
}

/// The one thing an operation answered, or the page that tells its refusal.
#[allow(clippy::result_large_err)]
fn data<T>(answer: Result<Answer<T>, Error>) -> Page<T> {
    one(self::answered(answer)?)
}

/// The one thing an answer holds.
#[allow(clippy::result_large_err)]
fn one<T>(answer: Answer<T>) -> Page<T> {
    answer.data().ok_or_else(|| page::failure(&unanswered()))
}

/// The page of a list an operation answered, or the page that tells its refusal.
#[allow(clippy::result_large_err)]
fn listed<T>(answer: Result<Answer<T>, Error>) -> Page<Listed<T>> {
    self::answered(answer)?.page().ok_or_else(|| page::failure(&unanswered()))
}

fn unanswered() -> Error {
    Error::Internal(anyhow::anyhow!("an admin operation answered otherwise than its page expects"))
}

impl Console {
    /// The caller as the admin operation `operation` (`PUT /realms/{realm}`) sees it: the policies
    /// decide on the operation called, as they do for the JSON API.
    fn acting(&self, operation: &str) -> Caller {
        Caller { operation: operation.to_owned(), ..self.caller.clone() }
    }

    /// A form's action: refused without the session's CSRF token; otherwise `run` calls the
    /// operation (`operation` at `path`, as the JSON API names it) as the person, and the browser
    /// is sent on to `then`, or shown the refusal, which the change trail keeps.
    async fn act<T>(
        &self,
        state: &AppState,
        form: &[(String, String)],
        (operation, path): (&str, &str),
        then: &str,
        run: impl AsyncFnOnce(Caller) -> Result<T, Error>,
    ) -> Page {
        self.acted(state, form, (operation, path), run).await?;
        Ok(page::see_other(then))
    }

    /// A form's action, as [`Console::act`], answering what the operation answered.
    async fn acted<T>(
        &self,
        state: &AppState,
        form: &[(String, String)],
        (operation, path): (&str, &str),
        run: impl AsyncFnOnce(Caller) -> Result<T, Error>,
    ) -> Page<T> {
        if !self.genuine(form) {
            return Err(session::forged());
        }
        let caller = self.acting(operation);
        match run(caller.clone()).await {
            Ok(done) => Ok(done),
            Err(error) => {
                let status = error.status();
                if status.is_client_error() {
                    let (method, template) = operation.split_once(' ').unwrap_or(("POST", operation));
                    let method = Method::from_bytes(method.as_bytes()).unwrap_or(Method::POST);
                    let now = state.clock.now();
                    auth::record_refused_change(state, &caller, &method, template, path, error.code(), status, now)
                        .await;
                }
                Err(page::refused(&error))
            }
        }
    }

    /// Whether the policies let the person do `permission` on `resource` through the admin
    /// `operation` an action calls: whether to offer it.
    fn may(&self, state: &AppState, operation: &str, permission: &str, resource: Resource) -> bool {
        self.caller.require_in(&state.authz, operation, permission, resource).is_ok()
    }

    /// Whether the form carries this session's CSRF token.
    fn genuine(&self, form: &[(String, String)]) -> bool {
        let token = form.iter().find(|(name, _)| name == "csrf").map(|(_, value)| value.as_bytes());
        token.is_some_and(|token| crate::kernel::crypto::constant_time_eq(token, self.session.csrf_token.as_bytes()))
    }
}

/// A console answer: a page, or a page that explains why there is none.
type Page<T = Response> = Result<T, Response>;

/// An instant of the API (ISO 8601, UTC) as people read it: `2026-11-26 22:56 UTC`.
fn when(instant: &str) -> String {
    match instant.get(..16) {
        Some(minute) => format!("{} UTC", minute.replacen('T', " ", 1)),
        None => instant.to_owned(),
    }
}

/// The pairs of a query or a form, without the empty ones an unfilled form sends.
fn pairs(query: Option<String>) -> Vec<(String, String)> {
    crate::directory::listing::query_pairs(query).into_iter().filter(|(_, value)| !value.trim().is_empty()).collect()
}

/// The value of `name` among `pairs`.
fn value<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// The page a list's address asks for (`pageNumber`), the first when it names none or no page.
fn page_number(pairs: &[(String, String)]) -> u32 {
    value(pairs, "pageNumber").and_then(|n| n.parse().ok()).filter(|n| *n >= 1).unwrap_or(1)
}

/// What a path segment or a query value escapes: all but the unreserved characters (RFC 3986 §2.3).
const ESCAPED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// `value` as one segment or parameter of an address.
fn encode(value: &str) -> String {
    utf8_percent_encode(value, ESCAPED).to_string()
}

/// The pairs of a posted form, without the fields left empty.
fn form(body: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(body).into_owned().filter(|(_, value)| !value.trim().is_empty()).collect()
}
