//! The edges of the device authorization grant (RFC 8628); the grant itself is
//! `crate::oauth::signin::device`.
//!
//! - `POST …/protocol/openid-connect/auth/device`: the device authorization endpoint. A public
//!   client names itself with `client_id`, any other authenticates as at the token endpoint; the
//!   answer holds the device code, the user code, the verification page's address (plain and
//!   with the code in it), its lifetime and the polling interval. One source address asks at most
//!   `device_authorizations` a minute.
//! - `GET /realms/{realm}/device[?user_code=…]`: the verification page, where the person types
//!   the code (or sees it filled in, and confirms it). `POST` looks the code up: a known one
//!   leads to the authorization endpoint, where the person signs in and approves the device on
//!   the consent page; an unknown one is counted against the source (`wrong_user_codes` a minute),
//!   and a source attack protection blocked is refused.
//! - The device polls the token endpoint with `grant_type=urn:ietf:params:oauth:grant-type:device_code`.

use axum::Extension;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::authorize::{origin_of, texts_for};
use super::cookies::{append_cookie, fresh_form, genuine_form};
use super::login_page::{self, Field, FormPage, Frame, Problem};
use super::{Form, OAuthError, authenticate_client, json_no_store, public_client, realm};
use crate::http::AppState;
use crate::http::address::ClientAddress;
use crate::oauth::signin::device;
use crate::oauth::signin::texts::Texts;
use crate::oauth::signin::{Refusal, SignInError};
use crate::oauth::tokens::issuer;
use crate::runtime::error::OAuthCode;
use crate::runtime::rate_limit::{Class, source_key};
use crate::store::clients::GrantType;
use crate::store::realms::Realm;

/// `POST …/auth/device`: starts a device authorization (RFC 8628 §3.1, §3.2).
pub async fn authorization(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Form,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let now = state.clock.now();
    if let Err(retry_after_seconds) = state.limiter.take(&source_key(address), Class::DeviceAuthorization, now).await {
        return Err(crate::runtime::error::Error::RateLimited { retry_after_seconds }.into());
    }
    let client = if super::authenticates(&headers, &form)? {
        authenticate_client(&state, &realm, &headers, &form).await?
    } else {
        public_client(&state, &realm, &form).await?
    };
    if !client.allows(GrantType::DeviceCode) {
        return Err(OAuthError::new(
            OAuthCode::GrantTypeDisabled,
            "the device authorization grant is not enabled on this client",
        ));
    }
    let started = device::start(&state, &realm, &client, form.scopes()?, form.get("resource")).await?;
    let verification = verification_uri(&state, &realm);
    let mut complete = url::Url::parse(&verification).map_err(|e| crate::runtime::error::Error::Internal(e.into()))?;
    complete.query_pairs_mut().append_pair("user_code", &started.user_code);
    Ok(json_no_store(json!({
        "device_code": started.device_code,
        "user_code": started.user_code,
        "verification_uri": verification,
        "verification_uri_complete": complete.as_str(),
        "expires_in": started.expires_in,
        "interval": started.interval,
    })))
}

/// Where people type the codes their devices show.
pub fn verification_uri(state: &AppState, realm: &Realm) -> String {
    format!("{}/device", issuer(state, &realm.id))
}

/// `GET /realms/{realm}/device`: the form, the code filled in when the address carries it.
pub async fn shown(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let form = Form::from_query(query.as_deref()).unwrap_or_default();
    let texts = texts_for(&form, &headers);
    let Ok(realm) = realm(&state, &realm_id).await else { return no_realm(texts) };
    entry(&state, &realm, texts, form.get("user_code").unwrap_or(""), None)
}

/// `POST /realms/{realm}/device`: the code typed, looked up.
pub async fn entered(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Result<Form, OAuthError>,
) -> Response {
    let form = form.unwrap_or_default();
    let texts = texts_for(&form, &headers);
    let Ok(realm) = realm(&state, &realm_id).await else { return no_realm(texts) };
    let typed = form.get("user_code").unwrap_or("");
    if !genuine_form(&state, &headers, &form) {
        return entry(&state, &realm, texts, typed, Some((StatusCode::FORBIDDEN, texts.form_expired)));
    }
    let now = state.clock.now();
    let source = source_key(address);
    if state.limiter.check(&source, Class::WrongUserCode, now).await.is_err() {
        return entry(&state, &realm, texts, typed, Some((StatusCode::TOO_MANY_REQUESTS, texts.too_many_attempts)));
    }
    match device::entered(&state, &state.protection, &realm, typed, &origin_of(address, &headers)).await {
        Ok(Some(found)) => {
            let mut query = url::form_urlencoded::Serializer::new(String::new());
            query.append_pair("device", &found.user_code_hash);
            // The pages that follow speak the language this one spoke, the last one included.
            query.append_pair("ui_locales", form.get("ui_locales").unwrap_or(texts.tag));
            let approval = format!("{}/protocol/openid-connect/auth?{}", issuer(&state, &realm.id), query.finish());
            let mut response = StatusCode::SEE_OTHER.into_response();
            if let Ok(location) = HeaderValue::from_str(&approval) {
                response.headers_mut().insert(header::LOCATION, location);
            }
            login_page::secure(response.headers_mut());
            response
        }
        Ok(None) => {
            let _ = state.limiter.take(&source, Class::WrongUserCode, now).await;
            entry(&state, &realm, texts, typed, Some((StatusCode::BAD_REQUEST, texts.user_code_unknown)))
        }
        Err(SignInError::Refused(Refusal::SourceBlocked)) => {
            entry(&state, &realm, texts, typed, Some((StatusCode::TOO_MANY_REQUESTS, texts.too_many_attempts)))
        }
        Err(failure) => {
            tracing::error!(error = ?failure, "a user code could not be looked up");
            login_page::problem(
                StatusCode::SERVICE_UNAVAILABLE,
                "Signing in is not possible right now",
                "Try again in a moment.",
            )
        }
    }
}

/// The page where the code is typed, again with the refusal of the last try when there was one.
fn entry(
    state: &AppState,
    realm: &Realm,
    texts: &'static Texts,
    typed: &str,
    problem: Option<(StatusCode, &'static str)>,
) -> Response {
    let (csrf, form_cookie) = fresh_form(state, realm);
    let endpoint = issuer(state, &realm.id);
    let frame = Frame::plain("", &endpoint, &csrf, texts);
    let (status, problem) = match problem {
        Some((status, text)) => (status, Some(Problem { text, field: Some("user_code") })),
        None => (StatusCode::OK, None),
    };
    let page = FormPage {
        title: texts.device_title.to_owned(),
        intro: Some(texts.device_intro),
        path: "device",
        fields: vec![Field::text("user_code", texts.user_code, "one-time-code", typed)],
        button: texts.next,
        problem,
        ..FormPage::default()
    };
    let mut response = login_page::form_page(&frame, &page, status);
    append_cookie(&mut response, &form_cookie);
    response
}

fn no_realm(texts: &'static Texts) -> Response {
    login_page::shown(StatusCode::NOT_FOUND, texts.device_title, "This address names no active realm.", texts)
}
