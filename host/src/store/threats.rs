//! Attack protection's records: incidents and the measures they took. Exposed passwords are
//! kept apart (`store::exposures`).

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use sqlx::{Any, Executor};

use super::analyses::MeasureFactors;
use super::page::{self, Listing, Page, PageRequest, Scope};
use super::trail::{Place, Placed, ResourceKind};
use super::{Backend, Connection, text_enum};
use super::{Error, Store};
use crate::kernel::ids::{AccountId, ClientId, IncidentId, MeasureId, RealmId, UserId};

text_enum! {
    /// The kind of an incident, which is its title.
    pub enum IncidentKind {
        CredentialStuffing,
        PasswordSpraying,
        BruteForce,
        PushBombing,
        RecoveryAbuse,
        /// Accounts asked for in bulk from one address (self sign-up).
        SignUpAbuse,
        /// Second-factor codes guessed after an account's right password.
        SecondFactorGuessing,
    }
}

text_enum! {
    pub enum IncidentSeverity {
        Low,
        Medium,
        High,
        Critical,
    }
}

impl IncidentSeverity {
    /// Orders severities from Low to Critical.
    pub fn rank(self) -> u8 {
        match self {
            Self::Low => 0,
            Self::Medium => 1,
            Self::High => 2,
            Self::Critical => 3,
        }
    }
}

text_enum! {
    pub enum IncidentStatus {
        Active,
        Resolved,
        Dismissed,
    }
}

text_enum! {
    pub enum MeasureType {
        /// Refuses one address in the realm.
        SourceBlocked,
        /// The account refuses every address it was never approved at.
        ClosedToUnknownAddresses,
        /// The account's phones receive no sign-in request.
        SignInPushesPaused,
        /// The account must change its password at next sign-in; never lapses.
        PasswordExposed,
    }
}

text_enum! {
    /// Where a measure stands at an instant.
    pub enum Standing {
        InForce,
        Lapsed,
        Lifted,
        /// An exposed password not changed since.
        ChangeRequired,
        /// An exposed password changed since.
        Resolved,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Incident {
    pub id: IncidentId,
    pub account_id: AccountId,
    pub realm_id: RealmId,
    pub client_id: Option<ClientId>,
    #[sqlx(try_from = "String")]
    pub kind: IncidentKind,
    #[sqlx(try_from = "String")]
    pub severity: IncidentSeverity,
    #[sqlx(try_from = "String")]
    pub status: IncidentStatus,
    #[sqlx(try_from = "super::Millis")]
    pub started_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub last_detection_at: DateTime<Utc>,
    #[sqlx(try_from = "super::Millis")]
    pub last_activity_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub closed_at: Option<DateTime<Utc>>,
    pub detections: i64,
    pub refused_attempts: i64,
    pub blocked_sources: i64,
    pub protected_accounts: i64,
    pub exposed_passwords: i64,
}

impl Placed for Incident {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::ThreatIncident, &self.id, &self.realm_id)
    }
}

pub(super) const INCIDENT_COLUMNS: &str = "id, account_id, realm_id, client_id, kind, severity, status, started_at, \
     last_detection_at, last_activity_at, closed_at, detections, refused_attempts, blocked_sources, \
     protected_accounts, exposed_passwords";

pub const INCIDENT_LISTING: Listing = Listing {
    table: "threat_incidents",
    columns: INCIDENT_COLUMNS,
    created: "started_at",
    tie_breaker: "id",
    search: &["kind", "severity"],
    status: Some("status"),
    sortable: &[("startedAt", "started_at"), ("lastActivityAt", "last_activity_at")],
};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Measure {
    pub id: MeasureId,
    pub incident_id: IncidentId,
    pub account_id: AccountId,
    pub realm_id: RealmId,
    #[sqlx(try_from = "String")]
    pub kind: MeasureType,
    pub target_address: Option<String>,
    pub target_user_id: Option<UserId>,
    pub country: Option<String>,
    pub network: Option<String>,
    /// Reasons in words.
    #[sqlx(try_from = "super::JsonList")]
    pub reasons: Vec<String>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub lapses_at: Option<DateTime<Utc>>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub lifted_at: Option<DateTime<Utc>>,
    pub lifted_by: Option<String>,
    #[sqlx(try_from = "super::OptionalMillis")]
    pub resolved_at: Option<DateTime<Utc>>,
    /// What the counters held when it was taken: what the incident analyst reads.
    #[sqlx(try_from = "Option<String>")]
    pub factors: MeasureFactors,
}

impl Placed for Measure {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::ThreatMeasure, &self.id, &self.realm_id).under(&self.incident_id)
    }
}

impl Measure {
    pub fn standing(&self, now: DateTime<Utc>) -> Standing {
        match (self.kind, self.lifted_at, self.resolved_at, self.lapses_at) {
            (_, Some(_), _, _) => Standing::Lifted,
            (MeasureType::PasswordExposed, None, Some(_), _) => Standing::Resolved,
            (MeasureType::PasswordExposed, None, None, _) => Standing::ChangeRequired,
            (_, None, _, Some(lapses_at)) if lapses_at <= now => Standing::Lapsed,
            _ => Standing::InForce,
        }
    }
}

pub(super) const MEASURE_COLUMNS: &str = "id, incident_id, account_id, realm_id, kind, target_address, target_user_id, \
     country, network, reasons, created_at, lapses_at, lifted_at, lifted_by, resolved_at, factors";

/// The active incident of `kind` in the realm whose latest detection is after `since`.
/// Holds, until the transaction ends, the right to record detections in a realm: attempts decided
/// at the same moment, on any host, are recorded one after another, so that they join one incident
/// and block their source once. SQLite needs no lock: its one write connection runs one
/// transaction at a time.
pub async fn serialize_detections(tx: &mut Connection, realm_id: &str) -> Result<(), Error> {
    if Backend::of(tx) == Backend::Postgres {
        sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(detections_lock(realm_id)).execute(&mut *tx).await?;
    }
    Ok(())
}

/// The advisory lock key of a realm's detections: the same on every host.
fn detections_lock(realm_id: &str) -> i64 {
    let digest = Sha256::digest(format!("threat_incidents/{realm_id}").as_bytes());
    let mut key = [0; 8];
    key.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(key)
}

/// The active incident of `kind` in a realm whose latest detection is after `since`; on
/// PostgreSQL locked until the transaction ends, so that no dismissal is undone by a detection.
pub async fn joinable(
    tx: &mut Connection,
    realm_id: &str,
    kind: IncidentKind,
    since: DateTime<Utc>,
) -> Result<Option<Incident>, Error> {
    let lock = match Backend::of(tx) {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {INCIDENT_COLUMNS} FROM threat_incidents WHERE realm_id = $1 AND kind = $2 AND status = 'Active' \
         AND last_detection_at > $3 ORDER BY last_detection_at DESC LIMIT 1{lock}"
    )))
    .bind(realm_id)
    .bind(kind.as_str())
    .bind(super::millis(since))
    .fetch_optional(&mut *tx)
    .await
    .map_err(Error::from)
}

pub async fn find_incident<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    id: &str,
) -> Result<Option<Incident>, Error> {
    let found = incidents_where(db, "id = $1", id, None).await?;
    Ok(found.into_iter().find(|incident| incident.account_id == account_id))
}

/// The incidents matching `condition`, whose `$1` is `key` and `$2`, when given, `instant`.
async fn incidents_where<'c>(
    db: impl Executor<'c, Database = Any>,
    condition: &'static str,
    key: &str,
    instant: Option<DateTime<Utc>>,
) -> Result<Vec<Incident>, Error> {
    let query = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {INCIDENT_COLUMNS} FROM threat_incidents WHERE {condition}"
    )))
    .bind(key);
    match instant {
        Some(instant) => Ok(query.bind(super::millis(instant)).fetch_all(db).await?),
        None => Ok(query.fetch_all(db).await?),
    }
}

pub async fn insert_incident<'c>(db: impl Executor<'c, Database = Any>, i: &Incident) -> Result<(), Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO threat_incidents ({INCIDENT_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
    )))
    .bind(&i.id)
    .bind(&i.account_id)
    .bind(&i.realm_id)
    .bind(&i.client_id)
    .bind(i.kind.as_str())
    .bind(i.severity.as_str())
    .bind(i.status.as_str())
    .bind(super::millis(i.started_at))
    .bind(super::millis(i.last_detection_at))
    .bind(super::millis(i.last_activity_at))
    .bind(super::millis(i.closed_at))
    .bind(i.detections)
    .bind(i.refused_attempts)
    .bind(i.blocked_sources)
    .bind(i.protected_accounts)
    .bind(i.exposed_passwords)
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// Writes what a detection changed in an incident (severity, times and counts); its status is the
/// operators' and the resolver's, never a detection's.
pub async fn update_incident<'c>(db: impl Executor<'c, Database = Any>, i: &Incident) -> Result<(), Error> {
    sqlx::query(
        "UPDATE threat_incidents SET severity = $2, last_detection_at = $3, \
         last_activity_at = CASE WHEN last_activity_at < $4 THEN $4 ELSE last_activity_at END, \
         detections = $5, blocked_sources = $6, protected_accounts = $7, exposed_passwords = $8 WHERE id = $1",
    )
    .bind(&i.id)
    .bind(i.severity.as_str())
    .bind(super::millis(i.last_detection_at))
    .bind(super::millis(i.last_activity_at))
    .bind(i.detections)
    .bind(i.blocked_sources)
    .bind(i.protected_accounts)
    .bind(i.exposed_passwords)
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// Adds attempts refused by an incident's measures, the latest at `last`.
pub async fn add_refusals<'c>(
    db: impl Executor<'c, Database = Any>,
    incident_id: &str,
    refused: i64,
    last: DateTime<Utc>,
) -> Result<(), Error> {
    sqlx::query(
        "UPDATE threat_incidents SET refused_attempts = refused_attempts + $2, \
         last_activity_at = CASE WHEN last_activity_at < $3 THEN $3 ELSE last_activity_at END WHERE id = $1",
    )
    .bind(incident_id)
    .bind(refused)
    .bind(super::millis(last))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// Whether an active incident has had no detection and no refused attempt since `quiet_since`.
pub async fn any_quiet<'c>(db: impl Executor<'c, Database = Any>, quiet_since: DateTime<Utc>) -> Result<bool, Error> {
    let found: Option<(i64,)> =
        sqlx::query_as("SELECT 1 FROM threat_incidents WHERE status = 'Active' AND last_activity_at <= $1 LIMIT 1")
            .bind(super::millis(quiet_since))
            .fetch_optional(db)
            .await?;
    Ok(found.is_some())
}

/// Resolves active incidents with no detection and no refused attempt since `quiet_since`; their
/// ids.
pub async fn resolve_quiet(
    tx: &mut super::Connection,
    quiet_since: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Vec<String>, Error> {
    let ids: Vec<(String,)> =
        sqlx::query_as("SELECT id FROM threat_incidents WHERE status = 'Active' AND last_activity_at <= $1")
            .bind(super::millis(quiet_since))
            .fetch_all(&mut *tx)
            .await?;
    for (id,) in &ids {
        sqlx::query(
            "UPDATE threat_incidents SET status = 'Resolved', closed_at = $2 WHERE id = $1 AND status = 'Active'",
        )
        .bind(id)
        .bind(super::millis(now))
        .execute(&mut *tx)
        .await?;
    }
    Ok(ids.into_iter().map(|(id,)| id).collect())
}

pub async fn dismiss<'c>(db: impl Executor<'c, Database = Any>, id: &str, now: DateTime<Utc>) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE threat_incidents SET status = 'Dismissed', closed_at = $2 WHERE id = $1 AND status = 'Active'",
    )
    .bind(id)
    .bind(super::millis(now))
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn insert_measure<'c>(db: impl Executor<'c, Database = Any>, m: &Measure) -> Result<(), Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO threat_measures ({MEASURE_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
    )))
    .bind(&m.id)
    .bind(&m.incident_id)
    .bind(&m.account_id)
    .bind(&m.realm_id)
    .bind(m.kind.as_str())
    .bind(&m.target_address)
    .bind(&m.target_user_id)
    .bind(&m.country)
    .bind(&m.network)
    .bind(super::to_json_list(&m.reasons))
    .bind(super::millis(m.created_at))
    .bind(super::millis(m.lapses_at))
    .bind(super::millis(m.lifted_at))
    .bind(&m.lifted_by)
    .bind(super::millis(m.resolved_at))
    .bind(serde_json::to_string(&m.factors).ok())
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

pub async fn measures_of_incident<'c>(
    db: impl Executor<'c, Database = Any>,
    incident_id: &str,
) -> Result<Vec<Measure>, Error> {
    measures_where(db, "incident_id = $1 ORDER BY created_at, id", incident_id, None).await
}

/// The measures matching `condition`, whose `$1` is `key` and `$2`, when given, `instant`.
async fn measures_where<'c>(
    db: impl Executor<'c, Database = Any>,
    condition: &'static str,
    key: &str,
    instant: Option<DateTime<Utc>>,
) -> Result<Vec<Measure>, Error> {
    let query =
        sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {MEASURE_COLUMNS} FROM threat_measures WHERE {condition}")))
            .bind(key);
    match instant {
        Some(instant) => Ok(query.bind(super::millis(instant)).fetch_all(db).await?),
        None => Ok(query.fetch_all(db).await?),
    }
}

pub async fn find_measure<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    id: &str,
) -> Result<Option<Measure>, Error> {
    let found = measures_where(db, "id = $1", id, None).await?;
    Ok(found.into_iter().find(|measure| measure.account_id == account_id))
}

/// The measures aimed at one account, newest first.
pub async fn measures_on_user<'c>(db: impl Executor<'c, Database = Any>, user_id: &str) -> Result<Vec<Measure>, Error> {
    measures_where(db, "target_user_id = $1 ORDER BY created_at DESC, id", user_id, None).await
}

/// The account's incidents started at or after `since`.
pub async fn incidents_since<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    since: DateTime<Utc>,
) -> Result<Vec<Incident>, Error> {
    incidents_where(db, "account_id = $1 AND started_at >= $2", account_id, Some(since)).await
}

/// The account's incidents active now.
pub async fn active_incidents<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
) -> Result<Vec<Incident>, Error> {
    incidents_where(db, "account_id = $1 AND status = 'Active'", account_id, None).await
}

/// The account's measures taken at or after `since`.
pub async fn measures_since<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    since: DateTime<Utc>,
) -> Result<Vec<Measure>, Error> {
    measures_where(db, "account_id = $1 AND created_at >= $2", account_id, Some(since)).await
}

/// The account's measures in force at `now`, exposed passwords not changed since included.
pub async fn measures_in_force<'c>(
    db: impl Executor<'c, Database = Any>,
    account_id: &str,
    now: DateTime<Utc>,
) -> Result<Vec<Measure>, Error> {
    let condition = "account_id = $1 AND lifted_at IS NULL \
         AND ((kind = 'PasswordExposed' AND resolved_at IS NULL) OR lapses_at > $2)";
    measures_where(db, condition, account_id, Some(now)).await
}

pub async fn lift<'c>(
    db: impl Executor<'c, Database = Any>,
    id: &str,
    by: &str,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    let done = sqlx::query(
        "UPDATE threat_measures SET lifted_at = $2, lifted_by = $3 WHERE id = $1 AND lifted_at IS NULL \
         AND kind <> 'PasswordExposed' AND lapses_at > $2",
    )
    .bind(id)
    .bind(super::millis(now))
    .bind(by)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// How many accounts of the realm approved the address.
pub async fn approving_accounts<'c>(
    db: impl Executor<'c, Database = Any>,
    realm_id: &str,
    ip_address: &str,
) -> Result<i64, Error> {
    let (count,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM approved_addresses a JOIN users u ON u.id = a.user_id \
         WHERE a.ip_address = $1 AND u.realm_id = $2",
    )
    .bind(ip_address)
    .bind(realm_id)
    .fetch_one(db)
    .await?;
    Ok(count)
}

/// Where incidents or exposures of a page come from: an account, one of its realms, one client.
#[derive(Debug, Clone)]
pub struct ThreatFilter<'a> {
    pub account_id: &'a str,
    pub realm_id: Option<&'a str>,
    pub client_id: Option<&'a str>,
}

impl ThreatFilter<'_> {
    pub(super) fn scope(&self) -> Scope {
        Scope::of("account_id", self.account_id)
            .and_given("realm_id", self.realm_id)
            .and_given("client_id", self.client_id)
    }
}

/// A page of incidents, optionally only those in one status.
pub async fn incident_page(
    store: &Store,
    filter: ThreatFilter<'_>,
    status: Option<IncidentStatus>,
    request: &PageRequest,
) -> Result<Page<Incident>, Error> {
    let scope = filter.scope().and_given("status", status.map(IncidentStatus::as_str));
    page::fetch(store.pool(), &INCIDENT_LISTING, &scope, request).await
}
