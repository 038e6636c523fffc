//! Back-off for the loops that run beside requests (the webhook and notification workers, the
//! change follower, the scheduled jobs). After a failure each try waits twice as long as the one
//! before, up to a ceiling, so an unreachable database is not asked many times a second; and the
//! log says once that a loop started failing and once that it recovered, never once per try.

use std::time::Duration;

/// The longest wait of a worker whose tries fail: it spares a database that is down, and work
/// resumes soon after it is back.
pub const WORKER_CEILING: Duration = Duration::from_secs(30);

/// How a loop stands: how many of its tries failed in a row.
#[derive(Debug)]
pub struct Backoff {
    name: &'static str,
    first: Duration,
    ceiling: Duration,
    failures: u32,
}

/// What a try changed in the loop's state: what the log reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Healthy before and after, or failing before and after.
    None,
    /// The first failure after a success.
    StartedFailing,
    /// The first success after failures.
    Recovered { failures: u32 },
}

impl Backoff {
    /// A loop named `name` (for the log) whose first retry waits `first`, never more than `ceiling`.
    pub const fn new(name: &'static str, first: Duration, ceiling: Duration) -> Self {
        Self { name, first, ceiling, failures: 0 }
    }

    /// Counts a try's outcome and says what it changed.
    pub fn record(&mut self, succeeded: bool) -> Change {
        if succeeded {
            match std::mem::take(&mut self.failures) {
                0 => Change::None,
                failures => Change::Recovered { failures },
            }
        } else {
            self.failures = self.failures.saturating_add(1);
            if self.failures == 1 { Change::StartedFailing } else { Change::None }
        }
    }

    /// Notes a failed try, logged only if the loop was healthy; returns the wait before the next.
    pub fn failed(&mut self, error: &dyn std::fmt::Display) -> Duration {
        if self.record(false) == Change::StartedFailing {
            tracing::error!(
                task = self.name,
                error = %error,
                "background task failing; retrying with exponential back-off, logged again once it recovers"
            );
        }
        self.delay()
    }

    /// Notes a successful try, logging the recovery if the loop was failing.
    pub fn succeeded(&mut self) {
        if let Change::Recovered { failures } = self.record(true) {
            tracing::info!(task = self.name, failures, "background task recovered");
        }
    }

    /// The wait before the next try: none while healthy, then first × 2^(failures - 1), at most
    /// the ceiling.
    pub fn delay(&self) -> Duration {
        match self.failures {
            0 => Duration::ZERO,
            n => self.first.saturating_mul(1 << (n - 1).min(20)).min(self.ceiling),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_from_the_first_up_to_the_ceiling_and_start_again_after_a_success() {
        let mut backoff = Backoff::new("test", Duration::from_millis(100), Duration::from_secs(1));
        assert_eq!(backoff.delay(), Duration::ZERO);
        let waits: Vec<u128> = (0..6).map(|_| backoff.failed(&"down").as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
        backoff.succeeded();
        assert_eq!(backoff.delay(), Duration::ZERO);
        assert_eq!(backoff.failed(&"down again"), Duration::from_millis(100));
    }

    #[test]
    fn only_the_first_failure_and_the_first_success_in_a_row_change_the_state() {
        let mut backoff = Backoff::new("test", Duration::from_secs(1), Duration::from_secs(30));
        let changes: Vec<Change> = [true, false, false, false, true, true, false].map(|ok| backoff.record(ok)).into();
        assert_eq!(
            changes,
            [
                Change::None,
                Change::StartedFailing,
                Change::None,
                Change::None,
                Change::Recovered { failures: 3 },
                Change::None,
                Change::StartedFailing
            ]
        );
    }

    #[test]
    fn many_failures_never_overflow() {
        let mut backoff = Backoff::new("test", Duration::from_secs(1), Duration::from_secs(60));
        for _ in 0..100 {
            backoff.failed(&"down");
        }
        assert_eq!(backoff.delay(), Duration::from_secs(60));
    }
}
