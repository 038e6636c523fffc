//! Admin API authentication: who the caller is, what it may do, and the record of every attempt.
//!
//! The `authenticate` middleware identifies the credential, applies the caller's rate limit, hands
//! the handler an authorised [`Caller`], writes the access log entry, and records refused changes
//! in the change trail (they raise no event).

mod identify;

use std::net::{IpAddr, Ipv4Addr};

use axum::extract::{FromRequestParts, MatchedPath, OriginalUri, Request, State};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};

use self::identify::{Identified, identify, identify_console};
use super::address::ClientAddress;
use super::envelope::RefusedWith;
pub use crate::authz::caller::Caller;
use crate::http::AppState;
use crate::kernel::error_code::ErrorCode;
use crate::kernel::ids::{ClientId, RealmId, SessionId, UserId, new_guid};
use crate::runtime::error::Error;
use crate::runtime::rate_limit::{self, Class};
use crate::store::access_log::{AccessEntry, AccessOutcome};
use crate::store::secrets;
use crate::store::trail::ResourceKind;
use crate::store::trail::{self, ChangeAction};

pub const API_KEY_HEADER: &str = "x-api-key";

/// The admin operation a request calls: its method and its route, without the API's prefix.
pub fn operation(method: &Method, template: &str) -> String {
    format!("{method} {}", template.strip_prefix(ADMIN_PREFIX).unwrap_or(template))
}

/// Where the admin API's routes are.
const ADMIN_PREFIX: &str = "/api/v1/admin";
/// Where the console's pages are.
const CONSOLE_PREFIX: &str = "/console";

impl FromRequestParts<AppState> for Caller {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _: &AppState) -> Result<Self, Error> {
        parts.extensions.get::<Caller>().cloned().ok_or(Error::Unauthenticated)
    }
}

/// A person signed in to the console, as the console's own calls of the admin API carry them: a
/// request extension, which no request from the network can have. The person acts with the roles
/// they hold on the team now, while their platform session lives.
#[derive(Debug, Clone)]
pub struct ConsolePerson {
    /// The person's session at the platform realm.
    pub session_id: SessionId,
    pub user_id: UserId,
}

/// Why a credential was not accepted (recorded in the access log, never told to the caller).
#[derive(Debug)]
struct Refusal {
    reason: &'static str,
    credential: Option<Box<secrets::Credential>>,
}

/// Why no caller came out of the credentials.
#[derive(Debug)]
enum Rejection {
    Refused(Refusal),
    Failed(Error),
}

pub async fn authenticate(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let now = state.clock.now();
    let address = request.extensions().get::<ClientAddress>().map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |a| a.0);
    let ip = address.to_string();
    let source = rate_limit::source_key(address);
    let method = request.method().clone();
    let path = request
        .extensions()
        .get::<OriginalUri>()
        .map_or_else(|| request.uri().path().to_owned(), |uri| uri.path().to_owned());
    let template = request.extensions().get::<MatchedPath>().map(|p| p.as_str().to_owned());

    let mut entry = AccessEntry {
        id: new_guid(),
        occurred_at: now,
        account_id: None,
        credential_id: None,
        credential_name: None,
        actor_user_id: None,
        ip_address: ip.clone(),
        method: method.to_string(),
        path: path.clone(),
        status: 401,
        outcome: AccessOutcome::Refused,
        reason: None,
    };

    // A source that spent its failed authentications is refused before its credential is read.
    if let Err(retry_after_seconds) = state.limiter.check(&source, Class::FailedAuthentication, now).await {
        return throttled(&state, entry, &source, retry_after_seconds, now).await;
    }
    let identified = match request.extensions().get::<ConsolePerson>() {
        Some(signed_in) => identify_console(&state, signed_in, now).await,
        None => identify(&state, request.headers(), now).await,
    };
    let Identified { principal, person, mut actor } = match identified {
        Ok(found) => found,
        Err(rejection) => match *rejection {
            Rejection::Refused(refusal) => {
                if let Err(retry_after_seconds) = state.limiter.take(&source, Class::FailedAuthentication, now).await {
                    return throttled(&state, entry, &source, retry_after_seconds, now).await;
                }
                if let Some(credential) = &refusal.credential {
                    entry.account_id = Some(credential.secret.account_id.clone());
                    entry.credential_id = Some(credential.secret.id.clone());
                    entry.credential_name = Some(credential.secret.name.clone());
                    entry.actor_user_id.clone_from(&credential.secret.acts_for_user_id);
                }
                entry.reason = Some(refusal.reason.to_owned());
                state.access_log.record(entry).await;
                return unadmitted(Error::Unauthenticated);
            }
            Rejection::Failed(error) => return unadmitted(error),
        },
    };
    actor.ip_address = ip;
    // Who calls, by identifier: the credential, and the person it acts for.
    let caller = match (&actor.credential_id, &actor.user_id) {
        (Some(credential), Some(user)) => format!("credential:{credential} user:{user}"),
        (Some(credential), None) => format!("credential:{credential}"),
        (None, Some(user)) => format!("user:{user}"),
        (None, None) => format!("principal:{}", principal.id),
    };
    crate::http::observe::note_caller(caller);
    entry.account_id = Some(principal.account_id.clone());
    entry.credential_id.clone_from(&actor.credential_id);
    entry.credential_name.clone_from(&actor.credential_name);
    entry.actor_user_id = actor.user_id.clone();

    // An account that names the networks its credentials may be used from refuses every other
    // address, before the request counts against the caller's limits: a key used from elsewhere
    // cannot spend its owner's allowance.
    let admitted = match crate::operations::instance::admits_admin_call(&state, &principal.account_id, address).await {
        Ok(admitted) => admitted,
        Err(error) => return unadmitted(error),
    };
    if admitted {
        let class = rate_class(&method, template.as_deref().unwrap_or(&path));
        let (taken, near_limit) = state.limiter.take_watched(&principal.id, class, now).await;
        if near_limit {
            let per_minute = state.limiter.per_minute(class);
            let told = crate::operations::notifications::near_rate_limit(
                &state.store,
                &principal.account_id,
                &principal.id,
                per_minute,
                now,
            );
            if let Err(error) = told.await {
                tracing::error!(%error, "cannot tell the account a caller is near its rate limit");
            }
        }
        if let Err(retry_after_seconds) = taken {
            entry.status = 429;
            entry.reason = Some("TooManyRequests".into());
            state.access_log.record(entry).await;
            state.metrics.rate_limited(if class == Class::Sensitive { "sensitive" } else { "standard" });
            return unadmitted(Error::RateLimited { retry_after_seconds });
        }
    }

    let request_line = trail::Request { method: method.to_string(), path: path.clone() };
    let operation = operation(&method, template.as_deref().unwrap_or(&path));
    let caller = Caller { principal, person, actor, request: request_line, operation };
    request.extensions_mut().insert(caller.clone());
    let response = if admitted {
        next.run(request).await
    } else {
        unadmitted(Error::Forbidden(ErrorCode::AdminNetworkNotAllowed))
    };

    let status = response.status();
    let refused_with = response.extensions().get::<RefusedWith>().map(|r| r.0);
    entry.status = i64::from(status.as_u16());
    if status.is_client_error() || status.is_server_error() {
        entry.reason = refused_with.map(|code| code.as_str().to_owned());
    } else {
        entry.outcome = AccessOutcome::Accepted;
    }
    state.access_log.record(entry).await;

    if let (Some(code), Some(template)) = (refused_with, template)
        && status.is_client_error()
    {
        record_refused_change(&state, &caller, &method, &template, &path, code, status, now).await;
    }
    response
}

/// Keeps in the trail a change the admin operation at `template` (and `path`) refused with `code`;
/// reads are not changes and leave nothing.
#[allow(clippy::too_many_arguments)]
pub async fn record_refused_change(
    state: &AppState,
    caller: &Caller,
    method: &Method,
    template: &str,
    path: &str,
    code: ErrorCode,
    status: StatusCode,
    now: DateTime<Utc>,
) {
    let action = match template {
        t if t.ends_with("/impersonate") => Some(ChangeAction::Impersonate),
        _ => ChangeAction::of_method(method.as_str()),
    };
    let Some(action) = action else { return };
    let (resource_type, resource_id, realm_id, client_id) = describe_target(template, path);
    let change = trail::Change {
        action,
        resource_type,
        resource_id,
        parent_id: None,
        realm_id: realm_id.map(RealmId::known),
        client_id: client_id.map(ClientId::known),
        before: None,
        after: None,
        details: None,
        details_in_event: false,
        status: status.as_u16(),
    };
    let recorded =
        trail::record_refusal(state.store.writer(), &caller.actor, &caller.request, &change, code.as_str(), now);
    if let Err(error) = recorded.await {
        tracing::error!(%error, "cannot record a refused change in the trail");
    }
}

/// The answer to a source refused for its failed authentications. Its access-log entry is kept
/// once a minute per source (the first refusal of each minute), so that a flood of bad credentials
/// leaves a bounded trail.
async fn throttled(
    state: &AppState,
    mut entry: AccessEntry,
    source: &str,
    retry_after_seconds: u64,
    now: DateTime<Utc>,
) -> Response {
    if state.limiter.take(source, Class::ThrottledRecord, now).await.is_ok() {
        entry.status = 429;
        entry.reason =
            Some("too many failed authentications from this source; later refusals this minute are not listed".into());
        state.access_log.record(entry).await;
    }
    state.metrics.rate_limited("failed_authentication");
    unadmitted(Error::RateLimited { retry_after_seconds })
}

/// Marks the answer of a request refused before its handler ran.
#[derive(Debug, Clone, Copy)]
pub struct Unadmitted;

fn unadmitted(error: Error) -> Response {
    let mut response = error.into_response();
    response.extensions_mut().insert(Unadmitted);
    response
}

/// Creating or changing API secrets, imports and impersonation are sensitive, whether the admin
/// API or the console asks.
fn rate_class(method: &Method, template: &str) -> Class {
    let changes = method != Method::GET && method != Method::HEAD;
    let at = template.strip_prefix(ADMIN_PREFIX).or_else(|| template.strip_prefix(CONSOLE_PREFIX)).unwrap_or(template);
    let sensitive = at.starts_with("/secrets")
        || at.starts_with("/import")
        || at.ends_with("/client-secret/rotate")
        || at.ends_with("/clients/{client}/rotate-secret")
        || at.ends_with("/users/import")
        || at.ends_with("/impersonate")
        || at.ends_with("/dedicated/instance");
    if changes && sensitive { Class::Sensitive } else { Class::Standard }
}

/// The resource type, id, realm and client a route addresses, read from its template:
/// `/api/v1/admin/realms/{realm}/clients/{client}` → ("client", Some(id), Some(realm), Some(client)).
fn describe_target(template: &str, path: &str) -> (ResourceKind, Option<String>, Option<String>, Option<String>) {
    let names: Vec<&str> = template.split('/').collect();
    let values: Vec<&str> = path.split('/').collect();
    let param = |name: &str| {
        names
            .iter()
            .position(|segment| *segment == name)
            .and_then(|index| values.get(index))
            .map(|value| (*value).to_owned())
    };
    // The last named collection, skipping verbs such as `rotate`; its id is the segment after it.
    let at = names
        .iter()
        .rposition(|s| !s.starts_with('{') && !s.is_empty() && !["rotate", "impersonate", "lift"].contains(s))
        .unwrap_or(0);
    let last_static = names.get(at).copied().unwrap_or("");
    let resource_type = ResourceKind::of_collection(last_static);
    let resource_id = match last_static {
        "client-secret" => param("{client}"),
        _ => names.get(at + 1).filter(|s| s.starts_with('{')).and_then(|_| values.get(at + 1)).map(|v| (*v).to_owned()),
    };
    (resource_type, resource_id, param("{realm}"), param("{client}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensitive_routes_are_changes_to_secrets_imports_and_impersonation() {
        assert_eq!(rate_class(&Method::POST, "/api/v1/admin/secrets"), Class::Sensitive);
        assert_eq!(rate_class(&Method::DELETE, "/api/v1/admin/secrets/{id}"), Class::Sensitive);
        assert_eq!(rate_class(&Method::GET, "/api/v1/admin/secrets"), Class::Standard);
        assert_eq!(rate_class(&Method::POST, "/api/v1/admin/realms"), Class::Standard);
        let import = "/api/v1/admin/realms/{realm}/clients/{client}/users/import";
        assert_eq!(rate_class(&Method::POST, import), Class::Sensitive);
        assert_eq!(rate_class(&Method::GET, import), Class::Standard, "reading the reports is not");
        assert_eq!(rate_class(&Method::POST, "/console/secrets/{id}/rotate"), Class::Sensitive);
        let client_secret = "/console/realms/{realm}/clients/{client}/rotate-secret";
        assert_eq!(rate_class(&Method::POST, client_secret), Class::Sensitive);
        let webhook_secret = "/console/realms/{realm}/webhooks/{webhookId}/rotate-secret";
        assert_eq!(rate_class(&Method::POST, webhook_secret), Class::Standard);
        assert_eq!(
            rate_class(&Method::POST, "/api/v1/admin/realms/{realm}/users/{userId}/impersonate"),
            Class::Sensitive
        );
    }

    #[test]
    fn targets_are_read_from_the_route_template() {
        let got =
            describe_target("/api/v1/admin/realms/{realm}/clients/{client}", "/api/v1/admin/realms/acme/clients/web");
        assert_eq!(got, (ResourceKind::Client, Some("web".into()), Some("acme".into()), Some("web".into())));
        let got = describe_target("/api/v1/admin/realms/{realm}/clients", "/api/v1/admin/realms/acme/clients");
        assert_eq!(got, (ResourceKind::Client, None, Some("acme".into()), None));
        let got = describe_target(
            "/api/v1/admin/realms/{realm}/clients/{client}/client-secret/rotate",
            "/api/v1/admin/realms/acme/clients/web/client-secret/rotate",
        );
        assert_eq!(got, (ResourceKind::Client, Some("web".into()), Some("acme".into()), Some("web".into())));
        let got = describe_target("/api/v1/admin/secrets/{id}/rotate", "/api/v1/admin/secrets/s1/rotate");
        assert_eq!(got, (ResourceKind::Secret, Some("s1".into()), None, None));
        let got = describe_target(
            "/api/v1/admin/realms/{realm}/clients/{client}/signing-keys/rotate",
            "/api/v1/admin/realms/acme/clients/web/signing-keys/rotate",
        );
        assert_eq!(got, (ResourceKind::SigningKey, None, Some("acme".into()), Some("web".into())));
    }
}
