use alloc::vec;
use alloc::vec::Vec;

use super::*;
use crate::{Bucket, Measure, Settings, Severity};

const SETTINGS: Settings = Settings {
    max_failed_attempts: 10,
    lockout_duration_minutes: 15,
    lockout_enabled: false,
    minimum_password_length: 8,
    block_breached_passwords: false,
};

fn block(failures: u32, accounts: u32, unknown: u32, datacenter: bool) -> Measure {
    Measure {
        kind: MeasureKind::SourceBlocked,
        minute: 1,
        seconds: Some(900),
        lifted: false,
        source_failures: failures,
        source_accounts: accounts,
        unknown_account_failures: unknown,
        earlier_blocks: 0,
        datacenter,
        tor: false,
        reasons: Vec::new(),
    }
}

fn lock(failures: u32) -> Measure {
    Measure {
        kind: MeasureKind::ClosedToUnknownAddresses,
        seconds: Some(1800),
        source_accounts: 1,
        ..block(failures, 1, 0, false)
    }
}

fn incident(kind: IncidentKind, measures: Vec<Measure>, sources: u32, accounts: u32) -> Incident {
    Incident {
        kind,
        severity: Severity::Medium,
        moment: Moment::Opened,
        minutes: 5,
        detections: measures.len() as u32,
        refused_attempts: 40,
        blocked_sources: measures.iter().filter(|m| m.kind == MeasureKind::SourceBlocked).count() as u32,
        protected_accounts: measures.iter().filter(|m| m.kind == MeasureKind::ClosedToUnknownAddresses).count() as u32,
        exposed_passwords: 0,
        distinct_sources: sources,
        distinct_accounts: accounts,
        measures,
        timeline: vec![Bucket { minute: 0, measures: 1 }],
        settings: SETTINGS,
    }
}

fn changes(reading: &Reading) -> Vec<Change> {
    reading.recommendations.iter().map(|r| r.change).collect()
}

#[test]
fn a_list_worked_through_from_a_datacenter_is_credential_stuffing() {
    let stuffing = incident(IncidentKind::CredentialStuffing, vec![block(9, 8, 5, true), block(6, 4, 3, true)], 2, 0);
    let reading = read(&stuffing, Language::English);
    assert_eq!((reading.classification, reading.confidence), (Classification::CredentialStuffing, 92));
    assert_eq!(
        changes(&reading),
        [Change::RefuseBreachedPasswords, Change::RequireLongerPasswords, Change::LockOutSooner]
    );
    assert!(reading.what_happened.contains("53% of the failures"), "{}", reading.what_happened);
    assert!(reading.report.is_none(), "only the closing reading reports");
}

#[test]
fn many_real_accounts_tried_once_each_is_password_spraying() {
    let spraying = incident(IncidentKind::PasswordSpraying, vec![block(9, 9, 0, false), block(8, 8, 0, false)], 2, 0);
    let reading = read(&spraying, Language::English);
    assert_eq!((reading.classification, reading.confidence), (Classification::PasswordSpraying, 76));
}

#[test]
fn one_account_guessed_from_a_datacenter_is_brute_force() {
    let guessing = incident(IncidentKind::BruteForce, vec![block(30, 1, 0, true), lock(12)], 3, 1);
    let reading = read(&guessing, Language::English);
    assert_eq!((reading.classification, reading.confidence), (Classification::BruteForce, 85));
    assert_eq!(changes(&reading), [Change::LockOutNewAccounts, Change::LockOutSooner, Change::LockOutLonger]);
    assert_eq!(reading.recommendations[1].value, 5, "from 10 attempts to 5, never below 3");
}

#[test]
fn a_client_sending_a_stale_password_from_one_address_is_a_misconfiguration() {
    let mut returning = block(30, 1, 0, false);
    returning.earlier_blocks = 2;
    let stale = incident(IncidentKind::BruteForce, vec![block(30, 1, 0, false), returning], 1, 1);
    let reading = read(&stale, Language::English);
    assert_eq!((reading.classification, reading.confidence), (Classification::Misconfiguration, 78));
    assert!(reading.recommendations.is_empty(), "tightening would not mend a client");
    assert!(reading.what_happened.contains("stale") || reading.what_happened.contains("changed"));
}

#[test]
fn many_residential_addresses_retrying_their_own_accounts_are_a_legitimate_surge() {
    let surge = incident(IncidentKind::BruteForce, (0..6).map(|_| lock(12)).collect(), 6, 6);
    let reading = read(&surge, Language::English);
    assert_eq!((reading.classification, reading.confidence), (Classification::LegitimateSurge, 72));
    assert!(reading.recommendations.is_empty(), "the realm's own people would be locked out");
    // The same spread from datacenters is no surge of people.
    let mut hostile: Vec<Measure> = (0..6).map(|_| lock(12)).collect();
    hostile[0].datacenter = true;
    let reading = read(&incident(IncidentKind::BruteForce, hostile, 6, 6), Language::English);
    assert_ne!(reading.classification, Classification::LegitimateSurge);
}

#[test]
fn phones_and_recovery_read_as_their_kinds() {
    let mut pause = lock(0);
    pause.kind = MeasureKind::SignInPushesPaused;
    let bombing = incident(IncidentKind::PushBombing, vec![pause], 0, 1);
    assert_eq!(read(&bombing, Language::English).classification, Classification::PushBombing);
    let recovery = incident(IncidentKind::RecoveryAbuse, vec![block(0, 0, 0, false)], 1, 0);
    assert_eq!(read(&recovery, Language::English).classification, Classification::RecoveryAbuse);
}

#[test]
fn an_incident_without_measures_is_inconclusive() {
    let empty = incident(IncidentKind::PasswordSpraying, Vec::new(), 0, 0);
    assert_eq!(read(&empty, Language::English).classification, Classification::Inconclusive);
}

#[test]
fn an_exposed_password_is_an_attack_and_the_closing_reading_reports_it_in_either_language() {
    let mut exposed = incident(IncidentKind::CredentialStuffing, vec![block(9, 8, 1, false)], 1, 1);
    exposed.exposed_passwords = 1;
    exposed.moment = Moment::Closed;
    let reading = read(&exposed, Language::English);
    assert_eq!((reading.classification, reading.confidence), (Classification::CredentialStuffing, 95));
    let report = reading.report.unwrap_or_else(|| panic!("the closing reading reports"));
    assert!(report.communication.contains("72 hours"), "{}", report.communication);
    assert!(reading.exposed_passwords.starts_with("1 correct password"));
    let french = read(&exposed, Language::French);
    assert_eq!(french.classification, reading.classification);
    assert!(french.exposed_passwords.contains("mot(s) de passe"), "{}", french.exposed_passwords);
    assert!(french.report.is_some_and(|r| r.communication.contains("72 heures")));
}

#[test]
fn recommendations_only_tighten_and_are_at_most_three() {
    let strict = Settings {
        max_failed_attempts: 3,
        lockout_duration_minutes: 1440,
        lockout_enabled: true,
        minimum_password_length: 16,
        block_breached_passwords: true,
    };
    let mut guessing = incident(IncidentKind::BruteForce, vec![block(30, 1, 0, true)], 2, 1);
    guessing.settings = strict;
    assert!(read(&guessing, Language::English).recommendations.is_empty(), "already at least as strict");
    let loose = incident(IncidentKind::BruteForce, vec![block(30, 1, 0, true)], 2, 1);
    assert_eq!(read(&loose, Language::English).recommendations.len(), 3, "four would tighten; three are given");
}
