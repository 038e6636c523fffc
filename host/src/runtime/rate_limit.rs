//! Admin API rate limits per caller: 300 requests a minute, 50 on sensitive
//! endpoints; and per source address, 30 failed authentications a minute. A token bucket per
//! caller and class refills continuously, so a caller that keeps under the rate is never refused
//! and a burst is refused until tokens come back.
//!
//! With Redis configured the buckets live there, one per caller and class for every host, taken
//! from atomically in one round trip: three hosts allow a caller 300 a minute, not 900. Checking
//! without taking (a source's refused credentials, before its next credential is looked up) asks
//! no one: the host remembers until when the shared bucket refused the source, so a request costs
//! one round trip. When Redis cannot be read, each host counts on its own meanwhile (failing open
//! to the per-host limit).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, TimeDelta, Utc};

use crate::kernel::config::AdminRateLimits;
use crate::runtime::counting::Counters;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Most endpoints: 300 a minute by default.
    Standard,
    /// Creating or changing API secrets, imports, impersonation: 50 a minute by default.
    Sensitive,
    /// Requests whose credentials were refused, per source address: 30 a minute by default. Once spent,
    /// every request from the address is refused before its credential is looked up.
    FailedAuthentication,
    /// Client registrations asked from one source address: 10 a minute by default.
    ClientRegistration,
    /// Unknown or expired user codes typed from one source address: 10 a minute by default. Once
    /// spent, no code from the address is looked up.
    WrongUserCode,
    /// Device authorizations asked from one source address: 30 a minute by default, so that no
    /// source fills the store with codes nobody will type.
    DeviceAuthorization,
    /// Self sign-ups asked from one source address: 5 a minute by default; attack protection
    /// watches them over the hour too.
    SignUp,
    /// Access-log entries of requests refused by [`Class::FailedAuthentication`], per source
    /// address: one a minute, so a flood leaves a bounded trail.
    ThrottledRecord,
}

/// The key a source address is limited by: the address itself, or for IPv6 its /64 network, which
/// one subscriber usually holds whole.
pub fn source_key(address: IpAddr) -> String {
    match address {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let mut octets = v6.octets();
                octets[8..].fill(0);
                format!("{}/64", Ipv6Addr::from(octets))
            }
        },
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: DateTime<Utc>,
}

#[derive(Default)]
pub struct RateLimiter {
    limits: AdminRateLimits,
    buckets: Mutex<HashMap<(String, Class), Bucket>>,
    /// The buckets every host shares, when Redis is configured.
    shared: Option<Arc<Counters>>,
    /// Whether the shared buckets could not be read at the last try (logged once per outage).
    shared_lost: AtomicBool,
    /// Until when a shared bucket refused each caller, as this host last heard.
    refused_until: Mutex<HashMap<(String, Class), DateTime<Utc>>>,
    /// Since when each caller has kept within a tenth of its allowance (or beyond it), and when it
    /// was last said to be near its limit.
    near: Mutex<HashMap<(String, Class), Near>>,
}

/// How near its limit a caller kept, as this host saw it.
#[derive(Debug, Clone, Copy, Default)]
struct Near {
    /// Since when it has stayed within a tenth of its allowance; none while it is not.
    since: Option<DateTime<Utc>>,
    /// When it was last said to be near its limit.
    told: Option<DateTime<Utc>>,
}

/// A caller that kept this near its limit this long is told.
pub const NEAR_FOR: TimeDelta = TimeDelta::minutes(5);
/// And told again at most this often.
const NEAR_TOLD_EVERY: TimeDelta = TimeDelta::hours(1);

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimiter").field("limits", &self.limits).field("shared", &self.shared.is_some()).finish()
    }
}

impl RateLimiter {
    pub fn new(limits: AdminRateLimits) -> Self {
        Self { limits, ..Self::default() }
    }

    /// Limits counted in `counters` by every host when they are shared (Redis), here otherwise.
    pub fn counting_in(limits: AdminRateLimits, counters: Arc<Counters>) -> Self {
        let shared = counters.is_shared().then_some(counters);
        Self { limits, shared, ..Self::default() }
    }

    /// Requests a minute of the class.
    pub fn per_minute(&self, class: Class) -> f64 {
        f64::from(match class {
            Class::Standard => self.limits.requests,
            Class::Sensitive => self.limits.sensitive_requests,
            Class::FailedAuthentication => self.limits.failed_authentications,
            Class::ClientRegistration => self.limits.client_registrations,
            Class::WrongUserCode => self.limits.wrong_user_codes,
            Class::DeviceAuthorization => self.limits.device_authorizations,
            Class::SignUp => self.limits.sign_ups,
            Class::ThrottledRecord => 1,
        })
    }

    /// Takes one token for `caller`; when none is left, the whole seconds until one comes back.
    pub async fn take(&self, caller: &str, class: Class, now: DateTime<Utc>) -> Result<(), u64> {
        self.spend(caller, class, now, true).await.0
    }

    /// Whether `caller` has a token left, without taking it; when none is left, the whole seconds
    /// until one comes back. A caller without a bucket has every token and gets none.
    pub async fn check(&self, caller: &str, class: Class, now: DateTime<Utc>) -> Result<(), u64> {
        self.spend(caller, class, now, false).await.0
    }

    /// Takes one token as [`RateLimiter::take`] does, and says whether `caller` has now kept near
    /// its limit (a tenth of its allowance left, or refused) for [`NEAR_FOR`] without being told
    /// within the hour: true once, then not again for an hour.
    pub async fn take_watched(&self, caller: &str, class: Class, now: DateTime<Utc>) -> (Result<(), u64>, bool) {
        let (answer, left) = self.spend(caller, class, now, true).await;
        let near_now = answer.is_err() || left < self.per_minute(class) / 10.0;
        let mut near = self.near.lock().unwrap_or_else(|p| p.into_inner());
        let key = (caller.to_owned(), class);
        if !near_now {
            if let Some(entry) = near.get_mut(&key) {
                entry.since = None;
            }
            return (answer, false);
        }
        let entry = near.entry(key).or_default();
        let since = *entry.since.get_or_insert(now);
        let tell = since <= now - NEAR_FOR && entry.told.is_none_or(|at| at <= now - NEAR_TOLD_EVERY);
        if tell {
            entry.told = Some(now);
        }
        (answer, tell)
    }

    /// The answer for `caller`, and the tokens left.
    async fn spend(&self, caller: &str, class: Class, now: DateTime<Utc>, take: bool) -> (Result<(), u64>, f64) {
        let Some(shared) = &self.shared else { return self.settle(caller, class, now, take) };
        if !take {
            let refused = self.refused_until.lock().unwrap_or_else(|p| p.into_inner());
            let until = refused.get(&(caller.to_owned(), class)).copied().filter(|until| *until > now);
            let answer = until.map_or(Ok(()), |until| Err(seconds_until(until, now)));
            return (answer, self.per_minute(class));
        }
        let key = format!("{class:?}:{caller}");
        match shared.take_token(&key, self.per_minute(class), true, now).await {
            Ok((answer, left)) => {
                if self.shared_lost.swap(false, Ordering::Relaxed) {
                    tracing::info!("the shared rate limits can be read again");
                }
                if let Err(wait) = answer {
                    let until = now + TimeDelta::seconds(i64::try_from(wait).unwrap_or(60));
                    let mut refused = self.refused_until.lock().unwrap_or_else(|p| p.into_inner());
                    refused.insert((caller.to_owned(), class), until);
                }
                (answer, left)
            }
            Err(error) => {
                if !self.shared_lost.swap(true, Ordering::Relaxed) {
                    tracing::error!(%error, "the shared rate limits cannot be read; each host limits on its own meanwhile");
                }
                self.settle(caller, class, now, take)
            }
        }
    }

    /// This host's bucket: the answer, and the tokens left.
    fn settle(&self, caller: &str, class: Class, now: DateTime<Utc>, take: bool) -> (Result<(), u64>, f64) {
        let capacity = self.per_minute(class);
        let per_second = capacity / 60.0;
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let key = (caller.to_owned(), class);
        let bucket = match buckets.get_mut(&key) {
            Some(bucket) => bucket,
            None if take => buckets.entry(key).or_insert(Bucket { tokens: capacity, updated: now }),
            None => return (Ok(()), capacity),
        };
        let elapsed = (now - bucket.updated).num_milliseconds().max(0) as f64 / 1000.0;
        bucket.tokens = (bucket.tokens + elapsed * per_second).min(capacity);
        bucket.updated = now;
        if bucket.tokens >= 1.0 {
            if take {
                bucket.tokens -= 1.0;
            }
            (Ok(()), bucket.tokens)
        } else {
            (Err(((1.0 - bucket.tokens) / per_second).ceil().max(1.0) as u64), bucket.tokens)
        }
    }

    /// Forgets buckets that have refilled completely (callers idle for a minute or more), and
    /// refusals that ended.
    pub fn prune(&self, now: DateTime<Utc>) -> usize {
        self.refused_until.lock().unwrap_or_else(|p| p.into_inner()).retain(|_, until| *until > now);
        let recent = |at: Option<DateTime<Utc>>| at.is_some_and(|at| at > now - NEAR_TOLD_EVERY);
        self.near.lock().unwrap_or_else(|p| p.into_inner()).retain(|_, near| near.since.is_some() || recent(near.told));
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let before = buckets.len();
        buckets.retain(|_, bucket| now - bucket.updated < TimeDelta::minutes(1));
        before - buckets.len()
    }
}

/// Whole seconds from `now` to `until`, at least one.
fn seconds_until(until: DateTime<Utc>, now: DateTime<Utc>) -> u64 {
    (until - now).num_milliseconds().max(1).unsigned_abs().div_ceil(1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_301st_request_in_a_minute_is_refused_and_tokens_come_back() {
        let limiter = RateLimiter::default();
        let start = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        for _ in 0..300 {
            assert!(limiter.take("key", Class::Standard, start).await.is_ok());
        }
        assert_eq!(limiter.take("key", Class::Standard, start).await, Err(1));
        // Another caller has its own bucket.
        assert!(limiter.take("other", Class::Standard, start).await.is_ok());
        // 5 tokens a second come back.
        let later = start + TimeDelta::seconds(1);
        for _ in 0..5 {
            assert!(limiter.take("key", Class::Standard, later).await.is_ok());
        }
        assert!(limiter.take("key", Class::Standard, later).await.is_err());
    }

    #[tokio::test]
    async fn sensitive_endpoints_allow_fifty() {
        let limiter = RateLimiter::default();
        let start = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        for _ in 0..50 {
            assert!(limiter.take("key", Class::Sensitive, start).await.is_ok());
        }
        assert_eq!(limiter.take("key", Class::Sensitive, start).await, Err(2));
    }

    #[tokio::test]
    async fn checking_takes_nothing_and_failed_authentications_allow_thirty() {
        let limiter = RateLimiter::default();
        let start = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        assert!(limiter.check("203.0.113.9", Class::FailedAuthentication, start).await.is_ok());
        for _ in 0..30 {
            assert!(limiter.check("203.0.113.9", Class::FailedAuthentication, start).await.is_ok());
            assert!(limiter.take("203.0.113.9", Class::FailedAuthentication, start).await.is_ok());
        }
        assert_eq!(limiter.check("203.0.113.9", Class::FailedAuthentication, start).await, Err(2));
        assert_eq!(limiter.take("203.0.113.9", Class::FailedAuthentication, start).await, Err(2));
        assert!(limiter.check("203.0.113.9", Class::FailedAuthentication, start + TimeDelta::seconds(2)).await.is_ok());
    }

    #[test]
    fn ipv6_sources_are_limited_by_their_64_network() {
        let key = |text: &str| source_key(text.parse().unwrap());
        assert_eq!(key("2001:db8:1:2:aaaa::1"), key("2001:db8:1:2:bbbb::9"));
        assert_eq!(key("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
        assert_ne!(key("2001:db8:1:3::1"), key("2001:db8:1:2::1"));
        assert_eq!(key("::ffff:198.51.100.7"), "198.51.100.7");
        assert_eq!(key("198.51.100.7"), "198.51.100.7");
    }

    #[tokio::test]
    async fn idle_buckets_are_pruned() {
        let limiter = RateLimiter::default();
        let start = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let _ = limiter.take("key", Class::Standard, start).await;
        assert_eq!(limiter.prune(start + TimeDelta::seconds(30)), 0);
        assert_eq!(limiter.prune(start + TimeDelta::seconds(61)), 1);
    }
}
