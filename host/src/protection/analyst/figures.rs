//! The figures of an incident an analyst reads: counts, kinds, durations, what the counters held
//! when each measure was taken, a timeline, and the realm's settings. They are built to hold no
//! address, name, e-mail or identifier: whatever reads them (the component, a language model)
//! learns nothing about the people or the sources.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::store::analyses::{MeasureFactors, Moment};
use crate::store::realms::RealmSettings;
use crate::store::threats::{Incident, IncidentKind, IncidentSeverity, Measure, MeasureType};

/// The most measures listed one by one; the counts cover them all.
pub const MEASURES_LISTED: usize = 100;
/// The width of a timeline bucket, in minutes.
pub const BUCKET_MINUTES: u32 = 5;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    pub kind: IncidentKind,
    pub severity: IncidentSeverity,
    pub moment: Moment,
    /// Minutes from the start to the reading, or to the close for the closing reading.
    pub minutes: u32,
    pub detections: u32,
    pub refused_attempts: u32,
    pub blocked_sources: u32,
    pub protected_accounts: u32,
    pub exposed_passwords: u32,
    /// Different sources the incident's attempts came from: the addresses blocked or, when more,
    /// the unapproved addresses that had failed against each protected account when it was
    /// protected.
    pub distinct_sources: u32,
    /// Different accounts the measures were aimed at.
    pub distinct_accounts: u32,
    /// The first measures, up to [`MEASURES_LISTED`].
    pub measures: Vec<MeasureFigures>,
    /// Measures taken in each five minutes that had any, from the start.
    pub timeline: Vec<Bucket>,
    pub settings: SettingsFigures,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MeasureFigures {
    pub kind: MeasureType,
    /// Minutes after the incident started.
    pub minute: u32,
    /// How long it was set for; none when it never lapses.
    pub seconds: Option<u32>,
    pub lifted: bool,
    #[serde(flatten)]
    pub factors: MeasureFactors,
    #[serde(default)]
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bucket {
    pub minute: u32,
    pub measures: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsFigures {
    pub max_failed_attempts: u32,
    pub lockout_duration_minutes: u32,
    pub lockout_enabled: bool,
    pub minimum_password_length: u32,
    pub block_breached_passwords: bool,
}

impl From<&RealmSettings> for SettingsFigures {
    fn from(s: &RealmSettings) -> Self {
        let count = |value: i64| u32::try_from(value).unwrap_or(0);
        Self {
            max_failed_attempts: count(s.max_failed_attempts),
            lockout_duration_minutes: count(s.lockout_duration_minutes),
            lockout_enabled: s.lockout_enabled,
            minimum_password_length: count(s.minimum_password_length),
            block_breached_passwords: s.block_breached_passwords,
        }
    }
}

fn count(value: i64) -> u32 {
    u32::try_from(value.max(0)).unwrap_or(u32::MAX)
}

fn minutes_between(from: DateTime<Utc>, to: DateTime<Utc>) -> u32 {
    count((to - from).num_minutes())
}

impl Figures {
    /// The figures of `incident` at `moment`, read at `now`.
    pub fn of(
        incident: &Incident,
        measures: &[Measure],
        settings: &RealmSettings,
        moment: Moment,
        now: DateTime<Utc>,
    ) -> Self {
        let end = match (moment, incident.closed_at) {
            (Moment::Closed, Some(closed_at)) => closed_at,
            _ => now,
        };
        let blocked: BTreeSet<&str> = measures.iter().filter_map(|m| m.target_address.as_deref()).collect();
        // Each measure on an account counted its sources when it was taken; the largest count stands
        // for the account. Different accounts' sources are summed: no address is kept to tell overlaps.
        let mut sources_per_account: BTreeMap<&str, u32> = BTreeMap::new();
        for measure in measures {
            if let Some(account) = measure.target_user_id.as_deref() {
                let sources = sources_per_account.entry(account).or_default();
                *sources = (*sources).max(measure.factors.account_sources);
            }
        }
        let accounts_sources = sources_per_account.values().fold(0u32, |sum, n| sum.saturating_add(*n));
        let distinct_sources = u32::try_from(blocked.len()).unwrap_or(u32::MAX).max(accounts_sources);
        let mut buckets: BTreeMap<u32, u32> = BTreeMap::new();
        for measure in measures {
            let minute = minutes_between(incident.started_at, measure.created_at);
            *buckets.entry(minute / BUCKET_MINUTES * BUCKET_MINUTES).or_default() += 1;
        }
        let listed = measures.iter().take(MEASURES_LISTED).map(|m| MeasureFigures {
            kind: m.kind,
            minute: minutes_between(incident.started_at, m.created_at),
            seconds: m.lapses_at.map(|lapses_at| count((lapses_at - m.created_at).num_seconds())),
            lifted: m.lifted_at.is_some(),
            factors: m.factors,
            reasons: m.reasons.clone(),
        });
        Self {
            kind: incident.kind,
            severity: incident.severity,
            moment,
            minutes: minutes_between(incident.started_at, end),
            detections: count(incident.detections),
            refused_attempts: count(incident.refused_attempts),
            blocked_sources: count(incident.blocked_sources),
            protected_accounts: count(incident.protected_accounts),
            exposed_passwords: count(incident.exposed_passwords),
            distinct_sources,
            distinct_accounts: u32::try_from(sources_per_account.len()).unwrap_or(u32::MAX),
            measures: listed.collect(),
            timeline: buckets.into_iter().map(|(minute, measures)| Bucket { minute, measures }).collect(),
            settings: SettingsFigures::from(settings),
        }
    }
}
