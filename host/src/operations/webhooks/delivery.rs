//! The delivery worker. Each round it fans out new outbox events, claims due attempts (a lease in
//! `claimed_until`, so hosts sharing a database never send one attempt at once), sends them
//! concurrently, and records the outcomes of those that finished in one transaction. A crash loses
//! nothing: an event not yet fanned out stays in the outbox, and an attempt whose outcome was not
//! recorded is claimed again when its lease runs out. Delivery is therefore at least once.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Map, Value};
use tokio::task::JoinSet;

use super::{Webhooks, retry_delay, signature, standard_signature};
use crate::kernel::backoff::{Backoff, WORKER_CEILING};
use crate::kernel::ids::{AttemptId, RealmId};
use crate::runtime::context::Context;
use crate::store::deliveries::{self as queue, Target};
use crate::store::events::StoredEvent;
use crate::store::notifications::Severity;
use crate::store::webhooks::{self as store, Attempt, AttemptKind, AttemptState, Endpoint, EndpointKind};

/// Events fanned out per round.
const FAN_OUT_BATCH: usize = 500;

/// Attempts in flight at once on one host.
const MAX_IN_FLIGHT: usize = 512;

/// How long a claim keeps other hosts away from an attempt: longer than a send may take.
const LEASE: TimeDelta = TimeDelta::minutes(1);

/// How often an idle worker looks for work.
const IDLE_POLL: Duration = Duration::from_millis(50);

/// The response body kept with an attempt is cut at this many bytes.
pub const RESPONSE_BODY_LIMIT: usize = 4096;

/// The worker of a host on the system clock. A round that fails (the database is unreachable, say)
/// is followed by a wait that doubles with each failure in a row, logged when the worker starts
/// failing and when it recovers.
pub async fn run(context: Arc<Context>, webhooks: Webhooks) {
    let mut in_flight: JoinSet<Outcome> = JoinSet::new();
    let mut sending: HashSet<AttemptId> = HashSet::new();
    let mut backoff = Backoff::new("webhook deliveries", IDLE_POLL, WORKER_CEILING);
    loop {
        let mut failure = None;
        let fanned = fan_out(&context, &webhooks).await.unwrap_or_else(|error| {
            failure = Some(format!("fanning out events: {error:#}"));
            0
        });
        let room = MAX_IN_FLIGHT.saturating_sub(in_flight.len());
        let claimed = match room {
            0 => Vec::new(),
            room => claim(&context, room).await.unwrap_or_else(|error| {
                failure = Some(format!("claiming due attempts: {error:#}"));
                Vec::new()
            }),
        };
        // Behind when a whole batch of events or of due attempts was taken: more may be waiting, so
        // the next round starts at once. Otherwise the worker waits for a send to finish or the next
        // poll, and events arriving meanwhile are fanned out together in one round.
        let behind = fanned >= FAN_OUT_BATCH || (room > 0 && claimed.len() >= room);
        for due in claimed {
            // A claim of this host's own attempt still in flight (the clock moved past its lease).
            if sending.insert(due.attempt.id.clone()) {
                let webhooks = webhooks.clone();
                let at = context.clock.now();
                in_flight.spawn(async move { send(&webhooks, due, at).await });
            }
        }
        let mut finished = Vec::new();
        while let Some(done) = in_flight.try_join_next() {
            finished.extend(done.ok());
        }
        if finished.is_empty() && !behind && failure.is_none() {
            tokio::select! {
                () = webhooks.wake.notified() => {}
                () = tokio::time::sleep(IDLE_POLL) => {}
                Some(done) = in_flight.join_next(), if !in_flight.is_empty() => finished.extend(done.ok()),
            }
            while let Some(done) = in_flight.try_join_next() {
                finished.extend(done.ok());
            }
        }
        if !finished.is_empty() {
            for outcome in &finished {
                sending.remove(&outcome.attempt.id);
            }
            // Outcomes not recorded are claimed again once their lease runs out.
            if let Err(error) = record(&context, finished).await {
                failure = Some(format!("recording outcomes: {error:#}"));
            }
        }
        match failure {
            Some(failure) => tokio::time::sleep(backoff.failed(&failure)).await,
            None => backoff.succeeded(),
        }
    }
}

/// Runs rounds until nothing is left to fan out or due at the clock's time, each round sending
/// every attempt it claimed and recording their outcomes before the next: the manual clock's step.
/// Retries are due later than the round that scheduled them, so the rounds end.
pub async fn settle(context: &Context, webhooks: &Webhooks) -> anyhow::Result<()> {
    loop {
        let fanned = fan_out(context, webhooks).await?;
        let claimed = claim(context, MAX_IN_FLIGHT).await?;
        if fanned == 0 && claimed.is_empty() {
            return Ok(());
        }
        let at = context.clock.now();
        let sends = claimed.into_iter().map(|due| send(webhooks, due, at));
        let finished = futures_util::future::join_all(sends).await;
        if !finished.is_empty() {
            record(context, finished).await?;
        }
    }
}

/// Whether an endpoint hears an event: the event happened once it existed, is of its kind, in its
/// realm, for its client (a client endpoint also hears the realm's user events, which belong to no
/// client), and among its subscriptions.
fn hears((endpoint, subscribed): &(Endpoint, Vec<String>), event: &StoredEvent) -> bool {
    if event.created_at < endpoint.created_at {
        return false;
    }
    let of_its_kind = match endpoint.kind {
        EndpointKind::Realm => super::heard_by(EndpointKind::Realm, &event.event_type),
        EndpointKind::Client => {
            super::heard_by(EndpointKind::Client, &event.event_type)
                && (event.client_id.is_none() || event.client_id == endpoint.client_id)
        }
    };
    of_its_kind && subscribed.contains(&event.event_type)
}

/// The message body: the webhook envelope around the `data` the payload component built.
pub fn envelope(
    event_id: &str,
    event_type: &str,
    created_at: DateTime<Utc>,
    realm: Option<&str>,
    client: Option<&str>,
    data: Map<String, Value>,
) -> String {
    let mut envelope = Map::new();
    envelope.insert("id".into(), event_id.into());
    envelope.insert("type".into(), event_type.into());
    envelope.insert("created_at".into(), created_at.timestamp().into());
    envelope.insert("realm_id".into(), realm.into());
    envelope.insert("client_id".into(), client.into());
    envelope.insert("data".into(), Value::Object(data));
    Value::Object(envelope).to_string()
}

/// Fans out a batch of new events: builds each payload once and schedules one attempt per
/// subscribed Active endpoint, in the transaction that marks the events fanned out.
async fn fan_out(context: &Context, webhooks: &Webhooks) -> anyhow::Result<usize> {
    let now = context.clock.now();
    let mut tx = context.store.begin_claim().await?;
    let events = queue::claim_events(&mut tx, now, FAN_OUT_BATCH).await?;
    if events.is_empty() {
        return Ok(0);
    }

    // The Active endpoints of each realm met in the batch, with their subscriptions.
    let mut endpoints: HashMap<RealmId, Vec<(Endpoint, Vec<String>)>> = HashMap::new();
    let mut scheduled = Vec::new();
    for event in &events {
        let Some(realm_id) = &event.realm_id else { continue };
        if !endpoints.contains_key(realm_id) {
            let found = store::active_in_realm(&mut *tx, realm_id).await?;
            let found = found
                .into_iter()
                .map(|endpoint| {
                    let events = endpoint.events.clone();
                    (endpoint, events)
                })
                .collect();
            endpoints.insert(realm_id.clone(), found);
        }
        let listeners: Vec<&Endpoint> = endpoints
            .get(realm_id)
            .into_iter()
            .flatten()
            .filter(|listener| hears(listener, event))
            .map(|(endpoint, _)| endpoint)
            .collect();
        if listeners.is_empty() {
            continue;
        }
        let record = match serde_json::from_str(&event.data) {
            Ok(Value::Object(record)) => record,
            _ => Map::new(),
        };
        let built = webhooks.payloads.build(&event.event_type, &record).await;
        let body = built.as_ref().ok().map(|data| {
            envelope(
                &event.id,
                &event.event_type,
                event.created_at,
                Some(realm_id),
                event.client_id.as_deref(),
                data.clone(),
            )
        });
        for endpoint in listeners {
            let mut attempt = Attempt::scheduled(
                endpoint,
                (&event.id, &event.event_type),
                AttemptKind::Event,
                body.clone().unwrap_or_default(),
                now,
            );
            if let Err(error) = &built {
                tracing::error!(event = %event.id, error = %error, "a webhook payload could not be built");
                attempt.state = AttemptState::Failed;
                attempt.error = Some(error.to_string());
            }
            scheduled.push(attempt);
        }
    }
    queue::insert_all_attempts(&mut tx, &scheduled).await?;
    store::events::insert_fan_outs(&mut tx, &scheduled).await?;
    tx.commit().await?;
    if !scheduled.is_empty() {
        tracing::debug!(events = events.len(), scheduled = scheduled.len(), "webhook events fanned out");
    }
    Ok(events.len())
}

/// An attempt claimed for sending, with where it goes.
#[derive(Debug)]
struct Due {
    attempt: Attempt,
    target: Target,
}

async fn claim(context: &Context, room: usize) -> anyhow::Result<Vec<Due>> {
    let now = context.clock.now();
    let claimed = queue::claim_attempts(&context.store, now, now + LEASE, room).await?;
    Ok(claimed.into_iter().map(|(attempt, target)| Due { attempt, target }).collect())
}

/// What one attempt came to.
#[derive(Debug)]
struct Outcome {
    attempt: Attempt,
    retries: i64,
    first_retry_after_seconds: i64,
    succeeded: bool,
    sent_at: DateTime<Utc>,
    status: Option<i64>,
    headers: Option<String>,
    body: Option<String>,
    latency_ms: i64,
    error: Option<String>,
}

impl Outcome {
    fn answer(&self) -> queue::Answer<'_> {
        queue::Answer {
            id: &self.attempt.id,
            sent_at: self.sent_at,
            status: self.status,
            headers: self.headers.as_deref(),
            body: self.body.as_deref(),
            latency_ms: self.latency_ms,
            error: self.error.as_deref(),
        }
    }

    /// When the receiver's answer ended.
    fn finished_at(&self) -> DateTime<Utc> {
        self.sent_at + TimeDelta::milliseconds(self.latency_ms)
    }
}

/// Sends an attempt at `at`, whose whole seconds are the signature's `t`.
async fn send(webhooks: &Webhooks, due: Due, at: DateTime<Utc>) -> Outcome {
    let started = Instant::now();
    let mut outcome = Outcome {
        retries: due.target.retries,
        first_retry_after_seconds: due.target.first_retry_after_seconds,
        succeeded: false,
        sent_at: at,
        status: None,
        headers: None,
        body: None,
        latency_ms: 0,
        error: None,
        attempt: due.attempt,
    };
    match post(webhooks, &due.target.url, &due.target.secret_sealed, &outcome.attempt, at.timestamp()).await {
        Ok(response) => {
            let status = response.status();
            outcome.succeeded = status.is_success();
            outcome.status = Some(i64::from(status.as_u16()));
            let headers: Map<String, Value> = response
                .headers()
                .iter()
                .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into()))
                .collect();
            outcome.headers = Some(Value::Object(headers).to_string());
            // The status decides: a 2xx is a delivery even when the body that follows is cut
            // short (a receiver closing TLS without close_notify after an answer without
            // Content-Length); what cut it is kept beside the attempt.
            let (body, read_error) = read_limited(response).await;
            outcome.body = Some(body);
            outcome.error = match read_error {
                Some(error) => Some(format!("reading the answer's body: {error}")),
                None if !outcome.succeeded => Some(format!("the receiver answered {status}")),
                None => None,
            };
        }
        Err(error) => outcome.error = Some(error),
    }
    outcome.latency_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    outcome
}

async fn post(
    webhooks: &Webhooks,
    url: &str,
    secret_sealed: &str,
    attempt: &Attempt,
    t: i64,
) -> Result<reqwest::Response, String> {
    let url = url::Url::parse(url).map_err(|error| format!("the endpoint URL is invalid: {error}"))?;
    if let Some(refused) = webhooks.web.addresses.refuses_literal(&url) {
        return Err(refused);
    }
    let secret = webhooks.secrets.open(secret_sealed).map_err(|_| "the signing secret cannot be read".to_owned())?;
    let secret = String::from_utf8(secret).map_err(|_| "the signing secret cannot be read".to_owned())?;
    let (id, body) = (attempt.event_id.as_str(), attempt.payload.as_bytes());
    webhooks
        .web
        .http
        .post(url)
        .header("Content-Type", "application/json")
        .header("X-Service-Signature", signature(&secret, t, body))
        .header("X-Service-Event", &attempt.event_type)
        .header("X-Service-Event-Id", id)
        .header("webhook-id", id)
        .header("webhook-timestamp", t.to_string())
        .header("webhook-signature", standard_signature(&secret, id, t, body))
        .body(attempt.payload.clone())
        .send()
        .await
        .map_err(|error| describe(&error))
}

/// The response body up to the limit, and the error that cut the read short, if any.
async fn read_limited(mut response: reqwest::Response) -> (String, Option<String>) {
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = RESPONSE_BODY_LIMIT - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if body.len() >= RESPONSE_BODY_LIMIT {
                    break;
                }
            }
            Ok(None) => break,
            Err(error) => return (String::from_utf8_lossy(&body).into_owned(), Some(describe(&error))),
        }
    }
    (String::from_utf8_lossy(&body).into_owned(), None)
}

/// An error with its causes, which name what actually went wrong (a refused address, a timeout).
pub(crate) fn describe(error: &reqwest::Error) -> String {
    let mut text = if error.is_timeout() { "no answer within 10 seconds".to_owned() } else { error.to_string() };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Records finished attempts: their outcome, the endpoint's health (10 consecutive failures
/// disable it; automatic retries do not count, tests do; any success resets the count), and the
/// next automatic retry of a failed event delivery.
async fn record(context: &Context, outcomes: Vec<Outcome>) -> anyhow::Result<()> {
    let now = context.clock.now();
    for outcome in &outcomes {
        context.metrics.webhook_attempt(outcome.succeeded, outcome.latency_ms as f64 / 1000.0);
    }
    let (accepted, failed): (Vec<&Outcome>, Vec<&Outcome>) = outcomes.iter().partition(|outcome| outcome.succeeded);
    let mut tx = context.store.begin().await?;
    // Successes, the bulk of any round, take a few statements whatever their number: their rows,
    // then the health of their endpoints.
    let answers: Vec<queue::Answer<'_>> = accepted.iter().map(|outcome| outcome.answer()).collect();
    queue::record_accepted(&mut tx, &answers).await?;
    // When each endpoint last accepted an attempt in this round: failures before that do not count.
    let mut last_success: HashMap<&str, DateTime<Utc>> = HashMap::new();
    for outcome in &accepted {
        let finished = outcome.finished_at();
        let latest = last_success.entry(outcome.attempt.endpoint_id.as_str()).or_insert(finished);
        *latest = (*latest).max(finished);
    }
    let healthy: Vec<&str> = last_success.keys().copied().collect();
    queue::reset_failures(&mut tx, &healthy).await?;
    for outcome in failed {
        if !queue::record_refused(&mut tx, &outcome.answer()).await? {
            // Recorded by another host after a lapsed lease, or its endpoint is gone.
            continue;
        }
        let attempt = &outcome.attempt;
        let superseded =
            last_success.get(attempt.endpoint_id.as_str()).is_some_and(|&success| success > outcome.finished_at());
        if attempt.kind != AttemptKind::Retry
            && !superseded
            && let Some(disabled) = queue::count_failure(&mut tx, &attempt.endpoint_id, now).await?
        {
            tracing::warn!(endpoint = %attempt.endpoint_id, "webhook endpoint disabled after 10 consecutive failed deliveries");
            if attempt.endpoint_kind == EndpointKind::Client {
                let queue::Disabled { account_id, name, url } = disabled;
                let client = attempt.client_id.as_deref().unwrap_or_default();
                let raised = crate::operations::notifications::Raised {
                    account_id: &account_id,
                    notification_type: "webhook_disabled",
                    severity: Severity::Critical,
                    title: format!("Webhook {name} disabled"),
                    description: format!(
                        "The webhook endpoint {name} ({url}) of client {client} in realm {} failed 10 \
                         deliveries in a row and was disabled. Fix the receiver, then update the endpoint to \
                         make it Active again.",
                        attempt.realm_id
                    ),
                    resource_id: Some(&attempt.endpoint_id),
                    realm_id: Some(&attempt.realm_id),
                    webhook: true,
                };
                crate::operations::notifications::raise(&mut tx, raised, now).await?;
            }
        }
        let retried = matches!(attempt.kind, AttemptKind::Event | AttemptKind::Retry);
        if retried && attempt.retry_number < outcome.retries {
            let n = attempt.retry_number + 1;
            let due = now + retry_delay(outcome.first_retry_after_seconds, n, super::random_variation());
            let retry = Attempt {
                id: AttemptId::fresh(),
                kind: AttemptKind::Retry,
                retry_number: n,
                state: AttemptState::Scheduled,
                due_at: due,
                created_at: now,
                claimed_until: None,
                ..attempt.clone()
            };
            store::insert_attempt(&mut *tx, &retry).await?;
        }
    }
    tx.commit().await?;
    Ok(())
}
