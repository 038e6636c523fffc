//! The attack detector (`wit/detector.wit`): decides the measures of attack protection from one
//! attempt and the counts around it. The service embeds `plugins/detector`; another component of
//! the world can be loaded from a file. When the component cannot answer (a trap, the deadline, the
//! memory limit) protection fails open: the attempt proceeds as if it were absent, and the failure
//! is logged.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use wasmtime::component::Component;

use crate::runtime::components::{self, Limits, Pool};

mod bindings {
    wasmtime::component::bindgen!({ world: "detector", path: "../wit", exports: { default: async } });
}

use self::bindings::castellan::plugins::detector_types as wit;
use self::bindings::{Detector, DetectorPre};
use crate::protection::detection::{
    Attempt, AttemptKind, Classification, Counts, Decision, Measure, MeasureKind, Outcome, Severity, Source,
};

/// The component built from `plugins/detector` with the service.
const EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/castellan_detector.wasm"));

/// Runs a detector component on a pool of warm instances.
#[derive(Debug, Clone)]
pub struct AttackDetector {
    pool: Arc<Pool<Detector, DetectorPre<Limits>>>,
}

impl AttackDetector {
    /// The component at `path`, or the embedded one; checked by instantiating it once.
    pub fn load(path: Option<&Path>) -> anyhow::Result<Self> {
        static EMBEDDED_COMPONENT: OnceLock<Result<Component, String>> = OnceLock::new();
        let component = components::load(path, &EMBEDDED_COMPONENT, EMBEDDED, "the embedded attack detector")?;
        let pool = Pool::new(&component, DetectorPre::new, |pre, store| pre.instantiate(store))?;
        Ok(Self { pool })
    }

    /// The component's decision, or `None` when it could not answer (protection fails open).
    pub async fn decide(&self, attempt: Attempt) -> Option<Decision> {
        let attempt = wit::Attempt::from(attempt);
        let decided = async {
            let mut lease = self.pool.lease()?;
            let decision = lease.instance.call_decide(&mut lease.store, attempt).await?;
            lease.keep();
            anyhow::Ok(decision)
        };
        Self::answer(decided.await)
    }

    fn answer(decided: anyhow::Result<wit::Decision>) -> Option<Decision> {
        match decided {
            Ok(decision) => Some(decision.into()),
            Err(error) => {
                tracing::error!(
                    error = format!("{error:#}"),
                    "the attack detector failed; the attempt proceeds unprotected"
                );
                None
            }
        }
    }
}

impl From<Attempt> for wit::Attempt {
    fn from(attempt: Attempt) -> Self {
        let Attempt { kind, outcome, account_known, source, counts } = attempt;
        let kind = match kind {
            AttemptKind::Password => wit::AttemptKind::Password,
            AttemptKind::Recovery => wit::AttemptKind::Recovery,
            AttemptKind::PushAnswer => wit::AttemptKind::PushAnswer,
            AttemptKind::SignUp => wit::AttemptKind::SignUp,
            AttemptKind::SecondFactor => wit::AttemptKind::SecondFactor,
        };
        let outcome = match outcome {
            Outcome::Succeeded => wit::Outcome::Succeeded,
            Outcome::Failed => wit::Outcome::Failed,
            Outcome::Requested => wit::Outcome::Requested,
            Outcome::RefusedOnPhone => wit::Outcome::RefusedOnPhone,
        };
        let Source { approved_for_account, datacenter, tor, shared_network } = source;
        let Counts {
            source_failures,
            source_accounts,
            source_unknown_account_failures,
            source_earlier_blocks,
            account_unapproved_failures,
            // What the incident analyst reads, not what the detector decides on.
            account_unapproved_sources: _,
            account_phone_refusals,
            account_recovery_requests,
            source_recovery_accounts,
            source_sign_ups,
            account_second_factor_failures,
        } = counts;
        Self {
            kind,
            outcome,
            account_known,
            source: wit::Source { approved_for_account, datacenter, tor, shared_network },
            counts: wit::Counts {
                source_failures,
                source_accounts,
                source_unknown_account_failures,
                source_earlier_blocks,
                account_unapproved_failures,
                account_phone_refusals,
                account_recovery_requests,
                source_recovery_accounts,
                source_sign_ups,
                account_second_factor_failures,
            },
        }
    }
}

impl From<wit::Decision> for Decision {
    fn from(decision: wit::Decision) -> Self {
        let measure = |measure: wit::Measure| Measure {
            kind: match measure.kind {
                wit::MeasureKind::SourceBlocked => MeasureKind::SourceBlocked,
                wit::MeasureKind::ClosedToUnknownAddresses => MeasureKind::ClosedToUnknownAddresses,
                wit::MeasureKind::SignInPushesPaused => MeasureKind::SignInPushesPaused,
                wit::MeasureKind::PasswordExposed => MeasureKind::PasswordExposed,
                wit::MeasureKind::RecoverySilenced => MeasureKind::RecoverySilenced,
            },
            seconds: measure.seconds,
        };
        let classification = |classification| match classification {
            wit::Classification::CredentialStuffing => Classification::CredentialStuffing,
            wit::Classification::PasswordSpraying => Classification::PasswordSpraying,
            wit::Classification::BruteForce => Classification::BruteForce,
            wit::Classification::PushBombing => Classification::PushBombing,
            wit::Classification::RecoveryAbuse => Classification::RecoveryAbuse,
            wit::Classification::SignUpAbuse => Classification::SignUpAbuse,
            wit::Classification::SecondFactorGuessing => Classification::SecondFactorGuessing,
        };
        let severity = |severity| match severity {
            wit::Severity::Low => Severity::Low,
            wit::Severity::Medium => Severity::Medium,
            wit::Severity::High => Severity::High,
            wit::Severity::Critical => Severity::Critical,
        };
        Self {
            measures: decision.measures.into_iter().map(measure).collect(),
            classification: decision.classification.map(classification),
            severity: decision.severity.map(severity),
            reasons: decision.reasons,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(counts: Counts, source: Source) -> Attempt {
        Attempt { kind: AttemptKind::Password, outcome: Outcome::Failed, account_known: true, source, counts }
    }

    fn counts() -> Counts {
        Counts::default()
    }

    const STRANGER: Source =
        Source { approved_for_account: false, datacenter: false, tor: false, shared_network: false };

    #[tokio::test]
    async fn the_embedded_component_blocks_a_source_working_through_accounts() {
        let detector = AttackDetector::load(None).unwrap_or_else(|error| panic!("{error:#}"));
        let quiet = detector.decide(attempt(counts(), STRANGER)).await.unwrap_or_else(|| panic!("an answer"));
        assert!(quiet.measures.is_empty() && quiet.classification.is_none());
        let busy = Counts { source_failures: 9, source_accounts: 8, source_unknown_account_failures: 6, ..counts() };
        let decision = detector.decide(attempt(busy, STRANGER)).await.unwrap_or_else(|| panic!("an answer"));
        assert_eq!(decision.measures.len(), 1);
        assert_eq!(decision.measures[0].kind, MeasureKind::SourceBlocked);
        assert_eq!(decision.measures[0].seconds, Some(15 * 60));
        assert_eq!(decision.classification, Some(Classification::CredentialStuffing));
        assert_eq!(decision.severity, Some(Severity::Medium));
        assert!(!decision.reasons.is_empty());
    }

    #[test]
    fn a_component_of_another_world_is_refused_at_load() {
        let path = std::env::temp_dir().join(format!("payloads-as-detector-{}.wasm", std::process::id()));
        let payloads = include_bytes!(concat!(env!("OUT_DIR"), "/castellan_payloads.wasm"));
        std::fs::write(&path, payloads).unwrap_or_else(|error| panic!("{error}"));
        let loaded = AttackDetector::load(Some(&path));
        let _ = std::fs::remove_file(&path);
        assert!(loaded.is_err(), "the payload builder does not export decide");
    }
}
