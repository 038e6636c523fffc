//! The period summary operators read: totals of the incidents
//! started in the last 7, 30 or 90 days, day by day, by kind and severity, the countries and
//! networks of the sources they blocked, and the latest measures.

use crate::protection::Protection;
use crate::protection::incident_views::MeasureView;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::threat_summary::{self as store, IncidentFigures};
use crate::store::threats::{IncidentKind, IncidentSeverity, Measure};
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// The latest measures a summary lists.
const LATEST_MEASURES: i64 = 10;

/// The figures of a set of incidents.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    pub incidents: i64,
    pub refused_attempts: i64,
    pub blocked_sources: i64,
    pub protected_accounts: i64,
    pub exposed_passwords: i64,
}

impl Figures {
    fn add(&mut self, sums: &IncidentFigures) {
        self.incidents += sums.incidents;
        self.refused_attempts += sums.refused_attempts;
        self.blocked_sources += sums.blocked_sources;
        self.protected_accounts += sums.protected_accounts;
        self.exposed_passwords += sums.exposed_passwords;
    }
}

/// Whose incidents: an account's, narrowed to a realm and a client when named.
pub type Within<'a> = store::Narrowed<'a>;

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

/// The summary of the `days` ending now; the refusals every host tallied are stored first. The
/// database sums the figures and counts the sources; only a few hundred rows reach the service.
pub async fn summary(
    context: &Context,
    protection: &Protection,
    within: Within<'_>,
    days: i64,
) -> Result<Summary, Error> {
    protection.store_refusals(&context.store).await?;
    let now = context.clock.now();
    let from = now - TimeDelta::days(days);
    let pool = context.store.pool();
    let sums = store::incident_figures(pool, within, from).await?;
    let open_incidents = store::count_active_incidents(pool, within).await?;
    let measures_in_force = store::count_measures_in_force(pool, within.account_id, within.realm_id, now).await?;
    let origins = store::blocked_source_origins(pool, within, from).await?;
    let latest_measures = store::latest_measures(pool, within, from, LATEST_MEASURES).await?;

    let mut totals = Figures::default();
    let mut by_day: BTreeMap<String, Figures> = BTreeMap::new();
    let mut day = Some(from.date_naive());
    while let Some(date) = day.filter(|date| *date <= now.date_naive()) {
        by_day.insert(date.to_string(), Figures::default());
        day = date.succ_opt();
    }
    let mut by_kind: BTreeMap<&'static str, Figures> = BTreeMap::new();
    let mut by_severity: BTreeMap<&'static str, Figures> = BTreeMap::new();
    for sum in &sums {
        totals.add(sum);
        if let Some(started) = DateTime::from_timestamp(sum.day * 86_400, 0) {
            by_day.entry(started.date_naive().to_string()).or_default().add(sum);
        }
        if let Ok(kind) = IncidentKind::try_from(sum.kind.clone()) {
            by_kind.entry(kind.as_str()).or_default().add(sum);
        }
        if let Ok(severity) = IncidentSeverity::try_from(sum.severity.clone()) {
            by_severity.entry(severity.as_str()).or_default().add(sum);
        }
    }
    let mut countries: BTreeMap<String, i64> = BTreeMap::new();
    let mut networks: BTreeMap<String, i64> = BTreeMap::new();
    for (country, network, count) in origins {
        *countries.entry(country.unwrap_or_else(|| "Unknown".into())).or_default() += count;
        *networks.entry(network.unwrap_or_else(|| "Unknown".into())).or_default() += count;
    }
    let most_first = |map: BTreeMap<String, i64>| {
        let mut shares: Vec<(String, i64)> = map.into_iter().collect();
        shares.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        shares
    };
    Ok(Summary {
        days,
        from,
        to: now,
        open_incidents: usize::try_from(open_incidents).unwrap_or(0),
        measures_in_force: usize::try_from(measures_in_force).unwrap_or(0),
        totals,
        by_day: by_day.into_iter().collect(),
        by_kind: by_kind.into_iter().collect(),
        by_severity: by_severity.into_iter().collect(),
        countries: most_first(countries),
        networks: most_first(networks),
        latest_measures,
    })
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DayFigures {
    /// The day (UTC), `YYYY-MM-DD`.
    pub date: String,
    #[serde(flatten)]
    pub figures: Figures,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Share {
    /// A kind, a severity, a country or a network.
    pub name: String,
    #[serde(flatten)]
    pub figures: Figures,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceShare {
    /// A country code or a network name; `Unknown` when the data files do not know the address.
    pub name: String,
    pub blocked_sources: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SummaryView {
    /// The period: 7, 30 or 90 days ending now.
    pub days: i64,
    pub from: String,
    pub to: String,
    /// Incidents active now.
    pub open_incidents: i64,
    /// Measures in force now (exposed passwords not changed count as in force).
    pub measures_in_force: i64,
    /// Totals of the incidents started in the period.
    pub totals: Figures,
    /// The same, day by day (by the day each incident started), every day of the period listed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_day: Vec<DayFigures>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_kind: Vec<Share>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_severity: Vec<Share>,
    /// Countries of the sources blocked in the period.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub countries: Vec<SourceShare>,
    /// Networks of the sources blocked in the period.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub networks: Vec<SourceShare>,
    /// The latest measures of the period, newest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latest_measures: Vec<MeasureView>,
}
