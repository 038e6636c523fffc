//! The one error type of the service. Domain code returns it; only `http::envelope` maps it to a
//! status code and the admin envelope.

use crate::kernel::error_code::ErrorCode;
use crate::kernel::validate::Notification;

/// The `error_code` of a refusal at a protocol endpoint, beside its RFC 6749 `error`: stable names
/// clients branch on. `http::protocol` maps each to its status and `error`, in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OAuthCode {
    // The request itself.
    MissingParameter,
    RepeatedParameter,
    TooManyParameters,
    TooManyScopes,
    ForbiddenCharacter,
    UnreadableBody,
    UnsupportedContentType,
    PayloadTooLarge,
    MethodNotAllowed,
    RealmNotFound,
    /// A resource server's metadata asked for, and the realm has no such server in service.
    ResourceServerNotFound,
    UnsupportedGrantType,
    // The client.
    InvalidClient,
    MultipleClientAuthentications,
    ClientMismatch,
    GrantTypeDisabled,
    /// The client's allowed IPs do not include the request's address.
    ClientAddressNotAllowed,
    ScopeNotAllowed,
    ResourceNotAllowed,
    // A person's sign-in.
    InvalidCredentials,
    UserTemporarilyLocked,
    UserDisabled,
    /// A Full suspension of the person at the client is in force.
    UserSuspended,
    PasswordChangeRequired,
    InvalidRefreshToken,
    RefreshTokenReused,
    // The authorization code grant.
    InvalidAuthorizationCode,
    AuthorizationCodeReused,
    InvalidCodeVerifier,
    // Confirmation on a phone.
    PushDeviceMissing,
    AuthorizationPending,
    PushRequestExpired,
    PushRequestRefused,
    /// Asked for with the push grant: no such request for the client, or it was used.
    PushRequestUnknown,
    /// Answered from a phone: no such request waiting for it (named `PushRequestUnknown` too).
    PushRequestNotWaiting,
    // The device authorization grant (RFC 8628).
    SlowDown,
    DeviceCodeExpired,
    DeviceAccessDenied,
    InvalidDeviceCode,
    InvalidToken,
    /// The token's sign-in is too old for the change asked (RFC 9470).
    InsufficientUserAuthentication,
    /// An access token in both the `Authorization` header and the body.
    MultipleAccessTokens,
    InvalidName,
    TooManyDevices,
    // A person's own authenticators.
    /// An enrolment token that is unknown, another person's, or expired.
    InvalidEnrolment,
    /// A one-time code that is not the one the authenticator shows.
    InvalidOneTimeCode,
    /// An authenticator the person may not add: one too many, or recovery codes without a second
    /// factor.
    AuthenticatorRefused,
    AuthenticatorNotFound,
    /// A person with an authenticator app, at the password grant: only a browser's sign-in asks
    /// for its code.
    SecondFactorRequired,
    InvalidDecision,
    // Password recovery.
    RecoveryTokenInvalid,
    PasswordRefused,
    // Token exchange.
    DelegationSubjectTokenTypeUnsupported,
    RequestedTokenTypeUnsupported,
    DelegationSubjectTokenInactive,
    DelegationNotPermitted,
    DelegationScopesExceedGrant,
    DelegationResourceExceedsGrant,
    DelegationDepthExceeded,
    DelegationAssuranceTooLow,
    // Token exchange for a connected account.
    ConnectionSubjectTokenInactive,
    ConnectionNotAllowed,
    ConnectionProviderUnknown,
    ConnectionMissing,
    ConnectionRevoked,
    ConnectionProviderUnavailable,
    /// A connection removed that the person does not have.
    ConnectionNotFound,
    // Client registration (RFC 7591, 7592).
    RegistrationClosed,
    InvalidRedirectUri,
    InvalidClientMetadata,
    /// A consent withdrawn that the person never gave.
    ConsentNotFound,
    // DPoP (RFC 9449).
    InvalidDpopProof,
    UseDpopNonce,
    // The service.
    TooManyRequests,
    InternalError,
    ServiceUnavailable,
}

impl OAuthCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MissingParameter => "MissingParameter",
            Self::RepeatedParameter => "RepeatedParameter",
            Self::TooManyParameters => "TooManyParameters",
            Self::TooManyScopes => "TooManyScopes",
            Self::ForbiddenCharacter => "ForbiddenCharacter",
            Self::UnreadableBody => "UnreadableBody",
            Self::UnsupportedContentType => "UnsupportedContentType",
            Self::PayloadTooLarge => "PayloadTooLarge",
            Self::MethodNotAllowed => "MethodNotAllowed",
            Self::RealmNotFound => "RealmNotFound",
            Self::ResourceServerNotFound => "ResourceServerNotFound",
            Self::UnsupportedGrantType => "UnsupportedGrantType",
            Self::InvalidClient => "InvalidClient",
            Self::MultipleClientAuthentications => "MultipleClientAuthentications",
            Self::ClientMismatch => "ClientMismatch",
            Self::GrantTypeDisabled => "GrantTypeDisabled",
            Self::ClientAddressNotAllowed => "ClientAddressNotAllowed",
            Self::ScopeNotAllowed => "ScopeNotAllowed",
            Self::ResourceNotAllowed => "ResourceNotAllowed",
            Self::InvalidCredentials => "InvalidCredentials",
            Self::UserTemporarilyLocked => "UserTemporarilyLocked",
            Self::UserDisabled => "UserDisabled",
            Self::UserSuspended => "UserSuspended",
            Self::PasswordChangeRequired => "PasswordChangeRequired",
            Self::InvalidRefreshToken => "InvalidRefreshToken",
            Self::RefreshTokenReused => "RefreshTokenReused",
            Self::InvalidAuthorizationCode => "InvalidAuthorizationCode",
            Self::AuthorizationCodeReused => "AuthorizationCodeReused",
            Self::InvalidCodeVerifier => "InvalidCodeVerifier",
            Self::PushDeviceMissing => "PushDeviceMissing",
            Self::AuthorizationPending => "AuthorizationPending",
            Self::PushRequestExpired => "PushRequestExpired",
            Self::PushRequestRefused => "PushRequestRefused",
            Self::PushRequestUnknown | Self::PushRequestNotWaiting => "PushRequestUnknown",
            Self::SlowDown => "SlowDown",
            Self::DeviceCodeExpired => "DeviceCodeExpired",
            Self::DeviceAccessDenied => "DeviceAccessDenied",
            Self::InvalidDeviceCode => "InvalidDeviceCode",
            Self::InvalidToken => "InvalidToken",
            Self::InsufficientUserAuthentication => "InsufficientUserAuthentication",
            Self::MultipleAccessTokens => "MultipleAccessTokens",
            Self::InvalidName => "InvalidName",
            Self::TooManyDevices => "TooManyDevices",
            Self::InvalidEnrolment => "InvalidEnrolment",
            Self::InvalidOneTimeCode => "InvalidOneTimeCode",
            Self::AuthenticatorRefused => "AuthenticatorRefused",
            Self::AuthenticatorNotFound => "AuthenticatorNotFound",
            Self::SecondFactorRequired => "SecondFactorRequired",
            Self::InvalidDecision => "InvalidDecision",
            Self::RecoveryTokenInvalid => "RecoveryTokenInvalid",
            Self::PasswordRefused => "PasswordRefused",
            Self::DelegationSubjectTokenTypeUnsupported => "DelegationSubjectTokenTypeUnsupported",
            Self::RequestedTokenTypeUnsupported => "RequestedTokenTypeUnsupported",
            Self::DelegationSubjectTokenInactive => "DelegationSubjectTokenInactive",
            Self::DelegationNotPermitted => "DelegationNotPermitted",
            Self::DelegationScopesExceedGrant => "DelegationScopesExceedGrant",
            Self::DelegationResourceExceedsGrant => "DelegationResourceExceedsGrant",
            Self::DelegationDepthExceeded => "DelegationDepthExceeded",
            Self::DelegationAssuranceTooLow => "DelegationAssuranceTooLow",
            Self::ConnectionSubjectTokenInactive => "ConnectionSubjectTokenInactive",
            Self::ConnectionNotAllowed => "ConnectionNotAllowed",
            Self::ConnectionProviderUnknown => "ConnectionProviderUnknown",
            Self::ConnectionMissing => "ConnectionMissing",
            Self::ConnectionRevoked => "ConnectionRevoked",
            Self::ConnectionProviderUnavailable => "ConnectionProviderUnavailable",
            Self::ConnectionNotFound => "ConnectionNotFound",
            Self::RegistrationClosed => "RegistrationClosed",
            Self::InvalidRedirectUri => "InvalidRedirectUri",
            Self::InvalidClientMetadata => "InvalidClientMetadata",
            Self::ConsentNotFound => "ConsentNotFound",
            Self::InvalidDpopProof => "InvalidDpopProof",
            Self::UseDpopNonce => "UseDpopNonce",
            Self::TooManyRequests => "TooManyRequests",
            Self::InternalError => "InternalError",
            Self::ServiceUnavailable => "ServiceUnavailable",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the request was refused by validation")]
    Validation(Vec<Notification>),
    #[error("missing or invalid credentials")]
    Unauthenticated,
    #[error("not permitted")]
    Forbidden(ErrorCode),
    #[error("no such {0}")]
    NotFound(&'static str),
    #[error("a {0} with this id already exists")]
    AlreadyExists(&'static str),
    #[error("{0}")]
    Conflict(String),
    /// The resource is not in a state that allows the request; the code says which.
    #[error("{1}")]
    InvalidState(ErrorCode, String),
    #[error("the body is larger than {limit} bytes")]
    PayloadTooLarge { limit: usize },
    #[error("the body must be application/json")]
    UnsupportedMediaType,
    #[error("rate limit exceeded")]
    RateLimited { retry_after_seconds: u64 },
    /// The database could not be reached; the caller may try again shortly.
    #[error("the database is unreachable: {0:#}")]
    Unavailable(anyhow::Error),
    /// An e-mail the request depends on could not be sent; nothing was stored.
    #[error("{0}")]
    MailUnavailable(String),
    #[error(transparent)]
    Internal(anyhow::Error),
}

/// Seconds an answer of an unreachable database asks the caller to wait (`Retry-After`).
pub const RETRY_AFTER_UNAVAILABLE_SECONDS: u64 = 5;

impl Error {
    /// A realm, client, role or scope the path names that the caller does not reach: another
    /// account's, or one that does not exist, alike (403 `Forbidden`), so that no answer tells
    /// which names exist.
    pub fn unreached() -> Self {
        Self::Forbidden(ErrorCode::Forbidden)
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Validation(_) => ErrorCode::ValidationFailed,
            Self::Unauthenticated => ErrorCode::Unauthorized,
            Self::Forbidden(code) => *code,
            Self::NotFound(_) => ErrorCode::NotFound,
            Self::AlreadyExists(_) => ErrorCode::AlreadyExists,
            Self::Conflict(_) => ErrorCode::Conflict,
            Self::InvalidState(code, _) => *code,
            Self::PayloadTooLarge { .. } => ErrorCode::PayloadTooLarge,
            Self::UnsupportedMediaType => ErrorCode::UnsupportedMediaType,
            Self::RateLimited { .. } => ErrorCode::TooManyRequests,
            Self::Unavailable(_) | Self::MailUnavailable(_) => ErrorCode::ServiceUnavailable,
            Self::Internal(_) => ErrorCode::InternalError,
        }
    }

    /// A single-field validation failure.
    pub fn invalid(field: impl Into<String>, code: crate::kernel::validate::Rule, message: impl Into<String>) -> Self {
        Self::Validation(vec![Notification::new(field, code, message)])
    }
}

impl From<crate::kernel::validate::Refused> for Error {
    fn from(refused: crate::kernel::validate::Refused) -> Self {
        Self::Validation(refused.0)
    }
}

impl From<crate::store::Error> for Error {
    fn from(error: crate::store::Error) -> Self {
        anyhow::Error::new(error).into()
    }
}

/// A failure of the service itself: unavailable when a database that could not be reached is
/// anywhere in its chain (however it was wrapped on the way), internal otherwise.
impl From<anyhow::Error> for Error {
    fn from(error: anyhow::Error) -> Self {
        if crate::store::is_unreachable(&error) { Self::Unavailable(error) } else { Self::Internal(error) }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
