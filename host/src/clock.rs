//! Time is injected: no code reads the wall clock except [`SystemClock`].

use std::sync::Mutex;

use chrono::{DateTime, TimeDelta, Utc};

/// The source of "now" for every rule that depends on time.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock: the only place allowed to read it.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[allow(clippy::disallowed_methods)]
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that moves only when told to (`--manual-clock`, tests).
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
}

impl ManualClock {
    pub fn starting_at(now: DateTime<Utc>) -> Self {
        Self { now: Mutex::new(now) }
    }

    pub fn set(&self, to: DateTime<Utc>) {
        *self.lock() = to;
    }

    pub fn advance(&self, by: TimeDelta) -> DateTime<Utc> {
        let mut now = self.lock();
        *now += by;
        *now
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, DateTime<Utc>> {
        // A poisoned lock only means a panic elsewhere while holding a plain value; the value is fine.
        self.now.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.lock()
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

    #[test]
    fn instants_are_shown_to_the_millisecond_in_utc() {
        let at = DateTime::from_timestamp_millis(1_763_812_345_678).unwrap();
        assert_eq!(iso(at), "2025-11-22T11:52:25.678Z");
    }
}
