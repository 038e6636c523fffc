//! Attack protection: what each attempt counts, the detector's
//! decision on it, the holds that refuse attempts while a measure is in force, and the incidents,
//! measures and exposures recorded for operators.
//!
//! Holds and counts live in the counting store (memory, or Redis shared by every host), so that a
//! blocked source is refused before any account lookup and without database work. When the store
//! or the detector cannot answer, the attempt proceeds as if protection were absent, with a log
//! line and the `attack_protection_failed_open` metric.

pub mod admin;
pub mod analyst;
pub mod detection;
pub mod detector;
pub mod incident_views;
pub mod incidents;
pub mod networks;
pub mod operators;
pub mod recommendations;
pub mod report;
pub mod scenario;
pub mod summary;
pub mod tracking;
pub mod unusual_failures;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use crate::runtime::context::Context;
use crate::runtime::counting::{CountError, Counters};
use chrono::{DateTime, Utc};
use networks::{Geography, NetworkList};
pub use tracking::Seen;
use tracking::observe;

use self::detection::{Attempt, Decision, Source};
use self::detector::AttackDetector;
use crate::runtime::metrics::Metrics;
use crate::store::{Error as StoreError, Store};

/// How often each host stores the refusals it tallied in their incidents.
pub const REFUSALS_STORED_EVERY_SECONDS: i64 = 15;

/// What a hold in the counting store refuses while it lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// Every password attempt and recovery request from an address.
    SourceBlocked,
    /// Every address an account was never approved at.
    ClosedToUnknownAddresses,
    /// Sign-in requests to an account's phones.
    SignInPushesPaused,
    /// Recovery e-mail for an account (requests still get the usual answer).
    RecoverySilenced,
    /// Reporting the account again within the hour.
    Reported,
}

impl Hold {
    /// The key of the hold on `target` (an address or an account id) in the realm.
    pub fn key(self, realm_id: &str, target: &str) -> String {
        let (scope, name) = match self {
            Self::SourceBlocked => ("source", "blocked"),
            Self::ClosedToUnknownAddresses => ("account", "closed"),
            Self::SignInPushesPaused => ("account", "pushes-paused"),
            Self::RecoverySilenced => ("account", "recovery-silenced"),
            Self::Reported => ("account", "reported"),
        };
        format!("{realm_id}:{scope}:{target}:{name}")
    }
}

/// Attack protection as the service runs it.
pub struct Protection {
    pub counters: Arc<Counters>,
    detector: AttackDetector,
    datacenters: NetworkList,
    tor_exits: NetworkList,
    geography: Geography,
    /// Attempts refused by each incident's measures, with the latest instant, not yet stored.
    refusals: Mutex<HashMap<String, (i64, DateTime<Utc>)>>,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Protection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Protection")
            .field("counters", &self.counters)
            .field("datacenter_ranges", &self.datacenters.len())
            .field("tor_exit_ranges", &self.tor_exits.len())
            .finish_non_exhaustive()
    }
}

impl Protection {
    pub fn new(
        counters: Arc<Counters>,
        detector: AttackDetector,
        (datacenters, tor_exits): (NetworkList, NetworkList),
        geography: Geography,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self { counters, detector, datacenters, tor_exits, geography, refusals: Mutex::new(HashMap::new()), metrics }
    }

    /// The country and network of an address, when the databases know them.
    pub fn place(&self, address: &str) -> (Option<String>, Option<String>) {
        match address.parse::<IpAddr>() {
            Ok(ip) => (self.geography.country(ip), self.geography.network(ip)),
            Err(_) => (None, None),
        }
    }

    fn failed_open(&self, cause: &'static str, error: &CountError) {
        tracing::error!(%error, cause, "attack protection cannot read its counters; the attempt proceeds unprotected");
        self.metrics.protection_failed_open(cause);
    }

    /// Whether `hold` on `target` is in force; a refusal is then tallied on the incident behind
    /// it. A store that cannot answer holds nothing.
    pub async fn refuses(&self, hold: Hold, realm_id: &str, target: &str, now: DateTime<Utc>) -> bool {
        match self.counters.held(&hold.key(realm_id, target), now).await {
            Ok(Some((incident_id, _))) => {
                // A hold of no incident (recovery e-mail silenced alone) refuses without a tally.
                if !incident_id.is_empty() {
                    self.tally_refusal(incident_id, now);
                }
                true
            }
            Ok(None) => false,
            Err(error) => {
                self.failed_open("counting", &error);
                false
            }
        }
    }

    fn tally_refusal(&self, incident_id: String, now: DateTime<Utc>) {
        let mut refusals = self.refusals.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = refusals.entry(incident_id).or_insert((0, now));
        entry.0 += 1;
        entry.1 = entry.1.max(now);
    }

    /// The refusals tallied since the last call, by incident: their number and the latest instant.
    fn take_refusals(&self) -> HashMap<String, (i64, DateTime<Utc>)> {
        std::mem::take(&mut *self.refusals.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// Stores the refusals tallied on this host in their incidents.
    pub async fn store_refusals(&self, store: &Store) -> Result<(), StoreError> {
        let refusals = self.take_refusals();
        if refusals.is_empty() {
            return Ok(());
        }
        let mut tx = store.begin().await?;
        for (incident_id, (refused, last)) in &refusals {
            crate::store::threats::add_refusals(&mut *tx, incident_id, *refused, *last).await?;
        }
        tx.commit().await
    }

    /// The datacenter, Tor and shared-network facts about an address in the realm.
    async fn source(&self, store: &Store, seen: &Seen<'_>) -> Result<Source, StoreError> {
        let ip = seen.source.parse::<IpAddr>().ok();
        let approving = crate::store::threats::approving_accounts(store.pool(), seen.realm_id, seen.source).await?;
        Ok(Source {
            approved_for_account: seen.approved,
            datacenter: ip.is_some_and(|ip| self.datacenters.contains(ip)),
            tor: ip.is_some_and(|ip| self.tor_exits.contains(ip)),
            shared_network: approving >= incidents::SHARED_NETWORK_ACCOUNTS,
        })
    }

    /// Counts the attempt and asks the detector about it: its decision when it takes a measure,
    /// with the attempt as the detector saw it. None for an ordinary attempt, and when protection
    /// fails open.
    pub async fn judge(
        &self,
        store: &Store,
        seen: &Seen<'_>,
        now: DateTime<Utc>,
    ) -> Result<Option<Judged>, StoreError> {
        let counts = match observe(&self.counters, seen, now).await {
            Ok(counts) => counts,
            Err(error) => {
                self.failed_open("counting", &error);
                return Ok(None);
            }
        };
        let source = self.source(store, seen).await?;
        let attempt =
            Attempt { kind: seen.kind, outcome: seen.outcome, account_known: seen.account_known, source, counts };
        let Some(decision) = self.detector.decide(attempt).await else {
            self.metrics.protection_failed_open("detector");
            return Ok(None);
        };
        for measure in &decision.measures {
            self.metrics.protection_measure(measure.kind.metric_name());
        }
        Ok((!decision.measures.is_empty()).then_some(Judged { decision, attempt }))
    }

    /// Forgets what a source did in the realm (a lifted block, a dismissed incident): its next
    /// failure starts a new count, and an earlier block no longer lengthens the next.
    pub async fn forget_source(&self, realm_id: &str, address: &str) {
        let keys = tracking::source_series(realm_id, address);
        let released = self.counters.release(&Hold::SourceBlocked.key(realm_id, address)).await;
        if let Err(error) = released.and(self.counters.forget(&keys).await) {
            tracing::error!(%error, realm_id, address, "cannot forget what a source did");
        }
    }

    /// Ends a hold on an account before its time (a lifted measure), and forgets the counts that
    /// took it, so that the next failure does not take it again at once.
    pub async fn release(&self, hold: Hold, realm_id: &str, account: &str) {
        let released = self.counters.release(&hold.key(realm_id, account)).await;
        let series = tracking::account_series(realm_id, account, hold);
        if let Err(error) = released.and(self.counters.forget(&series).await) {
            tracing::error!(%error, realm_id, account, "cannot end a hold of attack protection");
        }
    }
}

/// A detector's decision to take measures, and the attempt it decided on.
#[derive(Debug, Clone)]
pub struct Judged {
    pub decision: Decision,
    pub attempt: Attempt,
}

impl Judged {
    /// Whether the decision blocks the attempt's source.
    pub fn blocks_source(&self) -> bool {
        self.decision.measures.iter().any(|measure| measure.kind == detection::MeasureKind::SourceBlocked)
    }
}

/// Sends attack protection's e-mail once the attempt's transaction committed, without holding up
/// the answer.
pub fn send_letters(context: &Context, letters: Vec<crate::runtime::outbound::mail::Letter>) {
    if letters.is_empty() {
        return;
    }
    let mailer = context.outbound.mailer.clone();
    context.detached.spawn(async move {
        for letter in &letters {
            mailer.deliver(letter).await;
        }
    });
}
