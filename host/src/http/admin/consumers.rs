//! `/realms/{realm}/clients/{client}/consumers`: API keys a customer gives the users of its own API.
//! The customer's API validates a key at the realm's introspection endpoint
//! (`token_type_hint=api_key`), authenticated as the consumer's client; the admin API never accepts
//! one. Consumers are part of the client's configuration (`client:read`, `client:update`).

use super::reach::{ClientRead, ClientUpdate, FoundOfClient, InClient};
use axum::extract::{RawQuery, State};
use axum::response::Response;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::ListQuery;
use crate::directory::consumers::{self, Keyed};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::clock::iso;
use crate::kernel::ids::ConsumerId;
use crate::kernel::validate::{Body, Notification, Rule, instant, list_of, one_of, text};
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::clients::Client;
use crate::store::consumers::{self as consumer_store, Consumer, ConsumerType};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsumerView {
    pub id: String,
    pub realm_id: String,
    pub client_id: String,
    #[serde(rename = "type")]
    pub consumer_type: ConsumerType,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub status: Status,
    /// Scopes among the client's allowed scopes, given at introspection.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Shown once, in the creation answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub value_last_four: String,
    pub created_at: String,
    pub updated_at: String,
}

impl ConsumerView {
    fn of(consumer: &Consumer) -> Self {
        Self {
            id: consumer.id.clone().into(),
            realm_id: consumer.realm_id.to_string(),
            client_id: consumer.client_id.to_string(),
            consumer_type: consumer.consumer_type,
            name: consumer.name.clone(),
            description: consumer.description.clone(),
            status: consumer.status,
            scopes: consumer.scopes.clone(),
            expires_at: consumer.expires_at.map(iso),
            value: None,
            value_last_four: consumer.value_last_four.clone(),
            created_at: iso(consumer.created_at),
            updated_at: iso(consumer.updated_at),
        }
    }
}

/// The body of a consumer creation; an update takes the same fields, each optional, and `type` only
/// if it repeats the current one.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct ConsumerInput {
    /// 1–128 characters.
    #[schema(value_type = String, required = true)]
    name: Option<String>,
    /// Up to 1,000 characters; null clears it.
    #[schema(value_type = Option<String>)]
    description: Option<Option<String>>,
    /// ApiKey (the default); cannot change.
    #[schema(rename = "type")]
    consumer_type: Option<ConsumerType>,
    /// Active (default) or Disabled; a Disabled consumer's key is inactive at introspection.
    status: Option<Status>,
    /// Scopes among the client's allowed scopes.
    scopes: Option<Vec<String>>,
    /// ISO 8601 instant in the future; null clears it.
    #[schema(value_type = Option<String>)]
    expires_at: Option<Option<DateTime<Utc>>>,
}

impl ConsumerInput {
    /// The fields `body` gives (a creation must name the consumer); scopes must be among the
    /// client's, an expiry after `now`.
    fn read(body: &mut Body, client: &Client, now: DateTime<Utc>, creating: bool) -> Self {
        let consumer_type = body.optional("type", one_of(ConsumerType::NAMES));
        if creating && !body.has("name") {
            body.refuse("name", Rule::Required, "name is required");
        }
        let name = body.optional("name", text(1, 128));
        let description = body.nullable("description", text(0, 1000));
        let status = body.optional("status", one_of(Status::NAMES));
        let allowed = client.allowed_scopes.clone();
        let scope = |path: &str, value: &Value| {
            let scope = text(1, 128)(path, value)?;
            if allowed.contains(&scope) {
                Ok(scope)
            } else {
                Err(vec![Notification::new(
                    path,
                    Rule::NotFound,
                    format!("{path}: {scope} is not among the client's scopes"),
                )])
            }
        };
        let scopes = body.optional("scopes", list_of(100, scope));
        let expires_at = body.nullable("expiresAt", instant);
        if expires_at.flatten().is_some_and(|at| at <= now) {
            body.refuse("expiresAt", Rule::Range, "expiresAt must be in the future");
        }
        Self { name, description, consumer_type, status, scopes, expires_at }
    }

    /// Changes the fields given on `consumer`, but its type.
    fn apply(self, consumer: &mut Consumer) {
        consumer.name = self.name.unwrap_or(std::mem::take(&mut consumer.name));
        consumer.description = self.description.unwrap_or(consumer.description.take());
        consumer.status = self.status.unwrap_or(consumer.status);
        consumer.scopes = self.scopes.unwrap_or(std::mem::take(&mut consumer.scopes));
        consumer.expires_at = self.expires_at.unwrap_or(consumer.expires_at);
    }
}

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/consumers", tag = "Consumers",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = ConsumerInput,
    responses((status = 201, description = "The consumer with its key `value` (shown once), in `data`", body = ConsumerView),
              (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    InClient { client, caller, .. }: InClient<ClientUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let now = state.clock.now();
    let input = ConsumerInput::read(&mut body, &client, now, true);
    body.finish()?;
    let mut consumer = Consumer {
        id: ConsumerId::fresh(),
        realm_id: client.realm_id.clone(),
        client_id: client.id.clone(),
        consumer_type: input.consumer_type.unwrap_or(ConsumerType::ApiKey),
        name: String::new(),
        description: None,
        status: Status::Active,
        value_hash: String::new(),
        value_last_four: String::new(),
        scopes: Vec::new(),
        expires_at: None,
        created_at: now,
        updated_at: now,
    };
    input.apply(&mut consumer);
    let Keyed { consumer, key } = consumers::create(&state, consumer, caller.author(), ConsumerView::of).await?;
    let mut view = ConsumerView::of(&consumer);
    view.value = Some(key);
    Ok(envelope::created(view))
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/consumers", tag = "Consumers",
    params(("realm" = String, Path), ("client" = String, Path), ("pageNumber" = Option<u32>, Query),
           ("pageSize" = Option<u32>, Query), ("searchTerm" = Option<String>, Query), ("status" = Option<String>, Query),
           ("sortBy" = Option<String>, Query, description = "name, expiresAt, createdAt, updatedAt"),
           ("sortDirection" = Option<String>, Query), ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query)),
    responses((status = 200, description = "A page of the client's consumers (never their keys), in `pagination`", body = [ConsumerView])),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    InClient { client, .. }: InClient<ClientRead>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    let list = ListQuery::parse(query, &[])?;
    list.status_in(crate::store::Status::NAMES)?;
    let found = consumer_store::page(&state.store, &client.realm_id, &client.id, &list.page).await?;
    Ok(envelope::paged(found.map(|consumer| ConsumerView::of(&consumer))))
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/consumers/{consumerId}", tag = "Consumers",
    params(("realm" = String, Path), ("client" = String, Path), ("consumerId" = String, Path)),
    responses((status = 200, description = "The consumer without its key, in `data`", body = ConsumerView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    FoundOfClient { item: consumer, .. }: FoundOfClient<Consumer, ClientRead>,
) -> Result<Response, Error> {
    Ok(envelope::ok(ConsumerView::of(&consumer)))
}

#[utoipa::path(put, path = "/realms/{realm}/clients/{client}/consumers/{consumerId}", tag = "Consumers",
    params(("realm" = String, Path), ("client" = String, Path), ("consumerId" = String, Path)), request_body = ConsumerInput,
    responses((status = 200, description = "The updated consumer, in `data`", body = ConsumerView),
              (status = 400, description = "ValidationFailed; a `type` other than the current one is refused on `type`"),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn update(
    State(state): State<AppState>,
    FoundOfClient { client, item: before, caller, .. }: FoundOfClient<Consumer, ClientUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let now = state.clock.now();
    let mut consumer = before.clone();
    body.unchanged("id", &consumer.id);
    body.unchanged("type", consumer.consumer_type.as_str());
    let input = ConsumerInput::read(&mut body, &client, now, false);
    body.finish()?;
    input.apply(&mut consumer);
    let consumer = consumers::update(&state, &before, consumer, caller.author(), ConsumerView::of).await?;
    Ok(envelope::ok(ConsumerView::of(&consumer)))
}

#[utoipa::path(delete, path = "/realms/{realm}/clients/{client}/consumers/{consumerId}", tag = "Consumers",
    params(("realm" = String, Path), ("client" = String, Path), ("consumerId" = String, Path)),
    responses((status = 200, description = "Deleted; its key is inactive from the next introspection on"), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn delete(
    State(state): State<AppState>,
    FoundOfClient { item: consumer, caller, .. }: FoundOfClient<Consumer, ClientUpdate>,
) -> Result<Response, Error> {
    consumers::delete(&state, &consumer, caller.author(), ConsumerView::of).await?;
    Ok(envelope::done())
}
