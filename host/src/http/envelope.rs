//! The admin API response envelope and the one mapping of
//! errors to HTTP statuses.

pub use crate::runtime::answer::Answer;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::request_id;
use crate::kernel::error_code::ErrorCode;
use crate::kernel::validate::Notification;
use crate::runtime::error::Error;
use crate::store::page::Page;

/// A message for people; on a validation failure, one per refused field.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotificationBody {
    /// camelCase path of the refused field in the request body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The rule that refused the field, or the error code.
    pub code: String,
    pub message: String,
}

impl From<Notification> for NotificationBody {
    fn from(n: Notification) -> Self {
        let code = serde_json::to_value(n.code).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        Self { field: (!n.field.is_empty()).then_some(n.field), code, message: n.message }
    }
}

/// The page a paged list answers with, in place of `data`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pagination<T> {
    pub items: Vec<T>,
    pub page_number: u32,
    pub page_size: u32,
    pub total_items: i64,
    pub total_pages: i64,
    /// Present (and true) when a search matched more items than it counted: `totalItems` is then
    /// a floor, and later pages may exist past `totalPages`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub total_items_at_least: bool,
}

/// Every admin response: camelCase, empty fields omitted.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Envelope<T> {
    pub success: bool,
    /// The HTTP status name (`OK`, `Created`, `BadRequest`, …).
    pub status_code: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pagination: Option<Pagination<T>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notifications: Vec<NotificationBody>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// `OK`, `Created`, `BadRequest`, `TooManyRequests`, …: the reason phrase without spaces.
pub fn status_name(status: StatusCode) -> String {
    status.canonical_reason().unwrap_or("Unknown").chars().filter(|c| c.is_ascii_alphanumeric()).collect()
}

fn envelope<T: Serialize>(status: StatusCode, data: Option<T>, pagination: Option<Pagination<T>>) -> Response {
    let body = Envelope {
        success: true,
        status_code: status_name(status),
        data,
        pagination,
        notifications: Vec::new(),
        error_code: None,
        request_id: None,
    };
    (status, axum::Json(body)).into_response()
}

/// 200 with `data`.
pub fn ok<T: Serialize>(data: T) -> Response {
    envelope(StatusCode::OK, Some(data), None)
}

/// 201 with `data`.
pub fn created<T: Serialize>(data: T) -> Response {
    envelope(StatusCode::CREATED, Some(data), None)
}

/// 200 with no `data` (a deletion).
pub fn done() -> Response {
    envelope::<()>(StatusCode::OK, None, None)
}

/// 200 with `pagination` in place of `data`.
pub fn paged<T: Serialize>(page: Page<T>) -> Response {
    let total_pages = page.total_pages();
    let pagination = Pagination {
        items: page.items,
        page_number: page.page_number,
        page_size: page.page_size,
        total_items: page.total_items,
        total_pages,
        total_items_at_least: page.total_at_least,
    };
    envelope(StatusCode::OK, None, Some(pagination))
}

impl<T: Serialize> IntoResponse for Answer<T> {
    fn into_response(self) -> Response {
        match self {
            Self::Ok(data) => ok(data),
            Self::Created(data) => created(data),
            Self::Paged(page) => paged(page),
            Self::Done => done(),
        }
    }
}

/// The error code travels in the response extensions, so the access log and the change trail
/// can record it.
#[derive(Debug, Clone, Copy)]
pub struct RefusedWith(pub ErrorCode);

impl Error {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Validation(_) => StatusCode::BAD_REQUEST,
            Self::Unauthenticated => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::AlreadyExists(_) | Self::Conflict(_) | Self::InvalidState(..) => StatusCode::CONFLICT,
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable(_) | Self::MailUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl Error {
    /// What the refusal tells people: one notification per refused field, else one message. An
    /// internal or unavailable store is logged here and told in general words only.
    pub fn notifications(self) -> Vec<NotificationBody> {
        let code = self.code();
        match self {
            Self::Validation(refused) => refused.into_iter().map(NotificationBody::from).collect(),
            Self::Internal(ref error) => {
                let request_id = request_id::current();
                tracing::error!(request_id = request_id.as_deref(), error = format!("{error:#}"), "internal error");
                vec![message(code, "An unexpected error occurred; quote the request id when reporting it.")]
            }
            Self::Unavailable(ref error) => {
                let request_id = request_id::current();
                tracing::error!(
                    request_id = request_id.as_deref(),
                    error = format!("{error:#}"),
                    "database unavailable"
                );
                vec![message(code, "The service is temporarily unavailable; try again shortly.")]
            }
            ref other => vec![message(code, &other.to_string())],
        }
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let status = self.status();
        let code = self.code();
        let request_id = request_id::current();
        let retry_after = match self {
            Self::RateLimited { retry_after_seconds } => Some(retry_after_seconds),
            Self::Unavailable(_) => Some(crate::runtime::error::RETRY_AFTER_UNAVAILABLE_SECONDS),
            _ => None,
        };
        let notifications = self.notifications();
        let mut response = refusal(status, code, notifications, request_id);
        if let Some(seconds) = retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// A request no route takes: an address the service does not have, or a method the address does
/// not take. Answered in the envelope, like every admin refusal.
#[derive(Debug, Clone, Copy)]
pub enum Unrouted {
    NoRoute,
    MethodNotAllowed,
}

impl IntoResponse for Unrouted {
    fn into_response(self) -> Response {
        let (status, code, text) = match self {
            Self::NoRoute => (StatusCode::NOT_FOUND, ErrorCode::NotFound, "no such route"),
            Self::MethodNotAllowed => {
                (StatusCode::METHOD_NOT_ALLOWED, ErrorCode::MethodNotAllowed, "method not allowed")
            }
        };
        refusal(status, code, vec![message(code, text)], request_id::current())
    }
}

/// The envelope of a refusal, with its code in the response extensions.
fn refusal(
    status: StatusCode,
    code: ErrorCode,
    notifications: Vec<NotificationBody>,
    request_id: Option<String>,
) -> Response {
    let body = Envelope::<()> {
        success: false,
        status_code: status_name(status),
        data: None,
        pagination: None,
        notifications,
        error_code: Some(code),
        request_id,
    };
    let mut response = (status, axum::Json(body)).into_response();
    response.extensions_mut().insert(RefusedWith(code));
    response
}

fn message(code: ErrorCode, text: &str) -> NotificationBody {
    NotificationBody { field: None, code: code.as_str().to_owned(), message: text.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_have_no_spaces() {
        assert_eq!(status_name(StatusCode::OK), "OK");
        assert_eq!(status_name(StatusCode::CREATED), "Created");
        assert_eq!(status_name(StatusCode::BAD_REQUEST), "BadRequest");
        assert_eq!(status_name(StatusCode::TOO_MANY_REQUESTS), "TooManyRequests");
        assert_eq!(status_name(StatusCode::PAYLOAD_TOO_LARGE), "PayloadTooLarge");
    }

    #[test]
    fn every_error_maps_to_its_status() {
        let cases = [
            (Error::Unauthenticated, StatusCode::UNAUTHORIZED),
            (Error::Forbidden(ErrorCode::Forbidden), StatusCode::FORBIDDEN),
            (Error::AlreadyExists("realm"), StatusCode::CONFLICT),
            (Error::RateLimited { retry_after_seconds: 3 }, StatusCode::TOO_MANY_REQUESTS),
            (Error::PayloadTooLarge { limit: 1 }, StatusCode::PAYLOAD_TOO_LARGE),
            (Error::Internal(anyhow::anyhow!("x")), StatusCode::INTERNAL_SERVER_ERROR),
        ];
        for (error, status) in cases {
            assert_eq!(error.into_response().status(), status);
        }
    }
}
