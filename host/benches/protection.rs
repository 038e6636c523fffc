//! Attack protection's costs, in process:
//!
//! 1. one detector call (the embedded component under wasmtime, a warm pooled instance): median
//!    and 99th percentile, for an ordinary failed attempt and for one that blocks its source;
//! 2. counting one failed attempt in memory and deciding on it (what a sign-in adds);
//! 3. a credential-stuffing simulation: 100,000 failed attempts over 10,000 accounts from 50
//!    sources, 20 a second on the manual clock, refused while their source is blocked, as the
//!    service does; it reports the blocks taken and the attempts refused;
//! 4. resident memory after counting failures from 1,000,000 distinct sources.
//!
//! `cargo bench -p castellan --bench protection`

use std::time::Instant;

use castellan::protection::detection::{Attempt, AttemptKind, Counts, Decision, MeasureKind, Outcome, Source};
use castellan::protection::detector::AttackDetector;
use castellan::protection::tracking::{Seen, observe, record_block};
use castellan::runtime::counting::Counters;
use chrono::{DateTime, TimeDelta, Utc};

// The service's allocator, so that the memory figure is the service's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CALLS: usize = 100_000;
const START_MS: i64 = 1_893_456_000_000;

/// The instant `millis` after the epoch.
fn at(millis: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(millis).unwrap_or_default()
}

fn counts(source_failures: u32, source_accounts: u32) -> Counts {
    Counts {
        source_failures,
        source_accounts,
        source_unknown_account_failures: source_failures,
        source_earlier_blocks: 0,
        account_unapproved_failures: 0,
        account_unapproved_sources: 0,
        account_phone_refusals: 0,
        account_recovery_requests: 0,
        source_recovery_accounts: 0,
        source_sign_ups: 0,
        account_second_factor_failures: 0,
    }
}

fn attempt(counts: Counts) -> Attempt {
    let source = Source { approved_for_account: false, datacenter: false, tor: false, shared_network: false };
    Attempt { kind: AttemptKind::Password, outcome: Outcome::Failed, account_known: false, source, counts }
}

/// Median and 99th percentile of `CALLS` timed calls, in microseconds.
async fn percentiles<F: Future<Output = Option<Decision>>>(mut call: impl FnMut() -> F) -> (f64, f64) {
    let mut times = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let started = Instant::now();
        let decided = call().await;
        times.push(started.elapsed().as_secs_f64() * 1e6);
        assert!(decided.is_some(), "the embedded detector answers");
    }
    times.sort_by(f64::total_cmp);
    (times[CALLS / 2], times[CALLS * 99 / 100])
}

fn resident_megabytes() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0.0);
    pages * 4096.0 / 1e6
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let detector = AttackDetector::load(None)?;
    for _ in 0..1000 {
        detector.decide(attempt(counts(1, 1))).await;
    }
    let (median, p99) = percentiles(|| detector.decide(attempt(counts(3, 2)))).await;
    println!("detector call, ordinary failure: median {median:.2} µs, p99 {p99:.2} µs");
    let (median, p99) = percentiles(|| detector.decide(attempt(counts(9, 8)))).await;
    println!("detector call, source blocked:   median {median:.2} µs, p99 {p99:.2} µs");

    // Counting and deciding, as a failed sign-in does: one source, fresh names.
    let counters = Counters::in_memory();
    let started = Instant::now();
    for n in 0..CALLS {
        let name = format!("name-{n}");
        let source = format!("198.51.{}.{}", (n / 256) % 256, n % 256);
        let seen = Seen {
            realm_id: "acme",
            kind: AttemptKind::Password,
            outcome: Outcome::Failed,
            source: &source,
            account: &name,
            account_known: false,
            approved: false,
        };
        let now = at(START_MS + i64::try_from(n)?);
        let counted = observe(&counters, &seen, now).await?;
        detector.decide(attempt(counted)).await;
    }
    let per_attempt = started.elapsed().as_secs_f64() * 1e6 / CALLS as f64;
    println!("counting in memory and deciding, per failed attempt: {per_attempt:.2} µs");

    // Credential stuffing: 100,000 attempts, 10,000 accounts, 50 sources, 20 a second.
    let counters = Counters::in_memory();
    let mut blocked_until = vec![DateTime::UNIX_EPOCH; 50];
    let (mut blocks, mut refused, mut decided) = (0_u32, 0_u32, 0_u32);
    let started = Instant::now();
    for n in 0..100_000_usize {
        let now = at(START_MS + i64::try_from(n)? * 50);
        let source_index = n % 50;
        let source = format!("203.0.113.{source_index}");
        if blocked_until[source_index] > now {
            refused += 1;
            continue;
        }
        let account = format!("user-{}", n % 10_000);
        let seen = Seen {
            realm_id: "acme",
            kind: AttemptKind::Password,
            outcome: Outcome::Failed,
            source: &source,
            account: &account,
            account_known: n % 10 != 0,
            approved: false,
        };
        let counted = observe(&counters, &seen, now).await?;
        let Some(decision) = detector.decide(Attempt { account_known: seen.account_known, ..attempt(counted) }).await
        else {
            continue;
        };
        decided += 1;
        for measure in decision.measures.iter().filter(|m| m.kind == MeasureKind::SourceBlocked) {
            blocked_until[source_index] = now + TimeDelta::seconds(i64::from(measure.seconds.unwrap_or(0)));
            record_block(&counters, "acme", &source, now).await?;
            blocks += 1;
        }
    }
    println!(
        "stuffing simulation: 100,000 attempts in {:.2} s; {blocks} blocks, {refused} attempts refused, {decided} decisions",
        started.elapsed().as_secs_f64()
    );

    // Memory: failures from 1,000,000 distinct sources.
    let before = resident_megabytes();
    let counters = Counters::in_memory();
    for n in 0..1_000_000_u32 {
        let source = format!("10.{}.{}.{}", n >> 16, (n >> 8) & 255, n & 255);
        let seen = Seen {
            realm_id: "acme",
            kind: AttemptKind::Password,
            outcome: Outcome::Failed,
            source: &source,
            account: "ada",
            account_known: false,
            approved: false,
        };
        observe(&counters, &seen, at(START_MS + i64::from(n))).await?;
    }
    let after = resident_megabytes();
    let forgotten = counters.prune(at(START_MS) + TimeDelta::days(2));
    println!(
        "1,000,000 distinct sources: resident {before:.0} MB → {after:.0} MB; {forgotten} series forgotten a day later, resident {:.0} MB (kept by the allocator for reuse)",
        resident_megabytes()
    );
    Ok(())
}
