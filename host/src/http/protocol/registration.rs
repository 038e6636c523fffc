//! The realm's registration endpoint (RFC 7591) and each self-registered client's configuration
//! endpoint (RFC 7592). JSON in and out; refusals are RFC 7591 §3.2.2 error bodies. Registrations
//! are limited per source address, allowed or not.

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{OriginalUri, Path, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::discovery::bearer;
use super::{OAuthError, json_no_store, no_content_no_store, no_store, realm};
use crate::http::AppState;
use crate::http::address::ClientAddress;
use crate::oauth::registration::{self, Asker, Metadata, RegistrationError};
use crate::runtime::error::{Error, OAuthCode};
use crate::runtime::rate_limit::{Class, source_key};
use crate::store::trail::Request;

impl From<RegistrationError> for OAuthError {
    fn from(error: RegistrationError) -> Self {
        match error {
            RegistrationError::Closed => {
                Self::new(OAuthCode::RegistrationClosed, "this realm does not take client registrations")
            }
            RegistrationError::InvalidToken => {
                Self::new(OAuthCode::InvalidToken, "the access token is missing or not valid")
            }
            RegistrationError::InvalidRedirectUri(why) => Self::new(OAuthCode::InvalidRedirectUri, why),
            RegistrationError::InvalidMetadata(why) => Self::new(OAuthCode::InvalidClientMetadata, why),
            RegistrationError::Full(full) => {
                Error::RateLimited { retry_after_seconds: full.retry_after_seconds }.into()
            }
            RegistrationError::Failed(failure) => failure.into(),
        }
    }
}

/// The request's JSON object of client metadata.
fn metadata(headers: &HeaderMap, body: &Bytes) -> Result<(Metadata, Value), OAuthError> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(OAuthError::new(OAuthCode::UnsupportedContentType, "the body must be application/json"));
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|_| OAuthError::new(OAuthCode::InvalidClientMetadata, "the body is not a JSON document"))?;
    Ok((Metadata::read(&value)?, value))
}

fn asker(address: std::net::IpAddr, method: &Method, uri: &OriginalUri) -> Asker {
    Asker {
        ip_address: address.to_string(),
        request: Request { method: method.to_string(), path: uri.path().to_owned() },
    }
}

/// `POST …/register`: registers a client (RFC 7591 §3.1); 201 with its id, its secret when it
/// has one, and its registration access token.
pub async fn register(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    uri: OriginalUri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, OAuthError> {
    let now = state.clock.now();
    if let Err(retry_after_seconds) = state.limiter.take(&source_key(address), Class::ClientRegistration, now).await {
        return Err(Error::RateLimited { retry_after_seconds }.into());
    }
    let realm = realm(&state, &realm_id).await?;
    let (metadata, _) = metadata(&headers, &body)?;
    let asked = asker(address, &Method::POST, &uri);
    let registered = registration::register(&state, &realm, bearer(&headers), &metadata, &asked).await?;
    let mut document = registration::described(&state, &realm, &registered.client);
    if let Value::Object(fields) = &mut document {
        if let Some(secret) = registered.secret {
            fields.insert("client_secret".into(), Value::String(secret));
        }
        if let Some(token) = registered.registration_token {
            fields.insert("registration_access_token".into(), Value::String(token));
        }
    }
    let mut response = (StatusCode::CREATED, axum::Json(document)).into_response();
    no_store(response.headers_mut());
    Ok(response)
}

/// `GET …/register/{clientId}`: the client's registration as it stands (RFC 7592 §2.1).
pub async fn read(
    State(state): State<AppState>,
    Path((realm_id, client_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let client = registration::registered(&state, &realm, &client_id, bearer(&headers)).await?;
    Ok(json_no_store(registration::described(&state, &realm, &client)))
}

/// `PUT …/register/{clientId}`: replaces the client's metadata (RFC 7592 §2.2). The body names the
/// client; a `client_secret` in it must be the current one, which it never replaces.
pub async fn replace(
    State(state): State<AppState>,
    Path((realm_id, client_id)): Path<(String, String)>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    uri: OriginalUri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let before = registration::registered(&state, &realm, &client_id, bearer(&headers)).await?;
    let (metadata, value) = metadata(&headers, &body)?;
    if value.get("client_id").and_then(Value::as_str) != Some(before.id.as_str()) {
        return Err(OAuthError::new(OAuthCode::InvalidClientMetadata, "client_id must name this client"));
    }
    if let Some(secret) = value.get("client_secret") {
        let current =
            secret.as_str().is_some_and(|secret| before.accepts_secret(&state.hasher, secret, state.clock.now()));
        if !current {
            return Err(OAuthError::new(OAuthCode::InvalidClientMetadata, "client_secret is not the client's secret"));
        }
    }
    let asked = asker(address, &Method::PUT, &uri);
    let client = registration::update(&state, &realm, &before, &metadata, &asked).await?;
    Ok(json_no_store(registration::described(&state, &realm, &client)))
}

/// `DELETE …/register/{clientId}`: the client deletes itself (RFC 7592 §2.3); 204.
pub async fn delete(
    State(state): State<AppState>,
    Path((realm_id, client_id)): Path<(String, String)>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    uri: OriginalUri,
    headers: HeaderMap,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let client = registration::registered(&state, &realm, &client_id, bearer(&headers)).await?;
    registration::delete(&state, &realm, &client, &asker(address, &Method::DELETE, &uri)).await?;
    Ok(no_content_no_store())
}

/// The answer to a CORS preflight of the registration endpoints: code in a browser (an MCP
/// inspector, say) may register and manage a client with its bearer token.
pub async fn preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, PUT, DELETE, OPTIONS"));
    headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("authorization, content-type"));
    headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
    response
}
