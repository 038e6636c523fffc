//! Capture endpoints: a temporary address, protected only by its random path, that records every
//! request it receives for 24 hours, so that a customer sees exactly what a delivery looks like
//! before writing a receiver.

use crate::kernel::clock::iso;
use crate::kernel::crypto::generate_secret;
use crate::kernel::ids::AccountId;
use crate::kernel::ids::CaptureId;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::captures::{self as store, Capture, CapturedRequest};
use chrono::TimeDelta;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// How long a capture records requests.
pub const RETENTION_HOURS: i64 = 24;

/// The most requests one capture records; later ones are refused with `CaptureFull`.
pub const MAX_REQUESTS: i64 = 1000;

/// The part of each request body a capture keeps.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaptureView {
    pub id: String,
    /// The address to send requests to: `{public_url}/captures/{random}`. Anyone who knows it can
    /// send to it, so it is shown only to the account.
    pub url: String,
    pub created_at: String,
    /// 24 hours after creation; the capture and its requests are removed then.
    pub expires_at: String,
}

impl CaptureView {
    pub(crate) fn of(context: &Context, capture: Capture) -> Self {
        Self {
            id: capture.id.into(),
            url: format!("{}/captures/{}", context.public_url, capture.token),
            created_at: iso(capture.created_at),
            expires_at: iso(capture.expires_at),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapturedRequestView {
    pub id: String,
    pub method: String,
    /// What followed the capture's address in the path; empty for the address itself.
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The request headers; repeated ones joined with ", ".
    pub headers: Value,
    /// The body as text (invalid UTF-8 replaced), cut at 65,536 bytes.
    pub body: String,
    /// The body's full size in bytes.
    pub body_size: i64,
    pub source_ip: String,
    pub received_at: String,
}

impl CapturedRequestView {
    pub(crate) fn of(request: CapturedRequest) -> Self {
        Self {
            id: request.id,
            method: request.method,
            path: request.path,
            query: request.query,
            headers: serde_json::from_str(&request.headers).unwrap_or(Value::Null),
            body: request.body,
            body_size: request.body_size,
            source_ip: request.source_ip,
            received_at: iso(request.received_at),
        }
    }
}

/// Opens a capture for the account, recording for 24 hours.
pub async fn open(context: &Context, account_id: &AccountId) -> Result<CaptureView, Error> {
    let now = context.clock.now();
    let capture = Capture {
        id: CaptureId::fresh(),
        account_id: account_id.clone(),
        // 256 random bits: the path is the capture's only protection.
        token: generate_secret(""),
        created_at: now,
        expires_at: now + TimeDelta::hours(RETENTION_HOURS),
    };
    store::insert(context.store.writer(), &capture).await?;
    Ok(CaptureView::of(context, capture))
}

/// Removes `capture` and the requests it recorded.
pub async fn remove(context: &Context, capture: &Capture) -> Result<(), Error> {
    store::delete(context.store.writer(), &capture.id).await?;
    Ok(())
}
