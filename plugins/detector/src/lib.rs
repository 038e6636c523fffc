//! The attack detector: from one attempt and the counts the host read around it, decides the
//! measures of attack protection exactly as the attack protection rules set them, the kind of
//! attack and its severity, with the reasons in words.
//!
//! Compiled to `wasm32-wasip2` it is a component of the `detector` world (`wit/detector.wit`),
//! written without the standard library so that it imports nothing. On the build machine it is an
//! ordinary library, which is how its tests run.

#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

const MINUTE: u32 = 60;

/// Blocked source: different accounts, or failures, from one address within 10 minutes.
const BLOCK_ACCOUNTS: u32 = 8;
const BLOCK_FAILURES: u32 = 30;
/// Smart lockout: failures against one account within 15 minutes from unapproved addresses.
const LOCKOUT_FAILURES: u32 = 10;
/// Exposed password: the source failed against at least this many accounts within 10 minutes…
const EXPOSURE_ACCOUNTS: u32 = 3;
/// …and looks like a list being worked through: this many accounts, or 30 % unknown ones.
const LIST_ACCOUNTS: u32 = 5;
/// Push bombing: sign-in requests refused on the phone within 30 minutes.
const PHONE_REFUSALS: u32 = 2;
/// Recovery: more than this many requests for one account within 30 minutes.
const RECOVERY_REQUESTS: u32 = 3;
/// Recovery: different accounts asked for from one address within 30 minutes.
const RECOVERY_ACCOUNTS: u32 = 8;
/// Sign-up: accounts asked for from one address within an hour.
const SIGN_UPS: u32 = 10;
/// Second factor: wrong codes for one account within 15 minutes from unapproved addresses, each
/// after its right password.
const SECOND_FACTOR_FAILURES: u32 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Password,
    Recovery,
    PushAnswer,
    SignUp,
    SecondFactor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    Failed,
    Requested,
    RefusedOnPhone,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Source {
    pub approved_for_account: bool,
    pub datacenter: bool,
    pub tor: bool,
    pub shared_network: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub source_failures: u32,
    pub source_accounts: u32,
    pub source_unknown_account_failures: u32,
    pub source_earlier_blocks: u32,
    pub account_unapproved_failures: u32,
    pub account_phone_refusals: u32,
    pub account_recovery_requests: u32,
    pub source_recovery_accounts: u32,
    pub source_sign_ups: u32,
    pub account_second_factor_failures: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    pub kind: Kind,
    pub outcome: Outcome,
    pub account_known: bool,
    pub source: Source,
    pub counts: Counts,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeasureKind {
    SourceBlocked,
    ClosedToUnknownAddresses,
    SignInPushesPaused,
    PasswordExposed,
    RecoverySilenced,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measure {
    pub kind: MeasureKind,
    /// None: never lapses.
    pub seconds: Option<u32>,
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
}

/// The severity of an incident; it never decreases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    pub measures: Vec<Measure>,
    pub classification: Option<Classification>,
    pub severity: Option<Severity>,
    pub reasons: Vec<String>,
}

impl Decision {
    fn take(&mut self, kind: MeasureKind, seconds: Option<u32>, classification: Classification, severity: Severity) {
        self.measures.push(Measure { kind, seconds });
        self.classification.get_or_insert(classification);
        self.severity = Some(self.severity.map_or(severity, |held| held.max(severity)));
    }
}

/// A source's block lasts 15 minutes, an hour when it is its second within 24 hours, and a day
/// from the third on.
fn block_seconds(earlier_blocks: u32) -> u32 {
    match earlier_blocks {
        0 => 15 * MINUTE,
        1 => 60 * MINUTE,
        _ => 24 * 60 * MINUTE,
    }
}

/// Whether at least 30 % of the source's failures named accounts the realm never had.
fn mostly_unknown(counts: &Counts) -> bool {
    counts.source_failures > 0 && counts.source_unknown_account_failures * 10 >= counts.source_failures * 3
}

/// Decides what to do about one attempt.
pub fn decide(attempt: &Attempt) -> Decision {
    let mut decision = Decision::default();
    let Attempt { kind, outcome, account_known, source, counts } = *attempt;
    let halved = source.datacenter || source.tor;
    let (block_accounts, block_failures) =
        if halved { (BLOCK_ACCOUNTS / 2, BLOCK_FAILURES / 2) } else { (BLOCK_ACCOUNTS, BLOCK_FAILURES) };
    // Told only with a decision a halved threshold took.
    let halving = |decision: &mut Decision| {
        if halved {
            let what = if source.tor { "a Tor exit" } else { "a datacenter network" };
            decision.reasons.push(format!("the address is {what}: source thresholds halved"));
        }
    };
    let block = |decision: &mut Decision, classification: Classification, why: String| {
        if source.shared_network {
            decision.reasons.push(format!("{why}; the address is a shared network, never blocked whole"));
            return;
        }
        let seconds = block_seconds(counts.source_earlier_blocks);
        decision.reasons.push(format!("{why}: source blocked for {} minutes", seconds / MINUTE));
        let severity = if counts.source_earlier_blocks >= 2 {
            decision.reasons.push("the third block of the address within 24 hours".into());
            Severity::High
        } else {
            match classification {
                Classification::BruteForce | Classification::PushBombing => Severity::High,
                Classification::SecondFactorGuessing => Severity::Critical,
                Classification::RecoveryAbuse => Severity::Low,
                Classification::CredentialStuffing | Classification::PasswordSpraying | Classification::SignUpAbuse => {
                    Severity::Medium
                }
            }
        };
        decision.take(MeasureKind::SourceBlocked, Some(seconds), classification, severity);
    };

    match (kind, outcome) {
        (Kind::Password, Outcome::Failed) => {
            if counts.source_accounts >= block_accounts || counts.source_failures >= block_failures {
                let classification = if mostly_unknown(&counts) {
                    Classification::CredentialStuffing
                } else if counts.source_accounts >= EXPOSURE_ACCOUNTS {
                    Classification::PasswordSpraying
                } else {
                    Classification::BruteForce
                };
                let why = format!(
                    "{} failures against {} accounts from the address within 10 minutes (block at {} accounts or {} failures)",
                    counts.source_failures, counts.source_accounts, block_accounts, block_failures
                );
                halving(&mut decision);
                block(&mut decision, classification, why);
            }
            if account_known && !source.approved_for_account && counts.account_unapproved_failures >= LOCKOUT_FAILURES {
                decision.reasons.push(format!(
                    "{} failures against the account within 15 minutes from addresses it was never approved at",
                    counts.account_unapproved_failures
                ));
                decision.take(
                    MeasureKind::ClosedToUnknownAddresses,
                    Some(30 * MINUTE),
                    Classification::BruteForce,
                    Severity::High,
                );
            }
        }
        (Kind::Password, Outcome::Succeeded) => {
            let from_a_list = mostly_unknown(&counts) || halved || counts.source_accounts >= LIST_ACCOUNTS;
            if !source.approved_for_account && counts.source_accounts >= EXPOSURE_ACCOUNTS && from_a_list {
                if source.shared_network {
                    decision
                        .reasons
                        .push("a correct password from a shared network is never treated as exposed".into());
                } else {
                    decision.reasons.push(format!(
                        "the correct password arrived from an address that failed against {} accounts within 10 minutes",
                        counts.source_accounts
                    ));
                    let classification = if mostly_unknown(&counts) {
                        Classification::CredentialStuffing
                    } else {
                        Classification::PasswordSpraying
                    };
                    decision.take(MeasureKind::PasswordExposed, None, classification, Severity::Critical);
                }
            }
        }
        (Kind::Recovery, Outcome::Requested) => {
            if counts.account_recovery_requests > RECOVERY_REQUESTS {
                decision.reasons.push(format!(
                    "{} recovery requests for the account within 30 minutes",
                    counts.account_recovery_requests
                ));
                decision.take(
                    MeasureKind::RecoverySilenced,
                    Some(30 * MINUTE),
                    Classification::RecoveryAbuse,
                    Severity::Low,
                );
            }
            if counts.source_recovery_accounts >= RECOVERY_ACCOUNTS {
                let why = format!(
                    "recovery asked for {} accounts from the address within 30 minutes",
                    counts.source_recovery_accounts
                );
                block(&mut decision, Classification::RecoveryAbuse, why);
            }
        }
        (Kind::SignUp, Outcome::Requested) => {
            let limit = if halved { SIGN_UPS / 2 } else { SIGN_UPS };
            if counts.source_sign_ups >= limit {
                let why = format!(
                    "{} sign-ups asked from the address within an hour (block at {limit})",
                    counts.source_sign_ups
                );
                halving(&mut decision);
                block(&mut decision, Classification::SignUpAbuse, why);
            }
        }
        // Each wrong code came after the account's right password: whoever types them holds it.
        (Kind::SecondFactor, Outcome::Failed)
            if !source.approved_for_account && counts.account_second_factor_failures >= SECOND_FACTOR_FAILURES =>
        {
            decision.reasons.push(format!(
                "{} wrong second-factor codes for the account within 15 minutes from addresses it was never \
                 approved at, each after its right password",
                counts.account_second_factor_failures
            ));
            decision.take(MeasureKind::PasswordExposed, None, Classification::SecondFactorGuessing, Severity::Critical);
            let why = String::from("second factors guessed from the address");
            block(&mut decision, Classification::SecondFactorGuessing, why);
        }
        (Kind::PushAnswer, Outcome::RefusedOnPhone) if counts.account_phone_refusals >= PHONE_REFUSALS => {
            decision.reasons.push(format!(
                "{} sign-in requests refused on the phone within 30 minutes",
                counts.account_phone_refusals
            ));
            decision.take(
                MeasureKind::SignInPushesPaused,
                Some(30 * MINUTE),
                Classification::PushBombing,
                Severity::High,
            );
        }
        _ => {}
    }
    if decision.measures.is_empty() {
        // An ordinary attempt: nothing to say.
        return Decision::default();
    }
    decision
}

castellan_guest::runtime!();

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod component {
    use alloc::string::String;
    use alloc::vec::Vec;

    wit_bindgen::generate!({ world: "detector", path: "../../wit" });

    use castellan::plugins::detector_types as wit;

    struct Detector;

    impl Guest for Detector {
        fn decide(attempt: wit::Attempt) -> wit::Decision {
            let c = attempt.counts;
            let s = attempt.source;
            let attempt = super::Attempt {
                kind: match attempt.kind {
                    wit::AttemptKind::Password => super::Kind::Password,
                    wit::AttemptKind::Recovery => super::Kind::Recovery,
                    wit::AttemptKind::PushAnswer => super::Kind::PushAnswer,
                    wit::AttemptKind::SignUp => super::Kind::SignUp,
                    wit::AttemptKind::SecondFactor => super::Kind::SecondFactor,
                },
                outcome: match attempt.outcome {
                    wit::Outcome::Succeeded => super::Outcome::Succeeded,
                    wit::Outcome::Failed => super::Outcome::Failed,
                    wit::Outcome::Requested => super::Outcome::Requested,
                    wit::Outcome::RefusedOnPhone => super::Outcome::RefusedOnPhone,
                },
                account_known: attempt.account_known,
                source: super::Source {
                    approved_for_account: s.approved_for_account,
                    datacenter: s.datacenter,
                    tor: s.tor,
                    shared_network: s.shared_network,
                },
                counts: super::Counts {
                    source_failures: c.source_failures,
                    source_accounts: c.source_accounts,
                    source_unknown_account_failures: c.source_unknown_account_failures,
                    source_earlier_blocks: c.source_earlier_blocks,
                    account_unapproved_failures: c.account_unapproved_failures,
                    account_phone_refusals: c.account_phone_refusals,
                    account_recovery_requests: c.account_recovery_requests,
                    source_recovery_accounts: c.source_recovery_accounts,
                    source_sign_ups: c.source_sign_ups,
                    account_second_factor_failures: c.account_second_factor_failures,
                },
            };
            let decision = super::decide(&attempt);
            wit::Decision {
                measures: decision
                    .measures
                    .iter()
                    .map(|m| wit::Measure {
                        kind: match m.kind {
                            super::MeasureKind::SourceBlocked => wit::MeasureKind::SourceBlocked,
                            super::MeasureKind::ClosedToUnknownAddresses => wit::MeasureKind::ClosedToUnknownAddresses,
                            super::MeasureKind::SignInPushesPaused => wit::MeasureKind::SignInPushesPaused,
                            super::MeasureKind::PasswordExposed => wit::MeasureKind::PasswordExposed,
                            super::MeasureKind::RecoverySilenced => wit::MeasureKind::RecoverySilenced,
                        },
                        seconds: m.seconds,
                    })
                    .collect::<Vec<_>>(),
                classification: decision.classification.map(|c| match c {
                    super::Classification::CredentialStuffing => wit::Classification::CredentialStuffing,
                    super::Classification::PasswordSpraying => wit::Classification::PasswordSpraying,
                    super::Classification::BruteForce => wit::Classification::BruteForce,
                    super::Classification::PushBombing => wit::Classification::PushBombing,
                    super::Classification::RecoveryAbuse => wit::Classification::RecoveryAbuse,
                    super::Classification::SignUpAbuse => wit::Classification::SignUpAbuse,
                    super::Classification::SecondFactorGuessing => wit::Classification::SecondFactorGuessing,
                }),
                severity: decision.severity.map(|s| match s {
                    super::Severity::Low => wit::Severity::Low,
                    super::Severity::Medium => wit::Severity::Medium,
                    super::Severity::High => wit::Severity::High,
                    super::Severity::Critical => wit::Severity::Critical,
                }),
                reasons: decision.reasons.into_iter().collect::<Vec<String>>(),
            }
        }
    }

    export!(Detector);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(counts: Counts, source: Source) -> Attempt {
        Attempt { kind: Kind::Password, outcome: Outcome::Failed, account_known: true, source, counts }
    }

    fn kinds(decision: &Decision) -> Vec<(MeasureKind, Option<u32>)> {
        decision.measures.iter().map(|m| (m.kind, m.seconds)).collect()
    }

    #[test]
    fn a_source_is_blocked_at_8_accounts_or_30_failures_and_longer_each_time() {
        let below = failed(Counts { source_failures: 29, source_accounts: 7, ..Counts::default() }, Source::default());
        assert_eq!(decide(&below), Decision::default());
        let accounts =
            failed(Counts { source_failures: 8, source_accounts: 8, ..Counts::default() }, Source::default());
        let decision = decide(&accounts);
        assert_eq!(kinds(&decision), [(MeasureKind::SourceBlocked, Some(15 * 60))]);
        assert_eq!(decision.classification, Some(Classification::PasswordSpraying));
        assert_eq!(decision.severity, Some(Severity::Medium));
        let failures =
            Counts { source_failures: 30, source_accounts: 1, source_earlier_blocks: 1, ..Counts::default() };
        let decision = decide(&failed(failures, Source::default()));
        assert_eq!(kinds(&decision), [(MeasureKind::SourceBlocked, Some(60 * 60))]);
        assert_eq!(decision.classification, Some(Classification::BruteForce), "kept to one account");
        assert_eq!(decision.severity, Some(Severity::High), "brute force on one account");
        let third = Counts { source_earlier_blocks: 2, source_accounts: 9, ..failures };
        let decision = decide(&failed(third, Source::default()));
        assert_eq!(kinds(&decision), [(MeasureKind::SourceBlocked, Some(24 * 3600))]);
        assert_eq!(decision.severity, Some(Severity::High), "a third block within 24 hours");
    }

    #[test]
    fn datacenter_and_tor_sources_get_half_the_thresholds() {
        let counts = Counts { source_failures: 4, source_accounts: 4, ..Counts::default() };
        assert_eq!(decide(&failed(counts, Source::default())), Decision::default());
        for source in [Source { datacenter: true, ..Source::default() }, Source { tor: true, ..Source::default() }] {
            let decision = decide(&failed(counts, source));
            assert_eq!(kinds(&decision), [(MeasureKind::SourceBlocked, Some(15 * 60))]);
            assert!(decision.reasons.iter().any(|r| r.contains("halved")), "{:?}", decision.reasons);
        }
        let failures = Counts { source_failures: 15, source_accounts: 1, ..Counts::default() };
        assert!(!decide(&failed(failures, Source { tor: true, ..Source::default() })).measures.is_empty());
    }

    #[test]
    fn the_halving_is_told_only_with_a_decision_a_halved_threshold_took() {
        let datacenter = Source { datacenter: true, ..Source::default() };
        let halved = |decision: &Decision| decision.reasons.iter().any(|r| r.contains("halved"));
        let recovery = Attempt {
            kind: Kind::Recovery,
            outcome: Outcome::Requested,
            account_known: true,
            source: datacenter,
            counts: Counts { source_recovery_accounts: 8, ..Counts::default() },
        };
        let decision = decide(&recovery);
        assert_eq!(kinds(&decision), [(MeasureKind::SourceBlocked, Some(15 * 60))]);
        assert!(!halved(&decision), "the recovery threshold is not halved: {:?}", decision.reasons);
        let exposure = Attempt {
            kind: Kind::Password,
            outcome: Outcome::Succeeded,
            account_known: true,
            source: datacenter,
            counts: Counts { source_accounts: 5, source_failures: 5, ..Counts::default() },
        };
        let decision = decide(&exposure);
        assert_eq!(kinds(&decision), [(MeasureKind::PasswordExposed, None)]);
        assert!(!halved(&decision), "{:?}", decision.reasons);
        let lockout = failed(Counts { account_unapproved_failures: 10, ..Counts::default() }, datacenter);
        let decision = decide(&lockout);
        assert_eq!(kinds(&decision), [(MeasureKind::ClosedToUnknownAddresses, Some(30 * 60))]);
        assert!(!halved(&decision), "{:?}", decision.reasons);
    }

    #[test]
    fn mostly_unknown_accounts_are_credential_stuffing() {
        let counts =
            Counts { source_failures: 10, source_accounts: 8, source_unknown_account_failures: 3, ..Counts::default() };
        assert_eq!(decide(&failed(counts, Source::default())).classification, Some(Classification::CredentialStuffing));
        let fewer = Counts { source_unknown_account_failures: 2, ..counts };
        assert_eq!(decide(&failed(fewer, Source::default())).classification, Some(Classification::PasswordSpraying));
    }

    #[test]
    fn a_shared_network_is_never_blocked_whole_but_its_accounts_lock_against_strangers() {
        let shared = Source { shared_network: true, ..Source::default() };
        let counts = Counts { source_failures: 40, source_accounts: 12, ..Counts::default() };
        assert_eq!(decide(&failed(counts, shared)), Decision::default());
        let lockout = Counts { account_unapproved_failures: 10, ..counts };
        assert_eq!(kinds(&decide(&failed(lockout, shared))), [(MeasureKind::ClosedToUnknownAddresses, Some(30 * 60))]);
    }

    #[test]
    fn smart_lockout_closes_an_account_to_addresses_it_was_never_approved_at() {
        let counts =
            Counts { account_unapproved_failures: 10, source_failures: 10, source_accounts: 1, ..Counts::default() };
        let decision = decide(&failed(counts, Source::default()));
        assert_eq!(kinds(&decision), [(MeasureKind::ClosedToUnknownAddresses, Some(30 * 60))]);
        assert_eq!(decision.classification, Some(Classification::BruteForce));
        let approved = Source { approved_for_account: true, ..Source::default() };
        assert_eq!(decide(&failed(counts, approved)), Decision::default(), "approved addresses keep working");
        let nine = Counts { account_unapproved_failures: 9, ..counts };
        assert_eq!(decide(&failed(nine, Source::default())), Decision::default());
        let unknown = Attempt { account_known: false, ..failed(counts, Source::default()) };
        assert_eq!(decide(&unknown), Decision::default(), "no account to close");
    }

    #[test]
    fn a_correct_password_from_a_list_being_worked_through_is_exposed() {
        let succeeded = |counts: Counts, source: Source| Attempt {
            kind: Kind::Password,
            outcome: Outcome::Succeeded,
            account_known: true,
            source,
            counts,
        };
        let list = Counts { source_failures: 5, source_accounts: 5, ..Counts::default() };
        let decision = decide(&succeeded(list, Source::default()));
        assert_eq!(kinds(&decision), [(MeasureKind::PasswordExposed, None)], "never lapses");
        assert_eq!(decision.severity, Some(Severity::Critical));
        let three = Counts { source_failures: 3, source_accounts: 3, ..Counts::default() };
        assert_eq!(decide(&succeeded(three, Source::default())), Decision::default(), "not yet a list");
        let datacenter = Source { datacenter: true, ..Source::default() };
        assert!(!decide(&succeeded(three, datacenter)).measures.is_empty(), "a datacenter makes it one");
        let unknown = Counts { source_unknown_account_failures: 1, ..three };
        assert_eq!(
            decide(&succeeded(unknown, Source::default())).classification,
            Some(Classification::CredentialStuffing)
        );
        let approved = Source { approved_for_account: true, ..Source::default() };
        assert_eq!(decide(&succeeded(list, approved)), Decision::default());
        let shared = Source { shared_network: true, ..Source::default() };
        assert_eq!(decide(&succeeded(list, shared)), Decision::default(), "never from a shared network");
    }

    #[test]
    fn push_bombing_pauses_the_phones_after_two_refusals() {
        let answer = |refusals: u32| Attempt {
            kind: Kind::PushAnswer,
            outcome: Outcome::RefusedOnPhone,
            account_known: true,
            source: Source::default(),
            counts: Counts { account_phone_refusals: refusals, ..Counts::default() },
        };
        assert_eq!(decide(&answer(1)), Decision::default());
        let decision = decide(&answer(2));
        assert_eq!(kinds(&decision), [(MeasureKind::SignInPushesPaused, Some(30 * 60))]);
        assert_eq!(decision.classification, Some(Classification::PushBombing));
    }

    #[test]
    fn recovery_is_silenced_per_account_and_blocked_per_address() {
        let request = |counts: Counts| Attempt {
            kind: Kind::Recovery,
            outcome: Outcome::Requested,
            account_known: true,
            source: Source::default(),
            counts,
        };
        assert_eq!(decide(&request(Counts { account_recovery_requests: 3, ..Counts::default() })), Decision::default());
        let decision = decide(&request(Counts { account_recovery_requests: 4, ..Counts::default() }));
        assert_eq!(kinds(&decision), [(MeasureKind::RecoverySilenced, Some(30 * 60))]);
        assert_eq!(decision.severity, Some(Severity::Low), "recovery abuse is low");
        let decision = decide(&request(Counts { source_recovery_accounts: 8, ..Counts::default() }));
        assert_eq!(kinds(&decision), [(MeasureKind::SourceBlocked, Some(15 * 60))]);
        assert_eq!(decision.classification, Some(Classification::RecoveryAbuse));
    }

    #[test]
    fn ten_sign_ups_from_one_address_within_an_hour_block_it_five_from_a_datacenter() {
        let request = |source_sign_ups: u32, source: Source| Attempt {
            kind: Kind::SignUp,
            outcome: Outcome::Requested,
            account_known: false,
            source,
            counts: Counts { source_sign_ups, ..Counts::default() },
        };
        assert_eq!(decide(&request(9, Source::default())), Decision::default());
        let decision = decide(&request(10, Source::default()));
        assert_eq!(kinds(&decision), [(MeasureKind::SourceBlocked, Some(15 * 60))]);
        assert_eq!(decision.classification, Some(Classification::SignUpAbuse));
        assert_eq!(decision.severity, Some(Severity::Medium));
        let datacenter = Source { datacenter: true, ..Source::default() };
        assert_eq!(kinds(&decide(&request(5, datacenter))), [(MeasureKind::SourceBlocked, Some(15 * 60))]);
        let shared = Source { shared_network: true, ..Source::default() };
        assert!(decide(&request(50, shared)).measures.is_empty(), "a shared network is never blocked whole");
    }

    #[test]
    fn five_wrong_codes_after_the_right_password_expose_it_and_block_the_address() {
        let guess = |failures: u32, source: Source| Attempt {
            kind: Kind::SecondFactor,
            outcome: Outcome::Failed,
            account_known: true,
            source,
            counts: Counts { account_second_factor_failures: failures, ..Counts::default() },
        };
        assert_eq!(decide(&guess(4, Source::default())), Decision::default());
        let decision = decide(&guess(5, Source::default()));
        assert_eq!(
            kinds(&decision),
            [(MeasureKind::PasswordExposed, None), (MeasureKind::SourceBlocked, Some(15 * 60))]
        );
        assert_eq!(decision.classification, Some(Classification::SecondFactorGuessing));
        assert_eq!(decision.severity, Some(Severity::Critical));
        let approved = Source { approved_for_account: true, ..Source::default() };
        assert_eq!(decide(&guess(9, approved)), Decision::default(), "the person's own address");
        let shared = Source { shared_network: true, ..Source::default() };
        assert_eq!(kinds(&decide(&guess(5, shared))), [(MeasureKind::PasswordExposed, None)], "never blocked whole");
    }
}
