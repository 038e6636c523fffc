//! The OAuth 2.0 / OpenID Connect protocol endpoints of each realm, under
//! `/realms/{realm}/protocol/openid-connect/` and `/realms/{realm}/.well-known/`, and the realm's
//! RFC 8414 metadata at `/.well-known/oauth-authorization-server/realms/{realm}`.
//!
//! Errors follow RFC 6749 §5.2 (`error`, `error_description`) plus the service's `error_code`;
//! every answer carries `Cache-Control: no-store`.

/// Unpacks a form of the sign-in pages read by `authorize::posted`, or returns the answer its
/// check gave.
macro_rules! checked {
    ($read:expr) => {
        match $read.await {
            Ok(read) => read,
            Err(answer) => return *answer,
        }
    };
}

pub mod account_authenticators;
pub mod account_connections;
pub mod account_consents;
pub mod applications_page;
pub mod authorize;
pub mod client_auth;
pub mod cookies;
pub mod cors;
pub mod device;
pub mod discovery;
pub mod dpop_proof;
pub mod exchange;
pub mod factor_steps;
mod form;
pub mod introspection;
pub mod login_page;
pub mod logout;
pub mod passkey_steps;
pub mod password_page;
pub mod push;
pub mod recovery;
pub mod registration;
pub mod security_page;
pub mod sign_in_steps;
pub mod token;
pub mod upstream;

use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::from_fn;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::http::AppState;
use crate::oauth::signin::{Refusal, SignInError};
use crate::runtime::error::{Error, OAuthCode};
use crate::store::Status;
use crate::store::realms::Realm;

pub fn routes() -> Router<AppState> {
    // What code in a browser of any origin may read: the metadata, at the address of OIDC
    // Discovery and at RFC 8414's, and the JWKS; and where any may register a client (no cookie
    // is ever read there).
    let metadata = Router::new()
        .route(
            "/realms/{realm}/.well-known/openid-configuration",
            get(discovery::configuration).options(discovery::preflight),
        )
        .route(
            "/.well-known/oauth-authorization-server/realms/{realm}",
            get(discovery::configuration).options(discovery::preflight),
        )
        .route("/realms/{realm}/protocol/openid-connect/certs", get(discovery::certs).options(discovery::preflight))
        .route(
            "/realms/{realm}/resource-servers/{serverId}/protected-resource-metadata",
            get(discovery::protected_resource).options(discovery::preflight),
        )
        .route(
            "/realms/{realm}/protocol/openid-connect/register",
            post(registration::register).options(registration::preflight),
        )
        .route(
            "/realms/{realm}/protocol/openid-connect/register/{clientId}",
            get(registration::read)
                .put(registration::replace)
                .delete(registration::delete)
                .options(registration::preflight),
        )
        .route_layer(from_fn(discovery::open_to_every_origin));
    // What code in a browser may read at an origin its client allows.
    let by_client = Router::new()
        .route("/realms/{realm}/protocol/openid-connect/token", post(token::endpoint).options(cors::preflight))
        .route("/realms/{realm}/protocol/openid-connect/revoke", post(introspection::revoke).options(cors::preflight))
        .route_layer(from_fn(cors::by_client));
    Router::new()
        .merge(metadata)
        .merge(by_client)
        .route("/realms/{realm}/protocol/openid-connect/auth", get(authorize::get).post(authorize::post))
        .route("/realms/{realm}/protocol/openid-connect/auth/login", post(sign_in_steps::login))
        .route("/realms/{realm}/protocol/openid-connect/auth/password", post(sign_in_steps::change_password))
        .route("/realms/{realm}/protocol/openid-connect/auth/second-factor", post(factor_steps::second_factor))
        .route("/realms/{realm}/protocol/openid-connect/auth/enrol", post(factor_steps::enrol))
        .route("/realms/{realm}/protocol/openid-connect/auth/passkey", post(passkey_steps::sign_in))
        .route("/realms/{realm}/protocol/openid-connect/auth/passkey/options", post(passkey_steps::options))
        .route("/assets/passkeys.js", get(passkey_steps::script))
        .route("/realms/{realm}/protocol/openid-connect/auth/consent", post(sign_in_steps::consent))
        .route("/realms/{realm}/protocol/openid-connect/auth/device", post(device::authorization))
        .route("/realms/{realm}/device", get(device::shown).post(device::entered))
        .route(
            "/realms/{realm}/protocol/openid-connect/auth/push",
            get(sign_in_steps::wait_reloaded).post(sign_in_steps::wait_continued),
        )
        .route(
            "/realms/{realm}/protocol/openid-connect/auth/recovery",
            get(sign_in_steps::recovery_form).post(sign_in_steps::recovery_asked),
        )
        .route("/realms/{realm}/protocol/openid-connect/auth/recovery/reset", post(sign_in_steps::recovery_reset))
        .route(
            "/realms/{realm}/protocol/openid-connect/auth/register",
            get(sign_in_steps::register_form).post(sign_in_steps::register),
        )
        .route("/realms/{realm}/protocol/openid-connect/auth/register/confirm", post(sign_in_steps::register_confirm))
        .route("/realms/{realm}/protocol/openid-connect/auth/upstream/{provider}", get(upstream::start))
        .route("/realms/{realm}/broker/{provider}/callback", get(upstream::callback))
        .route("/realms/{realm}/protocol/openid-connect/logout", get(logout::get).post(logout::post))
        .route("/realms/{realm}/account/recovery", post(recovery::request))
        .route("/realms/{realm}/account/recovery/reset", post(recovery::reset))
        .route("/realms/{realm}/account/password", get(password_page::shown).post(password_page::set))
        .route("/realms/{realm}/account/push-devices", post(push::enroll))
        .route("/realms/{realm}/account/consents", get(account_consents::list))
        .route("/realms/{realm}/account/applications", get(applications_page::shown).post(applications_page::withdrawn))
        .route("/realms/{realm}/account/consents/{client}", axum::routing::delete(account_consents::withdraw))
        .route("/realms/{realm}/account/connections", get(account_connections::list))
        .route("/realms/{realm}/account/authenticators", get(account_authenticators::list))
        .route("/realms/{realm}/account/authenticators/totp", post(account_authenticators::begin_totp))
        .route("/realms/{realm}/account/authenticators/totp/confirm", post(account_authenticators::confirm_totp))
        .route("/realms/{realm}/account/authenticators/passkey", post(account_authenticators::begin_passkey))
        .route("/realms/{realm}/account/authenticators/passkey/confirm", post(account_authenticators::confirm_passkey))
        .route("/realms/{realm}/account/security", get(security_page::shown).post(security_page::changed))
        .route(
            "/realms/{realm}/account/authenticators/recovery-codes",
            post(account_authenticators::renew_recovery_codes),
        )
        .route(
            "/realms/{realm}/account/authenticators/{authenticatorId}",
            axum::routing::delete(account_authenticators::remove),
        )
        .route("/realms/{realm}/account/connections/{connectionId}", axum::routing::delete(account_connections::remove))
        .route("/realms/{realm}/connections/{provider}/callback", get(upstream::connected))
        .route("/realms/{realm}/account/push-requests", get(push::waiting))
        .route("/realms/{realm}/account/push-requests/{requestId}/answer", post(push::answer))
        .route("/realms/{realm}/protocol/openid-connect/token/introspect", post(introspection::introspect))
        .route("/realms/{realm}/protocol/openid-connect/userinfo", get(discovery::userinfo).post(discovery::userinfo))
        .method_not_allowed_fallback(|| async {
            OAuthError::new(OAuthCode::MethodNotAllowed, "this endpoint does not take this method")
        })
        .route_layer(from_fn(crate::http::nul::refuse_in_protocol))
}

/// An RFC 6749 error answer: its code, in words for people, and whether the client is asked for
/// HTTP Basic credentials.
#[derive(Debug)]
pub struct OAuthError {
    /// The service's own code, stable for callers to branch on; it decides the status and `error`.
    pub code: OAuthCode,
    pub description: String,
    /// Answer 401 with a `WWW-Authenticate: Basic` challenge (the client tried HTTP Basic).
    pub challenge: bool,
    /// Seconds to wait before trying again (`Retry-After`), on 429 and 503.
    pub retry_after_seconds: Option<u64>,
    /// A nonce for the client's next DPoP proof (`DPoP-Nonce`, RFC 9449 §8).
    pub dpop_nonce: Option<String>,
    /// The refused access token came with the `DPoP` scheme: the challenge names that scheme and
    /// the algorithms its proofs may use (RFC 9449 §7.1).
    pub dpop_scheme: bool,
}

impl OAuthError {
    pub fn new(code: OAuthCode, description: impl Into<String>) -> Self {
        Self {
            code,
            description: description.into(),
            challenge: false,
            retry_after_seconds: None,
            dpop_nonce: None,
            dpop_scheme: false,
        }
    }

    /// `invalid_token` saying `description`, challenging in the scheme the token came with.
    pub fn invalid_token(description: &str, with_dpop: bool) -> Self {
        Self { dpop_scheme: with_dpop, ..Self::new(OAuthCode::InvalidToken, description) }
    }

    pub fn invalid_client(challenge: bool) -> Self {
        Self { challenge, ..Self::new(OAuthCode::InvalidClient, "client authentication failed") }
    }

    pub fn status(&self) -> StatusCode {
        answer(self.code).0
    }

    /// The RFC 6749 `error` of the answer.
    pub fn error(&self) -> &'static str {
        answer(self.code).1
    }
}

/// The status and the RFC 6749 (or RFC 6750, 8628, 8693, 8707) `error` of each code: the one
/// mapping of refusals to protocol bodies.
fn answer(code: OAuthCode) -> (StatusCode, &'static str) {
    use OAuthCode as C;
    match code {
        C::MissingParameter
        | C::RepeatedParameter
        | C::TooManyParameters
        | C::TooManyScopes
        | C::ForbiddenCharacter
        | C::UnreadableBody
        | C::UnsupportedContentType
        | C::MultipleClientAuthentications
        | C::MultipleAccessTokens
        | C::ClientMismatch
        | C::PushDeviceMissing
        | C::InvalidName
        | C::TooManyDevices
        | C::InvalidEnrolment
        | C::InvalidOneTimeCode
        | C::AuthenticatorRefused
        | C::InvalidDecision
        | C::PasswordRefused
        | C::DelegationSubjectTokenTypeUnsupported
        | C::RequestedTokenTypeUnsupported
        | C::DelegationSubjectTokenInactive
        | C::DelegationNotPermitted
        | C::DelegationDepthExceeded
        | C::ConnectionSubjectTokenInactive
        | C::ConnectionProviderUnknown => (StatusCode::BAD_REQUEST, "invalid_request"),
        C::ConnectionNotAllowed => (StatusCode::BAD_REQUEST, "unauthorized_client"),
        C::ConnectionMissing | C::ConnectionRevoked | C::DelegationAssuranceTooLow => {
            (StatusCode::BAD_REQUEST, "invalid_grant")
        }
        C::ConnectionProviderUnavailable => (StatusCode::SERVICE_UNAVAILABLE, "temporarily_unavailable"),
        C::PayloadTooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "invalid_request"),
        C::MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, "invalid_request"),
        C::RealmNotFound
        | C::ResourceServerNotFound
        | C::PushRequestNotWaiting
        | C::ConsentNotFound
        | C::AuthenticatorNotFound
        | C::ConnectionNotFound => (StatusCode::NOT_FOUND, "invalid_request"),
        C::UnsupportedGrantType => (StatusCode::BAD_REQUEST, "unsupported_grant_type"),
        C::InvalidClient => (StatusCode::UNAUTHORIZED, "invalid_client"),
        C::GrantTypeDisabled | C::ClientAddressNotAllowed => (StatusCode::BAD_REQUEST, "unauthorized_client"),
        C::ScopeNotAllowed | C::DelegationScopesExceedGrant => (StatusCode::BAD_REQUEST, "invalid_scope"),
        C::ResourceNotAllowed | C::DelegationResourceExceedsGrant => (StatusCode::BAD_REQUEST, "invalid_target"),
        C::InvalidCredentials
        | C::UserTemporarilyLocked
        | C::UserDisabled
        | C::UserSuspended
        | C::PasswordChangeRequired
        | C::InvalidRefreshToken
        | C::RefreshTokenReused
        | C::InvalidAuthorizationCode
        | C::AuthorizationCodeReused
        | C::InvalidCodeVerifier
        | C::PushRequestUnknown
        | C::InvalidDeviceCode
        | C::RecoveryTokenInvalid
        | C::SecondFactorRequired => (StatusCode::BAD_REQUEST, "invalid_grant"),
        C::AuthorizationPending => (StatusCode::BAD_REQUEST, "authorization_pending"),
        C::PushRequestExpired | C::DeviceCodeExpired => (StatusCode::BAD_REQUEST, "expired_token"),
        C::PushRequestRefused | C::DeviceAccessDenied => (StatusCode::BAD_REQUEST, "access_denied"),
        C::SlowDown => (StatusCode::BAD_REQUEST, "slow_down"),
        C::InvalidToken => (StatusCode::UNAUTHORIZED, "invalid_token"),
        C::InsufficientUserAuthentication => (StatusCode::UNAUTHORIZED, "insufficient_user_authentication"),
        C::RegistrationClosed => (StatusCode::FORBIDDEN, "access_denied"),
        C::InvalidDpopProof => (StatusCode::BAD_REQUEST, "invalid_dpop_proof"),
        C::UseDpopNonce => (StatusCode::BAD_REQUEST, "use_dpop_nonce"),
        C::InvalidRedirectUri => (StatusCode::BAD_REQUEST, "invalid_redirect_uri"),
        C::InvalidClientMetadata => (StatusCode::BAD_REQUEST, "invalid_client_metadata"),
        C::TooManyRequests => (StatusCode::TOO_MANY_REQUESTS, "invalid_request"),
        C::InternalError => (StatusCode::INTERNAL_SERVER_ERROR, "server_error"),
        C::ServiceUnavailable => (StatusCode::SERVICE_UNAVAILABLE, "temporarily_unavailable"),
    }
}

impl OAuthError {
    /// The code and status of the answer to a sign-in that did not succeed, without answering it.
    pub fn answer_to(error: &SignInError) -> (OAuthCode, StatusCode) {
        let code = match error {
            SignInError::Refused(refusal) => Self::from(refusal.clone()).code,
            SignInError::Failed(failure) => failure_code(failure),
        };
        (code, answer(code).0)
    }
}

/// The code a failure of the service itself is answered with.
fn failure_code(error: &Error) -> OAuthCode {
    match error {
        Error::Unavailable(_) => OAuthCode::ServiceUnavailable,
        Error::RateLimited { .. } => OAuthCode::TooManyRequests,
        _ => OAuthCode::InternalError,
    }
}

impl From<Error> for OAuthError {
    fn from(error: Error) -> Self {
        let code = failure_code(&error);
        let request_id = crate::http::request_id::current();
        match code {
            OAuthCode::ServiceUnavailable => {
                tracing::error!(request_id = request_id.as_deref(), %error, "protocol request failed");
            }
            OAuthCode::InternalError => {
                tracing::error!(request_id = request_id.as_deref(), %error, details = ?error, "protocol request failed");
            }
            _ => {}
        }
        let description = match code {
            OAuthCode::ServiceUnavailable => "try again shortly",
            OAuthCode::TooManyRequests => "wait a few minutes, then try again",
            _ => "the request could not be completed",
        };
        let retry_after_seconds = match error {
            Error::RateLimited { retry_after_seconds } => Some(retry_after_seconds),
            Error::Unavailable(_) => Some(crate::runtime::error::RETRY_AFTER_UNAVAILABLE_SECONDS),
            _ => None,
        };
        Self { retry_after_seconds, ..Self::new(code, description) }
    }
}

/// The RFC 6749 answer to each sign-in refusal.
impl From<Refusal> for OAuthError {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            // The rate-limit answer, the same whatever was typed.
            Refusal::SourceBlocked => Error::RateLimited { retry_after_seconds: 60 }.into(),
            Refusal::InvalidCredentials => Self::new(OAuthCode::InvalidCredentials, "invalid username or password"),
            Refusal::LockedOut => Self::new(
                OAuthCode::UserTemporarilyLocked,
                "too many failed sign-ins from this address; try again later",
            ),
            Refusal::UserDisabled => Self::new(OAuthCode::UserDisabled, "the account is disabled"),
            Refusal::Suspended => Self::new(OAuthCode::UserSuspended, "the person is suspended at this client"),
            Refusal::PasswordChangeRequired => {
                Self::new(OAuthCode::PasswordChangeRequired, "the password must be changed before the next sign-in")
            }
            Refusal::PushDeviceMissing => {
                Self::new(OAuthCode::PushDeviceMissing, "the account has no phone enrolled for push confirmation")
            }
            Refusal::InvalidRefreshToken => {
                Self::new(OAuthCode::InvalidRefreshToken, "the refresh token is invalid, expired or revoked")
            }
            Refusal::RefreshTokenBoundToKey => Self::new(
                OAuthCode::InvalidDpopProof,
                "the refresh token is bound to a DPoP key: send a proof signed with it",
            ),
            Refusal::RefreshTokenReused => {
                Self::new(OAuthCode::RefreshTokenReused, "the refresh token was already used; the session has ended")
            }
            Refusal::ScopesNotAllowed { excess, for_resource } => {
                let whose = if for_resource {
                    "this client may not request for this resource"
                } else {
                    "this client may not request"
                };
                Self::new(OAuthCode::ScopeNotAllowed, format!("{whose}: {}", excess.join(" ")))
            }
            Refusal::ScopesBeyondGrant { excess } => Self::new(
                OAuthCode::ScopeNotAllowed,
                format!("beyond the scopes originally granted: {}", excess.join(" ")),
            ),
            Refusal::ResourceNotAllowed { address } => Self::new(
                OAuthCode::ResourceNotAllowed,
                format!("{address} is not a resource server this client may request tokens for"),
            ),
            Refusal::PushPending => Self::new(OAuthCode::AuthorizationPending, "no phone has answered yet"),
            Refusal::PushExpired => Self::new(OAuthCode::PushRequestExpired, "no phone approved the sign-in in time"),
            Refusal::SecondFactorInvalid => Self::new(OAuthCode::InvalidOneTimeCode, "the code is not right"),
            Refusal::SecondFactorRequired => Self::new(
                OAuthCode::SecondFactorRequired,
                "this person signs in with a second factor: use the authorization code flow",
            ),
            Refusal::PasskeyInvalid => {
                Self::new(OAuthCode::InvalidCredentials, "the passkey's sign-in does not verify")
            }
            Refusal::PasskeyCloned => Self::new(
                OAuthCode::InvalidCredentials,
                "the passkey's counter went back: another authenticator holds a copy of it",
            ),
            Refusal::SecondFactorExpired => {
                Self::new(OAuthCode::InvalidOneTimeCode, "the sign-in waited too long for its code: sign in again")
            }
            Refusal::PushRefused => Self::new(OAuthCode::PushRequestRefused, "the sign-in was refused on the phone"),
            Refusal::PushRequestUnknown => {
                Self::new(OAuthCode::PushRequestUnknown, "no such push request for this client, or it was used")
            }
            Refusal::PushRequestNotWaiting => Self::new(OAuthCode::PushRequestNotWaiting, "no such request waiting"),
            Refusal::ClientUnknown => Self::invalid_client(false),
            Refusal::ClientAddressNotAllowed => {
                Self::new(OAuthCode::ClientAddressNotAllowed, "the client does not allow requests from this address")
            }
            Refusal::SecretOnlyForClientCredentials => Self::new(
                OAuthCode::GrantTypeDisabled,
                "an account client secret is exchanged only with client_credentials",
            ),
            Refusal::RecoveryCodeInvalid => {
                Self::new(OAuthCode::RecoveryTokenInvalid, "the reset code is unknown, used or expired")
            }
            Refusal::PasswordLength { minimum, maximum } => Self::new(
                OAuthCode::PasswordRefused,
                format!("the password must have {minimum} to {maximum} characters"),
            ),
            Refusal::PasswordBreached => Self::new(
                OAuthCode::PasswordRefused,
                "this password appears in a list of breached passwords; choose another",
            ),
            Refusal::InvalidAuthorizationCode => Self::new(
                OAuthCode::InvalidAuthorizationCode,
                "the code is unknown or expired, or was issued to another client or redirect_uri",
            ),
            Refusal::AuthorizationCodeReused => Self::new(
                OAuthCode::AuthorizationCodeReused,
                "the code was already used; the session it opened has ended",
            ),
            Refusal::InvalidCodeVerifier => {
                Self::new(OAuthCode::InvalidCodeVerifier, "the code_verifier does not match the code's challenge")
            }
            Refusal::DevicePending => Self::new(OAuthCode::AuthorizationPending, "no person has answered yet"),
            Refusal::DeviceSlowDown => {
                Self::new(OAuthCode::SlowDown, "polled too soon: wait five seconds more between polls from now on")
            }
            Refusal::DeviceExpired => {
                Self::new(OAuthCode::DeviceCodeExpired, "no person approved the device in time; start again")
            }
            Refusal::DeviceDenied => Self::new(OAuthCode::DeviceAccessDenied, "the person denied the device"),
            Refusal::DeviceCodeUnknown => Self::new(
                OAuthCode::InvalidDeviceCode,
                "the device code is unknown, another client's, or was already exchanged",
            ),
        }
    }
}

impl From<SignInError> for OAuthError {
    fn from(error: SignInError) -> Self {
        match error {
            SignInError::Refused(refusal) => refusal.into(),
            SignInError::Failed(failure) => failure.into(),
        }
    }
}

impl From<anyhow::Error> for OAuthError {
    fn from(error: anyhow::Error) -> Self {
        Error::Internal(error).into()
    }
}

impl From<crate::store::Error> for OAuthError {
    fn from(error: crate::store::Error) -> Self {
        Error::from(error).into()
    }
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        let (status, error) = answer(self.code);
        let body = serde_json::json!({
            "error": error,
            "error_description": self.description,
            "error_code": self.code.as_str(),
        });
        let mut response = (status, axum::Json(body)).into_response();
        no_store(response.headers_mut());
        if status == StatusCode::UNAUTHORIZED {
            let challenge = match self.code {
                OAuthCode::InvalidToken if self.dpop_scheme => {
                    format!("DPoP error=\"invalid_token\", algs=\"{}\"", crate::oauth::dpop::ALGORITHMS.join(" "))
                }
                OAuthCode::InvalidToken => "Bearer error=\"invalid_token\"".to_owned(),
                // RFC 9470: a sign-in recent enough is asked for.
                OAuthCode::InsufficientUserAuthentication => format!(
                    "Bearer error=\"insufficient_user_authentication\", error_description=\"{}\", max_age={}",
                    self.description,
                    RECENT_SIGN_IN.num_seconds()
                ),
                _ if self.challenge => "Basic realm=\"castellan\"".to_owned(),
                _ => "Bearer".to_owned(),
            };
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
            }
        }
        if let Some(seconds) = self.retry_after_seconds {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if let Some(nonce) = self.dpop_nonce.and_then(|nonce| HeaderValue::from_str(&nonce).ok()) {
            response.headers_mut().insert(DPOP_NONCE, nonce);
        }
        response
    }
}

/// How recent the sign-in behind a person's token must be to change how they sign in.
pub const RECENT_SIGN_IN: chrono::TimeDelta = chrono::TimeDelta::minutes(15);

/// The header carrying the nonce a DPoP proof must include (RFC 9449 §8).
pub const DPOP_NONCE: header::HeaderName = header::HeaderName::from_static("dpop-nonce");

/// `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 §5.1).
pub fn no_store(headers: &mut HeaderMap) {
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
}

/// A JSON answer that must not be cached.
/// `204 No Content`, not to be stored: the answer to a removal.
pub fn no_content_no_store() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    no_store(response.headers_mut());
    response
}

pub fn json_no_store(body: serde_json::Value) -> Response {
    let mut response = axum::Json(body).into_response();
    no_store(response.headers_mut());
    response
}

pub use self::form::{Form, MAX_FORM_PARAMETERS, forbidden_character};
pub use crate::oauth::signin::MAX_SCOPES;
pub use client_auth::{authenticate_client, authenticates, presented_credentials, public_client};

/// The realm of a protocol request; a disabled or unknown realm answers 404.
pub async fn realm(state: &AppState, realm_id: &str) -> Result<Arc<Realm>, OAuthError> {
    match crate::directory::realms::find(state, realm_id).await? {
        Some(realm) if realm.status == Status::Active => Ok(realm),
        _ => Err(OAuthError::new(OAuthCode::RealmNotFound, "no such realm")),
    }
}
