//! Change notifications between hosts sharing one PostgreSQL database: a committing transaction
//! announces what it made stale, and every host drops it from its caches.

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::PgListener;

use super::Error;
use super::{Backend, Connection, Store};
use crate::backoff::Backoff;
use crate::cache::{Caches, Invalidation};

const CHANNEL: &str = "castellan_changes";

/// Announces `what` to the other hosts when the surrounding transaction commits (PostgreSQL's
/// `NOTIFY` is transactional). Nothing to do on SQLite, which one host owns.
pub async fn announce(store: &Store, tx: &mut Connection, what: &Invalidation) -> Result<(), Error> {
    if store.backend() == Backend::Postgres {
        sqlx::query("SELECT 1 AS sent FROM (SELECT pg_notify($1, $2)) AS notified")
            .bind(CHANNEL)
            .bind(what.encode())
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

/// Keeps `caches` exact while the database is shared: applies every notification, and bypasses
/// and empties the caches whenever the listening connection is down (notifications may be lost).
pub fn follow(store: &Store, caches: Arc<Caches>) -> Option<tokio::task::JoinHandle<()>> {
    if !store.is_shared() {
        return None;
    }
    let url = store.url.clone();
    Some(tokio::spawn(async move {
        let mut backoff = Backoff::new("change notifications", Duration::from_secs(1), Duration::from_secs(30));
        loop {
            match listen(&url).await {
                Ok(mut listener) => {
                    backoff.succeeded();
                    caches.reset(true);
                    while let Ok(Some(notification)) = listener.try_recv().await {
                        if let Some(what) = Invalidation::decode(notification.payload()) {
                            caches.apply(&what);
                        }
                    }
                    tracing::warn!("change notifications interrupted; caches bypassed until they resume");
                    caches.reset(false);
                }
                Err(error) => {
                    caches.reset(false);
                    tokio::time::sleep(backoff.failed(&error)).await;
                }
            }
        }
    }))
}

async fn listen(url: &str) -> Result<PgListener, Error> {
    let mut listener = PgListener::connect(url).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}
