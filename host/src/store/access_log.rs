//! The access log: every use of a credential at the admin API, accepted or refused.
//!
//! Rows are written by one background writer in batches, so that the request path never waits
//! on a database write; `flush` waits until everything recorded so far is stored.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};
use tokio::sync::{mpsc, oneshot};

use super::Error;
use super::page::{self, Listing, Page, PageRequest, Scope};
use super::{ROWS_PER_STATEMENT, Store, text_enum, values_placeholders};
use crate::kernel::ids::{AccountId, CredentialId, UserId};

text_enum! {
    pub enum AccessOutcome {
        Accepted,
        Refused,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct AccessEntry {
    pub id: String,
    #[sqlx(try_from = "super::Millis")]
    pub occurred_at: DateTime<Utc>,
    pub account_id: Option<AccountId>,
    pub credential_id: Option<CredentialId>,
    pub credential_name: Option<String>,
    pub actor_user_id: Option<UserId>,
    pub ip_address: String,
    pub method: String,
    pub path: String,
    pub status: i64,
    #[sqlx(try_from = "String")]
    pub outcome: AccessOutcome,
    pub reason: Option<String>,
}

const COLUMNS: &str = "id, occurred_at, account_id, credential_id, credential_name, actor_user_id, ip_address, method, path, status, outcome, reason";

pub const LISTING: Listing = Listing {
    table: "access_log",
    columns: COLUMNS,
    created: "occurred_at",
    tie_breaker: "id",
    search: &["credential_name", "path", "ip_address", "reason"],
    status: Some("outcome"),
    sortable: &[("occurredAt", "occurred_at"), ("status", "status"), ("createdAt", "occurred_at")],
};

/// Most rows written in one transaction.
const BATCH: usize = 256;

enum Message {
    Entry(Box<AccessEntry>),
    Flush(oneshot::Sender<()>),
}

/// The handle requests record through.
#[derive(Debug, Clone)]
pub struct AccessLog {
    sender: mpsc::Sender<Message>,
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Entry(entry) => f.debug_tuple("Entry").field(&entry.id).finish(),
            Self::Flush(_) => f.write_str("Flush"),
        }
    }
}

impl AccessLog {
    /// Starts the writer; it ends once every handle is dropped and what was recorded is stored.
    pub fn start(store: Store) -> (Self, tokio::task::JoinHandle<()>) {
        let (sender, receiver) = mpsc::channel(16 * 1024);
        let writer = tokio::spawn(write_batches(store, receiver));
        (Self { sender }, writer)
    }

    /// Queues an entry; waits only when the queue is full.
    /// How many are waiting for the writer.
    pub fn queued(&self) -> usize {
        self.sender.max_capacity() - self.sender.capacity()
    }

    pub async fn record(&self, entry: AccessEntry) {
        if self.sender.send(Message::Entry(Box::new(entry))).await.is_err() {
            tracing::error!("access log writer has stopped; an entry was not recorded");
        }
    }

    /// Waits until every entry recorded before the call is stored.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.sender.send(Message::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}

async fn write_batches(store: Store, mut receiver: mpsc::Receiver<Message>) {
    let mut entries = Vec::with_capacity(BATCH);
    let mut waiting = Vec::new();
    while let Some(first) = receiver.recv().await {
        let mut next = Some(first);
        while let Some(message) = next.take() {
            match message {
                Message::Entry(entry) => entries.push(*entry),
                Message::Flush(done) => waiting.push(done),
            }
            if entries.len() < BATCH {
                next = receiver.try_recv().ok();
            }
        }
        if !entries.is_empty() {
            if let Err(error) = insert_batch(&store, &entries).await {
                tracing::error!(%error, lost = entries.len(), "cannot write access log entries");
            }
            entries.clear();
        }
        for done in waiting.drain(..) {
            let _ = done.send(());
        }
    }
}

/// Stores a batch in one transaction.
async fn insert_batch(store: &Store, entries: &[AccessEntry]) -> Result<(), Error> {
    const PER_ROW: usize = 12;
    let mut tx = store.begin().await?;
    for rows in entries.chunks(ROWS_PER_STATEMENT) {
        let sql = format!("INSERT INTO access_log ({COLUMNS}) VALUES {}", values_placeholders(rows.len(), PER_ROW));
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for e in rows {
            query = query
                .bind(e.id.clone())
                .bind(super::millis(e.occurred_at))
                .bind(e.account_id.clone())
                .bind(e.credential_id.clone())
                .bind(e.credential_name.clone())
                .bind(e.actor_user_id.clone())
                .bind(e.ip_address.clone())
                .bind(e.method.clone())
                .bind(e.path.clone())
                .bind(e.status)
                .bind(e.outcome.as_str())
                .bind(e.reason.clone());
        }
        query.execute(&mut *tx).await?;
    }
    tx.commit().await
}

/// Removes entries older than `cutoff` (retention).
pub async fn delete_before<'c>(db: impl Executor<'c, Database = Any>, cutoff: DateTime<Utc>) -> Result<u64, Error> {
    sqlx::query("DELETE FROM access_log WHERE occurred_at < $1")
        .bind(super::millis(cutoff))
        .execute(db)
        .await
        .map(|done| done.rows_affected())
        .map_err(Error::from)
}

/// A page of an account's access log, optionally of one credential or one person.
pub async fn page(
    store: &Store,
    account_id: &str,
    credential_id: Option<&str>,
    actor_user_id: Option<&str>,
    request: &PageRequest,
) -> Result<Page<AccessEntry>, Error> {
    let scope = Scope::of("account_id", account_id)
        .and_given("credential_id", credential_id)
        .and_given("actor_user_id", actor_user_id);
    page::fetch(store.pool(), &LISTING, &scope, request).await
}
