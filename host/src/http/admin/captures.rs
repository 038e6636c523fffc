//! Capture endpoints: a temporary address, protected only by its
//! random path, that records every request it receives for 24 hours; the recorded requests are
//! read here. They let a customer see exactly what a delivery looks like before writing a receiver.
//! Creating one needs `webhook:create`, reading `webhook:read`, removing `webhook:delete`.

use super::reach::{Owned, WebhookDelete, WebhookRead};
use axum::extract::{RawQuery, State};
use axum::response::Response;

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope::{self, Answer};
use crate::operations::admin::captures as admin;
use crate::operations::webhooks::captures::{self, CaptureView, CapturedRequestView};
use crate::runtime::error::Error;
use crate::store::captures::Capture;

#[utoipa::path(post, path = "/webhook-captures", tag = "Webhooks",
    responses((status = 201, description = "A new capture endpoint recording requests for 24 hours, in `data`", body = CaptureView),
              (status = 403)),
    security(("apiKey" = [])))]
pub async fn create_capture(State(state): State<AppState>, caller: Caller) -> Result<Answer<CaptureView>, Error> {
    admin::create_capture(&state.admin(), caller).await
}

#[utoipa::path(get, path = "/webhook-captures", tag = "Webhooks",
    responses((status = 200, description = "A page of the account's captures that have not expired, in `pagination`", body = [CaptureView])),
    security(("apiKey" = [])))]
pub async fn list_captures(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Answer<CaptureView>, Error> {
    admin::list_captures(&state.admin(), caller, query).await
}

#[utoipa::path(get, path = "/webhook-captures/{captureId}", tag = "Webhooks", params(("captureId" = String, Path)),
    responses((status = 200, description = "The capture, in `data`", body = CaptureView), (status = 404, description = "No such capture, or it expired")),
    security(("apiKey" = [])))]
pub async fn read_capture(
    State(state): State<AppState>,
    reached: Owned<Capture, WebhookRead>,
) -> Result<Answer<CaptureView>, Error> {
    admin::read_capture(&state.admin(), reached).await
}

#[utoipa::path(get, path = "/webhook-captures/{captureId}/requests", tag = "Webhooks", params(("captureId" = String, Path)),
    responses((status = 200, description = "A page of the requests the capture recorded, newest first, in `pagination`", body = [CapturedRequestView]),
              (status = 404, description = "No such capture, or it expired")),
    security(("apiKey" = [])))]
pub async fn captured_requests(
    State(state): State<AppState>,
    reached: Owned<Capture, WebhookRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<CapturedRequestView>, Error> {
    admin::captured_requests(&state.admin(), reached, query).await
}

#[utoipa::path(delete, path = "/webhook-captures/{captureId}", tag = "Webhooks", params(("captureId" = String, Path)),
    responses((status = 200, description = "Removed with its requests; its address answers 404 from now on"), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete_capture(
    State(state): State<AppState>,
    Owned { item: capture, .. }: Owned<Capture, WebhookDelete>,
) -> Result<Response, Error> {
    captures::remove(&state, &capture).await?;
    Ok(envelope::done())
}
