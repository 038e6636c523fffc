//! The runtime: what a running host is made of around the domain. Errors and answers, the context
//! of the domain's operations, the per-host caches and the following of other hosts' changes, the
//! scheduler of periodic jobs, metrics and telemetry, the sandboxed components, work sent off after
//! an answer, what leaves the host (HTTP to public addresses, mail), the counters hosts share and
//! the way a host stops.

pub mod answer;
pub mod cache;
pub mod changes;
pub mod components;
pub mod context;
pub mod counting;
pub mod detached;
pub mod error;
pub mod jobs;
pub mod log_writer;
pub mod metrics;
pub mod outbound;
pub mod rate_limit;
pub mod shutdown;
pub mod telemetry;
