//! Castellan: a multi-tenant identity and access service.
//!
//! The wings of the service, from the edges down: `http` (the admin API, the protocol endpoints,
//! the hosted pages and the console), the domain (`oauth`, `directory`, `protection`,
//! `operations`), `authz` and `plugins` beside it, `store`, `runtime` and `kernel`.
//! [`Application::build`] starts a host; [`Application::run_until_stopped`] serves it.

pub mod application;
pub mod authz;
pub mod directory;
pub mod http;
pub mod kernel;
pub mod oauth;
pub mod operations;
pub mod protection;
pub mod runtime;
pub mod store;

use std::future::Future;

pub use application::{Application, Services};

impl Application {
    /// Serves the edges until `shutdown` completes, drains for `drain_seconds` (readiness failing),
    /// then lets in-flight requests finish and stores every queued access log entry.
    pub async fn run_until_stopped(self, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        self.run_with(http::serve, shutdown).await
    }
}
