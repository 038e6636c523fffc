//! The one error type of the service. Domain code returns it; only `http::envelope` maps it to a
//! status code and the admin envelope.

use serde::Serialize;

use crate::validate::Notification;

/// Stable codes callers branch on (never on messages). Names as the SPEC writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub enum ErrorCode {
    ValidationFailed,
    Unauthorized,
    Forbidden,
    ImpersonationActorNotAPerson,
    NotFound,
    MethodNotAllowed,
    AlreadyExists,
    Conflict,
    /// Withdrawing a delegation grant that is already withdrawn.
    DelegationGrantAlreadyWithdrawn,
    /// Replaying a delivery to a webhook endpoint that is Paused or Disabled.
    WebhookNotActive,
    /// Sending to a capture endpoint that already recorded as many requests as it may hold.
    CaptureFull,
    PayloadTooLarge,
    UnsupportedMediaType,
    TooManyRequests,
    InternalError,
    ServiceUnavailable,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ValidationFailed => "ValidationFailed",
            Self::Unauthorized => "Unauthorized",
            Self::Forbidden => "Forbidden",
            Self::ImpersonationActorNotAPerson => "ImpersonationActorNotAPerson",
            Self::NotFound => "NotFound",
            Self::MethodNotAllowed => "MethodNotAllowed",
            Self::AlreadyExists => "AlreadyExists",
            Self::Conflict => "Conflict",
            Self::DelegationGrantAlreadyWithdrawn => "DelegationGrantAlreadyWithdrawn",
            Self::WebhookNotActive => "WebhookNotActive",
            Self::CaptureFull => "CaptureFull",
            Self::PayloadTooLarge => "PayloadTooLarge",
            Self::UnsupportedMediaType => "UnsupportedMediaType",
            Self::TooManyRequests => "TooManyRequests",
            Self::InternalError => "InternalError",
            Self::ServiceUnavailable => "ServiceUnavailable",
        }
    }

    /// The code a policy annotation names (`@errorCode("…")`); unknown names read as `Forbidden`.
    pub fn from_policy_annotation(name: &str) -> Self {
        match name {
            "ImpersonationActorNotAPerson" => Self::ImpersonationActorNotAPerson,
            _ => Self::Forbidden,
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
    #[error("no such route")]
    NoRoute,
    #[error("method not allowed")]
    MethodNotAllowed,
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
    #[error("the database is unreachable")]
    Unavailable(#[source] crate::store::Error),
    /// An e-mail the request depends on could not be sent; nothing was stored.
    #[error("{0}")]
    MailUnavailable(String),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Validation(_) => ErrorCode::ValidationFailed,
            Self::Unauthenticated => ErrorCode::Unauthorized,
            Self::Forbidden(code) => *code,
            Self::NotFound(_) | Self::NoRoute => ErrorCode::NotFound,
            Self::MethodNotAllowed => ErrorCode::MethodNotAllowed,
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
    pub fn invalid(field: impl Into<String>, code: crate::validate::Rule, message: impl Into<String>) -> Self {
        Self::Validation(vec![Notification::new(field, code, message)])
    }
}

impl From<crate::store::Error> for Error {
    fn from(error: crate::store::Error) -> Self {
        if error.is_unavailable() { Self::Unavailable(error) } else { Self::Internal(anyhow::Error::new(error)) }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
