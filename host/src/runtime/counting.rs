//! Counting attempts in sliding windows (10, 15 and 30 minutes, an hour, a day), per source address
//! and per account, behind one interface with two stores: this
//! process's memory (the default; bounded, entries no window can count any more are dropped) and
//! Redis (`redis_url`), through which several hosts count together.
//!
//! A series is a set of members with the instant each was last recorded. Recording a fresh id per
//! attempt counts attempts; recording an account id counts distinct accounts (password spraying).
//! Instants come from the service's clock, never from the store's, so the manual clock drives both.
//!
//! The same stores keep holds: a value under a key until an instant (a blocked source, an account
//! closed to unknown addresses), read on every attempt without touching the database.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};

/// The longest window; nothing older is kept.
pub const LONGEST_WINDOW_MS: i64 = 24 * 60 * 60 * 1000;
/// The most members one series keeps (the oldest go first); thresholds are far below it.
pub const MAX_MEMBERS: usize = 10_000;
/// The most series the memory store keeps; beyond it new series are not counted (and logged).
/// A failed sign-in from a new source makes three series, so this counts a day of failures from
/// over a million distinct sources in about 200 MB (the table fills 4 Mi buckets of 33 bytes, and
/// each series holds one 16-byte allocation or a few).
pub const MAX_SERIES: usize = 3_500_000;

/// A sliding window ending at the present instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    TenMinutes,
    FifteenMinutes,
    ThirtyMinutes,
    Hour,
    Day,
}

impl Window {
    pub fn millis(self) -> i64 {
        let minutes = match self {
            Self::TenMinutes => 10,
            Self::FifteenMinutes => 15,
            Self::ThirtyMinutes => 30,
            Self::Hour => 60,
            Self::Day => 24 * 60,
        };
        minutes * 60_000
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the counting store cannot be reached: {0}")]
pub struct CountError(#[from] redis::RedisError);

/// The counters of attack protection.
pub struct Counters {
    store: Store,
}

enum Store {
    Memory(Mutex<Memory>),
    Redis(redis::aio::ConnectionManager),
}

#[derive(Debug, Default)]
struct Memory {
    /// Series by the keyed hash of their key. Keys and members are kept as 64-bit hashes under
    /// this process's random key: an attacker cannot choose names that collide, and a series costs
    /// about 80 bytes instead of its strings.
    series: HashMap<u64, Series>,
    hasher: RandomState,
    /// Each hold's value and the instant it ends.
    holds: HashMap<String, (String, i64)>,
    /// Whether the store being full was logged (once until pruning makes room).
    full_logged: bool,
}

impl std::fmt::Debug for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.store {
            Store::Memory(_) => "memory",
            Store::Redis(_) => "redis",
        };
        f.debug_struct("Counters").field("store", &kind).finish()
    }
}

/// One series in memory: its members (keyed hashes) with the instant each was last recorded,
/// ordered by instant. A series holds a handful of members at the thresholds that matter, so a
/// vector is both the smallest and the fastest form; most series hold one member, in 16 bytes.
#[derive(Debug, Default)]
struct Series {
    by_time: Vec<(i64, u64)>,
}

impl Series {
    fn record(&mut self, member: u64, at: i64) {
        if let Some(previous) = self.by_time.iter().position(|(_, m)| *m == member) {
            self.by_time.remove(previous);
        }
        if self.by_time.capacity() == 0 {
            self.by_time.reserve_exact(1);
        }
        let place = self.by_time.partition_point(|(t, _)| *t <= at);
        self.by_time.insert(place, (at, member));
        if self.by_time.len() > MAX_MEMBERS {
            let excess = self.by_time.len() - MAX_MEMBERS;
            self.by_time.drain(..excess);
        }
    }

    fn count_after(&self, after: i64) -> u64 {
        let first = self.by_time.partition_point(|(t, _)| *t <= after);
        u64::try_from(self.by_time.len() - first).unwrap_or(u64::MAX)
    }

    /// Drops members recorded at or before `before`; whether the series is empty then.
    fn forget_before(&mut self, before: i64) -> bool {
        let expired = self.by_time.partition_point(|(t, _)| *t <= before);
        self.by_time.drain(..expired);
        if self.by_time.len() < self.by_time.capacity() / 4 {
            self.by_time.shrink_to_fit();
        }
        self.by_time.is_empty()
    }
}

/// The Redis key of a series.
fn redis_key(key: &str) -> String {
    format!("castellan:count:{key}")
}

/// The Redis key of a hold.
fn hold_key(key: &str) -> String {
    format!("castellan:hold:{key}")
}

impl Counters {
    pub fn in_memory() -> Self {
        Self { store: Store::Memory(Mutex::new(Memory::default())) }
    }

    /// Counters in Redis at `url` (`redis://host:port/db`); connects now, and reconnects by itself.
    /// Counting sits on the sign-in path, so a slow answer is an error (protection then fails
    /// open) rather than a wait.
    pub async fn redis(url: &str) -> Result<Self, CountError> {
        let client = redis::Client::open(url)?;
        // Reconnection waits at most 50 ms between tries: while Redis is away each attempt fails
        // open quickly instead of waiting out a long backoff.
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_millis(250)))
            .set_response_timeout(Some(Duration::from_millis(250)))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(50));
        let connection = redis::aio::ConnectionManager::new_with_config(client, config).await?;
        Ok(Self { store: Store::Redis(connection) })
    }

    pub fn is_shared(&self) -> bool {
        matches!(self.store, Store::Redis(_))
    }

    /// Records `member` in the series `key` at `now`.
    pub async fn record(&self, key: &str, member: &str, now: DateTime<Utc>) -> Result<(), CountError> {
        let now = now.timestamp_millis();
        match &self.store {
            Store::Memory(memory) => {
                let memory = &mut *lock(memory);
                let (key, member) = (memory.hasher.hash_one(key), memory.hasher.hash_one(member));
                if !memory.series.contains_key(&key) && memory.series.len() >= MAX_SERIES {
                    if !memory.full_logged {
                        memory.full_logged = true;
                        tracing::warn!(
                            series = MAX_SERIES,
                            "attack protection counters are full; new series are not counted until old ones expire"
                        );
                    }
                    return Ok(());
                }
                memory.series.entry(key).or_default().record(member, now);
                Ok(())
            }
            Store::Redis(connection) => {
                let key = redis_key(key);
                let cap = isize::try_from(MAX_MEMBERS).unwrap_or(isize::MAX);
                redis::pipe()
                    .atomic()
                    .zadd(&key, member, now)
                    .ignore()
                    .zrembyscore(&key, "-inf", now - LONGEST_WINDOW_MS)
                    .ignore()
                    .zremrangebyrank(&key, 0, -(cap + 1))
                    .ignore()
                    .pexpire(&key, LONGEST_WINDOW_MS)
                    .ignore()
                    .exec_async(&mut connection.clone())
                    .await?;
                Ok(())
            }
        }
    }

    /// How many members of the series `key` were last recorded within `window` before `now`.
    ///
    /// The window has no upper bound: what another host recorded at an instant its clock reads
    /// ahead of this one's is counted, so hosts whose clocks differ by a few seconds decide alike.
    pub async fn count(&self, key: &str, window: Window, now: DateTime<Utc>) -> Result<u64, CountError> {
        let after = now.timestamp_millis() - window.millis();
        match &self.store {
            Store::Memory(memory) => {
                let memory = lock(memory);
                let series = memory.series.get(&memory.hasher.hash_one(key));
                Ok(series.map_or(0, |s| s.count_after(after)))
            }
            Store::Redis(connection) => {
                let counted: u64 = redis::cmd("ZCOUNT")
                    .arg(redis_key(key))
                    .arg(format!("({after}"))
                    .arg("+inf")
                    .query_async(&mut connection.clone())
                    .await?;
                Ok(counted)
            }
        }
    }

    /// Forgets the series `keys` whole, so that counting them starts again.
    pub async fn forget(&self, keys: &[String]) -> Result<(), CountError> {
        if keys.is_empty() {
            return Ok(());
        }
        match &self.store {
            Store::Memory(memory) => {
                let memory = &mut *lock(memory);
                for key in keys {
                    memory.series.remove(&memory.hasher.hash_one(key));
                }
                Ok(())
            }
            Store::Redis(connection) => {
                let keys: Vec<String> = keys.iter().map(|k| redis_key(k)).collect();
                redis::cmd("DEL").arg(keys).exec_async(&mut connection.clone()).await?;
                Ok(())
            }
        }
    }

    /// Keeps `value` under `key` until `until`, replacing what was held there.
    pub async fn hold(
        &self,
        key: &str,
        value: &str,
        until: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<(), CountError> {
        let (until, now) = (until.timestamp_millis(), now.timestamp_millis());
        match &self.store {
            Store::Memory(memory) => {
                lock(memory).holds.insert(key.to_owned(), (value.to_owned(), until));
                Ok(())
            }
            Store::Redis(connection) => {
                // The value carries its own end: Redis expires keys on its clock, the service
                // decides on its own.
                let lasting = u64::try_from((until - now).max(1)).unwrap_or(1);
                redis::cmd("SET")
                    .arg(hold_key(key))
                    .arg(format!("{until}:{value}"))
                    .arg("PX")
                    .arg(lasting)
                    .exec_async(&mut connection.clone())
                    .await?;
                Ok(())
            }
        }
    }

    /// Keeps `value` under `key` until `until` unless a hold is in force there at `now`, in one
    /// step, so that two hosts (or two requests) deciding the same measure at once place it once;
    /// whether it was placed.
    pub async fn hold_unless_held(
        &self,
        key: &str,
        value: &str,
        until: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<bool, CountError> {
        let (until, now) = (until.timestamp_millis(), now.timestamp_millis());
        match &self.store {
            Store::Memory(memory) => {
                let holds = &mut lock(memory).holds;
                if holds.get(key).is_some_and(|(_, ends)| *ends > now) {
                    return Ok(false);
                }
                holds.insert(key.to_owned(), (value.to_owned(), until));
                Ok(true)
            }
            Store::Redis(connection) => {
                const PLACE_UNLESS_HELD: &str = "local held = redis.call('GET', KEYS[1]) \
                    if held then \
                      local ends = tonumber(string.match(held, '^(-?%d+):')) \
                      if ends and ends > tonumber(ARGV[3]) then return 0 end \
                    end \
                    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) \
                    return 1";
                let lasting = u64::try_from((until - now).max(1)).unwrap_or(1);
                let placed: i64 = redis::cmd("EVAL")
                    .arg(PLACE_UNLESS_HELD)
                    .arg(1)
                    .arg(hold_key(key))
                    .arg(format!("{until}:{value}"))
                    .arg(lasting)
                    .arg(now)
                    .query_async(&mut connection.clone())
                    .await?;
                Ok(placed == 1)
            }
        }
    }

    /// The value held under `key` at `now`, with the instant its hold ends.
    pub async fn held(&self, key: &str, now: DateTime<Utc>) -> Result<Option<(String, DateTime<Utc>)>, CountError> {
        let now = now.timestamp_millis();
        let found = match &self.store {
            Store::Memory(memory) => lock(memory).holds.get(key).cloned(),
            Store::Redis(connection) => {
                let text: Option<String> =
                    redis::cmd("GET").arg(hold_key(key)).query_async(&mut connection.clone()).await?;
                text.and_then(|text| {
                    let (until, value) = text.split_once(':')?;
                    Some((value.to_owned(), until.parse().ok()?))
                })
            }
        };
        Ok(found
            .filter(|(_, until)| *until > now)
            .map(|(value, until)| (value, DateTime::from_timestamp_millis(until).unwrap_or_default())))
    }

    /// Ends the hold under `key` now.
    pub async fn release(&self, key: &str) -> Result<(), CountError> {
        match &self.store {
            Store::Memory(memory) => {
                lock(memory).holds.remove(key);
                Ok(())
            }
            Store::Redis(connection) => {
                redis::cmd("DEL").arg(hold_key(key)).exec_async(&mut connection.clone()).await?;
                Ok(())
            }
        }
    }

    /// Takes a token from the bucket `key` shared by every host (or, with `take` false, tells
    /// whether one is left without taking it), in one round trip: the bucket holds `per_minute`
    /// tokens and refills continuously. When none is left, the whole seconds until one comes back;
    /// beside it, the tokens left.
    /// The memory store shares nothing: its callers keep their buckets themselves, and it allows.
    pub async fn take_token(
        &self,
        key: &str,
        per_minute: f64,
        take: bool,
        now: DateTime<Utc>,
    ) -> Result<(Result<(), u64>, f64), CountError> {
        let Store::Redis(connection) = &self.store else { return Ok((Ok(()), per_minute)) };
        // Tokens and the instant they were counted at; a bucket no one used for two minutes is
        // full again, and goes.
        const TAKE: &str = "local capacity, per_ms, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]) \
            local state = redis.call('HMGET', KEYS[1], 't', 'u') \
            local tokens, updated = tonumber(state[1]), tonumber(state[2]) \
            if not tokens then \
              if ARGV[4] ~= '1' then return {0, math.floor(capacity * 1000)} end \
              tokens, updated = capacity, now \
            end \
            tokens = math.min(capacity, tokens + math.max(0, now - updated) * per_ms) \
            local wait = 0 \
            if tokens >= 1 then \
              if ARGV[4] == '1' then tokens = tokens - 1 end \
            else \
              wait = math.max(1, math.ceil((1 - tokens) / per_ms / 1000)) \
            end \
            redis.call('HSET', KEYS[1], 't', tostring(tokens), 'u', tostring(math.max(now, updated))) \
            redis.call('PEXPIRE', KEYS[1], 120000) \
            return {wait, math.floor(tokens * 1000)}";
        let (wait, thousandths): (u64, i64) = redis::cmd("EVAL")
            .arg(TAKE)
            .arg(1)
            .arg(format!("castellan:limit:{key}"))
            .arg(per_minute)
            .arg(per_minute / 60_000.0)
            .arg(now.timestamp_millis())
            .arg(if take { "1" } else { "0" })
            .query_async(&mut connection.clone())
            .await?;
        let left = thousandths as f64 / 1000.0;
        Ok((if wait == 0 { Ok(()) } else { Err(wait) }, left))
    }

    /// Forgets what no window can count any more at `now`, and holds that ended. Redis series and
    /// holds expire by themselves.
    pub fn prune(&self, now: DateTime<Utc>) -> usize {
        let Store::Memory(memory) = &self.store else { return 0 };
        let now = now.timestamp_millis();
        let mut memory = lock(memory);
        memory.holds.retain(|_, (_, until)| *until > now);
        let before = memory.series.len();
        memory.series.retain(|_, s| !s.forget_before(now - LONGEST_WINDOW_MS));
        memory.full_logged = memory.series.len() >= MAX_SERIES;
        before - memory.series.len()
    }
}

fn lock(memory: &Mutex<Memory>) -> std::sync::MutexGuard<'_, Memory> {
    memory.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;

    use super::*;

    const MINUTE: i64 = 60_000;

    /// The instant `millis` after the epoch.
    fn ms(millis: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(millis).unwrap()
    }

    #[tokio::test]
    async fn memory_counts_within_sliding_windows_and_forgets_what_no_window_counts() {
        let counters = Counters::in_memory();
        let start = 1_000_000_000_000;
        for n in 0..5 {
            counters.record("src:1.2.3.4", &format!("attempt-{n}"), ms(start + n * MINUTE)).await.unwrap();
        }
        let at = ms(start + 4 * MINUTE);
        assert_eq!(counters.count("src:1.2.3.4", Window::TenMinutes, at).await.unwrap(), 5);
        assert_eq!(counters.count("src:1.2.3.4", Window::TenMinutes, ms(start + 12 * MINUTE)).await.unwrap(), 2);
        assert_eq!(
            counters.count("src:1.2.3.4", Window::TenMinutes, ms(start - MINUTE)).await.unwrap(),
            5,
            "what is recorded after the instant counts: another host's clock may read ahead"
        );
        assert_eq!(counters.count("src:1.2.3.4", Window::TenMinutes, ms(start + 14 * MINUTE)).await.unwrap(), 0);
        assert_eq!(counters.count("src:9.9.9.9", Window::Day, at).await.unwrap(), 0);

        // The same member again moves to its latest instant: a count of distinct members.
        for account in ["ada", "bob", "ada", "ada"] {
            counters.record("spray:1.2.3.4", account, at).await.unwrap();
        }
        assert_eq!(counters.count("spray:1.2.3.4", Window::Hour, at).await.unwrap(), 2);

        assert_eq!(counters.prune(at + TimeDelta::milliseconds(LONGEST_WINDOW_MS - MINUTE)), 0, "still within a day");
        assert_eq!(counters.prune(at + TimeDelta::milliseconds(LONGEST_WINDOW_MS)), 2, "both series forgotten");
        assert_eq!(counters.count("spray:1.2.3.4", Window::Day, at).await.unwrap(), 0);
    }

    #[tokio::test]
    async fn a_hold_in_force_is_not_placed_again() {
        let counters = Counters::in_memory();
        let key = "blocked:acme:203.0.113.9";
        assert!(counters.hold_unless_held(key, "first", ms(15 * MINUTE), ms(0)).await.unwrap());
        assert!(!counters.hold_unless_held(key, "second", ms(60 * MINUTE), ms(MINUTE)).await.unwrap());
        assert_eq!(counters.held(key, ms(MINUTE)).await.unwrap(), Some(("first".to_owned(), ms(15 * MINUTE))));
        assert!(
            counters.hold_unless_held(key, "third", ms(75 * MINUTE), ms(15 * MINUTE)).await.unwrap(),
            "the first ended"
        );
        assert_eq!(counters.held(key, ms(15 * MINUTE)).await.unwrap(), Some(("third".to_owned(), ms(75 * MINUTE))));
    }

    #[tokio::test]
    async fn a_series_keeps_its_newest_members_only() {
        let counters = Counters::in_memory();
        for n in 0..(MAX_MEMBERS + 5) {
            counters.record("busy", &n.to_string(), ms(i64::try_from(n).unwrap())).await.unwrap();
        }
        let count = counters.count("busy", Window::Day, ms(20_000)).await.unwrap();
        assert_eq!(count, u64::try_from(MAX_MEMBERS).unwrap());
    }

    mod properties {
        use std::collections::HashMap;

        use chrono::TimeDelta;
        use proptest::prelude::*;

        use super::super::*;

        const WINDOWS: [Window; 5] =
            [Window::TenMinutes, Window::FifteenMinutes, Window::ThirtyMinutes, Window::Hour, Window::Day];

        /// What each window of the keys `k0`…`k2` counts at `now`.
        async fn counts(counters: &Counters, now: DateTime<Utc>) -> Vec<u64> {
            let mut counted = Vec::new();
            for key in 0..3 {
                for window in WINDOWS {
                    counted.push(counters.count(&format!("k{key}"), window, now).await.unwrap());
                }
            }
            counted
        }

        proptest! {
            /// A series counts each member once, by the instant it was last recorded, whatever the
            /// order of the records (instants from a small range, so that many fall on the bounds);
            /// forgetting what is at or before an instant changes no count
            /// after it, and the series stays ordered by instant.
            #[test]
            fn a_series_counts_each_member_by_its_latest_record(
                records in prop::collection::vec((0u64..8, 0i64..40), 0..80),
                after in 0i64..40,
                forgotten in 0i64..40,
            ) {
                let mut series = Series::default();
                let mut latest = HashMap::new();
                for &(member, at) in &records {
                    series.record(member, at);
                    latest.insert(member, at);
                }
                let expected = latest.values().filter(|&&at| at > after).count() as u64;
                prop_assert_eq!(series.count_after(after), expected);
                let later = after.max(forgotten);
                let counted = series.count_after(later);
                series.forget_before(forgotten);
                prop_assert_eq!(series.count_after(later), counted);
                prop_assert!(series.by_time.windows(2).all(|pair| pair[0].0 <= pair[1].0));
            }

            /// Each window counts the distinct members recorded within it (the clock moving by whole
            /// minutes, so that records fall on the windows' bounds), and pruning at the present
            /// instant changes no window's count.
            #[test]
            fn windows_count_what_fell_within_them_and_pruning_changes_nothing(
                steps in prop::collection::vec((0u8..3, 0u8..6, (0i64..130).prop_map(|m| m * 60_000)), 1..50),
            ) {
                let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
                runtime.block_on(async {
                    let counters = Counters::in_memory();
                    let mut now = DateTime::UNIX_EPOCH + TimeDelta::days(20_000);
                    let mut latest: HashMap<(u8, u8), DateTime<Utc>> = HashMap::new();
                    for &(key, member, advance) in &steps {
                        now += TimeDelta::milliseconds(advance);
                        counters.record(&format!("k{key}"), &format!("m{member}"), now).await.unwrap();
                        latest.insert((key, member), now);
                    }
                    let before = counts(&counters, now).await;
                    let mut expected = Vec::new();
                    for key in 0..3 {
                        for window in WINDOWS {
                            let from = now - TimeDelta::milliseconds(window.millis());
                            let within = latest.iter().filter(|((k, _), at)| *k == key && **at > from).count();
                            expected.push(within as u64);
                        }
                    }
                    assert_eq!(before, expected);
                    counters.prune(now);
                    assert_eq!(counts(&counters, now).await, before);
                });
            }
        }
    }
}
