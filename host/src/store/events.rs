//! The event outbox: every event is written in the transaction of the change it announces
//! (DESIGN principle 6) and delivered later by the webhook worker.

use serde_json::Value;

use crate::ids::new_guid;

/// One event, as the SPEC's envelope names its parts.
#[derive(Debug, Clone, PartialEq)]
pub struct Event<'a> {
    pub event_type: &'static str,
    pub account_id: &'a str,
    pub realm_id: Option<&'a str>,
    pub client_id: Option<&'a str>,
    pub data: Value,
}

/// Writes the event to the outbox; its id stays the same across every retry and replay.
pub async fn publish(tx: &mut super::Connection, event: Event<'_>, at: i64) -> Result<String, sqlx::Error> {
    let id = new_guid();
    sqlx::query(
        "INSERT INTO event_outbox (id, event_type, account_id, realm_id, client_id, created_at, data) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&id)
    .bind(event.event_type)
    .bind(event.account_id)
    .bind(event.realm_id)
    .bind(event.client_id)
    .bind(at)
    .bind(event.data.to_string())
    .execute(&mut *tx)
    .await?;
    Ok(id)
}

/// A stored event.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StoredEvent {
    pub id: String,
    pub event_type: String,
    pub account_id: Option<String>,
    pub realm_id: Option<String>,
    pub client_id: Option<String>,
    pub created_at: i64,
    pub data: String,
}

/// An event handed to the [`EventQueue`].
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedEvent {
    pub event_type: &'static str,
    pub account_id: String,
    pub realm_id: Option<String>,
    pub client_id: Option<String>,
    pub data: Value,
    pub at: i64,
}

type Reply = tokio::sync::oneshot::Sender<Result<(), String>>;

/// Group commit for events that stand alone (a client-credentials sign-in changes nothing else):
/// events arriving together are written in one transaction, and each caller learns only after
/// the commit that its event is stored. Durability is that of a transaction per event; the cost is
/// one commit per batch.
#[derive(Debug, Clone)]
pub struct EventQueue {
    sender: tokio::sync::mpsc::Sender<(QueuedEvent, Reply)>,
}

/// Most events one transaction writes.
const BATCH: usize = 128;

impl EventQueue {
    pub fn start(store: super::Store) -> (Self, tokio::task::JoinHandle<()>) {
        let (sender, mut receiver) = tokio::sync::mpsc::channel::<(QueuedEvent, Reply)>(4096);
        let writer = tokio::spawn(async move {
            while let Some(first) = receiver.recv().await {
                let mut batch = vec![first];
                while batch.len() < BATCH {
                    match receiver.try_recv() {
                        Ok(next) => batch.push(next),
                        Err(_) => break,
                    }
                }
                let outcome = write_batch(&store, &batch).await.map_err(|e| e.to_string());
                if let Err(error) = &outcome {
                    tracing::error!(%error, events = batch.len(), "cannot store events");
                }
                for (_, reply) in batch {
                    let _ = reply.send(outcome.clone());
                }
            }
        });
        (Self { sender }, writer)
    }

    /// Stores the event, returning once it is committed.
    pub async fn publish(&self, event: QueuedEvent) -> anyhow::Result<()> {
        let (reply, stored) = tokio::sync::oneshot::channel();
        self.sender.send((event, reply)).await.map_err(|_| anyhow::anyhow!("the event writer has stopped"))?;
        stored.await?.map_err(|error| anyhow::anyhow!("cannot store the event: {error}"))
    }
}

async fn write_batch(store: &super::Store, batch: &[(QueuedEvent, Reply)]) -> Result<(), sqlx::Error> {
    let mut tx = store.begin().await?;
    for (event, _) in batch {
        let owned = Event {
            event_type: event.event_type,
            account_id: &event.account_id,
            realm_id: event.realm_id.as_deref(),
            client_id: event.client_id.as_deref(),
            data: event.data.clone(),
        };
        publish(&mut tx, owned, event.at).await?;
    }
    tx.commit().await
}
