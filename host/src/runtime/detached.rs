//! Work sent off once a request is answered, so that it does not hold the answer up: posts to the
//! push gateway, attack protection's e-mail. The manual clock waits for all of it whenever it
//! stops, so a test reads what was sent instead of waiting for it.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

/// The detached work of one host.
#[derive(Debug, Default)]
pub struct Detached {
    running: AtomicUsize,
    finished: Notify,
}

impl Detached {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Runs `work` on its own task.
    pub fn spawn(self: &Arc<Self>, work: impl Future<Output = ()> + Send + 'static) {
        self.running.fetch_add(1, Ordering::SeqCst);
        let done = Done(self.clone());
        tokio::spawn(async move {
            // Counted out when the task ends, even by a panic.
            let _done = done;
            work.await;
        });
    }

    /// Returns once no detached work is running.
    pub async fn idle(&self) {
        loop {
            let finished = self.finished.notified();
            tokio::pin!(finished);
            // Registered before the count is read, so a task ending in between still wakes us.
            finished.as_mut().enable();
            if self.running.load(Ordering::SeqCst) == 0 {
                return;
            }
            finished.await;
        }
    }
}

struct Done(Arc<Detached>);

impl Drop for Done {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.finished.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn idle_waits_for_every_task_to_end() {
        let detached = Detached::new();
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let ended = Arc::new(AtomicUsize::new(0));
        let seen = ended.clone();
        detached.spawn(async move {
            let _ = released.await;
            seen.fetch_add(1, Ordering::SeqCst);
        });
        let waiting = tokio::spawn({
            let detached = detached.clone();
            async move { detached.idle().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "a task is still running");
        release.send(()).unwrap();
        waiting.await.unwrap();
        assert_eq!(ended.load(Ordering::SeqCst), 1);
        detached.idle().await;
    }
}
