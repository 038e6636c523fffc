//! CORS at the token and revocation endpoints. Code in a browser reads an answer only when it runs
//! at an origin the client lists in its `allowedOrigins`: the answer names that origin in
//! `Access-Control-Allow-Origin`, and no other. A preflight names no client, so it is answered for
//! any origin; the answer to the request itself decides, once the client is known.

use std::cell::RefCell;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::store::clients::Client;

tokio::task_local! {
    static CLIENT_ORIGINS: RefCell<Option<Vec<String>>>;
}

/// Seconds a browser may keep a preflight's answer.
const PREFLIGHT_MAX_AGE: &str = "600";

/// Notes the client the request named, whose origins decide who may read the answer.
pub fn note_client(client: &Client) {
    let _outside_cors = CLIENT_ORIGINS.try_with(|slot| *slot.borrow_mut() = Some(client.allowed_origins.clone()));
}

/// Answers each request as it is, letting the browser read it only from an origin of its client.
pub async fn by_client(request: Request, next: Next) -> Response {
    let Some(origin) = request.headers().get(header::ORIGIN).cloned() else {
        return next.run(request).await;
    };
    let (mut response, allowed) = CLIENT_ORIGINS
        .scope(RefCell::new(None), async {
            let response = next.run(request).await;
            (response, CLIENT_ORIGINS.with(RefCell::take))
        })
        .await;
    let headers = response.headers_mut();
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
    if allowed.is_some_and(|origins| origins.iter().any(|allowed| allowed.as_bytes() == origin.as_bytes())) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    }
    response
}

/// The answer to a preflight: a POST with client authentication and a form body may follow.
pub async fn preflight(headers: HeaderMap) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let Some(origin) = headers.get(header::ORIGIN).cloned() else { return response };
    let answer = response.headers_mut();
    answer.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    answer.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("POST"));
    answer.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("authorization, content-type"));
    answer.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static(PREFLIGHT_MAX_AGE));
    answer.insert(header::VARY, HeaderValue::from_static("Origin"));
    response
}
