//! Time is injected: no code reads the wall clock except [`SystemClock`].

use std::future::Future;
use std::pin::Pin;

use chrono::{DateTime, TimeDelta, Utc};
use tokio::sync::watch;

/// A wait for an instant of a clock.
pub type Sleep = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The source of "now" for every rule that depends on time.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> DateTime<Utc>;

    /// Completes once the clock reads `at` or later: in real time for the system clock, when it is
    /// moved there for a manual one.
    fn sleep_until(&self, at: DateTime<Utc>) -> Sleep;
}

/// The wall clock: the only place allowed to read it.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[allow(clippy::disallowed_methods)]
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    fn sleep_until(&self, at: DateTime<Utc>) -> Sleep {
        let wait = (at - self.now()).to_std().unwrap_or_default();
        Box::pin(tokio::time::sleep(wait))
    }
}

/// A clock that moves only when told to (`--manual-clock`, tests); whatever waits on it wakes as
/// it moves.
#[derive(Debug)]
pub struct ManualClock {
    now: watch::Sender<DateTime<Utc>>,
}

impl ManualClock {
    pub fn starting_at(now: DateTime<Utc>) -> Self {
        Self { now: watch::Sender::new(now) }
    }

    pub fn set(&self, to: DateTime<Utc>) {
        self.now.send_replace(to);
    }

    pub fn advance(&self, by: TimeDelta) -> DateTime<Utc> {
        let mut moved = *self.now.borrow();
        self.now.send_modify(|now| {
            *now += by;
            moved = *now;
        });
        moved
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.borrow()
    }

    fn sleep_until(&self, at: DateTime<Utc>) -> Sleep {
        let mut moves = self.now.subscribe();
        Box::pin(async move {
            // The sender lives as long as the clock; were it gone, nothing would move time again.
            if moves.wait_for(|now| *now >= at).await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}

/// ISO 8601 UTC with millisecond precision, the form every API response uses.
pub fn iso(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let start = DateTime::from_timestamp_millis(1_700_000_000_000).unwrap();
        let clock = ManualClock::starting_at(start);
        assert_eq!(clock.now(), start);
        clock.advance(TimeDelta::seconds(90));
        assert_eq!(clock.now(), start + TimeDelta::seconds(90));
    }

    #[tokio::test]
    async fn a_sleep_on_the_manual_clock_ends_when_the_clock_is_moved_past_it() {
        let start = DateTime::from_timestamp_millis(1_700_000_000_000).unwrap();
        let clock = ManualClock::starting_at(start);
        let mut sleep = clock.sleep_until(start + TimeDelta::seconds(10));
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(sleep.as_mut().poll(&mut context).is_pending());
        clock.advance(TimeDelta::seconds(9));
        assert!(sleep.as_mut().poll(&mut context).is_pending(), "a second early");
        clock.advance(TimeDelta::seconds(1));
        assert!(sleep.as_mut().poll(&mut context).is_ready());
        assert!(clock.sleep_until(start).as_mut().poll(&mut context).is_ready(), "a past instant");
    }

    #[test]
    fn instants_are_shown_to_the_millisecond_in_utc() {
        let at = DateTime::from_timestamp_millis(1_763_812_345_678).unwrap();
        assert_eq!(iso(at), "2025-11-22T11:52:25.678Z");
    }
}
