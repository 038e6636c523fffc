//! Persistence on SQLite (embedded default) or PostgreSQL through sqlx's runtime-selected driver.
//!
//! SQL is written once with `$1` placeholders, `RETURNING` and `ON CONFLICT`, which both backends
//! understand; what must differ per backend lives here and nowhere else. Instants are stored as
//! milliseconds since the epoch and lists as JSON text, so every column decodes the same way on
//! both backends.

pub mod access_log;
pub mod accounts;
pub mod analyses;
pub mod assertions;
pub mod browser;
pub mod captures;
pub mod changes;
pub mod clients;
pub mod connections;
pub mod consents;
pub mod console_sessions;
pub mod consumers;
pub mod delegation;
pub mod deliveries;
pub mod devices;
mod error;
pub mod events;
pub mod identity_providers;
pub mod imports;
pub mod instance_settings;
pub mod invitations;
pub mod lockout;
pub mod memberships;
pub mod notifications;
pub mod organizations;
pub mod page;
pub mod push;
pub mod readings;
pub mod realm_roles;
pub mod realms;
pub mod recovery;
pub mod registration;
pub mod resource_servers;
pub mod roles;
pub mod scopes;
pub mod secrets;
pub mod session_reads;
pub mod sessions;
pub mod sign_ups;
pub mod signing_keys;
pub mod suspensions;
pub mod threat_summary;
pub mod threats;
pub mod trail;
pub mod users;
pub mod webhooks;
pub mod write_queue;

pub use error::{Error, is_unreachable};

use std::str::FromStr;
use std::time::Duration;

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Connection as _, Executor as _};

pub use sqlx::AnyConnection as Connection;

/// An enum stored and shown by its variant names (`Active`, `Confidential`, …).
macro_rules! text_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[$vmeta:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        $vis enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            pub const NAMES: &'static [(&'static str, Self)] = &[$((stringify!($variant), Self::$variant)),+];

            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => stringify!($variant)),+ }
            }
        }

        impl TryFrom<String> for $name {
            type Error = String;
            fn try_from(text: String) -> Result<Self, String> {
                Self::NAMES
                    .iter()
                    .find(|(name, _)| *name == text)
                    .map(|(_, value)| *value)
                    .ok_or_else(|| format!("unknown {} {text}", stringify!($name)))
            }
        }
    };
}
pub(crate) use text_enum;

text_enum! {
    /// Whether a realm or client is in service.
    pub enum Status {
        Active,
        Disabled,
    }
}

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
    url: String,
    /// How long transactions waited for their connection.
    waits: std::sync::Arc<readings::Waits>,
    /// This host among those following the changes (PostgreSQL).
    followers: std::sync::Arc<changes::Followers>,
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

    /// Applies every migration of this backend not yet applied.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        let migrator = match self.backend {
            Backend::Sqlite => sqlx::migrate!("../migrations/sqlite"),
            Backend::Postgres => sqlx::migrate!("../migrations/postgres"),
        };
        migrator.run(&self.writer).await.context("database migration failed")
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

/// Rows per multi-row `INSERT`. One statement per row costs a round trip each; SQLite resolves
/// bound parameter names in time linear in their number, so one huge statement is quadratic.
/// 32 rows is near the best of both (measured on the access log).
pub const ROWS_PER_STATEMENT: usize = 32;

/// The numbered placeholders of an `IN (…)` list: `$2, $3, $4` for 3 values from `$2`.
pub fn list_placeholders(first: usize, count: usize) -> String {
    (first..first + count).map(|n| format!("${n}")).collect::<Vec<_>>().join(", ")
}

/// The `VALUES` list of a multi-row insert: `($1, $2), ($3, $4)` for 2 rows of 2 columns.
pub fn values_placeholders(rows: usize, per_row: usize) -> String {
    (0..rows)
        .map(|row| {
            let numbers: Vec<String> = (1..=per_row).map(|i| format!("${}", row * per_row + i)).collect();
            format!("({})", numbers.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
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

/// A boolean column. PostgreSQL stores `BOOLEAN`; SQLite stores `INTEGER` 0/1, because the
/// runtime-selected driver cannot map SQLite's `BOOLEAN`. Fields read it with
/// `#[sqlx(try_from = "Flag")]` and stay plain `bool`; binding a `bool` works on both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag(pub bool);

impl From<Flag> for bool {
    fn from(flag: Flag) -> Self {
        flag.0
    }
}

impl sqlx::Type<sqlx::Any> for Flag {
    fn type_info() -> sqlx::any::AnyTypeInfo {
        <bool as sqlx::Type<sqlx::Any>>::type_info()
    }

    fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
        ty.kind() == sqlx::any::AnyTypeInfoKind::Bool || ty.kind().is_integer()
    }
}

impl<'r> sqlx::Decode<'r, sqlx::Any> for Flag {
    fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        match <i64 as sqlx::Decode<sqlx::Any>>::decode(value.clone()) {
            Ok(number) => Ok(Self(number != 0)),
            Err(_) => <bool as sqlx::Decode<sqlx::Any>>::decode(value).map(Self),
        }
    }
}

/// A list column as stored: JSON text on both backends. Rows read it into a `Vec<String>` with
/// `#[sqlx(try_from = "super::JsonList")]`; a malformed value (never written by us) reads as empty.
#[derive(Debug)]
pub struct JsonList(String);

/// A list column that may be NULL, read into an `Option<Vec<String>>`.
#[derive(Debug)]
pub struct OptionalJsonList(Option<String>);

impl From<JsonList> for Vec<String> {
    fn from(list: JsonList) -> Self {
        from_json_list(&list.0)
    }
}

impl From<OptionalJsonList> for Option<Vec<String>> {
    fn from(list: OptionalJsonList) -> Self {
        list.0.as_deref().map(from_json_list)
    }
}

/// The identifier types read and bind as their text.
macro_rules! text_id {
    ($($id:ty),+) => {$(
        impl sqlx::Type<sqlx::Any> for $id {
            fn type_info() -> sqlx::any::AnyTypeInfo {
                <String as sqlx::Type<sqlx::Any>>::type_info()
            }

            fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
                <String as sqlx::Type<sqlx::Any>>::compatible(ty)
            }
        }

        impl<'r> sqlx::Decode<'r, sqlx::Any> for $id {
            fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                <String as sqlx::Decode<sqlx::Any>>::decode(value).map(<$id>::known)
            }
        }

        impl<'q> sqlx::Encode<'q, sqlx::Any> for $id {
            fn encode_by_ref(
                &self,
                buf: &mut <sqlx::Any as sqlx::Database>::ArgumentBuffer,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <String as sqlx::Encode<'q, sqlx::Any>>::encode(self.as_str().to_owned(), buf)
            }
        }
    )+};
}

text_id!(
    crate::kernel::ids::AccountId,
    crate::kernel::ids::RealmId,
    crate::kernel::ids::ClientId,
    crate::kernel::ids::IdentityProviderId,
    crate::kernel::ids::ConnectionProviderId,
    crate::kernel::ids::ConnectionId,
    crate::kernel::ids::UserId,
    crate::kernel::ids::SessionId,
    crate::kernel::ids::BrowserSessionId,
    crate::kernel::ids::RefreshTokenId,
    crate::kernel::ids::CredentialId,
    crate::kernel::ids::OrganizationId,
    crate::kernel::ids::GrantId,
    crate::kernel::ids::ExchangeId,
    crate::kernel::ids::EventId,
    crate::kernel::ids::EndpointId,
    crate::kernel::ids::AttemptId,
    crate::kernel::ids::IncidentId,
    crate::kernel::ids::MeasureId,
    crate::kernel::ids::KeyId,
    crate::kernel::ids::DeviceId,
    crate::kernel::ids::PushRequestId,
    crate::kernel::ids::RoleId,
    crate::kernel::ids::GroupId,
    crate::kernel::ids::AccountRoleId,
    crate::kernel::ids::ScopeId,
    crate::kernel::ids::ResourceServerId,
    crate::kernel::ids::ConsumerId,
    crate::kernel::ids::InvitationId,
    crate::kernel::ids::CaptureId,
    crate::kernel::ids::NotificationId,
    crate::kernel::ids::ResetId,
    crate::kernel::ids::SignUpId,
    crate::kernel::ids::InitialAccessTokenId,
    crate::kernel::ids::SuspensionId,
    crate::kernel::ids::ImportId,
    crate::kernel::ids::AnalysisId,
    crate::kernel::ids::AnalysisActionId
);

/// An instant column as stored: milliseconds since the Unix epoch, an integer on both backends.
/// Rows read it into a `DateTime<Utc>` with `#[sqlx(try_from = "super::Millis")]`; a value out of
/// chrono's range (never written by us) reads as the epoch.
#[derive(Debug)]
pub struct Millis(i64);

/// An instant column that may be NULL, read into an `Option<DateTime<Utc>>`.
#[derive(Debug)]
pub struct OptionalMillis(Option<i64>);

fn instant_of(millis: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(millis).unwrap_or_default()
}

impl From<Millis> for DateTime<Utc> {
    fn from(millis: Millis) -> Self {
        instant_of(millis.0)
    }
}

impl From<OptionalMillis> for Option<DateTime<Utc>> {
    fn from(millis: OptionalMillis) -> Self {
        millis.0.map(instant_of)
    }
}

/// An instant (or an optional one) as its column stores it.
trait Stored {
    type Column;
    fn stored(self) -> Self::Column;
}

impl Stored for DateTime<Utc> {
    type Column = i64;
    fn stored(self) -> i64 {
        self.timestamp_millis()
    }
}

impl Stored for Option<DateTime<Utc>> {
    type Column = Option<i64>;
    fn stored(self) -> Option<i64> {
        self.map(|at| at.timestamp_millis())
    }
}

/// What to bind for an instant column: `.bind(millis(session.created_at))`.
fn millis<T: Stored>(at: T) -> T::Column {
    at.stored()
}

/// The column types that read through the driver's own decoding of a base type: `Name(read) as
/// base`, where `read` is the base type or an `Option` of it.
macro_rules! stored_column {
    ($($name:ident($read:ty) as $base:ty),+ $(,)?) => {$(
        impl sqlx::Type<sqlx::Any> for $name {
            fn type_info() -> sqlx::any::AnyTypeInfo {
                <$base as sqlx::Type<sqlx::Any>>::type_info()
            }

            fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
                <$base as sqlx::Type<sqlx::Any>>::compatible(ty)
            }
        }

        impl<'r> sqlx::Decode<'r, sqlx::Any> for $name {
            fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                <$read as sqlx::Decode<sqlx::Any>>::decode(value).map(Self)
            }
        }
    )+};
}

stored_column!(
    Millis(i64) as i64,
    OptionalMillis(Option<i64>) as i64,
    JsonList(String) as String,
    OptionalJsonList(Option<String>) as String,
);

/// A list as its column stores it.
fn to_json_list(items: &[String]) -> String {
    serde_json::Value::from(items).to_string()
}

fn from_json_list(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_number_rows_then_columns() {
        assert_eq!(values_placeholders(2, 3), "($1, $2, $3), ($4, $5, $6)");
        assert_eq!(list_placeholders(2, 3), "$2, $3, $4");
    }

    #[test]
    fn urls_select_the_backend() {
        assert_eq!(Backend::of_url("postgres://h/db"), Backend::Postgres);
        assert_eq!(Backend::of_url("postgresql://h/db"), Backend::Postgres);
        assert_eq!(Backend::of_url("sqlite://data/x.db"), Backend::Sqlite);
        assert_eq!(Backend::of_url("./x.db"), Backend::Sqlite);
    }

    #[test]
    fn instants_are_stored_to_the_millisecond() {
        let at = DateTime::from_timestamp_millis(1_763_812_345_678).unwrap();
        assert_eq!(millis(at), 1_763_812_345_678);
        assert_eq!(millis(Some(at)), Some(1_763_812_345_678));
        assert_eq!(millis(None::<DateTime<Utc>>), None);
        assert_eq!(DateTime::<Utc>::from(Millis(1_763_812_345_678)), at);
        assert_eq!(Option::<DateTime<Utc>>::from(OptionalMillis(None)), None);
        assert_eq!(DateTime::<Utc>::from(Millis(i64::MAX)), DateTime::UNIX_EPOCH, "out of range reads as the epoch");
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(redact("postgres://u:pw@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact("postgres://h/db"), "postgres://h/db");
    }
}
