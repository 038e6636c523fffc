//! The webhook routes. Realm and client endpoints share one handler per operation: the path tells
//! where the endpoints are (`/realms/{realm}/webhooks…` or
//! `/realms/{realm}/clients/{client}/webhooks…`). The OpenAPI document gets each shared operation
//! under both paths from [`ClientEndpointPaths`].

use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::routing::{get, post};
use serde::Deserialize;
use utoipa::Modify;
use utoipa::openapi::path::{Operation, ParameterBuilder, ParameterIn};
use utoipa::openapi::{ObjectBuilder, OpenApi, Required, Type};

use super::*;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::operations::admin::webhooks::{events, metrics};
use crate::runtime::error::Error;

/// Where the addressed endpoints are: a realm, or a client of it.
#[derive(Debug, Deserialize)]
pub struct At {
    realm: String,
    client: Option<String>,
}

/// One endpoint, at a realm or a client.
#[derive(Debug, Deserialize)]
pub struct EndpointAt {
    realm: String,
    client: Option<String>,
    #[serde(rename = "webhookId")]
    id: String,
}

impl EndpointAt {
    fn parts(&self) -> (&str, Option<&str>, &str) {
        (&self.realm, self.client.as_deref(), &self.id)
    }
}

/// One attempt made to a client endpoint.
#[derive(Debug, Deserialize)]
pub struct DeliveryAt {
    #[serde(flatten)]
    endpoint: EndpointAt,
    #[serde(rename = "deliveryId")]
    delivery: String,
}

/// A client of a realm.
#[derive(Debug, Deserialize)]
pub struct ClientAt {
    realm: String,
    client: String,
}

#[utoipa::path(post, path = "/realms/{realm}/webhooks", tag = "Webhooks",
    params(("realm" = String, Path)), request_body = EndpointInput,
    responses((status = 201, description = "The endpoint, with `signingSecret` (shown once, to holders of `secret:read`), in `data`", body = EndpointView),
              (status = 400, description = "ValidationFailed, one notification per refused field"),
              (status = 403, description = "The caller lacks webhook:create (a realm endpoint) or client:write (a client endpoint)")),
    security(("apiKey" = [])))]
pub async fn create_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path(at): Path<At>,
    JsonBody(body): JsonBody,
) -> Result<Answer<EndpointView>, Error> {
    register(&state.admin(), &state.webhooks, caller, &at.realm, at.client.as_deref(), body).await
}

#[utoipa::path(get, path = "/realms/{realm}/webhooks", tag = "Webhooks",
    params(("realm" = String, Path), ("status" = Option<String>, Query, description = "Active, Paused or Disabled")),
    responses((status = 200, description = "A page of the endpoints of the realm (or of the client), in `pagination`", body = [EndpointView])),
    security(("apiKey" = [])))]
pub async fn list_webhooks(
    State(state): State<AppState>,
    caller: Caller,
    Path(at): Path<At>,
    RawQuery(query): RawQuery,
) -> Result<Answer<EndpointView>, Error> {
    list_endpoints(&state.admin(), caller, &at.realm, at.client.as_deref(), query).await
}

#[utoipa::path(get, path = "/realms/{realm}/webhooks/{webhookId}", tag = "Webhooks",
    params(("realm" = String, Path), ("webhookId" = String, Path)),
    responses((status = 200, body = EndpointView), (status = 404)), security(("apiKey" = [])))]
pub async fn read_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path(at): Path<EndpointAt>,
) -> Result<Answer<EndpointView>, Error> {
    read_endpoint(&state.admin(), caller, at.parts()).await
}

#[utoipa::path(put, path = "/realms/{realm}/webhooks/{webhookId}", tag = "Webhooks",
    params(("realm" = String, Path), ("webhookId" = String, Path)), request_body = EndpointInput,
    responses((status = 200, description = "The updated endpoint; a Disabled one is Active again", body = EndpointView), (status = 400), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path(at): Path<EndpointAt>,
    JsonBody(body): JsonBody,
) -> Result<Answer<EndpointView>, Error> {
    update_endpoint(&state.admin(), caller, at.parts(), body).await
}

#[utoipa::path(delete, path = "/realms/{realm}/webhooks/{webhookId}", tag = "Webhooks",
    params(("realm" = String, Path), ("webhookId" = String, Path)),
    responses((status = 200, description = "Removed with its delivery history"), (status = 404)), security(("apiKey" = [])))]
pub async fn delete_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path(at): Path<EndpointAt>,
) -> Result<Answer<()>, Error> {
    delete_endpoint(&state.admin(), caller, at.parts()).await
}

#[utoipa::path(post, path = "/realms/{realm}/webhooks/{webhookId}/rotate-secret", tag = "Webhooks",
    params(("realm" = String, Path), ("webhookId" = String, Path)),
    responses((status = 200, description = "A new signing secret (shown once); the old one is invalid at once, and pending retries are signed with the new one", body = EndpointView)),
    security(("apiKey" = [])))]
pub async fn rotate_webhook_secret(
    State(state): State<AppState>,
    caller: Caller,
    Path(at): Path<EndpointAt>,
) -> Result<Answer<EndpointView>, Error> {
    rotate(&state.admin(), &state.webhooks, caller, at.parts()).await
}

#[utoipa::path(post, path = "/realms/{realm}/webhooks/{webhookId}/test", tag = "Webhooks",
    params(("realm" = String, Path), ("webhookId" = String, Path)),
    responses((status = 201, description = "The scheduled `ping` attempt; it is sent at once and never retried", body = AttemptView)),
    security(("apiKey" = [])))]
pub async fn test_webhook(
    State(state): State<AppState>,
    caller: Caller,
    Path(at): Path<EndpointAt>,
) -> Result<Answer<AttemptView>, Error> {
    test(&state.admin(), &state.webhooks, caller, at.parts()).await
}

#[utoipa::path(get, path = "/realms/{realm}/webhooks/deliveries", tag = "Webhooks",
    params(("realm" = String, Path), ("webhookId" = Option<String>, Query), ("eventId" = Option<String>, Query),
           ("eventType" = Option<String>, Query), ("kind" = Option<String>, Query),
           ("status" = Option<String>, Query, description = "Scheduled, Succeeded, Failed, Cancelled")),
    responses((status = 200, description = "A page of the attempts made to the endpoints of the realm (or of the client) in the last 30 days, in `pagination`", body = [AttemptView])),
    security(("apiKey" = [])))]
pub async fn list_deliveries(
    State(state): State<AppState>,
    caller: Caller,
    Path(at): Path<At>,
    RawQuery(query): RawQuery,
) -> Result<Answer<AttemptView>, Error> {
    deliveries(&state.admin(), caller, &at.realm, at.client.as_deref(), query).await
}

// Client endpoints only.

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/webhooks/{webhookId}/deliveries/{deliveryId}/replay", tag = "Webhooks",
    params(("realm" = String, Path), ("client" = String, Path), ("webhookId" = String, Path), ("deliveryId" = String, Path)),
    responses((status = 201, description = "The scheduled Replay attempt: the stored payload unchanged, sent at once; retries still scheduled for the event are cancelled", body = AttemptView),
              (status = 404), (status = 409, description = "WebhookNotActive: only an Active endpoint replays")),
    security(("apiKey" = [])))]
pub async fn replay_client_delivery(
    State(state): State<AppState>,
    caller: Caller,
    Path(at): Path<DeliveryAt>,
) -> Result<Answer<AttemptView>, Error> {
    replay(&state.admin(), &state.webhooks, caller, at.endpoint.parts(), &at.delivery).await
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
    Path(at): Path<ClientAt>,
    RawQuery(query): RawQuery,
) -> Result<Answer<MetricsView>, Error> {
    metrics(&state.admin(), caller, &at.realm, &at.client, query).await
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/webhooks/events", tag = "Webhooks",
    params(("realm" = String, Path), ("client" = String, Path), ("eventType" = Option<String>, Query),
           ("status" = Option<String>, Query, description = "Pending, Delivered, Partial, Failed")),
    responses((status = 200, description = "A page of the events delivered to the client's endpoints (30 days), newest first, in `pagination`", body = [EventView])),
    security(("apiKey" = [])))]
pub async fn client_webhook_events(
    State(state): State<AppState>,
    caller: Caller,
    Path(at): Path<ClientAt>,
    RawQuery(query): RawQuery,
) -> Result<Answer<EventView>, Error> {
    events(&state.admin(), caller, &at.realm, &at.client, query).await
}

/// Where the realm's endpoint routes are, and where the client's same routes are.
pub const REALM_PREFIX: &str = "/realms/{realm}/webhooks";
pub const CLIENT_PREFIX: &str = "/realms/{realm}/clients/{client}/webhooks";

/// The routes realm and client endpoints share, under `prefix`.
pub fn endpoint_routes(router: Router<AppState>, prefix: &str) -> Router<AppState> {
    router
        .route(prefix, get(list_webhooks).post(create_webhook))
        .route(&format!("{prefix}/deliveries"), get(list_deliveries))
        .route(&format!("{prefix}/{{webhookId}}"), get(read_webhook).put(update_webhook).delete(delete_webhook))
        .route(&format!("{prefix}/{{webhookId}}/rotate-secret"), post(rotate_webhook_secret))
        .route(&format!("{prefix}/{{webhookId}}/test"), post(test_webhook))
}

/// Documents every shared operation of realm endpoints again under the client path, with the
/// `client` parameter (each path gets its own operation id in `http::openapi`).
pub struct ClientEndpointPaths;

impl Modify for ClientEndpointPaths {
    fn modify(&self, openapi: &mut OpenApi) {
        let shared: Vec<_> = openapi
            .paths
            .paths
            .iter()
            .filter_map(|(path, item)| {
                let rest = path.strip_prefix(REALM_PREFIX)?;
                Some((format!("{CLIENT_PREFIX}{rest}"), item.clone()))
            })
            .collect();
        for (path, mut item) in shared {
            for operation in [&mut item.get, &mut item.put, &mut item.post, &mut item.delete].into_iter().flatten() {
                for_client(operation);
            }
            openapi.paths.paths.insert(path, item);
        }
    }
}

fn for_client(operation: &mut Operation) {
    let client = ParameterBuilder::new()
        .name("client")
        .parameter_in(ParameterIn::Path)
        .required(Required::True)
        .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
        .build();
    let parameters = operation.parameters.get_or_insert_with(Vec::new);
    let after_realm = parameters.iter().position(|p| p.name == "realm").map_or(0, |i| i + 1);
    parameters.insert(after_realm, client);
}
