//! The connection to the database: which backend a URL names, the pools (one for reads, one
//! writer on SQLite), migrations, and transactions that roll back unless committed.

use std::str::FromStr;
use std::time::Duration;

use anyhow::Context as _;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Connection as _, Executor as _};

use super::{Connection, Error, changes, readings};

/// A transaction that may write: a connection (`&mut *tx`) for the store's functions. Dropped
/// without [`Transaction::commit`], it rolls back.
#[derive(Debug)]
pub struct Transaction(sqlx::Transaction<'static, sqlx::Any>);

impl Transaction {
    pub async fn commit(self) -> Result<(), Error> {
        Ok(self.0.commit().await?)
    }

    pub async fn rollback(self) -> Result<(), Error> {
        Ok(self.0.rollback().await?)
    }
}

impl std::ops::Deref for Transaction {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.0
    }
}

impl std::ops::DerefMut for Transaction {
    fn deref_mut(&mut self) -> &mut Connection {
        &mut self.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn of_url(url: &str) -> Self {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") { Self::Postgres } else { Self::Sqlite }
    }

    /// The backend a connection (or a transaction, through `&mut *tx`) talks to.
    pub fn of(connection: &Connection) -> Self {
        if connection.backend_name() == "PostgreSQL" { Self::Postgres } else { Self::Sqlite }
    }

    /// The row lock a claim takes so that hosts sharing a PostgreSQL database never claim one row
    /// twice; SQLite has a single writer and needs none.
    pub fn claim_lock(self) -> &'static str {
        match self {
            Self::Postgres => " FOR UPDATE SKIP LOCKED",
            Self::Sqlite => "",
        }
    }
}

/// How long a pooled connection may sit idle before it is tested on its way out of the pool.
const IDLE_BEFORE_TEST: Duration = Duration::from_secs(5);

/// The database: a pool, and which backend it is.
#[derive(Debug, Clone)]
pub struct Store {
    /// Reads (and, on PostgreSQL, everything).
    pool: AnyPool,
    /// Writes: on SQLite a pool of one connection, on PostgreSQL the same pool.
    writer: AnyPool,
    backend: Backend,
    pub(super) url: String,
    /// How long transactions waited for their connection.
    waits: std::sync::Arc<readings::Waits>,
    /// This host among those following the changes (PostgreSQL).
    pub(super) followers: std::sync::Arc<changes::Followers>,
}

impl Store {
    /// Connects; a SQLite file (and its folder) is created when missing and put in WAL mode.
    pub async fn connect(url: &str, max_connections: u32) -> anyhow::Result<Self> {
        sqlx::any::install_default_drivers();
        let backend = Backend::of_url(url);
        let url = match backend {
            Backend::Postgres => url.to_owned(),
            Backend::Sqlite => sqlite_url(url)?,
        };
        let options = AnyConnectOptions::from_str(&url).context("invalid database URL")?;
        let open = |connections: u32| {
            AnyPoolOptions::new()
                .max_connections(connections)
                .acquire_timeout(Duration::from_secs(5))
                // A connection is tested (one round trip) only when it has been idle long enough
                // to have been dropped by the server or a network device; one in steady use was
                // just tested by the pool when it was released.
                .test_before_acquire(false)
                .before_acquire(|connection, meta| {
                    Box::pin(async move {
                        if meta.idle_for >= IDLE_BEFORE_TEST {
                            connection.ping().await?;
                        }
                        Ok(true)
                    })
                })
                .after_connect(move |connection, _| {
                    Box::pin(async move {
                        if backend == Backend::Sqlite {
                            // WAL lets readers run beside the one writer; NORMAL is durable in WAL
                            // mode except for the last transactions on power loss.
                            for pragma in [
                                "PRAGMA journal_mode = WAL",
                                "PRAGMA synchronous = NORMAL",
                                "PRAGMA foreign_keys = ON",
                                "PRAGMA busy_timeout = 5000",
                            ] {
                                connection.execute(pragma).await?;
                            }
                        }
                        Ok(())
                    })
                })
                .connect_with(options.clone())
        };
        let pool = open(max_connections)
            .await
            .with_context(|| format!("cannot connect to the database at {}", redact(&url)))?;
        // SQLite takes one writer at a time. Writers queue for the one write connection in
        // order, instead of colliding on the file lock and sleeping in SQLite's busy handler.
        let writer = match backend {
            Backend::Sqlite => open(1).await.context("cannot open the SQLite write connection")?,
            Backend::Postgres => pool.clone(),
        };
        Ok(Self { pool, writer, backend, url, waits: std::sync::Arc::default(), followers: std::sync::Arc::default() })
    }

    /// The migrations of this backend this release knows.
    fn migrator(&self) -> sqlx::migrate::Migrator {
        match self.backend {
            Backend::Sqlite => sqlx::migrate!("../migrations/sqlite"),
            Backend::Postgres => sqlx::migrate!("../migrations/postgres"),
        }
    }

    /// Applies every migration of this backend not yet applied.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        self.migrator().run(&self.writer).await.context("database migration failed")
    }

    /// Refuses a schema other than the one this release knows, saying what to run: an older one
    /// (migrations it has not applied: `castellan migrate`) or a newer one (migrations a later
    /// release applied). Changes nothing.
    pub async fn check_schema(&self) -> anyhow::Result<()> {
        let known: std::collections::BTreeSet<i64> =
            self.migrator().iter().filter(|m| m.migration_type.is_up_migration()).map(|m| m.version).collect();
        let read = sqlx::query_scalar::<_, i64>("SELECT version FROM _sqlx_migrations WHERE success")
            .fetch_all(&self.pool)
            .await;
        let applied: std::collections::BTreeSet<i64> = match read {
            Ok(versions) => versions.into_iter().collect(),
            // No table of migrations: nothing was ever applied.
            Err(sqlx::Error::Database(error)) if error.message().contains("_sqlx_migrations") => Default::default(),
            Err(error) => return Err(error).context("cannot read which migrations the database has"),
        };
        if let Some(newest) = applied.difference(&known).max() {
            anyhow::bail!(
                "the database's schema is newer than this release: migration {newest} is not one it knows; \
                 run a release that knows it"
            );
        }
        let missing: Vec<i64> = known.difference(&applied).copied().collect();
        if let (Some(first), Some(last)) = (missing.first(), missing.last()) {
            anyhow::bail!(
                "the database's schema is older than this release: migrations {first:04} to {last:04} are not \
                 applied; run `castellan migrate` with the same settings, then start the service"
            );
        }
        Ok(())
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The database's product name, as operators know it: `SQLite` or `PostgreSQL`.
    pub fn product(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }

    /// Whether other processes may change the database (PostgreSQL), so that what a host keeps in
    /// memory must follow their change notifications.
    pub fn is_shared(&self) -> bool {
        self.backend == Backend::Postgres
    }

    /// Returns once this host hears the deployment's change notifications.
    pub async fn until_hearing_changes(&self) {
        if self.is_shared() {
            self.followers.until_listening().await;
        }
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// The pool for statements that write outside a transaction (on SQLite, the one write
    /// connection). Never use it while holding a transaction from [`Store::begin`]: on SQLite that
    /// is the same connection.
    pub fn writer(&self) -> &AnyPool {
        &self.writer
    }

    /// A transaction that may write.
    pub async fn begin(&self) -> Result<Transaction, Error> {
        Ok(Transaction(self.waits.time(self.writer.begin()).await?))
    }

    /// How long transactions waited for their connection, so far.
    pub fn waits(&self) -> readings::Waited {
        self.waits.so_far()
    }

    /// A transaction that claims rows of a queue (events to fan out, attempts due) in the order of
    /// its partial index. On PostgreSQL the claim is planned as an ordered index scan: a bitmap
    /// scan, which the planner picks for a young table, never marks the index entries of rows
    /// already taken as dead, so every claim would read all of them again until the next vacuum
    /// (thousands per claim under load); an index scan marks them and stops at the batch size.
    pub async fn begin_claim(&self) -> Result<Transaction, Error> {
        let mut tx = self.begin().await?;
        if self.backend == Backend::Postgres {
            sqlx::query("SET LOCAL enable_bitmapscan = off").execute(&mut *tx).await?;
        }
        Ok(tx)
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> Result<(), Error> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    pub async fn close(&self) {
        self.pool.close().await;
        self.writer.close().await;
    }
}

/// `sqlite://path?mode=rwc` for a `sqlite:` URL or a plain path, creating the file's folder.
fn sqlite_url(url: &str) -> anyhow::Result<String> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")).unwrap_or(url);
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    if path != ":memory:"
        && let Some(parent) = std::path::Path::new(path).parent().filter(|p| !p.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the database folder {}", parent.display()))?;
    }
    let query = if query.is_empty() { "mode=rwc".to_owned() } else { query.to_owned() };
    Ok(format!("sqlite://{path}?{query}"))
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_select_the_backend() {
        assert_eq!(Backend::of_url("postgres://h/db"), Backend::Postgres);
        assert_eq!(Backend::of_url("postgresql://h/db"), Backend::Postgres);
        assert_eq!(Backend::of_url("sqlite://data/x.db"), Backend::Sqlite);
        assert_eq!(Backend::of_url("./x.db"), Backend::Sqlite);
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(redact("postgres://u:pw@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact("postgres://h/db"), "postgres://h/db");
    }
}
