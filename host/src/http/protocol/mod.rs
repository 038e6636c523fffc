//! The OAuth 2.0 / OpenID Connect protocol endpoints of each realm, under
//! `/realms/{realm}/protocol/openid-connect/` and `/realms/{realm}/.well-known/`.
//!
//! Errors follow RFC 6749 §5.2 (`error`, `error_description`) plus the service's `error_code`;
//! every answer carries `Cache-Control: no-store`.

pub mod discovery;
pub mod exchange;
pub mod introspection;
pub mod push;
pub mod recovery;
pub mod token;

use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::AppState;
use crate::error::Error;
use crate::store::Status;
use crate::store::clients::{Client, ClientType};
use crate::store::realms::Realm;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/realms/{realm}/.well-known/openid-configuration", get(discovery::configuration))
        .route("/realms/{realm}/protocol/openid-connect/certs", get(discovery::certs))
        .route("/realms/{realm}/protocol/openid-connect/token", post(token::exchange))
        .route("/realms/{realm}/account/recovery", post(recovery::request))
        .route("/realms/{realm}/account/recovery/reset", post(recovery::reset))
        .route("/realms/{realm}/account/push-devices", post(push::enroll))
        .route("/realms/{realm}/account/push-requests", get(push::waiting))
        .route("/realms/{realm}/account/push-requests/{requestId}/answer", post(push::answer))
        .route("/realms/{realm}/protocol/openid-connect/token/introspect", post(introspection::introspect))
        .route("/realms/{realm}/protocol/openid-connect/revoke", post(introspection::revoke))
        .route("/realms/{realm}/protocol/openid-connect/userinfo", get(discovery::userinfo).post(discovery::userinfo))
}

/// An RFC 6749 error answer.
#[derive(Debug)]
pub struct OAuthError {
    pub status: StatusCode,
    pub error: &'static str,
    pub description: String,
    /// The service's own code, stable for callers to branch on.
    pub code: &'static str,
    /// Answer 401 with a `WWW-Authenticate: Basic` challenge (the client tried HTTP Basic).
    pub challenge: bool,
}

impl OAuthError {
    pub fn new(status: StatusCode, error: &'static str, code: &'static str, description: impl Into<String>) -> Self {
        Self { status, error, description: description.into(), code, challenge: false }
    }

    pub fn invalid_request(code: &'static str, description: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", code, description)
    }

    pub fn invalid_grant(code: &'static str, description: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_grant", code, description)
    }

    pub fn invalid_client(challenge: bool) -> Self {
        Self {
            challenge,
            ..Self::new(StatusCode::UNAUTHORIZED, "invalid_client", "InvalidClient", "client authentication failed")
        }
    }
}

impl From<Error> for OAuthError {
    fn from(error: Error) -> Self {
        match error {
            Error::Unavailable(_) => {
                tracing::error!(%error, "protocol request failed");
                Self::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "temporarily_unavailable",
                    "ServiceUnavailable",
                    "try again shortly",
                )
            }
            Error::RateLimited { .. } => Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                "invalid_request",
                "TooManyRequests",
                "wait a few minutes, then try again",
            ),
            other => {
                tracing::error!(error = %other, details = ?other, "protocol request failed");
                Self::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "server_error",
                    "InternalError",
                    "the request could not be completed",
                )
            }
        }
    }
}

impl From<anyhow::Error> for OAuthError {
    fn from(error: anyhow::Error) -> Self {
        Error::Internal(error).into()
    }
}

impl From<sqlx::Error> for OAuthError {
    fn from(error: sqlx::Error) -> Self {
        Error::from(error).into()
    }
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({
            "error": self.error,
            "error_description": self.description,
            "error_code": self.code,
        });
        let mut response = (self.status, axum::Json(body)).into_response();
        no_store(response.headers_mut());
        if self.status == StatusCode::UNAUTHORIZED {
            let challenge = if self.challenge { "Basic realm=\"castellan\"" } else { "Bearer" };
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
        }
        response
    }
}

/// `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 §5.1).
pub fn no_store(headers: &mut HeaderMap) {
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
}

/// A JSON answer that must not be cached.
pub fn json_no_store(body: serde_json::Value) -> Response {
    let mut response = axum::Json(body).into_response();
    no_store(response.headers_mut());
    response
}

/// A form-encoded request body (RFC 6749 §3.2: no parameter more than once).
#[derive(Debug, Default)]
pub struct Form {
    pairs: Vec<(String, String)>,
}

impl Form {
    pub fn parse(headers: &HeaderMap, body: &[u8]) -> Result<Self, OAuthError> {
        let form_type = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"));
        if !form_type {
            return Err(OAuthError::invalid_request(
                "UnsupportedContentType",
                "the body must be application/x-www-form-urlencoded",
            ));
        }
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (name, value) in url::form_urlencoded::parse(body) {
            if pairs.iter().any(|(n, _)| *n == name) {
                return Err(OAuthError::invalid_request("RepeatedParameter", format!("{name} is sent more than once")));
            }
            pairs.push((name.into_owned(), value.into_owned()));
        }
        Ok(Self { pairs })
    }

    /// The parameter's value; an empty value counts as absent (RFC 6749 §3.1).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
    }

    pub fn require(&self, name: &str) -> Result<&str, OAuthError> {
        self.get(name).ok_or_else(|| OAuthError::invalid_request("MissingParameter", format!("{name} is required")))
    }
}

/// The realm of a protocol request; a disabled or unknown realm answers 404.
pub async fn realm(state: &AppState, realm_id: &str) -> Result<Arc<Realm>, OAuthError> {
    match crate::http::admin::find_realm(state, realm_id).await? {
        Some(realm) if realm.status == Status::Active => Ok(realm),
        _ => Err(OAuthError::new(StatusCode::NOT_FOUND, "invalid_request", "RealmNotFound", "no such realm")),
    }
}

/// Client credentials from HTTP Basic (RFC 6749 §2.3.1: both parts form-encoded) or the body.
pub(super) fn presented_credentials(
    headers: &HeaderMap,
    form: &Form,
) -> Result<Option<(String, String, bool)>, OAuthError> {
    let basic = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| {
        let (scheme, rest) = v.split_once(' ')?;
        scheme.eq_ignore_ascii_case("basic").then(|| rest.trim().to_owned())
    });
    let in_body = form.get("client_secret");
    match (basic, in_body) {
        (Some(_), Some(_)) => Err(OAuthError::invalid_request(
            "MultipleClientAuthentications",
            "use one client authentication method: HTTP Basic or the body, not both",
        )),
        (Some(encoded), None) => {
            let decoded = STANDARD.decode(encoded).ok().and_then(|b| String::from_utf8(b).ok());
            let Some((id, secret)) = decoded.as_deref().and_then(|d| d.split_once(':')) else {
                return Err(OAuthError::invalid_client(true));
            };
            let decode = |part: &str| {
                url::form_urlencoded::parse(format!("x={part}").as_bytes()).next().map(|(_, v)| v.into_owned())
            };
            match (decode(id), decode(secret)) {
                (Some(id), Some(secret)) => Ok(Some((id, secret, true))),
                _ => Err(OAuthError::invalid_client(true)),
            }
        }
        (None, Some(secret)) => match form.get("client_id") {
            Some(id) => Ok(Some((id.to_owned(), secret.to_owned(), false))),
            None => Err(OAuthError::invalid_client(false)),
        },
        (None, None) => Ok(None),
    }
}

/// Authenticates the confidential client of the request (`client_secret_basic` or
/// `client_secret_post`). Unknown client, wrong secret, disabled client and a public client all get
/// the same 401 `invalid_client`.
pub async fn authenticate_client(
    state: &AppState,
    realm: &Realm,
    headers: &HeaderMap,
    form: &Form,
) -> Result<Arc<Client>, OAuthError> {
    let Some((id, secret, basic)) = presented_credentials(headers, form)? else {
        return Err(OAuthError::invalid_client(false));
    };
    if form.get("client_id").is_some_and(|named| named != id) {
        return Err(OAuthError::invalid_request("ClientMismatch", "client_id differs from the authenticated client"));
    }
    let client = crate::tokens::find_client(state, &realm.id, &id).await?;
    let now = crate::clock::to_millis(state.clock.now());
    let authenticated = client.filter(|c| {
        c.status == Status::Active
            && c.client_type == ClientType::Confidential
            && c.accepts_secret(&state.hasher, &secret, now)
    });
    authenticated.ok_or_else(|| OAuthError::invalid_client(basic))
}
