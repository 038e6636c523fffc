//! What administrators do to webhook endpoints: register one, change it, rotate its signing
//! secret, remove it, send it a test, replay a delivery. Each change of an endpoint is an
//! administrative change, in the trail; tests and replays are deliveries, never published.

use serde::Serialize;
use serde_json::Map;

use super::Webhooks;
use super::{delivery, mint_secret};
use crate::kernel::crypto::last_four;
use crate::kernel::error_code::ErrorCode;
use crate::kernel::ids::{AccountId, ClientId, EndpointId, EventId, RealmId};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::events::EventType;
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::webhooks::{self as store, Attempt, AttemptKind, Endpoint, EndpointStatus};

/// Retries after a failed delivery when the registration does not say.
const DEFAULT_RETRIES: i64 = 5;
/// Seconds before the first retry when the registration does not say.
const DEFAULT_FIRST_RETRY_AFTER_SECONDS: i64 = 60;

/// Where an endpoint is registered: a realm of an account, or a client of that realm.
#[derive(Debug, Clone)]
pub struct Owner {
    pub account_id: AccountId,
    pub realm_id: RealmId,
    pub client_id: Option<ClientId>,
}

impl Owner {
    /// The owner as the store's lists know it.
    pub fn rows(&self) -> store::Place<'_> {
        store::Place { realm_id: &self.realm_id, client_id: self.client_id.as_deref() }
    }
}

/// An endpoint with the signing secret it was just given, which is shown this once.
#[derive(Debug)]
pub struct WithSecret {
    pub endpoint: Endpoint,
    pub secret: String,
}

/// A new Active endpoint of `owner` with a fresh signing secret and the default retries; its name,
/// address and events are the registration's to fill.
pub fn draft(context: &Context, webhooks: &Webhooks, owner: &Owner) -> WithSecret {
    let now = context.clock.now();
    let secret = mint_secret();
    let endpoint = Endpoint {
        id: EndpointId::fresh(),
        account_id: owner.account_id.clone(),
        realm_id: owner.realm_id.clone(),
        kind: owner.rows().kind(),
        client_id: owner.client_id.clone(),
        name: String::new(),
        url: String::new(),
        description: None,
        events: Vec::new(),
        retries: DEFAULT_RETRIES,
        first_retry_after_seconds: DEFAULT_FIRST_RETRY_AFTER_SECONDS,
        status: EndpointStatus::Active,
        secret_sealed: webhooks.secrets.seal(secret.as_bytes()),
        secret_last_four: last_four(&secret),
        consecutive_failures: 0,
        created_at: now,
        updated_at: now,
    };
    WithSecret { endpoint, secret }
}

/// Registers a drafted endpoint; `view` is how the trail shows it.
pub async fn register<V: Serialize>(
    context: &Context,
    by: Author<'_>,
    endpoint: &Endpoint,
    view: impl Fn(&Endpoint) -> V,
) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    store::insert(&mut *tx, endpoint).await?;
    let change = Change::of(ChangeAction::Create, endpoint.place(), 201).after(view(endpoint));
    changes::commit(context, by, tx, change).await
}

/// The endpoint as an update starts from: a Disabled endpoint comes back Active with its failures
/// forgotten, since its receiver is taken to be fixed.
pub fn reopened(before: &Endpoint) -> Endpoint {
    let mut endpoint = before.clone();
    if endpoint.status == EndpointStatus::Disabled {
        endpoint.status = EndpointStatus::Active;
        endpoint.consecutive_failures = 0;
    }
    endpoint
}

/// Stores the endpoint's new settings.
pub async fn update<V: Serialize>(
    context: &Context,
    by: Author<'_>,
    before: &Endpoint,
    mut endpoint: Endpoint,
    view: impl Fn(&Endpoint) -> V,
) -> Result<Endpoint, Error> {
    endpoint.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    store::update(&mut *tx, &endpoint).await?;
    let change = Change::of(ChangeAction::Update, endpoint.place(), 200).before(view(before)).after(view(&endpoint));
    changes::commit(context, by, tx, change).await?;
    Ok(endpoint)
}

/// Gives the endpoint a new signing secret; the old one signs nothing more.
pub async fn rotate<V: Serialize>(
    context: &Context,
    webhooks: &Webhooks,
    by: Author<'_>,
    before: &Endpoint,
    view: impl Fn(&Endpoint) -> V,
) -> Result<WithSecret, Error> {
    let secret = mint_secret();
    let mut endpoint = before.clone();
    endpoint.secret_sealed = webhooks.secrets.seal(secret.as_bytes());
    endpoint.secret_last_four = last_four(&secret);
    let endpoint = update(context, by, before, endpoint, view).await?;
    Ok(WithSecret { endpoint, secret })
}

/// Removes the endpoint with its delivery history.
pub async fn remove<V: Serialize>(
    context: &Context,
    by: Author<'_>,
    endpoint: &Endpoint,
    view: impl Fn(&Endpoint) -> V,
) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    store::delete(&mut *tx, &endpoint.id).await?;
    let place = store::Place { realm_id: endpoint.realm_id.as_str(), client_id: endpoint.client_id.as_deref() };
    store::events::forget_unheard(&mut *tx, place).await?;
    let change = Change::of(ChangeAction::Delete, endpoint.place(), 200).before(view(endpoint));
    changes::commit(context, by, tx, change).await
}

/// Schedules a `ping` to the endpoint for now. Nothing is published for a test, and it is never
/// retried.
pub async fn test(context: &Context, webhooks: &Webhooks, endpoint: &Endpoint) -> Result<Attempt, Error> {
    let now = context.clock.now();
    let event_id = EventId::fresh();
    let mut data = Map::new();
    data.insert("message".into(), "This is a test delivery from Castellan.".into());
    data.insert("subscription".into(), endpoint.id.as_str().into());
    let ping = EventType::Ping.as_str();
    let built = webhooks.payloads.build(ping, &data).await.map_err(|error| Error::Internal(error.into()))?;
    let (realm, client) = (Some(endpoint.realm_id.as_str()), endpoint.client_id.as_deref());
    let payload = delivery::envelope(&event_id, ping, now, realm, client, built);
    let attempt = Attempt::scheduled(endpoint, (&event_id, ping), AttemptKind::Test, payload, now);
    store::insert_attempt(context.store.writer(), &attempt).await?;
    webhooks.wake.notify_one();
    Ok(attempt)
}

/// Resends a delivered payload unchanged, now, while the endpoint is Active; the automatic retries
/// still scheduled for that event are cancelled. Nothing is published for a replay.
pub async fn replay(
    context: &Context,
    webhooks: &Webhooks,
    endpoint: &Endpoint,
    attempt_id: &str,
) -> Result<Attempt, Error> {
    let original = store::find_attempt(context.store.pool(), &endpoint.id, attempt_id)
        .await?
        .ok_or(Error::NotFound("delivery"))?;
    if endpoint.status != EndpointStatus::Active {
        return Err(Error::InvalidState(
            ErrorCode::WebhookNotActive,
            format!("the webhook is {}; only an Active webhook can replay a delivery", endpoint.status.as_str()),
        ));
    }
    let now = context.clock.now();
    let attempt = Attempt::scheduled(
        endpoint,
        (&original.event_id, &original.event_type),
        AttemptKind::Replay,
        original.payload,
        now,
    );
    let mut tx = context.store.begin().await?;
    store::cancel_retries(&mut *tx, &endpoint.id, &original.event_id).await?;
    store::insert_attempt(&mut *tx, &attempt).await?;
    tx.commit().await?;
    webhooks.wake.notify_one();
    Ok(attempt)
}
