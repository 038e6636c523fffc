//! The runtime: what a running host is made of around the domain. Errors, the per-host caches and
//! the following of other hosts' changes, periodic jobs, metrics and telemetry, work sent off after
//! an answer, what leaves the host (HTTP to public addresses, mail), the counters hosts share, the
//! first start and the way a host stops.

pub mod application;
pub mod bootstrap;
pub mod cache;
pub mod changes;
pub mod context;
pub mod counting;
pub mod detached;
pub mod error;
pub mod job_table;
pub mod jobs;
pub mod metrics;
pub mod outbound;
pub mod rate_limit;
pub mod shutdown;
pub mod telemetry;
