//! Capture endpoints: a temporary address, protected only by its
//! random path, that records every request it receives for 24 hours; the recorded requests are
//! read here. They let a customer see exactly what a delivery looks like before writing a receiver.
//! Creating one needs `webhook:create`, reading `webhook:read`, removing `webhook:delete`.

use super::reach::{Owned, WebhookDelete, WebhookRead};
use axum::extract::{RawQuery, State};
use axum::response::Response;
use chrono::TimeDelta;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::ListQuery;
use crate::authz::permission;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope::{self, Answer};
use crate::kernel::clock::iso;
use crate::kernel::crypto::generate_secret;
use crate::kernel::ids::CaptureId;
use crate::runtime::error::Error;
use crate::store::captures::{self as store, Capture, CapturedRequest};

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
    fn of(state: &AppState, capture: Capture) -> Self {
        Self {
            id: capture.id.into(),
            url: format!("{}/captures/{}", state.public_url, capture.token),
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
    fn of(request: CapturedRequest) -> Self {
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

#[utoipa::path(post, path = "/webhook-captures", tag = "Webhooks",
    responses((status = 201, description = "A new capture endpoint recording requests for 24 hours, in `data`", body = CaptureView),
              (status = 403)),
    security(("apiKey" = [])))]
pub async fn create_capture(State(state): State<AppState>, caller: Caller) -> Result<Answer<CaptureView>, Error> {
    caller.require_account(&state, permission::WEBHOOK_CREATE)?;
    let now = state.clock.now();
    let capture = Capture {
        id: CaptureId::fresh(),
        account_id: caller.account_id().clone(),
        // 256 random bits: the path is the capture's only protection.
        token: generate_secret(""),
        created_at: now,
        expires_at: now + TimeDelta::hours(RETENTION_HOURS),
    };
    store::insert(state.store.writer(), &capture).await?;
    Ok(Answer::Created(CaptureView::of(&state, capture)))
}

#[utoipa::path(get, path = "/webhook-captures", tag = "Webhooks",
    responses((status = 200, description = "A page of the account's captures that have not expired, in `pagination`", body = [CaptureView])),
    security(("apiKey" = [])))]
pub async fn list_captures(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<CaptureView>, Error> {
    caller.require_account(&state, permission::WEBHOOK_READ)?;
    let list = ListQuery::parse(query, &[])?;
    let now = state.clock.now();
    let found = store::page(&state.store, caller.account_id(), now, &list.page).await?;
    Ok(Answer::Paged(found.map(|capture| CaptureView::of(&state, capture))))
}

#[utoipa::path(get, path = "/webhook-captures/{captureId}", tag = "Webhooks", params(("captureId" = String, Path)),
    responses((status = 200, description = "The capture, in `data`", body = CaptureView), (status = 404, description = "No such capture, or it expired")),
    security(("apiKey" = [])))]
pub async fn read_capture(
    State(state): State<AppState>,
    Owned { item: capture, .. }: Owned<Capture, WebhookRead>,
) -> Result<Answer<CaptureView>, Error> {
    Ok(Answer::Ok(CaptureView::of(&state, capture)))
}

#[utoipa::path(get, path = "/webhook-captures/{captureId}/requests", tag = "Webhooks", params(("captureId" = String, Path)),
    responses((status = 200, description = "A page of the requests the capture recorded, newest first, in `pagination`", body = [CapturedRequestView]),
              (status = 404, description = "No such capture, or it expired")),
    security(("apiKey" = [])))]
pub async fn captured_requests(
    State(state): State<AppState>,
    Owned { item: capture, .. }: Owned<Capture, WebhookRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<CapturedRequestView>, Error> {
    let list = ListQuery::parse(query, &[])?;
    let found = store::request_page(&state.store, &capture.id, &list.page).await?;
    Ok(Answer::Paged(found.map(CapturedRequestView::of)))
}

#[utoipa::path(delete, path = "/webhook-captures/{captureId}", tag = "Webhooks", params(("captureId" = String, Path)),
    responses((status = 200, description = "Removed with its requests; its address answers 404 from now on"), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete_capture(
    State(state): State<AppState>,
    Owned { item: capture, .. }: Owned<Capture, WebhookDelete>,
) -> Result<Response, Error> {
    store::delete(state.store.writer(), &capture.id).await?;
    Ok(envelope::done())
}
