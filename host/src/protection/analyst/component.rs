//! The incident analyst (`wit/analyst.wit`): reads an incident's figures and writes a reading. The
//! service embeds `plugins/analyst`; another component of the world can be loaded from a file.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use wasmtime::component::Component;

use crate::runtime::components::{self, Limits, Pool};

mod bindings {
    wasmtime::component::bindgen!({ world: "analyst", path: "../wit", exports: { default: async } });
}

use self::bindings::castellan::plugins::analyst_types as wit;
use self::bindings::{Analyst, AnalystPre};
use crate::protection::analyst::{Figures, Language, Report, Words};
use crate::protection::recommendations::Change;
use crate::store::analyses::{Classification, Moment};
use crate::store::threats::{IncidentKind, IncidentSeverity, MeasureType};

/// The component built from `plugins/analyst` with the service.
const EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/castellan_analyst.wasm"));

/// What one call answers: the reading's verdict and changes, and its words in the language asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub classification: Classification,
    pub confidence: u8,
    pub changes: Vec<Change>,
    pub words: Words,
}

/// Runs an analyst component on a pool of warm instances.
#[derive(Debug, Clone)]
pub struct AnalystComponent {
    pool: Arc<Pool<Analyst, AnalystPre<Limits>>>,
}

impl AnalystComponent {
    /// The component at `path`, or the embedded one; checked by instantiating it once.
    pub fn load(path: Option<&Path>) -> anyhow::Result<Self> {
        static EMBEDDED_COMPONENT: OnceLock<Result<Component, String>> = OnceLock::new();
        let component = components::load(path, &EMBEDDED_COMPONENT, EMBEDDED, "the embedded incident analyst")?;
        let pool = Pool::new(&component, AnalystPre::new, |pre, store| pre.instantiate(store))?;
        Ok(Self { pool })
    }

    /// The component's reading of `figures` in `language`; an error when it cannot answer (a trap,
    /// the deadline, the memory limit) or answers a change it may not make.
    pub async fn read(&self, figures: &Figures, language: Language) -> anyhow::Result<Answer> {
        let incident = wit::Incident::from(figures);
        let language = match language {
            Language::English => wit::Language::English,
            Language::French => wit::Language::French,
        };
        let mut lease = self.pool.lease()?;
        let reading = lease.instance.call_read(&mut lease.store, &incident, language).await?;
        lease.keep();
        answer(reading)
    }
}

fn answer(reading: wit::Reading) -> anyhow::Result<Answer> {
    let classification = match reading.classification {
        wit::Classification::CredentialStuffing => Classification::CredentialStuffing,
        wit::Classification::PasswordSpraying => Classification::PasswordSpraying,
        wit::Classification::BruteForce => Classification::BruteForce,
        wit::Classification::PushBombing => Classification::PushBombing,
        wit::Classification::RecoveryAbuse => Classification::RecoveryAbuse,
        wit::Classification::SignUpAbuse => Classification::SignUpAbuse,
        wit::Classification::SecondFactorGuessing => Classification::SecondFactorGuessing,
        wit::Classification::LegitimateSurge => Classification::LegitimateSurge,
        wit::Classification::Misconfiguration => Classification::Misconfiguration,
        wit::Classification::Inconclusive => Classification::Inconclusive,
    };
    let mut changes = Vec::new();
    let mut why = Vec::new();
    for recommendation in reading.recommendations {
        let name = match recommendation.change {
            wit::Change::RefuseBreachedPasswords => "RefuseBreachedPasswords",
            wit::Change::LockOutSooner => "LockOutSooner",
            wit::Change::LockOutLonger => "LockOutLonger",
            wit::Change::LockOutNewAccounts => "LockOutNewAccounts",
            wit::Change::RequireLongerPasswords => "RequireLongerPasswords",
        };
        let change = Change::named(name, i64::from(recommendation.value))
            .filter(|change| change.within_bounds())
            .ok_or_else(|| anyhow::anyhow!("the analyst recommended {name} with {}", recommendation.value))?;
        changes.push(change);
        why.push(recommendation.why);
    }
    let report = reading.report.map(|r| Report {
        nature: r.nature,
        data_and_people: r.data_and_people,
        risks: r.risks,
        measures: r.measures,
        communication: r.communication,
    });
    Ok(Answer {
        classification,
        confidence: reading.confidence.min(100),
        changes,
        words: Words {
            what_happened: reading.what_happened,
            what_was_done: reading.what_was_done,
            exposed_passwords: reading.exposed_passwords,
            why,
            report,
        },
    })
}

impl From<&Figures> for wit::Incident {
    fn from(figures: &Figures) -> Self {
        let measure = |m: &crate::protection::analyst::MeasureFigures| wit::Measure {
            kind: match m.kind {
                MeasureType::SourceBlocked => wit::MeasureKind::SourceBlocked,
                MeasureType::ClosedToUnknownAddresses => wit::MeasureKind::ClosedToUnknownAddresses,
                MeasureType::SignInPushesPaused => wit::MeasureKind::SignInPushesPaused,
                MeasureType::PasswordExposed => wit::MeasureKind::PasswordExposed,
            },
            minute: m.minute,
            seconds: m.seconds,
            lifted: m.lifted,
            source_failures: m.factors.source_failures,
            source_accounts: m.factors.source_accounts,
            unknown_account_failures: m.factors.unknown_account_failures,
            earlier_blocks: m.factors.earlier_blocks,
            datacenter: m.factors.datacenter,
            tor: m.factors.tor,
            reasons: m.reasons.clone(),
        };
        let s = &figures.settings;
        Self {
            kind: match figures.kind {
                IncidentKind::CredentialStuffing => wit::IncidentKind::CredentialStuffing,
                IncidentKind::PasswordSpraying => wit::IncidentKind::PasswordSpraying,
                IncidentKind::BruteForce => wit::IncidentKind::BruteForce,
                IncidentKind::PushBombing => wit::IncidentKind::PushBombing,
                IncidentKind::RecoveryAbuse => wit::IncidentKind::RecoveryAbuse,
                IncidentKind::SignUpAbuse => wit::IncidentKind::SignUpAbuse,
                IncidentKind::SecondFactorGuessing => wit::IncidentKind::SecondFactorGuessing,
            },
            severity: match figures.severity {
                IncidentSeverity::Low => wit::Severity::Low,
                IncidentSeverity::Medium => wit::Severity::Medium,
                IncidentSeverity::High => wit::Severity::High,
                IncidentSeverity::Critical => wit::Severity::Critical,
            },
            moment: match figures.moment {
                Moment::Opened => wit::Moment::Opened,
                Moment::TurnedCritical => wit::Moment::TurnedCritical,
                Moment::Closed => wit::Moment::Closed,
            },
            minutes: figures.minutes,
            detections: figures.detections,
            refused_attempts: figures.refused_attempts,
            blocked_sources: figures.blocked_sources,
            protected_accounts: figures.protected_accounts,
            exposed_passwords: figures.exposed_passwords,
            distinct_sources: figures.distinct_sources,
            distinct_accounts: figures.distinct_accounts,
            measures: figures.measures.iter().map(measure).collect(),
            timeline: figures
                .timeline
                .iter()
                .map(|bucket| wit::Bucket { minute: bucket.minute, measures: bucket.measures })
                .collect(),
            settings: wit::Settings {
                max_failed_attempts: s.max_failed_attempts,
                lockout_duration_minutes: s.lockout_duration_minutes,
                lockout_enabled: s.lockout_enabled,
                minimum_password_length: s.minimum_password_length,
                block_breached_passwords: s.block_breached_passwords,
            },
        }
    }
}
