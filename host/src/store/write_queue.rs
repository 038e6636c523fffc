//! Group commit for small writes that arrive together: lone events (a client-credentials sign-in
//! changes nothing else), refresh-token rotations, token exchanges and the client sessions a
//! signed-in browser opens at an authorization request. One writer task takes what has queued,
//! writes it in one transaction, and answers each caller only after the commit, so every caller
//! gets the durability of its own transaction at a fraction of the cost.

use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::Error;
use super::browser::{self, AuthorizationCode};
use super::delegation::{self, Exchange};
use super::lockout;
use super::sessions::{self, RefreshToken, Session};
use super::{ROWS_PER_STATEMENT, Store, values_placeholders};
use crate::kernel::ids::{AccountId, ClientId, GrantId, RealmId, SessionId, new_guid};

/// An event to store in the outbox.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedEvent {
    pub event_type: super::events::EventType,
    pub account_id: AccountId,
    pub realm_id: Option<RealmId>,
    pub client_id: Option<ClientId>,
    pub data: Value,
    pub at: DateTime<Utc>,
}

/// The exchange of a refresh token for the next one, with its sign-in event.
#[derive(Debug, Clone, PartialEq)]
pub struct Rotation {
    /// The token presented.
    pub exchanged: String,
    pub session_id: SessionId,
    /// Record the session's activity too.
    pub touch: bool,
    /// The token issued in its place, when the client uses refresh tokens.
    pub next: Option<RefreshToken>,
    pub event: QueuedEvent,
}

/// A token exchange with its trail row and sign-in event.
#[derive(Debug, Clone, PartialEq)]
pub struct ExchangeRecord {
    /// The grant a token was issued under, and that token's expiry; none for a refusal.
    pub issued: Option<(GrantId, DateTime<Utc>)>,
    pub trail: Exchange,
    pub event: QueuedEvent,
}

/// A client session a signed-in browser opens at an authorization request, with the code the
/// client exchanges for its tokens and its `login_succeeded`; the session's address is approved
/// for the person.
#[derive(Debug, Clone, PartialEq)]
pub struct Authorized {
    pub session: Session,
    pub code: AuthorizationCode,
    pub event: QueuedEvent,
}

/// An authorization code's exchange: the code marked used, and the refresh token issued with the
/// access token when the client uses refresh tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Redemption {
    pub code_hash: String,
    pub refresh: Option<RefreshToken>,
    pub at: DateTime<Utc>,
}

#[derive(Debug)]
enum Job {
    Event(QueuedEvent, oneshot::Sender<Result<(), String>>),
    /// Answers whether the token was still unexchanged (and is now exchanged).
    Rotation(Box<Rotation>, oneshot::Sender<Result<bool, String>>),
    /// Answers whether the exchange stands: its grant was still not withdrawn.
    Exchange(Box<ExchangeRecord>, oneshot::Sender<Result<bool, String>>),
    Authorization(Box<Authorized>, oneshot::Sender<Result<(), String>>),
    /// Answers whether the code was still unused (and is now used).
    Redemption(Box<Redemption>, oneshot::Sender<Result<bool, String>>),
}

/// Most jobs one transaction takes.
const BATCH: usize = 128;

#[derive(Debug, Clone)]
pub struct WriteQueue {
    sender: mpsc::Sender<Job>,
}

impl WriteQueue {
    pub fn start(store: Store) -> (Self, tokio::task::JoinHandle<()>) {
        let (sender, mut receiver) = mpsc::channel::<Job>(4096);
        let writer = tokio::spawn(async move {
            let mut batch = Vec::with_capacity(BATCH);
            // Waits for one job, then takes every job already queued, up to a batch.
            while receiver.recv_many(&mut batch, BATCH).await > 0 {
                write_batch(&store, std::mem::take(&mut batch)).await;
            }
        });
        (Self { sender }, writer)
    }

    /// How many are waiting for the writer.
    pub fn queued(&self) -> usize {
        self.sender.max_capacity() - self.sender.capacity()
    }

    /// Stores the event, returning once it is committed.
    pub async fn publish(&self, event: QueuedEvent) -> anyhow::Result<()> {
        let (reply, stored) = oneshot::channel();
        self.sender.send(Job::Event(event, reply)).await.map_err(|_| stopped())?;
        stored.await?.map_err(|error| anyhow::anyhow!("cannot store the event: {error}"))
    }

    /// Exchanges the refresh token, returning once committed: `false` when it had already been
    /// exchanged (nothing was written).
    pub async fn rotate(&self, rotation: Rotation) -> anyhow::Result<bool> {
        let (reply, done) = oneshot::channel();
        self.sender.send(Job::Rotation(Box::new(rotation), reply)).await.map_err(|_| stopped())?;
        done.await?.map_err(|error| anyhow::anyhow!("cannot rotate the refresh token: {error}"))
    }

    /// Records the exchange, returning once committed: `false` when it issued a token under a grant
    /// withdrawn meanwhile (nothing was written; the token must not be handed out).
    pub async fn record_exchange(&self, record: ExchangeRecord) -> anyhow::Result<bool> {
        let (reply, done) = oneshot::channel();
        self.sender.send(Job::Exchange(Box::new(record), reply)).await.map_err(|_| stopped())?;
        done.await?.map_err(|error| anyhow::anyhow!("cannot record the token exchange: {error}"))
    }

    /// Opens the client session with its code, returning once committed.
    pub async fn authorize(&self, authorization: Authorized) -> anyhow::Result<()> {
        let (reply, done) = oneshot::channel();
        self.sender.send(Job::Authorization(Box::new(authorization), reply)).await.map_err(|_| stopped())?;
        done.await?.map_err(|error| anyhow::anyhow!("cannot open the client session: {error}"))
    }

    /// Marks the code used and stores the refresh token issued with it, returning once committed:
    /// `false` when another presentation used the code first (nothing was written).
    pub async fn redeem(&self, redemption: Redemption) -> anyhow::Result<bool> {
        let (reply, done) = oneshot::channel();
        self.sender.send(Job::Redemption(Box::new(redemption), reply)).await.map_err(|_| stopped())?;
        done.await?.map_err(|error| anyhow::anyhow!("cannot redeem the authorization code: {error}"))
    }
}

fn stopped() -> anyhow::Error {
    anyhow::anyhow!("the write queue has stopped")
}

/// Writes the batch and answers each of its jobs. When the batch fails as a whole (a row one job
/// names was deleted meanwhile, say), each job is written again on its own, so that only the one
/// at fault is refused.
async fn write_batch(store: &Store, batch: Vec<Job>) {
    match write(store, &batch).await {
        Err(error) if batch.len() > 1 => {
            tracing::warn!(%error, jobs = batch.len(), "a batch failed: writing its jobs one at a time");
            for job in batch {
                let outcome = write(store, std::slice::from_ref(&job)).await;
                answer(vec![job], outcome);
            }
        }
        outcome => answer(batch, outcome),
    }
}

/// Answers each job of a batch with what writing it did.
fn answer(batch: Vec<Job>, outcome: Result<Written, Error>) {
    let outcome = outcome.map_err(|e| e.to_string());
    if let Err(error) = &outcome {
        tracing::error!(%error, jobs = batch.len(), "cannot write a batch");
    }
    let mut rotated = outcome.as_ref().map(|done| done.rotated.iter().copied()).ok();
    let mut recorded = outcome.as_ref().map(|done| done.exchanges.iter().copied()).ok();
    let mut redeemed = outcome.as_ref().map(|done| done.redeemed.iter().copied()).ok();
    let took_place = |answers: &mut Option<std::iter::Copied<std::slice::Iter<'_, bool>>>| match (answers, &outcome) {
        (Some(done), _) => Ok(done.next().unwrap_or(false)),
        (None, Err(error)) => Err(error.clone()),
        (None, Ok(_)) => Ok(false),
    };
    for job in batch {
        match job {
            Job::Event(_, reply) | Job::Authorization(_, reply) => {
                let _ = reply.send(outcome.as_ref().map(|_| ()).map_err(Clone::clone));
            }
            Job::Rotation(_, reply) => {
                let _ = reply.send(took_place(&mut rotated));
            }
            Job::Exchange(_, reply) => {
                let _ = reply.send(took_place(&mut recorded));
            }
            Job::Redemption(_, reply) => {
                let _ = reply.send(took_place(&mut redeemed));
            }
        }
    }
}

/// For each rotation, exchange and redemption of a batch, in order, whether it took place.
#[derive(Debug, Default)]
struct Written {
    rotated: Vec<bool>,
    exchanges: Vec<bool>,
    redeemed: Vec<bool>,
}

/// Writes the batch in one transaction. The whole batch costs a handful of statements: one
/// exchange of every presented refresh token, one insert of the next tokens, one touch of the
/// sessions, one update of each grant tokens were issued under, one marking of the redeemed codes,
/// and the opened sessions, their codes, their approved addresses, the trail rows and the events
/// in rows of 32.
async fn write(store: &Store, batch: &[Job]) -> Result<Written, Error> {
    let (mut published, mut rotations, mut exchanges, mut authorizations, mut redemptions) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for job in batch {
        match job {
            Job::Event(event, _) => published.push(event),
            Job::Rotation(rotation, _) => rotations.push(rotation.as_ref()),
            Job::Exchange(record, _) => exchanges.push(record.as_ref()),
            Job::Authorization(authorization, _) => authorizations.push(authorization.as_ref()),
            Job::Redemption(redemption, _) => redemptions.push(redemption.as_ref()),
        }
    }
    let mut tx = store.begin().await?;
    let mut used = std::collections::HashSet::new();
    if let Some(at) = redemptions.iter().map(|r| r.at).max() {
        let hashes: Vec<&str> = redemptions.iter().map(|r| r.code_hash.as_str()).collect();
        used = browser::mark_used(&mut *tx, &hashes, at).await?;
    }
    // Each code is used once: a second presentation in the same batch finds it taken.
    let redeemed: Vec<bool> = redemptions.iter().map(|r| used.remove(&r.code_hash)).collect();
    if let Some(at) = authorizations.iter().map(|a| a.event.at).max() {
        write_authorizations(&mut tx, &authorizations, at).await?;
    }
    let mut exchanged = std::collections::HashSet::new();
    if let Some(at) = rotations.iter().map(|r| r.event.at).max() {
        let ids: Vec<&str> = rotations.iter().map(|r| r.exchanged.as_str()).collect();
        exchanged = sessions::mark_all_exchanged(&mut *tx, &ids, at).await?;
    }
    // Each token is exchanged once: a second presentation in the same batch finds it taken.
    let rotated: Vec<bool> = rotations.iter().map(|r| exchanged.remove(r.exchanged.as_str())).collect();
    let done: Vec<&Rotation> = rotations.iter().zip(&rotated).filter(|(_, done)| **done).map(|(r, _)| *r).collect();
    let next: Vec<&RefreshToken> = done
        .iter()
        .filter_map(|r| r.next.as_ref())
        .chain(redemptions.iter().zip(&redeemed).filter(|(_, done)| **done).filter_map(|(r, _)| r.refresh.as_ref()))
        .collect();
    for rows in next.chunks(ROWS_PER_STATEMENT) {
        sessions::insert_refresh_rows(&mut *tx, rows).await?;
    }
    let touched: Vec<&str> = done.iter().filter(|r| r.touch).map(|r| r.session_id.as_str()).collect();
    if let Some(at) = done.iter().filter(|r| r.touch).map(|r| r.event.at).max() {
        sessions::touch_all(&mut *tx, &touched, at).await?;
    }
    // Each grant is updated once, with the latest expiry issued under it; a withdrawn one refuses
    // every exchange of the batch made under it.
    let mut latest: std::collections::BTreeMap<&str, DateTime<Utc>> = std::collections::BTreeMap::new();
    for (grant, expires_at) in exchanges.iter().filter_map(|e| e.issued.as_ref()) {
        let entry = latest.entry(grant.as_str()).or_insert(*expires_at);
        *entry = (*entry).max(*expires_at);
    }
    let mut withdrawn = std::collections::HashSet::new();
    for (grant, expires_at) in latest {
        if !delegation::record_issued(&mut *tx, grant, expires_at).await? {
            withdrawn.insert(grant);
        }
    }
    let recorded: Vec<bool> = exchanges
        .iter()
        .map(|e| e.issued.as_ref().is_none_or(|(grant, _)| !withdrawn.contains(grant.as_str())))
        .collect();
    let kept: Vec<&ExchangeRecord> =
        exchanges.iter().zip(&recorded).filter(|(_, kept)| **kept).map(|(e, _)| *e).collect();
    let trail: Vec<&Exchange> = kept.iter().map(|e| &e.trail).collect();
    for rows in trail.chunks(ROWS_PER_STATEMENT) {
        delegation::insert_exchanges(&mut *tx, rows).await?;
    }
    let events: Vec<&QueuedEvent> = published
        .into_iter()
        .chain(done.iter().map(|r| &r.event))
        .chain(kept.iter().map(|e| &e.event))
        .chain(authorizations.iter().map(|a| &a.event))
        .collect();
    const PER_ROW: usize = 7;
    for rows in events.chunks(ROWS_PER_STATEMENT) {
        let sql = format!(
            "INSERT INTO event_outbox (id, event_type, account_id, realm_id, client_id, created_at, data) VALUES {}",
            values_placeholders(rows.len(), PER_ROW)
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for event in rows {
            query = query
                .bind(new_guid())
                .bind(event.event_type.as_str())
                .bind(event.account_id.clone())
                .bind(event.realm_id.clone())
                .bind(event.client_id.clone())
                .bind(super::millis(event.at))
                .bind(event.data.to_string());
        }
        query.execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(Written { rotated, exchanges: recorded, redeemed })
}

/// The client sessions, then their codes (which name them), then the addresses they approve.
async fn write_authorizations(
    tx: &mut super::Transaction,
    authorizations: &[&Authorized],
    at: DateTime<Utc>,
) -> Result<(), Error> {
    for rows in authorizations.chunks(ROWS_PER_STATEMENT) {
        let opened: Vec<&Session> = rows.iter().map(|a| &a.session).collect();
        sessions::insert_rows(&mut **tx, &opened).await?;
        let codes: Vec<&AuthorizationCode> = rows.iter().map(|a| &a.code).collect();
        browser::insert_codes(&mut **tx, &codes).await?;
    }
    let approvals: Vec<(&str, &str)> =
        authorizations.iter().map(|a| (a.session.user_id.as_str(), a.session.ip_address.as_str())).collect();
    lockout::approve_all(tx, &approvals, at).await
}
