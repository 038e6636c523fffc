//! The incident analyst the service ships with: reads an incident's figures as an expert would and
//! says what happened, what was done, what became of passwords, what to change, and, once the
//! incident closed, the post-incident report. It works offline and gives the same reading for the
//! same figures.
//!
//! Compiled to `wasm32-wasip2` it is a component of the `analyst` world (`wit/analyst.wit`),
//! written without the standard library so that it imports nothing. On the build machine it is an
//! ordinary library, which is how its tests run.

#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

mod reading;
mod words;

pub use reading::read;

use alloc::string::String;
use alloc::vec::Vec;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncidentKind {
    CredentialStuffing,
    PasswordSpraying,
    BruteForce,
    PushBombing,
    RecoveryAbuse,
    SignUpAbuse,
    SecondFactorGuessing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    Opened,
    TurnedCritical,
    Closed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeasureKind {
    SourceBlocked,
    ClosedToUnknownAddresses,
    SignInPushesPaused,
    PasswordExposed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measure {
    pub kind: MeasureKind,
    pub minute: u32,
    pub seconds: Option<u32>,
    pub lifted: bool,
    pub source_failures: u32,
    pub source_accounts: u32,
    pub unknown_account_failures: u32,
    pub earlier_blocks: u32,
    pub datacenter: bool,
    pub tor: bool,
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    pub minute: u32,
    pub measures: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub max_failed_attempts: u32,
    pub lockout_duration_minutes: u32,
    pub lockout_enabled: bool,
    pub minimum_password_length: u32,
    pub block_breached_passwords: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incident {
    pub kind: IncidentKind,
    pub severity: Severity,
    pub moment: Moment,
    pub minutes: u32,
    pub detections: u32,
    pub refused_attempts: u32,
    pub blocked_sources: u32,
    pub protected_accounts: u32,
    pub exposed_passwords: u32,
    pub distinct_sources: u32,
    pub distinct_accounts: u32,
    pub measures: Vec<Measure>,
    pub timeline: Vec<Bucket>,
    pub settings: Settings,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    English,
    French,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classification {
    CredentialStuffing,
    PasswordSpraying,
    BruteForce,
    PushBombing,
    RecoveryAbuse,
    SignUpAbuse,
    SecondFactorGuessing,
    LegitimateSurge,
    Misconfiguration,
    Inconclusive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    RefuseBreachedPasswords,
    LockOutSooner,
    LockOutLonger,
    LockOutNewAccounts,
    RequireLongerPasswords,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recommendation {
    pub change: Change,
    pub value: u32,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub nature: String,
    pub data_and_people: String,
    pub risks: String,
    pub measures: String,
    pub communication: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub classification: Classification,
    pub confidence: u8,
    pub what_happened: String,
    pub what_was_done: String,
    pub exposed_passwords: String,
    pub recommendations: Vec<Recommendation>,
    pub report: Option<Report>,
}

castellan_guest::runtime!();

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod component {
    use alloc::vec::Vec;

    wit_bindgen::generate!({ world: "analyst", path: "../../wit" });

    use castellan::plugins::analyst_types as wit;

    struct Analyst;

    impl Guest for Analyst {
        fn read(incident: wit::Incident, language: wit::Language) -> wit::Reading {
            let language = match language {
                wit::Language::English => super::Language::English,
                wit::Language::French => super::Language::French,
            };
            reading(super::read(&incident_of(incident), language))
        }
    }

    fn incident_of(incident: wit::Incident) -> super::Incident {
        use super::{IncidentKind as K, MeasureKind as M, Moment, Severity as S};
        let measure = |m: wit::Measure| super::Measure {
            kind: match m.kind {
                wit::MeasureKind::SourceBlocked => M::SourceBlocked,
                wit::MeasureKind::ClosedToUnknownAddresses => M::ClosedToUnknownAddresses,
                wit::MeasureKind::SignInPushesPaused => M::SignInPushesPaused,
                wit::MeasureKind::PasswordExposed => M::PasswordExposed,
            },
            minute: m.minute,
            seconds: m.seconds,
            lifted: m.lifted,
            source_failures: m.source_failures,
            source_accounts: m.source_accounts,
            unknown_account_failures: m.unknown_account_failures,
            earlier_blocks: m.earlier_blocks,
            datacenter: m.datacenter,
            tor: m.tor,
            reasons: m.reasons,
        };
        let s = incident.settings;
        super::Incident {
            kind: match incident.kind {
                wit::IncidentKind::CredentialStuffing => K::CredentialStuffing,
                wit::IncidentKind::PasswordSpraying => K::PasswordSpraying,
                wit::IncidentKind::BruteForce => K::BruteForce,
                wit::IncidentKind::PushBombing => K::PushBombing,
                wit::IncidentKind::RecoveryAbuse => K::RecoveryAbuse,
                wit::IncidentKind::SignUpAbuse => K::SignUpAbuse,
                wit::IncidentKind::SecondFactorGuessing => K::SecondFactorGuessing,
            },
            severity: match incident.severity {
                wit::Severity::Low => S::Low,
                wit::Severity::Medium => S::Medium,
                wit::Severity::High => S::High,
                wit::Severity::Critical => S::Critical,
            },
            moment: match incident.moment {
                wit::Moment::Opened => Moment::Opened,
                wit::Moment::TurnedCritical => Moment::TurnedCritical,
                wit::Moment::Closed => Moment::Closed,
            },
            minutes: incident.minutes,
            detections: incident.detections,
            refused_attempts: incident.refused_attempts,
            blocked_sources: incident.blocked_sources,
            protected_accounts: incident.protected_accounts,
            exposed_passwords: incident.exposed_passwords,
            distinct_sources: incident.distinct_sources,
            distinct_accounts: incident.distinct_accounts,
            measures: incident.measures.into_iter().map(measure).collect(),
            timeline: incident
                .timeline
                .into_iter()
                .map(|b| super::Bucket { minute: b.minute, measures: b.measures })
                .collect(),
            settings: super::Settings {
                max_failed_attempts: s.max_failed_attempts,
                lockout_duration_minutes: s.lockout_duration_minutes,
                lockout_enabled: s.lockout_enabled,
                minimum_password_length: s.minimum_password_length,
                block_breached_passwords: s.block_breached_passwords,
            },
        }
    }

    fn reading(reading: super::Reading) -> wit::Reading {
        use super::{Change as C, Classification as K};
        let recommendation = |r: super::Recommendation| wit::Recommendation {
            change: match r.change {
                C::RefuseBreachedPasswords => wit::Change::RefuseBreachedPasswords,
                C::LockOutSooner => wit::Change::LockOutSooner,
                C::LockOutLonger => wit::Change::LockOutLonger,
                C::LockOutNewAccounts => wit::Change::LockOutNewAccounts,
                C::RequireLongerPasswords => wit::Change::RequireLongerPasswords,
            },
            value: r.value,
            why: r.why,
        };
        wit::Reading {
            classification: match reading.classification {
                K::CredentialStuffing => wit::Classification::CredentialStuffing,
                K::PasswordSpraying => wit::Classification::PasswordSpraying,
                K::BruteForce => wit::Classification::BruteForce,
                K::PushBombing => wit::Classification::PushBombing,
                K::RecoveryAbuse => wit::Classification::RecoveryAbuse,
                K::SignUpAbuse => wit::Classification::SignUpAbuse,
                K::SecondFactorGuessing => wit::Classification::SecondFactorGuessing,
                K::LegitimateSurge => wit::Classification::LegitimateSurge,
                K::Misconfiguration => wit::Classification::Misconfiguration,
                K::Inconclusive => wit::Classification::Inconclusive,
            },
            confidence: reading.confidence,
            what_happened: reading.what_happened,
            what_was_done: reading.what_was_done,
            exposed_passwords: reading.exposed_passwords,
            recommendations: reading.recommendations.into_iter().map(recommendation).collect::<Vec<_>>(),
            report: reading.report.map(|r| wit::Report {
                nature: r.nature,
                data_and_people: r.data_and_people,
                risks: r.risks,
                measures: r.measures,
                communication: r.communication,
            }),
        }
    }

    export!(Analyst);
}
