//! The attack detector (`wit/detector.wit`): decides the measures of attack protection from one
//! attempt and the counts around it. The service embeds `plugins/detector`; another component of
//! the world can be loaded from a file. When the component cannot answer (a trap, the deadline, the
//! memory limit) protection fails open: the attempt proceeds as if it were absent, and the failure
//! is logged.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use wasmtime::component::Component;

use super::{Limits, Pool};

wasmtime::component::bindgen!({ world: "detector", path: "../wit" });

pub use castellan::plugins::detector_types::{
    AttemptKind, Classification, Counts, Measure, MeasureKind, Outcome, Severity, Source,
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
        let component = super::load(path, &EMBEDDED_COMPONENT, EMBEDDED, "the embedded attack detector")?;
        let pool = Pool::new(&component, DetectorPre::new, |pre, store| pre.instantiate(store))?;
        Ok(Self { pool })
    }

    /// The component's decision, or `None` when it could not answer (protection fails open). The
    /// call runs on the caller's thread: it takes well under a microsecond, and the deadline bounds
    /// the worst case to 50 ms.
    pub fn decide(&self, attempt: Attempt) -> Option<Decision> {
        Self::answer(self.pool.call(|instance, store| instance.call_decide(store, attempt)))
    }

    fn answer(decided: anyhow::Result<Decision>) -> Option<Decision> {
        match decided {
            Ok(decision) => Some(decision),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(counts: Counts, source: Source) -> Attempt {
        Attempt { kind: AttemptKind::Password, outcome: Outcome::Failed, account_known: true, source, counts }
    }

    fn counts() -> Counts {
        Counts {
            source_failures: 0,
            source_accounts: 0,
            source_unknown_account_failures: 0,
            source_earlier_blocks: 0,
            account_unapproved_failures: 0,
            account_phone_refusals: 0,
            account_recovery_requests: 0,
            source_recovery_accounts: 0,
        }
    }

    const STRANGER: Source =
        Source { approved_for_account: false, datacenter: false, tor: false, shared_network: false };

    #[test]
    fn the_embedded_component_blocks_a_source_working_through_accounts() {
        let detector = AttackDetector::load(None).unwrap_or_else(|error| panic!("{error:#}"));
        let quiet = detector.decide(attempt(counts(), STRANGER)).unwrap_or_else(|| panic!("an answer"));
        assert!(quiet.measures.is_empty() && quiet.classification.is_none());
        let busy = Counts { source_failures: 9, source_accounts: 8, source_unknown_account_failures: 6, ..counts() };
        let decision = detector.decide(attempt(busy, STRANGER)).unwrap_or_else(|| panic!("an answer"));
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
