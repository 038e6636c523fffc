//! The period summary operators read: totals of the incidents
//! started in the last 7, 30 or 90 days, day by day, by kind and severity, the countries and
//! networks of the sources they blocked, and the latest measures.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, TimeDelta, Utc};

use crate::AppState;
use crate::error::Error;
use crate::store::threats::{self as store, Incident, Measure, MeasureType};

/// The latest measures a summary lists.
const LATEST_MEASURES: usize = 10;

/// The figures of a set of incidents.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Figures {
    pub incidents: i64,
    pub refused_attempts: i64,
    pub blocked_sources: i64,
    pub protected_accounts: i64,
    pub exposed_passwords: i64,
}

impl Figures {
    fn add(&mut self, incident: &Incident) {
        self.incidents += 1;
        self.refused_attempts += incident.refused_attempts;
        self.blocked_sources += incident.blocked_sources;
        self.protected_accounts += incident.protected_accounts;
        self.exposed_passwords += incident.exposed_passwords;
    }
}

/// Whose incidents: an account's, narrowed to a realm and a client when named.
#[derive(Debug, Clone, Copy)]
pub struct Within<'a> {
    pub account_id: &'a str,
    pub realm_id: Option<&'a str>,
    pub client_id: Option<&'a str>,
}

impl Within<'_> {
    fn holds(&self, incident: &Incident) -> bool {
        self.realm_id.is_none_or(|r| incident.realm_id == r)
            && self.client_id.is_none_or(|c| incident.client_id.as_deref() == Some(c))
    }
}

#[derive(Debug, Clone)]
pub struct Summary {
    pub days: i64,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// Incidents active now.
    pub open_incidents: usize,
    /// Measures in force now (exposed passwords not changed count as in force).
    pub measures_in_force: usize,
    /// Totals of the incidents started in the period.
    pub totals: Figures,
    /// The same by the day (UTC, `YYYY-MM-DD`) each incident started, every day of the period listed.
    pub by_day: Vec<(String, Figures)>,
    pub by_kind: Vec<(&'static str, Figures)>,
    pub by_severity: Vec<(&'static str, Figures)>,
    /// Blocked sources of the period by country, most first (`Unknown` where the data files do
    /// not know the address).
    pub countries: Vec<(String, i64)>,
    /// The same by network.
    pub networks: Vec<(String, i64)>,
    /// The latest measures of the period, newest first.
    pub latest_measures: Vec<Measure>,
}

/// The summary of the `days` ending now; the refusals every host tallied are stored first.
pub async fn summary(state: &AppState, within: Within<'_>, days: i64) -> Result<Summary, Error> {
    state.protection.store_refusals(&state.store).await?;
    let now = state.clock.now();
    let from = now - TimeDelta::days(days);
    let pool = state.store.pool();
    let incidents: Vec<Incident> =
        store::incidents_since(pool, within.account_id, from).await?.into_iter().filter(|i| within.holds(i)).collect();
    let open_incidents =
        store::active_incidents(pool, within.account_id).await?.into_iter().filter(|i| within.holds(i)).count();

    let mut totals = Figures::default();
    let mut by_day: BTreeMap<String, Figures> = BTreeMap::new();
    let mut day = Some(from.date_naive());
    while let Some(date) = day.filter(|date| *date <= now.date_naive()) {
        by_day.insert(date.to_string(), Figures::default());
        day = date.succ_opt();
    }
    let mut by_kind: BTreeMap<&'static str, Figures> = BTreeMap::new();
    let mut by_severity: BTreeMap<&'static str, Figures> = BTreeMap::new();
    for incident in incidents.iter().filter(|i| i.started_at >= from) {
        totals.add(incident);
        by_day.entry(incident.started_at.date_naive().to_string()).or_default().add(incident);
        by_kind.entry(incident.kind.as_str()).or_default().add(incident);
        by_severity.entry(incident.severity.as_str()).or_default().add(incident);
    }
    let ids: HashSet<&str> = incidents.iter().map(|i| i.id.as_str()).collect();
    let measures: Vec<Measure> = store::measures_since(pool, within.account_id, from)
        .await?
        .into_iter()
        .filter(|m| ids.contains(m.incident_id.as_str()))
        .collect();
    let measures_in_force = store::measures_in_force(pool, within.account_id, now)
        .await?
        .into_iter()
        .filter(|m| within.realm_id.is_none_or(|r| m.realm_id == r))
        .count();
    let mut countries: BTreeMap<String, i64> = BTreeMap::new();
    let mut networks: BTreeMap<String, i64> = BTreeMap::new();
    for blocked in measures.iter().filter(|m| m.kind == MeasureType::SourceBlocked) {
        *countries.entry(blocked.country.clone().unwrap_or_else(|| "Unknown".into())).or_default() += 1;
        *networks.entry(blocked.network.clone().unwrap_or_else(|| "Unknown".into())).or_default() += 1;
    }
    let most_first = |map: BTreeMap<String, i64>| {
        let mut shares: Vec<(String, i64)> = map.into_iter().collect();
        shares.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        shares
    };
    let mut latest_measures = measures;
    latest_measures.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| a.id.cmp(&b.id)));
    latest_measures.truncate(LATEST_MEASURES);
    Ok(Summary {
        days,
        from,
        to: now,
        open_incidents,
        measures_in_force,
        totals,
        by_day: by_day.into_iter().collect(),
        by_kind: by_kind.into_iter().collect(),
        by_severity: by_severity.into_iter().collect(),
        countries: most_first(countries),
        networks: most_first(networks),
        latest_measures,
    })
}
