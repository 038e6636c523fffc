//! The store's one error type, and what tells an unreachable database from other failures.

/// A failure of the database. Above the store only one distinction matters: whether the database
/// could not be reached (the caller answers 503) or something else went wrong (500).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Error(#[from] sqlx::Error);

impl Error {
    /// The database could not be reached: the pool timed out or is closed, the connection broke or
    /// could not be made, or PostgreSQL reports a connection exception (class 08) or that it is
    /// shutting down or not yet taking connections (57P0x).
    pub fn is_unavailable(&self) -> bool {
        unreachable(&self.0)
    }
}

fn unreachable(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(error) => {
            error.code().is_some_and(|code| code.starts_with("08") || code.starts_with("57P0"))
        }
        _ => false,
    }
}

/// Whether a failure anywhere in `error`'s chain is a database that could not be reached.
pub fn is_unreachable(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause.downcast_ref::<Error>().is_some_and(Error::is_unavailable)
            || cause.downcast_ref::<sqlx::Error>().is_some_and(unreachable)
    })
}
