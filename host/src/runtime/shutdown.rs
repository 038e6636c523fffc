//! How a host stops: on SIGTERM (or Ctrl-C) it first drains — `/readyz` answers 503 while it keeps
//! serving for `drain_seconds`, so a load balancer checking readiness sends the next requests to
//! the other hosts — then stops accepting, lets in-flight requests finish, and stores what is
//! queued.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Whether this host is draining.
#[derive(Debug, Default)]
pub struct Draining(AtomicBool);

impl Draining {
    pub fn is_on(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Completes once `stop` has completed and the host has drained (readiness failing) for `drain`.
    pub async fn after(self: std::sync::Arc<Self>, stop: impl Future<Output = ()>, drain: Duration) {
        stop.await;
        self.0.store(true, Ordering::SeqCst);
        if !drain.is_zero() {
            tracing::info!(seconds = drain.as_secs(), "draining: /readyz answers 503 while requests are still served");
            tokio::time::sleep(drain).await;
        }
        tracing::info!("shutting down: finishing in-flight requests");
    }
}

/// Completes on SIGTERM or Ctrl-C.
pub async fn signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}
