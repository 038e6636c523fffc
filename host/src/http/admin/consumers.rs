//! `/realms/{realm}/clients/{client}/consumers`: API keys a customer gives the users of its own API.
//! The customer's API validates a key at the realm's introspection endpoint
//! (`token_type_hint=api_key`), authenticated as the consumer's client; the admin API never accepts
//! one. Consumers are part of the client's configuration (`client:read`, `client:update`).

use super::reach::{ClientRead, ClientUpdate, FoundOfClient, InClient};
use axum::extract::{RawQuery, State};
use axum::response::Response;

use super::ListQuery;
use crate::directory::consumers::{self, Keyed};
use crate::directory::consumers::{ConsumerInput, ConsumerView};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::ids::ConsumerId;
use crate::runtime::error::Error;
use crate::store::Status;
use crate::store::consumers::{self as consumer_store, Consumer, ConsumerType};

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
    let Keyed { consumer, key } = consumers::create(&state, consumer, caller.author()).await?;
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
    let consumer = consumers::update(&state, &before, consumer, caller.author()).await?;
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
    consumers::delete(&state, &consumer, caller.author()).await?;
    Ok(envelope::done())
}
