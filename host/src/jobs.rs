//! Periodic jobs (retention, pruning, and later incident resolution, retries, readings).
//!
//! With the system clock a ticker runs whatever is due every second. With the manual clock, time
//! moves only through [`Scheduler::advance_to`], which runs every job that became due, each at its
//! due instant and in order, before it returns, so tests of long windows are instant and exact.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use futures_util::future::BoxFuture;

use crate::clock::{Clock, ManualClock};
use crate::metrics::Metrics;

pub type JobFn = Arc<dyn Fn(DateTime<Utc>) -> BoxFuture<'static, anyhow::Result<()>> + Send + Sync>;

struct Job {
    name: &'static str,
    every: TimeDelta,
    next_due: DateTime<Utc>,
    run: JobFn,
}

pub struct Scheduler {
    clock: Arc<dyn Clock>,
    metrics: Arc<Metrics>,
    jobs: tokio::sync::Mutex<Vec<Job>>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler").finish_non_exhaustive()
    }
}

impl Scheduler {
    pub fn new(clock: Arc<dyn Clock>, metrics: Arc<Metrics>) -> Self {
        Self { clock, metrics, jobs: tokio::sync::Mutex::new(Vec::new()) }
    }

    /// Registers a job first due one period from now.
    pub async fn every(&self, name: &'static str, every: TimeDelta, run: JobFn) {
        let next_due = self.clock.now() + every;
        self.jobs.lock().await.push(Job { name, every, next_due, run });
    }

    /// Runs every job due at the clock's current time.
    pub async fn run_due(&self) {
        let now = self.clock.now();
        let mut jobs = self.jobs.lock().await;
        for job in jobs.iter_mut().filter(|job| job.next_due <= now) {
            self.run(job, now).await;
            while job.next_due <= now {
                job.next_due += job.every;
            }
        }
    }

    /// Moves a manual clock to `target`, running each job at every instant it falls due on the way.
    pub async fn advance_to(&self, clock: &ManualClock, target: DateTime<Utc>) {
        let mut jobs = self.jobs.lock().await;
        while let Some(index) =
            (0..jobs.len()).filter(|i| jobs[*i].next_due <= target).min_by_key(|i| jobs[*i].next_due)
        {
            let due = jobs[index].next_due;
            if due > clock.now() {
                clock.set(due);
            }
            let job = &mut jobs[index];
            self.run(job, due).await;
            job.next_due += job.every;
        }
        clock.set(target);
    }

    async fn run(&self, job: &Job, at: DateTime<Utc>) {
        if let Err(error) = (job.run)(at).await {
            self.metrics.job_failed(job.name);
            tracing::error!(job = job.name, error = format!("{error:#}"), "job failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::clock::from_millis;

    #[tokio::test]
    async fn advancing_runs_each_due_occurrence_at_its_instant() {
        let start = from_millis(1_800_000_000_000);
        let clock = Arc::new(ManualClock::starting_at(start));
        let scheduler = Scheduler::new(clock.clone(), Metrics::new());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        scheduler
            .every(
                "probe",
                TimeDelta::minutes(5),
                Arc::new(move |at| {
                    record.lock().unwrap().push(at);
                    Box::pin(async { Ok(()) })
                }),
            )
            .await;
        scheduler.advance_to(&clock, start + TimeDelta::minutes(16)).await;
        let minutes: Vec<i64> = seen.lock().unwrap().iter().map(|at| (*at - start).num_minutes()).collect();
        assert_eq!(minutes, vec![5, 10, 15]);
        assert_eq!(clock.now(), start + TimeDelta::minutes(16));
    }
}
