//! `X-Request-Id` on every response: the caller's own when it fits the rule (up to 128 of
//! letters, digits, `-`, `_`, `:` and `.`), a fresh one otherwise.

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

pub const HEADER: HeaderName = HeaderName::from_static("x-request-id");

tokio::task_local! {
    static REQUEST_ID: String;
}

/// The id of the request being served, if any.
pub fn current() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

pub fn is_acceptable(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
}

/// A random (version 4) UUID from the thread's generator: no system call per request.
fn fresh() -> String {
    uuid::Builder::from_random_bytes(rand::random()).into_uuid().to_string()
}

pub async fn assign(request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(&HEADER)
        .and_then(|value| value.to_str().ok())
        .filter(|id| is_acceptable(id))
        .map_or_else(fresh, str::to_owned);
    let mut response = REQUEST_ID.scope(id.clone(), next.run(request)).await;
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(HEADER, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caller_ids_follow_the_spec_rule() {
        assert!(is_acceptable("abc-DEF_1:2.3"));
        assert!(is_acceptable(&"a".repeat(128)));
        assert!(!is_acceptable(&"a".repeat(129)));
        assert!(!is_acceptable(""));
        assert!(!is_acceptable("has space"));
        assert!(!is_acceptable("semi;colon"));
    }

    #[test]
    fn fresh_ids_are_acceptable_random_uuids() {
        let (one, two) = (fresh(), fresh());
        assert!(is_acceptable(&one));
        assert_ne!(one, two);
        assert_eq!(uuid::Uuid::parse_str(&one).map(|id| id.get_version_num()), Ok(4));
    }
}
