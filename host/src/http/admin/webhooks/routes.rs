//! The routes of realm and client endpoints, each a thin wrapper naming where the endpoint is.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;

use super::figures::{events, metrics};
use super::*;
use crate::AppState;
use crate::error::Error;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;

// Realm endpoints.

#[utoipa::path(post, path = "/realms/{realm}/webhooks", tag = "Webhooks", params(("realm" = String, Path)),
    request_body = EndpointInput,
    responses((status = 201, description = "The realm endpoint, with `signingSecret` (shown once, to holders of `secret:read`), in `data`", body = EndpointView),
              (status = 400, description = "ValidationFailed, one notification per refused field"), (status = 403)),
    security(("apiKey" = [])))]
pub async fn create_realm_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path(realm): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Response, Error> {
    register(state, caller, &realm, None, body).await
}

#[utoipa::path(get, path = "/realms/{realm}/webhooks", tag = "Webhooks", params(("realm" = String, Path)),
    responses((status = 200, description = "A page of the realm's endpoints, in `pagination`", body = [EndpointView])),
    security(("apiKey" = [])))]
pub async fn list_realm_webhooks(
    State(state): State<AppState>,
    caller: Caller,
    Path(realm): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    list_endpoints(state, caller, &realm, None, query).await
}

#[utoipa::path(get, path = "/realms/{realm}/webhooks/{webhookId}", tag = "Webhooks",
    params(("realm" = String, Path), ("webhookId" = String, Path)),
    responses((status = 200, body = EndpointView), (status = 404)), security(("apiKey" = [])))]
pub async fn read_realm_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, id)): Path<(String, String)>,
) -> Result<Response, Error> {
    read_endpoint(state, caller, (&realm, None, &id)).await
}

#[utoipa::path(put, path = "/realms/{realm}/webhooks/{webhookId}", tag = "Webhooks",
    params(("realm" = String, Path), ("webhookId" = String, Path)), request_body = EndpointInput,
    responses((status = 200, description = "The updated endpoint; a Disabled one is Active again", body = EndpointView), (status = 400), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update_realm_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, id)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Response, Error> {
    update_endpoint(state, caller, (&realm, None, &id), body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/webhooks/{webhookId}", tag = "Webhooks",
    params(("realm" = String, Path), ("webhookId" = String, Path)),
    responses((status = 200, description = "Removed with its delivery history"), (status = 404)), security(("apiKey" = [])))]
pub async fn delete_realm_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, id)): Path<(String, String)>,
) -> Result<Response, Error> {
    delete_endpoint(state, caller, (&realm, None, &id)).await
}

#[utoipa::path(post, path = "/realms/{realm}/webhooks/{webhookId}/rotate-secret", tag = "Webhooks",
    params(("realm" = String, Path), ("webhookId" = String, Path)),
    responses((status = 200, description = "A new signing secret (shown once); the old one is invalid at once, and pending retries are signed with the new one", body = EndpointView)),
    security(("apiKey" = [])))]
pub async fn rotate_realm_webhook_secret(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, id)): Path<(String, String)>,
) -> Result<Response, Error> {
    rotate(state, caller, (&realm, None, &id)).await
}

#[utoipa::path(post, path = "/realms/{realm}/webhooks/{webhookId}/test", tag = "Webhooks",
    params(("realm" = String, Path), ("webhookId" = String, Path)),
    responses((status = 201, description = "The scheduled `ping` attempt; it is sent at once and never retried", body = AttemptView)),
    security(("apiKey" = [])))]
pub async fn test_realm_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, id)): Path<(String, String)>,
) -> Result<Response, Error> {
    test(state, caller, (&realm, None, &id)).await
}

#[utoipa::path(get, path = "/realms/{realm}/webhooks/deliveries", tag = "Webhooks",
    params(("realm" = String, Path), ("webhookId" = Option<String>, Query), ("eventId" = Option<String>, Query),
           ("eventType" = Option<String>, Query), ("kind" = Option<String>, Query),
           ("status" = Option<String>, Query, description = "Scheduled, Succeeded, Failed, Cancelled")),
    responses((status = 200, description = "A page of the attempts made to the realm's endpoints (30 days), in `pagination`", body = [AttemptView])),
    security(("apiKey" = [])))]
pub async fn realm_deliveries(
    State(state): State<AppState>,
    caller: Caller,
    Path(realm): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    deliveries(state, caller, &realm, None, query).await
}

// Client endpoints.

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/webhooks", tag = "Webhooks",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = EndpointInput,
    responses((status = 201, description = "The client endpoint, with `signingSecret` (shown once, to holders of `secret:read`), in `data`", body = EndpointView),
              (status = 400), (status = 403, description = "The caller lacks client:write")),
    security(("apiKey" = [])))]
pub async fn create_client_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, client)): Path<(String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Response, Error> {
    register(state, caller, &realm, Some(&client), body).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/webhooks", tag = "Webhooks",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "A page of the client's endpoints, in `pagination`", body = [EndpointView])),
    security(("apiKey" = [])))]
pub async fn list_client_webhooks(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, client)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    list_endpoints(state, caller, &realm, Some(&client), query).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/webhooks/{webhookId}", tag = "Webhooks",
    params(("realm" = String, Path), ("client" = String, Path), ("webhookId" = String, Path)),
    responses((status = 200, body = EndpointView), (status = 404)), security(("apiKey" = [])))]
pub async fn read_client_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, client, id)): Path<(String, String, String)>,
) -> Result<Response, Error> {
    read_endpoint(state, caller, (&realm, Some(&client), &id)).await
}

#[utoipa::path(put, path = "/realms/{realm}/clients/{client}/webhooks/{webhookId}", tag = "Webhooks",
    params(("realm" = String, Path), ("client" = String, Path), ("webhookId" = String, Path)), request_body = EndpointInput,
    responses((status = 200, description = "The updated endpoint; a Disabled one is Active again", body = EndpointView), (status = 400), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update_client_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, client, id)): Path<(String, String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Response, Error> {
    update_endpoint(state, caller, (&realm, Some(&client), &id), body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/clients/{client}/webhooks/{webhookId}", tag = "Webhooks",
    params(("realm" = String, Path), ("client" = String, Path), ("webhookId" = String, Path)),
    responses((status = 200, description = "Removed with its delivery history"), (status = 404)), security(("apiKey" = [])))]
pub async fn delete_client_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, client, id)): Path<(String, String, String)>,
) -> Result<Response, Error> {
    delete_endpoint(state, caller, (&realm, Some(&client), &id)).await
}

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/webhooks/{webhookId}/rotate-secret", tag = "Webhooks",
    params(("realm" = String, Path), ("client" = String, Path), ("webhookId" = String, Path)),
    responses((status = 200, description = "A new signing secret (shown once); the old one is invalid at once", body = EndpointView)),
    security(("apiKey" = [])))]
pub async fn rotate_client_webhook_secret(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, client, id)): Path<(String, String, String)>,
) -> Result<Response, Error> {
    rotate(state, caller, (&realm, Some(&client), &id)).await
}

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/webhooks/{webhookId}/test", tag = "Webhooks",
    params(("realm" = String, Path), ("client" = String, Path), ("webhookId" = String, Path)),
    responses((status = 201, description = "The scheduled `ping` attempt; it is sent at once and never retried", body = AttemptView)),
    security(("apiKey" = [])))]
pub async fn test_client_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, client, id)): Path<(String, String, String)>,
) -> Result<Response, Error> {
    test(state, caller, (&realm, Some(&client), &id)).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/webhooks/deliveries", tag = "Webhooks",
    params(("realm" = String, Path), ("client" = String, Path), ("webhookId" = Option<String>, Query),
           ("eventId" = Option<String>, Query), ("eventType" = Option<String>, Query), ("kind" = Option<String>, Query),
           ("status" = Option<String>, Query, description = "Scheduled, Succeeded, Failed, Cancelled")),
    responses((status = 200, description = "A page of the attempts made to the client's endpoints (30 days), in `pagination`", body = [AttemptView])),
    security(("apiKey" = [])))]
pub async fn client_deliveries(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, client)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    deliveries(state, caller, &realm, Some(&client), query).await
}

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/webhooks/{webhookId}/deliveries/{deliveryId}/replay", tag = "Webhooks",
    params(("realm" = String, Path), ("client" = String, Path), ("webhookId" = String, Path), ("deliveryId" = String, Path)),
    responses((status = 201, description = "The scheduled Replay attempt: the stored payload unchanged, sent at once; retries still scheduled for the event are cancelled", body = AttemptView),
              (status = 404), (status = 409, description = "WebhookNotActive: only an Active endpoint replays")),
    security(("apiKey" = [])))]
pub async fn replay_client_delivery(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, client, id, delivery)): Path<(String, String, String, String)>,
) -> Result<Response, Error> {
    replay(state, caller, (&realm, Some(&client), &id), &delivery).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/webhooks/metrics", tag = "Webhooks",
    params(("realm" = String, Path), ("client" = String, Path),
           ("webhookId" = Option<String>, Query, description = "One endpoint; all of the client's when absent"),
           ("createdFrom" = Option<String>, Query, description = "Start of the window (ISO 8601); 24 hours before its end when absent"),
           ("createdTo" = Option<String>, Query, description = "End of the window (ISO 8601, exclusive); now when absent")),
    responses((status = 200, description = "Attempts, acceptance rate, latency and the most common failures in the window", body = MetricsView),
              (status = 400, description = "ValidationFailed: an unknown parameter, a malformed instant, an empty window"), (status = 404)),
    security(("apiKey" = [])))]
pub async fn client_webhook_metrics(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, client)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    metrics(state, caller, &realm, &client, query).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/webhooks/events", tag = "Webhooks",
    params(("realm" = String, Path), ("client" = String, Path), ("eventType" = Option<String>, Query),
           ("status" = Option<String>, Query, description = "Pending, Delivered, Partial, Failed")),
    responses((status = 200, description = "A page of the events delivered to the client's endpoints (30 days), newest first, in `pagination`", body = [EventView])),
    security(("apiKey" = [])))]
pub async fn client_webhook_events(
    State(state): State<AppState>,
    caller: Caller,
    Path((realm, client)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    events(state, caller, &realm, &client, query).await
}
