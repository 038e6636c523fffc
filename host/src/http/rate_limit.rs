//! Admin API rate limits per caller (SPEC "Limits"): 300 requests a minute, 50 on sensitive
//! endpoints. A token bucket per caller and class refills continuously, so a caller that keeps
//! under the rate is never refused and a burst is refused until tokens come back.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, TimeDelta, Utc};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Most endpoints: 300 a minute.
    Standard,
    /// Creating or changing API secrets, imports, impersonation: 50 a minute.
    Sensitive,
}

impl Class {
    pub fn per_minute(self) -> f64 {
        match self {
            Self::Standard => 300.0,
            Self::Sensitive => 50.0,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: DateTime<Utc>,
}

#[derive(Debug, Default)]
pub struct RateLimiter {
    buckets: Mutex<HashMap<(String, Class), Bucket>>,
}

impl RateLimiter {
    /// Takes one token for `caller`; when none is left, the whole seconds until one comes back.
    pub fn take(&self, caller: &str, class: Class, now: DateTime<Utc>) -> Result<(), u64> {
        let capacity = class.per_minute();
        let per_second = capacity / 60.0;
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let bucket = buckets.entry((caller.to_owned(), class)).or_insert(Bucket { tokens: capacity, updated: now });
        let elapsed = (now - bucket.updated).num_milliseconds().max(0) as f64 / 1000.0;
        bucket.tokens = (bucket.tokens + elapsed * per_second).min(capacity);
        bucket.updated = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - bucket.tokens) / per_second).ceil().max(1.0) as u64)
        }
    }

    /// Forgets buckets that have refilled completely (callers idle for a minute or more).
    pub fn prune(&self, now: DateTime<Utc>) -> usize {
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let before = buckets.len();
        buckets.retain(|_, bucket| now - bucket.updated < TimeDelta::minutes(1));
        before - buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_301st_request_in_a_minute_is_refused_and_tokens_come_back() {
        let limiter = RateLimiter::default();
        let start = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        for _ in 0..300 {
            assert!(limiter.take("key", Class::Standard, start).is_ok());
        }
        assert_eq!(limiter.take("key", Class::Standard, start), Err(1));
        // Another caller has its own bucket.
        assert!(limiter.take("other", Class::Standard, start).is_ok());
        // 5 tokens a second come back.
        let later = start + TimeDelta::seconds(1);
        for _ in 0..5 {
            assert!(limiter.take("key", Class::Standard, later).is_ok());
        }
        assert!(limiter.take("key", Class::Standard, later).is_err());
    }

    #[test]
    fn sensitive_endpoints_allow_fifty() {
        let limiter = RateLimiter::default();
        let start = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        for _ in 0..50 {
            assert!(limiter.take("key", Class::Sensitive, start).is_ok());
        }
        assert_eq!(limiter.take("key", Class::Sensitive, start), Err(2));
    }

    #[test]
    fn idle_buckets_are_pruned() {
        let limiter = RateLimiter::default();
        let start = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let _ = limiter.take("key", Class::Standard, start);
        assert_eq!(limiter.prune(start + TimeDelta::seconds(30)), 0);
        assert_eq!(limiter.prune(start + TimeDelta::seconds(61)), 1);
    }
}
