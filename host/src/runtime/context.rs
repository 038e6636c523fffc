//! The context a domain operation works in: the settings, the store and its group commit, the
//! clock, the secret hasher, the per-host caches and the metrics. A domain function takes this
//! and the one or two services it calls (attack protection, webhooks, the mailer…), never the
//! whole application; the edge's state hands it over as it is.

use std::sync::Arc;

use crate::kernel::clock::Clock;
use crate::kernel::config::Settings;
use crate::kernel::crypto::SecretHasher;
use crate::runtime::cache::Caches;
use crate::runtime::metrics::Metrics;
use crate::store::Store;
use crate::store::write_queue::WriteQueue;

#[derive(Debug)]
pub struct Context {
    pub settings: Arc<Settings>,
    pub store: Store,
    pub clock: Arc<dyn Clock>,
    pub hasher: SecretHasher,
    pub caches: Arc<Caches>,
    pub metrics: Arc<Metrics>,
    /// Group commit for lone events and refresh-token rotations.
    pub writes: WriteQueue,
}
