//! The stable codes the admin API's errors carry, which callers branch on (never on messages).

use serde::Serialize;

/// Stable codes callers branch on (never on messages). Names as the API reference writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub enum ErrorCode {
    ValidationFailed,
    Unauthorized,
    Forbidden,
    ImpersonationActorNotAPerson,
    /// An admin credential used from outside its account's admin networks.
    AdminNetworkNotAllowed,
    NotFound,
    MethodNotAllowed,
    AlreadyExists,
    Conflict,
    /// Withdrawing a delegation grant that is already withdrawn.
    DelegationGrantAlreadyWithdrawn,
    /// Lifting a suspension that was already lifted or ran out.
    SuspensionAlreadyEnded,
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
            Self::AdminNetworkNotAllowed => "AdminNetworkNotAllowed",
            Self::NotFound => "NotFound",
            Self::MethodNotAllowed => "MethodNotAllowed",
            Self::AlreadyExists => "AlreadyExists",
            Self::Conflict => "Conflict",
            Self::DelegationGrantAlreadyWithdrawn => "DelegationGrantAlreadyWithdrawn",
            Self::SuspensionAlreadyEnded => "SuspensionAlreadyEnded",
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
