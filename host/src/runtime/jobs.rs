//! Periodic jobs (retention, pruning, and later incident resolution, retries, readings).
//!
//! With the system clock a ticker runs whatever is due every second. With the manual clock, time
//! moves only through [`Scheduler::advance_to`], which runs every job that became due, each at its
//! due instant and in order, before it returns, so tests of long windows are instant and exact.
//! The workers that otherwise run on their own (webhook deliveries, notification posts) are then
//! steps ([`crate::application::jobs::advance_manual_clock`]): they run to completion before the
//! clock moves and once it arrives, so that when the clock answers, what fell due has been sent
//! and what has not been sent is not due.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use futures_util::future::BoxFuture;

use crate::kernel::backoff::Backoff;
use crate::kernel::clock::{Clock, ManualClock};
use crate::runtime::metrics::Metrics;

pub type JobFn = Arc<dyn Fn(DateTime<Utc>) -> BoxFuture<'static, anyhow::Result<()>> + Send + Sync>;

struct Job {
    name: &'static str,
    every: TimeDelta,
    next_due: DateTime<Utc>,
    /// Whether a move of the manual clock past several of its instants runs it once, at the
    /// latest; see [`Scheduler::every_latest`].
    latest_only: bool,
    run: JobFn,
    /// Its failures in a row: logged when they start and when they end, not at every run. A job
    /// keeps its period while failing (the shortest is fifteen seconds): no back-off is needed.
    health: Backoff,
}

impl Job {
    /// The instant a move of the manual clock to `target` runs the job at next.
    fn due_before(&self, target: DateTime<Utc>) -> DateTime<Utc> {
        if !self.latest_only || self.next_due > target {
            return self.next_due;
        }
        let (passed, every) = ((target - self.next_due).num_milliseconds(), self.every.num_milliseconds().max(1));
        self.next_due + TimeDelta::milliseconds(passed / every * every)
    }
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

    /// Registers a job first due one period from now, run at each of its instants.
    pub async fn every(&self, name: &'static str, every: TimeDelta, run: JobFn) {
        self.register(name, every, false, run).await;
    }

    /// Registers a job first due one period from now whose work depends only on when it runs
    /// (forgetting what is past a horizon): a move of the manual clock past several of its
    /// instants runs it once, at the latest, as a late system clock does.
    pub async fn every_latest(&self, name: &'static str, every: TimeDelta, run: JobFn) {
        self.register(name, every, true, run).await;
    }

    async fn register(&self, name: &'static str, every: TimeDelta, latest_only: bool, run: JobFn) {
        let next_due = self.clock.now() + every;
        let health = Backoff::new(name, std::time::Duration::ZERO, std::time::Duration::ZERO);
        self.jobs.lock().await.push(Job { name, every, next_due, latest_only, run, health });
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

    /// Moves a manual clock to `target`, running each job at every instant it falls due on the way,
    /// and `step` before the clock moves and once it is at `target`. (Not at each job's instant: a
    /// year's advance passes millions of them.)
    pub async fn advance_to<'s>(
        &self,
        clock: &ManualClock,
        target: DateTime<Utc>,
        step: impl Fn(DateTime<Utc>) -> BoxFuture<'s, ()>,
    ) {
        let mut jobs = self.jobs.lock().await;
        step(clock.now()).await;
        while let Some(index) =
            (0..jobs.len()).filter(|i| jobs[*i].next_due <= target).min_by_key(|i| jobs[*i].due_before(target))
        {
            let due = jobs[index].due_before(target);
            if due > clock.now() {
                clock.set(due);
            }
            let job = &mut jobs[index];
            self.run(job, due).await;
            job.next_due = due + job.every;
        }
        clock.set(target);
        step(target).await;
    }

    async fn run(&self, job: &mut Job, at: DateTime<Utc>) {
        match (job.run)(at).await {
            Ok(()) => job.health.succeeded(),
            Err(error) => {
                self.metrics.job_failed(job.name);
                job.health.failed(&format!("{error:#}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    type Instants = Arc<Mutex<Vec<DateTime<Utc>>>>;

    /// A scheduler on a manual clock, and a job function that records the instants it ran at.
    fn recorder() -> (DateTime<Utc>, Arc<ManualClock>, Scheduler, Instants, JobFn) {
        let start = DateTime::from_timestamp_millis(1_800_000_000_000).unwrap();
        let clock = Arc::new(ManualClock::starting_at(start));
        let scheduler = Scheduler::new(clock.clone(), Metrics::new());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let run: JobFn = Arc::new(move |at| {
            record.lock().unwrap().push(at);
            Box::pin(async { Ok(()) })
        });
        (start, clock, scheduler, seen, run)
    }

    fn minutes_after(start: DateTime<Utc>, instants: &Mutex<Vec<DateTime<Utc>>>) -> Vec<i64> {
        instants.lock().unwrap().iter().map(|at| (*at - start).num_minutes()).collect()
    }

    #[tokio::test]
    async fn advancing_runs_each_due_occurrence_at_its_instant() {
        let (start, clock, scheduler, seen, run) = recorder();
        scheduler.every("probe", TimeDelta::minutes(5), run).await;
        let stops = Arc::new(Mutex::new(Vec::new()));
        let step = |at| {
            stops.lock().unwrap().push(at);
            Box::pin(async {}) as BoxFuture<'_, ()>
        };
        scheduler.advance_to(&clock, start + TimeDelta::minutes(16), step).await;
        assert_eq!(minutes_after(start, &seen), vec![5, 10, 15]);
        assert_eq!(
            minutes_after(start, &stops),
            vec![0, 16],
            "the workers step before the clock moves and at its target"
        );
        assert_eq!(clock.now(), start + TimeDelta::minutes(16));
    }

    #[tokio::test]
    async fn a_job_of_the_latest_instant_runs_once_per_move() {
        let (start, clock, scheduler, seen, run) = recorder();
        scheduler.every_latest("pruning", TimeDelta::minutes(5), run).await;
        let nothing = |_| Box::pin(async {}) as BoxFuture<'static, ()>;
        scheduler.advance_to(&clock, start + TimeDelta::minutes(16), nothing).await;
        scheduler.advance_to(&clock, start + TimeDelta::minutes(19), nothing).await;
        scheduler.advance_to(&clock, start + TimeDelta::minutes(20), nothing).await;
        assert_eq!(
            minutes_after(start, &seen),
            vec![15, 20],
            "once at 15 for the move past 5, 10 and 15; none before 20"
        );
    }
}
