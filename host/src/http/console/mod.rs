//! The console: server-rendered pages for the people of an account's team, under `/console`.
//!
//! The console is a client of the admin API that runs in the same process. A page reads and acts
//! by calling the admin API's own routes with the signed-in person as the caller, so it can show
//! nothing and do nothing the API would not, with the same policy decisions, validation, change
//! trail and access log. Pages ask the policies only to decide which actions to offer; a forged
//! form still meets the API's refusal. The browser holds a random session value in an HttpOnly
//! cookie; the session, its CSRF token and the person's platform session stay on the server.

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

use std::net::{IpAddr, Ipv4Addr};

use axum::body::Body;
use axum::extract::{FromRequestParts, OriginalUri};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, Request, StatusCode, header};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Extension, Router};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tower::ServiceExt as _;

use crate::authz::Resource;
use crate::http::AppState;
use crate::http::address::ClientAddress;
use crate::http::auth::{Caller, ConsolePerson, console_caller};
use crate::runtime::error::Error;
use crate::store::console_sessions::ConsoleSession;
use crate::store::trail;

/// The console's routes; `api` is the admin API it calls in-process.
pub fn routes(api: Router) -> Router<AppState> {
    Router::new()
        .route("/console", get(|| async { page::see_other("/console/attack-protection") }))
        .route("/console/sign-in", get(session::sign_in))
        .route("/console/callback", get(session::callback))
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
        .layer(Extension(Api(api)))
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

/// The admin API, called in-process.
#[derive(Clone)]
struct Api(Router);

/// What the admin API answered.
#[derive(Debug)]
struct Answer {
    status: StatusCode,
    /// The envelope; `Null` for a document (a report).
    body: Value,
    content_type: Option<HeaderValue>,
    bytes: axum::body::Bytes,
}

impl Answer {
    /// `data` read as `T`.
    fn data<T: DeserializeOwned>(&self) -> Result<T, Error> {
        self.read("data")
    }

    /// `pagination` read as a page of `T`.
    fn page<T: DeserializeOwned>(&self) -> Result<Listed<T>, Error> {
        self.read("pagination")
    }

    fn read<T: DeserializeOwned>(&self, field: &str) -> Result<T, Error> {
        let value = self.body.get(field).cloned().unwrap_or(Value::Null);
        serde_json::from_value(value).map_err(|error| {
            Error::Internal(anyhow::anyhow!("the admin API answered {field} the console cannot read: {error}"))
        })
    }

    /// The first message of a refusal, for people.
    fn message(&self) -> String {
        let first = self.body["notifications"].as_array().and_then(|all| all.first());
        let message = first.and_then(|n| n["message"].as_str());
        message.map_or_else(|| self.status.canonical_reason().unwrap_or("Refused").to_owned(), str::to_owned)
    }
}

/// A page of a list, as the admin API's `pagination` has it.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Listed<T> {
    items: Vec<T>,
    page_number: u32,
    total_items: i64,
    total_pages: i64,
}

/// A request of a signed-in person: their console session, the caller the policies see, and the
/// way to the admin API. A request without a live session is sent to sign in, and back.
struct Console {
    session: ConsoleSession,
    person: ConsolePerson,
    caller: Caller,
    address: IpAddr,
    /// The browser's languages, which the admin API answers some words in.
    language: Option<HeaderValue>,
    api: Api,
}

impl FromRequestParts<AppState> for Console {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let address = parts.extensions.get::<ClientAddress>().map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |a| a.0);
        let here = parts.extensions.get::<OriginalUri>().map_or_else(|| parts.uri.clone(), |uri| uri.0.clone());
        let api = parts.extensions.get::<Api>().cloned();
        let api =
            api.ok_or_else(|| page::failure(&Error::Internal(anyhow::anyhow!("the console has no admin API"))))?;
        let again = || {
            let back = if parts.method == Method::GET { here.to_string() } else { "/console".to_owned() };
            session::to_sign_in(&back)
        };
        let now = state.clock.now();
        let Some(value) = session::cookie_value(&parts.headers) else { return Err(again()) };
        let found = crate::oauth::signin::console_sessions::find(state, value, now).await;
        let Some(session) = found.map_err(|error| page::failure(&error))? else { return Err(again()) };
        let person = ConsolePerson { session_id: session.session_id.clone(), user_id: session.user_id.clone() };
        let request = trail::Request { method: parts.method.to_string(), path: here.path().to_owned() };
        let caller = console_caller(state, &person, request).await.map_err(|error| page::failure(&error))?;
        let Some(caller) = caller else { return Err(again()) };
        let language = parts.headers.get(header::ACCEPT_LANGUAGE).cloned();
        Ok(Self { session, person, caller, address, language, api })
    }
}

impl Console {
    async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Answer, Error> {
        let mut request = Request::builder().method(method).uri(format!("/api/v1/admin{path}"));
        let body = match body {
            Some(body) => {
                request = request.header(header::CONTENT_TYPE, "application/json");
                Body::from(serde_json::to_vec(body).map_err(|error| Error::Internal(error.into()))?)
            }
            None => Body::empty(),
        };
        if let Some(language) = &self.language {
            request = request.header(header::ACCEPT_LANGUAGE, language);
        }
        let mut request = request.body(body).map_err(|error| Error::Internal(error.into()))?;
        request.extensions_mut().insert(ClientAddress(self.address));
        request.extensions_mut().insert(self.person.clone());
        let response = match self.api.0.clone().oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let status = response.status();
        let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .map_err(|error| Error::Internal(anyhow::anyhow!("reading the admin API's answer: {error}")))?;
        let json = content_type.as_ref().is_some_and(|t| t.as_bytes().starts_with(b"application/json"));
        let body = if json { serde_json::from_slice(&bytes).unwrap_or(Value::Null) } else { Value::Null };
        Ok(Answer { status, body, content_type, bytes })
    }

    /// Reads `path` of the admin API: its answer when it succeeded, else the page for the refusal.
    async fn read(&self, path: &str) -> Result<Answer, Response> {
        let answer = self.call(Method::GET, path, None).await.map_err(|error| page::failure(&error))?;
        if answer.status.is_success() { Ok(answer) } else { Err(page::refused(&answer)) }
    }

    /// A form's POST to the admin API (see [`Console::send`]).
    async fn act(&self, form: &[(String, String)], path: &str, body: Option<&Value>, then: &str) -> Page {
        self.send(form, Method::POST, path, body, then).await
    }

    /// A form's action: refused without the session's CSRF token; otherwise the admin API decides
    /// (`body` is what it is sent), and the browser is sent on to `then`, or shown the refusal.
    async fn send(
        &self,
        form: &[(String, String)],
        method: Method,
        path: &str,
        body: Option<&Value>,
        then: &str,
    ) -> Page {
        if !self.genuine(form) {
            return Err(session::forged());
        }
        let answer = self.call(method, path, body).await.map_err(|error| page::failure(&error))?;
        if !answer.status.is_success() {
            return Err(page::refused(&answer));
        }
        Ok(page::see_other(then))
    }

    /// Whether the policies let the person do `permission` on `resource` through the admin
    /// `operation` an action calls: whether to offer it.
    fn may(&self, state: &AppState, operation: &str, permission: &str, resource: Resource) -> bool {
        self.caller.require_in(state, operation, permission, resource).is_ok()
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
    crate::http::admin::query_pairs(query).into_iter().filter(|(_, value)| !value.trim().is_empty()).collect()
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
