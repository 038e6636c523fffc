//! Operations: webhooks and their delivery, imports and migration, the dedicated instance, several
//! hosts, metrics, logs and upgrades.

pub mod configuration;
pub mod connection_limits;
pub mod dedicated;
pub mod delivery_reliability;
pub mod deployment;
pub mod group_commit;
pub mod hosts;
pub mod imports;
pub mod lifecycle;
pub mod logs_and_outages;
pub mod metrics;
pub mod migration;
pub mod readme;
pub mod ssrf;
pub mod upgrades;
pub mod webhook_events;
pub mod webhooks;
