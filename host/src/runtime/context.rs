//! The context a domain operation works in: the settings and the public address, the store with
//! its group commit and coalesced session reads, the clock, the secret hasher, the per-host
//! caches, the metrics, the password checks, the ways out of the host and the work sent off after
//! an answer. A domain function takes this and the one or two services of a wing it calls (attack
//! protection, webhooks, the fetched documents, the policies…), never the whole application; the
//! edge's state hands each over as it is.

use std::sync::Arc;

use crate::kernel::clock::Clock;
use crate::kernel::config::Settings;
use crate::kernel::crypto::SecretHasher;
use crate::kernel::passwords::PasswordChecks;
use crate::runtime::cache::Caches;
use crate::runtime::detached::Detached;
use crate::runtime::metrics::Metrics;
use crate::runtime::outbound::Outbound;
use crate::store::Store;
use crate::store::session_reads::SessionReads;
use crate::store::write_queue::WriteQueue;

#[derive(Debug)]
pub struct Context {
    pub settings: Arc<Settings>,
    /// The public base address of the service, without a trailing slash.
    pub public_url: String,
    pub store: Store,
    pub clock: Arc<dyn Clock>,
    pub hasher: SecretHasher,
    pub caches: Arc<Caches>,
    pub metrics: Arc<Metrics>,
    /// Group commit for lone events and refresh-token rotations.
    pub writes: WriteQueue,
    /// Coalesced reads of the sessions access tokens name.
    pub session_reads: SessionReads,
    pub passwords: PasswordChecks,
    pub outbound: Outbound,
    /// Sends that run after their request was answered.
    pub detached: Arc<Detached>,
}
