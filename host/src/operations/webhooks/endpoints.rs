//! What administrators do to webhook endpoints: register one, change it, rotate its signing
//! secret, remove it, send it a test, replay a delivery. Each change of an endpoint is an
//! administrative change, in the trail; tests and replays are deliveries, never published.

use super::{Webhooks, delivery, mint_secret};
use crate::kernel::clock::iso;
use crate::kernel::crypto::last_four;
use crate::kernel::error_code::ErrorCode;
use crate::kernel::ids::{AccountId, ClientId, EndpointId, EventId, RealmId};
use crate::kernel::validate::{Body, Notification, Rule, integer, list_of, one_of, text};
use crate::operations::webhooks;
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::events::EventType;
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::webhooks::{
    self as store, Attempt, AttemptKind, AttemptState, Endpoint, EndpointKind, EndpointStatus,
};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

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

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointView {
    pub id: String,
    pub realm_id: String,
    /// Null for a realm endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    pub kind: EndpointKind,
    pub name: String,
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The events it is subscribed to.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<String>,
    /// Automatic retries after a failed delivery, 0 to 10.
    pub retries: i64,
    /// Seconds before the first retry, 30 to 3,600; each later one waits five times longer (at most 6 hours).
    pub first_retry_after_seconds: i64,
    pub status: EndpointStatus,
    /// Failed deliveries in a row (automatic retries not counted); 10 disable the endpoint.
    pub consecutive_failures: i64,
    /// Shown once, after creation or rotation, to holders of `secret:read`: `whsec_` and 32 bytes in
    /// standard base64. Deliveries are signed with it in Stripe's scheme (`X-Service-Signature`) and
    /// in Standard Webhooks' (`webhook-signature`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signing_secret: Option<String>,
    pub signing_secret_last_four: String,
    pub created_at: String,
    pub updated_at: String,
}

impl EndpointView {
    pub(crate) fn of(endpoint: &Endpoint) -> Self {
        Self {
            id: endpoint.id.clone().into(),
            realm_id: endpoint.realm_id.to_string(),
            client_id: endpoint.client_id.clone().map(String::from),
            kind: endpoint.kind,
            name: endpoint.name.clone(),
            url: endpoint.url.clone(),
            description: endpoint.description.clone(),
            events: endpoint.events.clone(),
            retries: endpoint.retries,
            first_retry_after_seconds: endpoint.first_retry_after_seconds,
            status: endpoint.status,
            consecutive_failures: endpoint.consecutive_failures,
            signing_secret: None,
            signing_secret_last_four: endpoint.secret_last_four.clone(),
            created_at: iso(endpoint.created_at),
            updated_at: iso(endpoint.updated_at),
        }
    }
}

/// The body of a registration; an update takes the same fields, each optional.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct EndpointInput {
    /// 1–128 characters.
    #[schema(value_type = String, required = true)]
    pub(crate) name: Option<String>,
    /// Absolute `https://` address with a host, at most 2,048 characters, resolving to public addresses only.
    #[schema(value_type = String, required = true)]
    pub(crate) url: Option<String>,
    /// Up to 1,000 characters; null clears it.
    #[schema(value_type = Option<String>)]
    pub(crate) description: Option<Option<String>>,
    /// At least one event the endpoint's kind can hear; `ping` cannot be subscribed to.
    #[schema(value_type = Vec<String>, required = true)]
    pub(crate) events: Option<Vec<String>>,
    /// 0 to 10 (default 5); 0 turns retries off.
    pub(crate) retries: Option<i64>,
    /// 30 to 3,600 seconds (default 60).
    pub(crate) first_retry_after_seconds: Option<i64>,
    /// Active (default) or Paused. An update without `status` brings a Disabled endpoint back to Active.
    pub(crate) status: Option<EndpointStatus>,
}

impl EndpointInput {
    /// The fields `body` gives for an endpoint of `kind`: an address webhooks may reach, events
    /// that kind hears.
    pub(crate) async fn read(context: &Context, body: &mut Body, kind: EndpointKind) -> Self {
        let name = body.optional("name", text(1, 128));
        let url = body.optional("url", text(1, MAX_URL_LENGTH + 1));
        if let Some(url) = &url {
            check_url(context, body, "url", url).await;
        }
        let description = body.nullable("description", text(0, 1000));
        let event = move |path: &str, value: &Value| {
            let name = text(1, 64)(path, value)?;
            if webhooks::heard_by(kind, &name) {
                return Ok(name);
            }
            let reason = match name.as_str() {
                _ if EventType::named(&name) == Some(EventType::Ping) => {
                    "ping is sent by Send test and cannot be subscribed to".to_owned()
                }
                _ if webhooks::heard_by(other(kind), &name) => {
                    format!("{name} is not heard by {} endpoints", kind.as_str().to_lowercase())
                }
                _ => format!("{name} is not an event"),
            };
            Err(vec![Notification::new(path, Rule::OneOf, format!("{path}: {reason}"))])
        };
        let events = body.optional("events", list_of(32, event));
        if events.as_ref().is_some_and(Vec::is_empty) {
            body.refuse("events", Rule::MinLength, "events must name at least one event");
        }
        let retries = body.optional("retries", integer(0, 10));
        let first_retry_after_seconds = body.optional("firstRetryAfterSeconds", integer(30, 3600));
        const SETTABLE: &[(&str, EndpointStatus)] =
            &[("Active", EndpointStatus::Active), ("Paused", EndpointStatus::Paused)];
        let status = body.optional("status", one_of(SETTABLE));
        Self { name, url, description, events, retries, first_retry_after_seconds, status }
    }

    /// Changes the fields given on `endpoint`.
    pub(crate) fn apply(self, endpoint: &mut Endpoint) {
        endpoint.name = self.name.unwrap_or(std::mem::take(&mut endpoint.name));
        endpoint.url = self.url.unwrap_or(std::mem::take(&mut endpoint.url));
        endpoint.description = self.description.unwrap_or(endpoint.description.take());
        endpoint.events = self.events.unwrap_or(std::mem::take(&mut endpoint.events));
        endpoint.retries = self.retries.unwrap_or(endpoint.retries);
        endpoint.first_retry_after_seconds =
            self.first_retry_after_seconds.unwrap_or(endpoint.first_retry_after_seconds);
        endpoint.status = self.status.unwrap_or(endpoint.status);
    }
}

/// One delivery attempt, scheduled or made.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttemptView {
    pub id: String,
    pub webhook_id: String,
    pub event_id: String,
    pub event_type: String,
    /// Event (first delivery), Retry (automatic), Replay (manual resend) or Test (ping).
    pub kind: AttemptKind,
    /// For a retry, which one (1 for the first).
    pub retry_number: i64,
    pub state: AttemptState,
    /// When it is or was due.
    pub due_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent_at: Option<String>,
    /// The request body, byte for byte.
    pub request_body: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_status: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_headers: Option<Value>,
    /// The response body, cut at 4,096 bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<i64>,
    /// Why it failed (the status, a timeout, a refused address, a connection error), or, beside
    /// a 2xx, what cut the answer's body short.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub created_at: String,
    /// While a host is sending a scheduled attempt: until when the other hosts leave it to that
    /// host. One that stopped mid-send leaves it to the others from then on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sending_until: Option<String>,
}

impl AttemptView {
    pub(crate) fn of(attempt: Attempt) -> Self {
        Self {
            id: attempt.id.into(),
            webhook_id: attempt.endpoint_id.into(),
            event_id: attempt.event_id.into(),
            event_type: attempt.event_type,
            kind: attempt.kind,
            retry_number: attempt.retry_number,
            state: attempt.state,
            due_at: iso(attempt.due_at),
            sent_at: attempt.sent_at.map(iso),
            request_body: attempt.payload,
            response_status: attempt.response_status,
            response_headers: attempt.response_headers.and_then(|text| serde_json::from_str(&text).ok()),
            response_body: attempt.response_body,
            latency_ms: attempt.latency_ms,
            error: attempt.error,
            created_at: iso(attempt.created_at),
            sending_until: attempt.claimed_until.filter(|_| attempt.state == AttemptState::Scheduled).map(iso),
        }
    }
}

/// Longest endpoint URL.
pub(crate) const MAX_URL_LENGTH: usize = 2048;

/// Checks a URL: absolute `https://` with a host, at most 2,048 characters, resolving to addresses
/// webhooks may reach.
pub(crate) async fn check_url(context: &Context, body: &mut Body, field: &str, url: &str) {
    let refusal = match url::Url::parse(url) {
        _ if url.len() > MAX_URL_LENGTH => {
            Some((Rule::MaxLength, format!("url must be at most {MAX_URL_LENGTH} characters")))
        }
        Err(error) => Some((Rule::Format, format!("url is not an absolute address: {error}"))),
        Ok(parsed) if parsed.scheme() != "https" => Some((Rule::Format, "url must be an https:// address".to_owned())),
        Ok(parsed) => match parsed.host_str() {
            None | Some("") => Some((Rule::Format, "url must name a host".to_owned())),
            Some(host) => {
                let port = parsed.port_or_known_default().unwrap_or(443);
                context
                    .outbound
                    .web
                    .addresses
                    .resolve(host, port)
                    .await
                    .err()
                    .map(|reason| (Rule::Format, format!("url: {reason}")))
            }
        },
    };
    if let Some((rule, message)) = refusal {
        body.refuse(field, rule, message.replacen("url", field, 1));
    }
}

pub(crate) fn other(kind: EndpointKind) -> EndpointKind {
    match kind {
        EndpointKind::Client => EndpointKind::Realm,
        EndpointKind::Realm => EndpointKind::Client,
    }
}
