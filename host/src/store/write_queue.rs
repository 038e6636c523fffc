//! Group commit for small writes that arrive together: lone events (a client-credentials sign-in
//! changes nothing else), refresh-token rotations, token exchanges, the client sessions a
//! signed-in browser opens at an authorization request, and passkey sign-ins. One writer task takes what has queued,
//! writes it in one transaction, and answers each caller only after the commit, so every caller
//! gets the durability of its own transaction at a fraction of the cost.

use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::Error;
use super::browser;
use super::delegation::{self, Exchange};
use super::lockout;
use super::sessions::{self, RefreshToken, Session};
use super::{ROWS_PER_STATEMENT, Store, values_placeholders};
use crate::kernel::ids::{AccountId, ClientId, GrantId, RealmId, SessionId, UserId, new_guid};

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

/// A signed-in browser's authorization of a client: its `login_succeeded`, and the browser's
/// address approved for the person (person, address).
#[derive(Debug, Clone, PartialEq)]
pub struct Authorized {
    pub approval: (UserId, String),
    pub event: QueuedEvent,
}

/// An authorization code's exchange: the client session the code names, opened, with the refresh
/// token issued with the access token when the client uses refresh tokens. The session's row is
/// what uses the code up: a session already there means the code was presented before.
#[derive(Debug, Clone, PartialEq)]
pub struct Redemption {
    /// Opened live, or ended when the presentation was refused.
    pub session: Session,
    pub refresh: Option<RefreshToken>,
    /// Opened only while the browser's session it is part of is live.
    pub within_browser_session: bool,
}

/// A passkey's sign-in: its challenge answered once, the passkey's counter moved on, and the
/// browser's realm session opened, each only if the one before took place.
#[derive(Debug, Clone)]
pub struct PasskeyUse {
    pub nonce: String,
    pub challenge_expires_at: DateTime<Utc>,
    pub authenticator_id: String,
    /// The counter the assertion reported, and the passkey's data with its flags now.
    pub counter: i64,
    pub data: String,
    pub at: DateTime<Utc>,
    pub session: browser::BrowserSession,
}

/// What a passkey's sign-in did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasskeyUsed {
    SignedIn,
    /// The challenge was answered before: nothing was written.
    ChallengeUsed,
    /// Another assertion moved the counter to this one or past it: the challenge is used up,
    /// nothing else was written.
    CounterBehind,
}

/// What a code's redemption did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redeemed {
    /// The session is open (or, for a refused presentation, recorded ended).
    Opened,
    /// The code was presented before: nothing was written.
    Reused,
    /// The browser's session ended meanwhile: nothing was written.
    SignedOut,
}

#[derive(Debug)]
enum Job {
    Event(QueuedEvent, oneshot::Sender<Result<(), String>>),
    /// Answers whether the token was still unexchanged (and is now exchanged).
    Rotation(Box<Rotation>, oneshot::Sender<Result<bool, String>>),
    /// Answers whether the exchange stands: its grant was still not withdrawn.
    Exchange(Box<ExchangeRecord>, oneshot::Sender<Result<bool, String>>),
    Authorization(Box<Authorized>, oneshot::Sender<Result<(), String>>),
    Redemption(Box<Redemption>, oneshot::Sender<Result<Redeemed, String>>),
    Passkey(Box<PasskeyUse>, oneshot::Sender<Result<PasskeyUsed, String>>),
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

    /// Records the authorization, returning once committed.
    pub async fn authorize(&self, authorization: Authorized) -> anyhow::Result<()> {
        let (reply, done) = oneshot::channel();
        self.sender.send(Job::Authorization(Box::new(authorization), reply)).await.map_err(|_| stopped())?;
        done.await?.map_err(|error| anyhow::anyhow!("cannot record the authorization: {error}"))
    }

    /// Records a passkey's sign-in, returning once committed.
    pub async fn use_passkey(&self, passkey: PasskeyUse) -> anyhow::Result<PasskeyUsed> {
        let (reply, done) = oneshot::channel();
        self.sender.send(Job::Passkey(Box::new(passkey), reply)).await.map_err(|_| stopped())?;
        done.await?.map_err(|error| anyhow::anyhow!("cannot record the passkey's sign-in: {error}"))
    }

    /// Opens the code's client session and stores the refresh token issued with it, returning once
    /// committed.
    pub async fn redeem(&self, redemption: Redemption) -> anyhow::Result<Redeemed> {
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
    let mut passkeys = outcome.as_ref().map(|done| done.passkeys.iter().copied()).ok();
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
                let answer = match (redeemed.as_mut(), &outcome) {
                    (Some(done), _) => Ok(done.next().unwrap_or(Redeemed::Reused)),
                    (None, Err(error)) => Err(error.clone()),
                    (None, Ok(_)) => Ok(Redeemed::Reused),
                };
                let _ = reply.send(answer);
            }
            Job::Passkey(_, reply) => {
                let answer = match (passkeys.as_mut(), &outcome) {
                    (Some(done), _) => Ok(done.next().unwrap_or(PasskeyUsed::ChallengeUsed)),
                    (None, Err(error)) => Err(error.clone()),
                    (None, Ok(_)) => Ok(PasskeyUsed::ChallengeUsed),
                };
                let _ = reply.send(answer);
            }
        }
    }
}

/// For each rotation, exchange and redemption of a batch, in order, whether it took place.
#[derive(Debug, Default)]
struct Written {
    rotated: Vec<bool>,
    exchanges: Vec<bool>,
    redeemed: Vec<Redeemed>,
    passkeys: Vec<PasskeyUsed>,
}

/// Writes the batch in one transaction. The whole batch costs a handful of statements: one
/// exchange of every presented refresh token, one insert of the next tokens, one touch of the
/// sessions, one update of each grant tokens were issued under, one hold on the browser sessions
/// codes open sessions in, and the opened sessions, the approved addresses, the trail rows and the
/// events in rows of 32.
async fn write(store: &Store, batch: &[Job]) -> Result<Written, Error> {
    let (mut published, mut rotations, mut exchanges, mut authorizations, mut redemptions) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut passkeys = Vec::new();
    for job in batch {
        match job {
            Job::Event(event, _) => published.push(event),
            Job::Rotation(rotation, _) => rotations.push(rotation.as_ref()),
            Job::Exchange(record, _) => exchanges.push(record.as_ref()),
            Job::Authorization(authorization, _) => authorizations.push(authorization.as_ref()),
            Job::Redemption(redemption, _) => redemptions.push(redemption.as_ref()),
            Job::Passkey(passkey, _) => passkeys.push(passkey.as_ref()),
        }
    }
    let mut tx = store.begin().await?;
    let redeemed = redeem(&mut tx, &redemptions).await?;
    let mut used = Vec::with_capacity(passkeys.len());
    for passkey in passkeys {
        used.push(use_passkey(&mut tx, passkey).await?);
    }
    let approvals: Vec<(&str, &str)> =
        authorizations.iter().map(|a| (a.approval.0.as_str(), a.approval.1.as_str())).collect();
    if let Some(at) = authorizations.iter().map(|a| a.event.at).max() {
        lockout::approve_all(&mut tx, &approvals, at).await?;
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
        .chain(
            redemptions
                .iter()
                .zip(&redeemed)
                .filter(|(_, done)| **done == Redeemed::Opened)
                .filter_map(|(r, _)| r.refresh.as_ref()),
        )
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
    Ok(Written { rotated, exchanges: recorded, redeemed, passkeys: used })
}

async fn use_passkey(tx: &mut super::Transaction, passkey: &PasskeyUse) -> Result<PasskeyUsed, Error> {
    if !super::assertions::record_challenge_once(&mut **tx, &passkey.nonce, passkey.challenge_expires_at).await? {
        return Ok(PasskeyUsed::ChallengeUsed);
    }
    let moved = super::authenticators::use_passkey(
        &mut **tx,
        &passkey.authenticator_id,
        passkey.counter,
        &passkey.data,
        passkey.at,
    );
    if !moved.await? {
        return Ok(PasskeyUsed::CounterBehind);
    }
    browser::insert_session(&mut **tx, &passkey.session).await?;
    Ok(PasskeyUsed::SignedIn)
}

/// Opens the sessions of the codes redeemed, each once: a session already there, or named earlier
/// in the batch, is a code presented again. A session is opened within its browser's session only
/// while that one is live; the browser sessions are held (a write on their rows) until the commit,
/// so that a sign-out either comes first and is seen, or comes after and ends the sessions opened.
async fn redeem(tx: &mut super::Transaction, redemptions: &[&Redemption]) -> Result<Vec<Redeemed>, Error> {
    if redemptions.is_empty() {
        return Ok(Vec::new());
    }
    let within: Vec<&str> = redemptions
        .iter()
        .filter(|r| r.within_browser_session)
        .filter_map(|r| r.session.browser_session_id.as_deref())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let live = browser::hold_live(&mut **tx, &within).await?;
    let mut named = std::collections::HashSet::new();
    let mut outcome = Vec::with_capacity(redemptions.len());
    let mut opening = Vec::new();
    for redemption in redemptions {
        let session = &redemption.session;
        let signed_in = session.browser_session_id.as_deref().is_some_and(|id| live.contains(id));
        outcome.push(if !named.insert(session.id.as_str()) {
            Redeemed::Reused
        } else if redemption.within_browser_session && !signed_in {
            Redeemed::SignedOut
        } else {
            opening.push(session);
            Redeemed::Opened
        });
    }
    let mut opened = std::collections::HashSet::new();
    for rows in opening.chunks(ROWS_PER_STATEMENT) {
        opened.extend(sessions::insert_new_rows(&mut **tx, rows).await?);
    }
    for (redemption, done) in redemptions.iter().zip(outcome.iter_mut()) {
        if *done == Redeemed::Opened && !opened.contains(redemption.session.id.as_str()) {
            *done = Redeemed::Reused;
        }
    }
    Ok(outcome)
}
