//! Every request observed: counted in the metrics by route template and status, and logged in one
//! structured line at info — method, route template, status, duration, request id, realm, and
//! who called (the admin credential or person, the protocol client), never a secret or a token.
//! The request runs inside a span that carries its id, so every line logged while serving it (its
//! errors included) names the request.

use std::cell::RefCell;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument as _;

use super::request_id;
use crate::http::AppState;
use crate::runtime::metrics::HttpLabels;

tokio::task_local! {
    static CALLER: RefCell<Option<String>>;
}

/// Names who is calling in the request's log line: an admin credential or person, or a protocol
/// client. An identifier, never a secret.
pub fn note_caller(caller: impl Into<String>) {
    let _outside_a_request = CALLER.try_with(|slot| *slot.borrow_mut() = Some(caller.into()));
}

/// The realm a request addresses: the path segment where the route template has `{realm}`.
pub fn realm_of<'p>(template: &str, path: &'p str) -> Option<&'p str> {
    let position = template.split('/').position(|segment| segment == "{realm}")?;
    path.split('/').nth(position).filter(|realm| !realm.is_empty())
}

pub async fn observe(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let _in_flight = state.metrics.request_started();
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let realm = realm_of(&route, request.uri().path()).map(str::to_owned);
    let span = tracing::info_span!("request", request_id = request_id::current().unwrap_or_default());
    let (response, caller) = CALLER
        .scope(RefCell::new(None), async {
            let response = next.run(request).instrument(span.clone()).await;
            (response, CALLER.with(|slot| slot.take()))
        })
        .await;
    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    span.in_scope(|| {
        tracing::info!(
            method,
            route,
            status,
            duration_ms = elapsed.as_secs_f64() * 1000.0,
            realm = realm.as_deref(),
            caller = caller.as_deref(),
            "request"
        );
    });
    state.metrics.http_request(&HttpLabels { method, route, status }, elapsed.as_secs_f64());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_realm_is_the_segment_the_template_names() {
        let admin = "/api/v1/admin/realms/{realm}/clients/{client}";
        assert_eq!(realm_of(admin, "/api/v1/admin/realms/acme/clients/web"), Some("acme"));
        let token = "/realms/{realm}/protocol/openid-connect/token";
        assert_eq!(realm_of(token, "/realms/acme/protocol/openid-connect/token"), Some("acme"));
        assert_eq!(realm_of("/api/v1/admin/realms", "/api/v1/admin/realms"), None);
        assert_eq!(realm_of("unmatched", "/realms/acme"), None);
    }
}
