//! OpenID Provider metadata (OIDC Discovery 1.0, and RFC 8414 at its own address), the JWKS, and
//! userinfo. The metadata and the JWKS are readable by code in a browser of any origin: they hold
//! nothing private and carry no credential.

use crate::oauth::tokens::issuer;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::{OAuthError, no_store, realm};
use crate::http::AppState;
use crate::oauth::discovery;
use crate::oauth::tokens::{self, person_claims};
use crate::runtime::error::OAuthCode;
use crate::store::users::UserStatus;

pub async fn configuration(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let document = discovery::provider_metadata(&state, &realm).await?;
    Ok(axum::Json(document).into_response())
}

pub async fn certs(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: axum::http::HeaderMap,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let jwks = crate::directory::keys::jwks(&state, &realm.id).await?;
    // Keys can be revoked at once: caches must ask again soon. A rotation publishes the next key
    // well before this lifetime runs out, so a cached copy never lacks a key that signs. The same
    // set has the same tag on every host: a verifier asking again with it is told nothing changed.
    let cache = format!("public, max-age={}", crate::directory::keys::JWKS_MAX_AGE_SECONDS);
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|tags| tags.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|tag| tag.trim() == jwks.etag || tag.trim() == "*"));
    let mut response = if unchanged {
        axum::http::StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, "application/jwk-set+json")], jwks.body.clone()).into_response()
    };
    let fields = response.headers_mut();
    fields
        .insert(header::CACHE_CONTROL, HeaderValue::from_str(&cache).unwrap_or(HeaderValue::from_static("max-age=60")));
    if let Ok(tag) = HeaderValue::from_str(&jwks.etag) {
        fields.insert(header::ETAG, tag);
    }
    Ok(response)
}

/// Lets code in a browser of any origin read the answer (no credential is ever involved).
pub async fn open_to_every_origin(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let mut response = next.run(request).await;
    response.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    response
}

/// The answer to a CORS preflight of the metadata or the JWKS: reads only.
pub async fn preflight() -> Response {
    let mut response = axum::http::StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, OPTIONS"));
    headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("*"));
    headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
    response
}

/// The bearer token of the `Authorization` header (RFC 6750 §2.1; the scheme in any case).
pub(super) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The access token of the `Authorization` header, and whether it came with the `DPoP` scheme.
fn presented(headers: &HeaderMap) -> Option<(&str, bool)> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    if scheme.eq_ignore_ascii_case("bearer") {
        Some((token.trim(), false))
    } else {
        scheme.eq_ignore_ascii_case("dpop").then(|| (token.trim(), true))
    }
}

/// The token, active and presented as its binding asks (RFC 9449 §7): a token bound to no key as a
/// bearer token; a bound one with the `DPoP` scheme and a proof by its key for this request
/// (`method`, the address `path` names under the realm's issuer, the token's hash). Otherwise none.
pub(super) async fn active_presented(
    state: &AppState,
    realm_id: &str,
    headers: &HeaderMap,
    (token, with_dpop): (&str, bool),
    (method, path): (&str, &str),
) -> Result<Option<tokens::ActiveToken>, OAuthError> {
    let Some(active) = tokens::active_access_token(state, realm_id, token).await? else { return Ok(None) };
    let bound = active.claims.get("cnf").and_then(|cnf| cnf.get("jkt")).and_then(Value::as_str);
    let Some(jkt) = bound else { return Ok((!with_dpop).then_some(active)) };
    if !with_dpop {
        return Ok(None);
    }
    let url = format!("{}{path}", issuer(state, realm_id));
    let request = crate::oauth::dpop::Request { method, url: &url, access_token: Some(token), nonce_required: false };
    // A refused proof leaves the token refused: `invalid_token`, as for any token not usable here.
    match super::dpop_proof::proven_key(state, headers, request).await {
        Ok(proven) => Ok((proven.as_deref() == Some(jkt)).then_some(active)),
        Err(refused) if refused.code == OAuthCode::InvalidDpopProof => Ok(None),
        Err(failure) => Err(failure),
    }
}

/// The Active person whose access token the `Authorization` header carries, and the client it was
/// issued to; else `invalid_token` saying `needed`.
pub(super) async fn bearer_person(
    state: &AppState,
    realm_id: &str,
    headers: &HeaderMap,
    request: (&str, &str),
    needed: &'static str,
) -> Result<(crate::store::users::User, crate::kernel::ids::ClientId), OAuthError> {
    let (_, user, client_id) = bearer_session(state, realm_id, headers, request, needed).await?;
    Ok((user, client_id))
}

/// The person an access token of the realm names, with the session it came from.
pub(super) async fn bearer_session(
    state: &AppState,
    realm_id: &str,
    headers: &HeaderMap,
    request: (&str, &str),
    needed: &'static str,
) -> Result<(crate::store::sessions::Session, crate::store::users::User, crate::kernel::ids::ClientId), OAuthError> {
    let presented = presented(headers).ok_or_else(|| OAuthError::invalid_token(needed, false))?;
    let refused = || OAuthError::invalid_token(needed, presented.1);
    let active = active_presented(state, realm_id, headers, presented, request).await?.ok_or_else(refused)?;
    let client_id = active.client_id.clone();
    let (session, user) = active.person.filter(|(_, u)| u.status == UserStatus::Active).ok_or_else(refused)?;
    Ok((session, user, client_id))
}

fn invalid_token(with_dpop: bool) -> Response {
    OAuthError::invalid_token("the access token is missing, expired or revoked", with_dpop).into_response()
}

/// OIDC Core §5.3: the claims about the signed-in person that the token's scopes release. The
/// access token comes in the `Authorization` header, or in a form body's `access_token` (RFC 6750
/// §2.2), never both.
pub async fn userinfo(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    method: axum::http::Method,
    headers: HeaderMap,
    form: Result<super::Form, OAuthError>,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let in_body = form.as_ref().ok().and_then(|form| form.get("access_token"));
    let token = match (presented(&headers), in_body) {
        (Some(_), Some(_)) => {
            return Err(OAuthError::new(
                OAuthCode::MultipleAccessTokens,
                "send the access token in the Authorization header or the body, not both",
            ));
        }
        (Some(token), None) => token,
        (None, Some(token)) => (token, false),
        (None, None) => return Ok(invalid_token(false)),
    };
    let request = (method.as_str(), "/protocol/openid-connect/userinfo");
    let Some(active) = active_presented(&state, &realm.id, &headers, token, request).await? else {
        return Ok(invalid_token(token.1));
    };
    let user = active.person.as_ref().map(|(_, person)| person.clone());
    let Some(user) = user.filter(|u| u.status == UserStatus::Active) else { return Ok(invalid_token(token.1)) };
    let mut claims = person_claims(&user, &active.scopes());
    claims.insert("sub".into(), Value::String(user.id.to_string()));
    let mut response = axum::Json(Value::Object(claims)).into_response();
    no_store(response.headers_mut());
    Ok(response)
}

/// RFC 9728 protected resource metadata of a resource server of the realm, for it to publish (or
/// proxy) at its own `/.well-known/oauth-protected-resource`: what an MCP client reads to learn
/// which authorization server issues tokens for it and which scopes it takes. Public, like the
/// provider metadata; a disabled or unknown server is 404.
pub async fn protected_resource(
    State(state): State<AppState>,
    Path((realm_id, server_id)): Path<(String, String)>,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let server = crate::store::resource_servers::find(state.store.pool(), &realm.id, &server_id)
        .await
        .map_err(crate::runtime::error::Error::from)?
        .filter(|server| server.status == crate::store::Status::Active)
        .ok_or_else(|| OAuthError::new(OAuthCode::ResourceServerNotFound, "no such resource server in the realm"))?;
    let document = discovery::protected_resource(&state, &realm, &server);
    Ok(axum::Json(document).into_response())
}
