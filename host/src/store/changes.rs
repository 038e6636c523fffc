//! Change notifications between hosts sharing one PostgreSQL database: a committing transaction
//! announces what it made stale, every host drops it from its caches and says so, and the host
//! that made the change waits for every other host before answering — so a change is in force
//! on every host of the deployment when its answer returns.
//!
//! Each host follows the changes on one listening connection named `castellan/{host}/{schema}`;
//! the hosts of a deployment are the listening connections of its schema in `pg_stat_activity`.
//! A host that leaves (its connection closes) is no longer waited for; a host whose listening
//! connection is down bypasses its caches, so it has nothing to confirm.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use sqlx::Row as _;
use sqlx::postgres::PgListener;
use tokio::sync::Notify;
use uuid::Uuid;

use super::Error;
use super::{Backend, Connection, Store};
use chrono::{DateTime, Utc};

use crate::kernel::backoff::Backoff;
use crate::kernel::ids::{AccountId, ClientId, RealmId};

/// What was made stale: `{fence} {invalidation}`.
const CHANGES: &str = "castellan_changes";
/// Which host applied which change: `{fence} {host}`.
const APPLIED: &str = "castellan_applied";
/// The name prefix of the listening connections.
const FOLLOWER: &str = "castellan/";
/// How long a change waits for the other hosts before its answer goes out regardless (logged).
const SETTLE_WITHIN: Duration = Duration::from_secs(5);
/// How often a waiting change looks again at which hosts are still connected.
const LOOK_AGAIN: Duration = Duration::from_millis(100);
/// PostgreSQL keeps the first 63 bytes of an `application_name`.
const NAME_BYTES: usize = 63;

/// This host among the followers of the deployment, and the changes it waits for.
#[derive(Debug, Default)]
pub struct Followers {
    /// `castellan/{host}/{schema}`, once the listening connection learned its schema.
    name: OnceLock<String>,
    /// Whether the listening connection is up (acknowledgements can arrive).
    listening: AtomicBool,
    /// Woken when the listening connection comes up.
    listening_up: Notify,
    /// Per change announced here and not yet applied everywhere: the hosts still to apply it.
    waiting: Mutex<HashMap<Uuid, HashSet<String>>>,
    acknowledged: Notify,
}

/// A change announced in a transaction, to wait for once it committed.
#[derive(Debug)]
#[must_use = "a change is in force everywhere only once `settled` returns"]
pub struct Fence {
    id: Uuid,
    followers: Arc<Followers>,
}

impl Drop for Fence {
    fn drop(&mut self) {
        self.followers.waiting_for().remove(&self.id);
    }
}

impl Followers {
    /// Whether the listening connection is up.
    pub(super) fn listening(&self) -> bool {
        self.listening.load(Ordering::SeqCst)
    }

    /// Returns once the listening connection is up.
    pub(super) async fn until_listening(&self) {
        loop {
            let mut woken = std::pin::pin!(self.listening_up.notified());
            woken.as_mut().enable();
            if self.listening() {
                return;
            }
            woken.await;
        }
    }

    fn waiting_for(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, HashSet<String>>> {
        self.waiting.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The hosts of this deployment in `names`, this one excepted.
    fn peers(&self, names: impl IntoIterator<Item = String>) -> HashSet<String> {
        let Some(own) = self.name.get() else { return HashSet::new() };
        let deployment = schema_of(own);
        names.into_iter().filter(|name| name != own && schema_of(name) == deployment).collect()
    }

    fn acknowledge(&self, payload: &str) {
        let Some((fence, host)) = payload.split_once(' ') else { return };
        let Ok(fence) = Uuid::parse_str(fence) else { return };
        if let Some(hosts) = self.waiting_for().get_mut(&fence)
            && hosts.remove(host)
        {
            self.acknowledged.notify_waiters();
        }
    }

    fn still_waiting(&self, fence: &Uuid) -> usize {
        self.waiting_for().get(fence).map_or(0, HashSet::len)
    }
}

/// The schema part of a follower's name (`castellan/{host}/{schema}`).
fn schema_of(name: &str) -> &str {
    name.splitn(3, '/').nth(2).unwrap_or_default()
}

/// The names of every listening connection in the database.
async fn listening(connection: &mut Connection) -> Result<Vec<String>, Error> {
    let rows = sqlx::query(
        "SELECT application_name FROM pg_stat_activity \
         WHERE datname = current_database() AND starts_with(application_name, $1)",
    )
    .bind(FOLLOWER)
    .fetch_all(&mut *connection)
    .await?;
    rows.iter().map(|row| Ok(row.try_get::<String, _>(0)?)).collect()
}

/// How many hosts serve the deployment together: this one and every other host following its
/// changes (one on SQLite, which one host owns).
pub async fn hosts(store: &Store) -> Result<usize, Error> {
    if store.backend() != Backend::Postgres {
        return Ok(1);
    }
    let mut connection = store.pool().acquire().await?;
    let names = listening(&mut connection).await?;
    Ok(store.followers.peers(names).len() + 1)
}

/// Announces `what` to the other hosts when the surrounding transaction commits (PostgreSQL's
/// `NOTIFY` is transactional) and notes which hosts must apply it. Nothing to do on SQLite, which
/// What a committed change makes stale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalidation {
    /// The credentials of an account (a secret or a custom role changed).
    Account(AccountId),
    Realm(RealmId),
    /// A client: its configuration, signing keys or role grants (realm id, client id).
    Client(RealmId, ClientId),
    /// The signing keys of a realm: its own, or a client's (a key made, rotated or revoked).
    Keys(RealmId),
    /// An access token revoked before its expiry (jti, expiry; sent as epoch milliseconds).
    Revoked(String, DateTime<Utc>),
    /// The delegation grants of a realm (one was written or withdrawn).
    Delegation(RealmId),
    /// The suspensions of a realm (one was written or lifted).
    Suspensions(RealmId),
    /// The identity providers of a realm (one was created, changed or deleted).
    Providers(RealmId),
}

impl Invalidation {
    pub fn encode(&self) -> String {
        match self {
            Self::Account(id) => format!("account:{id}"),
            Self::Realm(id) => format!("realm:{id}"),
            Self::Client(realm, client) => format!("client:{realm}/{client}"),
            Self::Keys(realm) => format!("keys:{realm}"),
            Self::Revoked(jti, expires_at) => format!("revoked:{}/{jti}", expires_at.timestamp_millis()),
            Self::Delegation(realm) => format!("delegation:{realm}"),
            Self::Suspensions(realm) => format!("suspensions:{realm}"),
            Self::Providers(realm) => format!("providers:{realm}"),
        }
    }

    pub fn decode(text: &str) -> Option<Self> {
        match text.split_once(':')? {
            ("account", id) => Some(Self::Account(AccountId::known(id))),
            ("realm", id) => Some(Self::Realm(RealmId::known(id))),
            ("delegation", realm) => Some(Self::Delegation(RealmId::known(realm))),
            ("suspensions", realm) => Some(Self::Suspensions(RealmId::known(realm))),
            ("providers", realm) => Some(Self::Providers(RealmId::known(realm))),
            ("keys", realm) => Some(Self::Keys(RealmId::known(realm))),
            ("client", pair) => pair.split_once('/').map(|(r, c)| Self::Client(RealmId::known(r), ClientId::known(c))),
            ("revoked", pair) => {
                let (expires_at, jti) = pair.split_once('/')?;
                Some(Self::Revoked(jti.to_owned(), DateTime::from_timestamp_millis(expires_at.parse().ok()?)?))
            }
            _ => None,
        }
    }
}

/// What the change follower keeps exact: a host's caches.
pub trait Follower: Send + Sync + 'static {
    /// Drops what a change made stale.
    fn apply(&self, what: &Invalidation);
    /// Empties what is kept; `synced` says whether notifications are arriving again (otherwise
    /// what is kept must be bypassed).
    fn reset(&self, synced: bool);
}

/// one host owns.
pub async fn announce(store: &Store, tx: &mut Connection, what: &Invalidation) -> Result<Option<Fence>, Error> {
    if store.backend() != Backend::Postgres {
        return Ok(None);
    }
    let followers = store.followers.clone();
    let fence = Fence { id: Uuid::new_v4(), followers: followers.clone() };
    if followers.listening.load(Ordering::SeqCst) {
        let peers = followers.peers(listening(tx).await?);
        followers.waiting_for().insert(fence.id, peers);
    }
    sqlx::query("SELECT 1 AS sent FROM (SELECT pg_notify($1, $2)) AS notified")
        .bind(CHANGES)
        .bind(format!("{} {}", fence.id, what.encode()))
        .execute(&mut *tx)
        .await?;
    Ok(Some(fence))
}

/// Returns once every other host of the deployment has applied the committed change of `fence`,
/// or has left, or after [`SETTLE_WITHIN`] (logged: a host that neither answers nor leaves).
pub async fn settled(store: &Store, fence: Option<Fence>) {
    let Some(fence) = fence else { return };
    let followers = &fence.followers;
    let deadline = Instant::now() + SETTLE_WITHIN;
    loop {
        let acknowledged = followers.acknowledged.notified();
        tokio::pin!(acknowledged);
        acknowledged.as_mut().enable();
        let left = followers.still_waiting(&fence.id);
        if left == 0 || !followers.listening.load(Ordering::SeqCst) {
            return;
        }
        if Instant::now() >= deadline {
            tracing::warn!(hosts = left, "a change was not confirmed by every host in time; answering regardless");
            return;
        }
        tokio::select! {
            () = acknowledged => {}
            () = tokio::time::sleep(LOOK_AGAIN) => forget_departed(store, &fence).await,
        }
    }
}

/// Stops waiting for hosts whose listening connection is gone.
async fn forget_departed(store: &Store, fence: &Fence) {
    let Ok(mut connection) = store.pool().acquire().await else { return };
    let Ok(present) = listening(&mut connection).await else { return };
    let present: HashSet<String> = present.into_iter().collect();
    if let Some(hosts) = fence.followers.waiting_for().get_mut(&fence.id) {
        hosts.retain(|host| present.contains(host));
    }
}

/// Keeps `caches` exact while the database is shared: applies every notification and confirms
/// it, and bypasses and empties the caches whenever the listening connection is down
/// (notifications may be lost).
pub fn follow(store: &Store, caches: Arc<dyn Follower>) -> Option<tokio::task::JoinHandle<()>> {
    if !store.is_shared() {
        return None;
    }
    let (url, followers) = (store.url.clone(), store.followers.clone());
    let host: String = Uuid::new_v4().simple().to_string().chars().take(8).collect();
    Some(tokio::spawn(async move {
        let mut backoff = Backoff::new("change notifications", Duration::from_secs(1), Duration::from_secs(30));
        loop {
            match listen(&url, &host, &followers).await {
                Ok(mut listener) => {
                    backoff.succeeded();
                    caches.reset(true);
                    followers.listening.store(true, Ordering::SeqCst);
                    followers.listening_up.notify_waiters();
                    apply_until_interrupted(&mut listener, caches.as_ref(), &followers).await;
                    tracing::warn!("change notifications interrupted; caches bypassed until they resume");
                    followers.listening.store(false, Ordering::SeqCst);
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

async fn apply_until_interrupted(listener: &mut PgListener, caches: &dyn Follower, followers: &Followers) {
    let Some(name) = followers.name.get() else { return };
    while let Ok(Some(notification)) = listener.try_recv().await {
        let payload = notification.payload();
        if notification.channel() == APPLIED {
            followers.acknowledge(payload);
            continue;
        }
        // Hosts of an earlier version announce the invalidation alone.
        let (fence, what) = match payload.split_once(' ') {
            Some((fence, what)) => (Some(fence), what),
            None => (None, payload),
        };
        if let Some(what) = Invalidation::decode(what) {
            caches.apply(&what);
        }
        if let Some(fence) = fence {
            let confirmed = sqlx::query("SELECT 1 AS sent FROM (SELECT pg_notify($1, $2)) AS notified")
                .bind(APPLIED)
                .bind(format!("{fence} {name}"))
                .execute(&mut *listener)
                .await;
            if confirmed.is_err() {
                return;
            }
        }
    }
}

/// The listening connection, named after this host and the deployment's schema once it listens
/// (a host is waited for only when it will hear the change).
async fn listen(url: &str, host: &str, followers: &Followers) -> Result<PgListener, Error> {
    let mut listener = PgListener::connect(url).await?;
    listener.listen_all([CHANGES, APPLIED]).await?;
    let schema: String = sqlx::query_scalar("SELECT current_schema()").fetch_one(&mut listener).await?;
    let mut name = format!("{FOLLOWER}{host}/{schema}");
    if name.len() > NAME_BYTES {
        let mut end = NAME_BYTES;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
    }
    sqlx::query("SELECT set_config('application_name', $1, false)").bind(&name).execute(&mut listener).await?;
    followers.name.get_or_init(|| name);
    Ok(listener)
}
