//! Webhook endpoints: client endpoints at
//! `/realms/{realm}/clients/{client}/webhooks` hear the client's user, sign-in, token, key and
//! suspension events; realm endpoints at `/realms/{realm}/webhooks` hear administrative changes
//! and attacks. Registering a client endpoint requires `client:write`; a realm endpoint
//! `webhook:create`. Reading needs `webhook:read`, changing `webhook:update`, removing
//! `webhook:delete`. The signing secret is shown once, right after creation or rotation, and only
//! to holders of `secret:read`.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::clients::client_in_reach;
use super::{ListQuery, realm_in_reach};
use crate::authz::{Resource, permission};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope::Answer;
use crate::kernel::clock::iso;
use crate::kernel::validate::{Body, Notification, Rule, integer, list_of, one_of, text};
use crate::operations::webhooks;
use crate::operations::webhooks::endpoints::{self, Owner, WithSecret};
use crate::runtime::error::Error;
use crate::store::events::EventType;
use crate::store::webhooks::{
    self as store, Attempt, AttemptKind, AttemptState, Endpoint, EndpointKind, EndpointStatus,
};

pub(crate) mod figures;
mod routes;

pub use self::figures::{EventView, FailureView, LatencyView, MetricsView};
pub use self::routes::*;

/// Longest endpoint URL.
pub(super) const MAX_URL_LENGTH: usize = 2048;

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
    fn of(endpoint: &Endpoint) -> Self {
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
    name: Option<String>,
    /// Absolute `https://` address with a host, at most 2,048 characters, resolving to public addresses only.
    #[schema(value_type = String, required = true)]
    url: Option<String>,
    /// Up to 1,000 characters; null clears it.
    #[schema(value_type = Option<String>)]
    description: Option<Option<String>>,
    /// At least one event the endpoint's kind can hear; `ping` cannot be subscribed to.
    #[schema(value_type = Vec<String>, required = true)]
    events: Option<Vec<String>>,
    /// 0 to 10 (default 5); 0 turns retries off.
    retries: Option<i64>,
    /// 30 to 3,600 seconds (default 60).
    first_retry_after_seconds: Option<i64>,
    /// Active (default) or Paused. An update without `status` brings a Disabled endpoint back to Active.
    status: Option<EndpointStatus>,
}

impl EndpointInput {
    /// The fields `body` gives for an endpoint of `kind`: an address webhooks may reach, events
    /// that kind hears.
    async fn read(state: &AppState, body: &mut Body, kind: EndpointKind) -> Self {
        let name = body.optional("name", text(1, 128));
        let url = body.optional("url", text(1, MAX_URL_LENGTH + 1));
        if let Some(url) = &url {
            check_url(state, body, "url", url).await;
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
    fn apply(self, endpoint: &mut Endpoint) {
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
    fn of(attempt: Attempt) -> Self {
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

/// What a caller wants to do with endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Intent {
    Read,
    Register,
    Change,
    Remove,
}

/// Checks the caller may act on the place's endpoints and loads the place.
async fn place_in_reach(
    state: &AppState,
    caller: &Caller,
    realm_id: &str,
    client_id: Option<&str>,
    intent: Intent,
) -> Result<Owner, Error> {
    let permissions: &[&str] = match (intent, client_id.is_some()) {
        (Intent::Read, _) => &[permission::WEBHOOK_READ],
        // Registering a client endpoint requires client:write, which grants all three.
        (Intent::Register, true) => &[permission::CLIENT_CREATE, permission::CLIENT_UPDATE, permission::CLIENT_DELETE],
        (Intent::Register, false) => &[permission::WEBHOOK_CREATE],
        (Intent::Change, _) => &[permission::WEBHOOK_UPDATE],
        (Intent::Remove, _) => &[permission::WEBHOOK_DELETE],
    };
    match client_id {
        Some(client_id) => {
            let client = client_in_reach(state, caller, realm_id, client_id, permissions[0]).await?;
            let realm = super::find_realm(state, realm_id).await?.ok_or(Error::NotFound("realm"))?;
            for permission in &permissions[1..] {
                let resource = Resource::Client {
                    realm_id: client.realm_id.to_string(),
                    id: client.id.to_string(),
                    owner: Some(realm.account_id.clone()),
                };
                caller.require(state, permission, resource)?;
            }
            Ok(Owner { account_id: realm.account_id.clone(), realm_id: client.realm_id, client_id: Some(client.id) })
        }
        None => {
            let realm = realm_in_reach(state, caller, realm_id, permissions[0]).await?;
            Ok(Owner { account_id: realm.account_id.clone(), realm_id: realm.id.clone(), client_id: None })
        }
    }
}

async fn endpoint_in_reach(
    state: &AppState,
    caller: &Caller,
    (realm_id, client_id, id): (&str, Option<&str>, &str),
    intent: Intent,
) -> Result<(Owner, Endpoint), Error> {
    let place = place_in_reach(state, caller, realm_id, client_id, intent).await?;
    let endpoint = store::find(state.store.pool(), &place.realm_id, place.client_id.as_deref(), id)
        .await?
        .ok_or(Error::NotFound("webhook"))?;
    Ok((place, endpoint))
}

/// Checks a URL: absolute `https://` with a host, at most 2,048 characters, resolving to addresses
/// webhooks may reach.
pub(super) async fn check_url(state: &AppState, body: &mut Body, field: &str, url: &str) {
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
                state
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

fn other(kind: EndpointKind) -> EndpointKind {
    match kind {
        EndpointKind::Client => EndpointKind::Realm,
        EndpointKind::Realm => EndpointKind::Client,
    }
}

/// The view with the fresh secret, for a caller allowed to read secrets.
fn with_secret(state: &AppState, caller: &Caller, endpoint: &Endpoint, secret: String) -> EndpointView {
    let mut view = EndpointView::of(endpoint);
    if caller.require_account(state, permission::SECRET_READ).is_ok() {
        view.signing_secret = Some(secret);
    }
    view
}

pub(crate) async fn register(
    state: AppState,
    caller: Caller,
    realm_id: &str,
    client_id: Option<&str>,
    mut body: Body,
) -> Result<Answer<EndpointView>, Error> {
    let place = place_in_reach(&state, &caller, realm_id, client_id, Intent::Register).await?;
    let WithSecret { mut endpoint, secret } = endpoints::draft(&state, &state.webhooks, &place);
    for required in ["name", "url", "events"] {
        if !body.has(required) {
            body.refuse(required, Rule::Required, format!("{required} is required"));
        }
    }
    EndpointInput::read(&state, &mut body, endpoint.kind).await.apply(&mut endpoint);
    body.finish()?;
    endpoints::register(&state, caller.author(), &endpoint, EndpointView::of).await?;
    Ok(Answer::Created(with_secret(&state, &caller, &endpoint, secret)))
}

pub(crate) async fn list_endpoints(
    state: AppState,
    caller: Caller,
    realm_id: &str,
    client_id: Option<&str>,
    query: Option<String>,
) -> Result<Answer<EndpointView>, Error> {
    let place = place_in_reach(&state, &caller, realm_id, client_id, Intent::Read).await?;
    let list = ListQuery::parse(query, &[])?;
    list.status_in(store::EndpointStatus::NAMES)?;
    let found = store::endpoint_page(&state.store, place.rows(), &list.page).await?;
    Ok(Answer::Paged(found.map(|endpoint| EndpointView::of(&endpoint))))
}

pub(crate) async fn read_endpoint(
    state: AppState,
    caller: Caller,
    at: (&str, Option<&str>, &str),
) -> Result<Answer<EndpointView>, Error> {
    let (_, endpoint) = endpoint_in_reach(&state, &caller, at, Intent::Read).await?;
    Ok(Answer::Ok(EndpointView::of(&endpoint)))
}

pub(crate) async fn update_endpoint(
    state: AppState,
    caller: Caller,
    at: (&str, Option<&str>, &str),
    mut body: Body,
) -> Result<Answer<EndpointView>, Error> {
    let (_, before) = endpoint_in_reach(&state, &caller, at, Intent::Change).await?;
    let mut endpoint = endpoints::reopened(&before);
    body.unchanged("id", &endpoint.id);
    body.unchanged("kind", endpoint.kind.as_str());
    EndpointInput::read(&state, &mut body, endpoint.kind).await.apply(&mut endpoint);
    body.finish()?;
    let endpoint = endpoints::update(&state, caller.author(), &before, endpoint, EndpointView::of).await?;
    Ok(Answer::Ok(EndpointView::of(&endpoint)))
}

pub(crate) async fn delete_endpoint(
    state: AppState,
    caller: Caller,
    at: (&str, Option<&str>, &str),
) -> Result<Answer<()>, Error> {
    let (_, endpoint) = endpoint_in_reach(&state, &caller, at, Intent::Remove).await?;
    endpoints::remove(&state, caller.author(), &endpoint, EndpointView::of).await?;
    Ok(Answer::Done)
}

pub(crate) async fn rotate(
    state: AppState,
    caller: Caller,
    at: (&str, Option<&str>, &str),
) -> Result<Answer<EndpointView>, Error> {
    let (_, before) = endpoint_in_reach(&state, &caller, at, Intent::Change).await?;
    let WithSecret { endpoint, secret } =
        endpoints::rotate(&state, &state.webhooks, caller.author(), &before, EndpointView::of).await?;
    Ok(Answer::Ok(with_secret(&state, &caller, &endpoint, secret)))
}

/// Schedules a `ping` for now.
pub(crate) async fn test(
    state: AppState,
    caller: Caller,
    at: (&str, Option<&str>, &str),
) -> Result<Answer<AttemptView>, Error> {
    let (_, endpoint) = endpoint_in_reach(&state, &caller, at, Intent::Change).await?;
    let attempt = endpoints::test(&state, &state.webhooks, &endpoint).await?;
    Ok(Answer::Created(AttemptView::of(attempt)))
}

/// Resends a delivered payload unchanged, now.
pub(crate) async fn replay(
    state: AppState,
    caller: Caller,
    at: (&str, Option<&str>, &str),
    attempt_id: &str,
) -> Result<Answer<AttemptView>, Error> {
    let (_, endpoint) = endpoint_in_reach(&state, &caller, at, Intent::Change).await?;
    let attempt = endpoints::replay(&state, &state.webhooks, &endpoint, attempt_id).await?;
    Ok(Answer::Created(AttemptView::of(attempt)))
}

pub(crate) async fn deliveries(
    state: AppState,
    caller: Caller,
    realm_id: &str,
    client_id: Option<&str>,
    query: Option<String>,
) -> Result<Answer<AttemptView>, Error> {
    let place = place_in_reach(&state, &caller, realm_id, client_id, Intent::Read).await?;
    let list = ListQuery::parse(query, &["webhookId", "eventId", "eventType", "kind"])?;
    list.status_in(crate::store::webhooks::AttemptState::NAMES)?;
    let filter = store::AttemptFilter {
        endpoint_id: list.filter("webhookId"),
        event_id: list.filter("eventId"),
        event_type: list.filter("eventType"),
        kind: list.filter("kind"),
    };
    let found = store::attempt_page(&state.store, place.rows(), filter, &list.page).await?;
    Ok(Answer::Paged(found.map(AttemptView::of)))
}
