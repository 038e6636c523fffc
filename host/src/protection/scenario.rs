//! `castellan plugins test COMPONENT SCENARIO`: replays a scenario of timed attempts against a
//! detector component on a manual clock, counting in memory as the service does, and tells what
//! the component decided for each attempt. A detector can so be swapped and tested alone.
//!
//! A scenario is JSON:
//!
//! ```json
//! { "realm": "acme",
//!   "attempts": [
//!     { "at": 0, "every": 2, "repeat": 10, "source": "203.0.113.7", "account": "user{n}",
//!       "kind": "password", "outcome": "failed", "known": false } ] }
//! ```
//!
//! `at` is seconds from the start; `repeat` (default 1) sends the attempt again every `every`
//! seconds, with `{n}` in `account` replaced by the repetition's number from 1. `kind` is
//! `password`, `recovery` or `push-answer`; `outcome` is `succeeded`, `failed`, `requested` or
//! `refused-on-phone`; `known`, `approved`, `datacenter`, `tor` and `shared` (default false) are
//! the facts about the account and the source. While a source is blocked its password attempts
//! and recovery requests are refused before anything is counted, as the service refuses them.

use std::collections::HashMap;
use std::fmt::Write as _;

use anyhow::Context as _;
use chrono::{DateTime, TimeDelta, Utc};
use serde::Deserialize;

use super::detection::{Attempt, AttemptKind, Decision, MeasureKind, Outcome, Source};
use super::tracking::{Seen, observe, record_block};
use crate::protection::detector::AttackDetector;
use crate::runtime::counting::Counters;

/// The instant the manual clock starts at (2030-01-01T00:00:00Z), in epoch ms.
const START_MS: i64 = 1_893_456_000_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    realm: String,
    attempts: Vec<Step>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    at: u32,
    #[serde(default)]
    every: u32,
    #[serde(default = "one")]
    repeat: u32,
    source: String,
    account: String,
    kind: String,
    outcome: String,
    #[serde(default)]
    known: bool,
    #[serde(default)]
    approved: bool,
    #[serde(default)]
    datacenter: bool,
    #[serde(default)]
    tor: bool,
    #[serde(default)]
    shared: bool,
}

fn one() -> u32 {
    1
}

fn kind_of(text: &str) -> anyhow::Result<AttemptKind> {
    Ok(match text {
        "password" => AttemptKind::Password,
        "recovery" => AttemptKind::Recovery,
        "push-answer" => AttemptKind::PushAnswer,
        "second-factor" => AttemptKind::SecondFactor,
        other => anyhow::bail!("unknown kind {other:?}: password, recovery, push-answer or second-factor"),
    })
}

fn outcome_of(text: &str) -> anyhow::Result<Outcome> {
    Ok(match text {
        "succeeded" => Outcome::Succeeded,
        "failed" => Outcome::Failed,
        "requested" => Outcome::Requested,
        "refused-on-phone" => Outcome::RefusedOnPhone,
        other => anyhow::bail!("unknown outcome {other:?}: succeeded, failed, requested or refused-on-phone"),
    })
}

/// Replays the scenario; one line per attempt, in time order.
pub async fn replay(detector: &AttackDetector, scenario: &str) -> anyhow::Result<Vec<String>> {
    let scenario: Scenario = serde_json::from_str(scenario).context("the scenario is not valid")?;
    let mut timeline = Vec::new();
    for (index, step) in scenario.attempts.iter().enumerate() {
        let (kind, outcome) = (kind_of(&step.kind)?, outcome_of(&step.outcome)?);
        for n in 1..=step.repeat {
            let at = i64::from(step.at) + i64::from(step.every) * i64::from(n - 1);
            timeline.push((at, index, n, step, kind, outcome));
        }
    }
    timeline.sort_by_key(|(at, index, n, ..)| (*at, *index, *n));

    let counters = Counters::in_memory();
    let start = DateTime::from_timestamp_millis(START_MS).unwrap_or_default();
    let mut blocked_until: HashMap<&str, DateTime<Utc>> = HashMap::new();
    let mut lines = Vec::with_capacity(timeline.len());
    for (at, _, n, step, kind, outcome) in timeline {
        let now = start + TimeDelta::seconds(at);
        let account = step.account.replace("{n}", &n.to_string());
        let mut line = format!("+{at}s {} {account} {} {}", step.source, step.kind, step.outcome);
        let refusable = matches!(kind, AttemptKind::Password | AttemptKind::Recovery);
        if let Some(until) = blocked_until.get(step.source.as_str()).filter(|until| **until > now && refusable) {
            let _ = write!(line, ": refused, source blocked for {} s more", (*until - now).num_seconds());
            lines.push(line);
            continue;
        }
        let seen = Seen {
            realm_id: &scenario.realm,
            kind,
            outcome,
            source: &step.source,
            account: &account,
            account_known: step.known,
            approved: step.approved,
        };
        let counts = observe(&counters, &seen, now).await?;
        let source = Source {
            approved_for_account: step.approved,
            datacenter: step.datacenter,
            tor: step.tor,
            shared_network: step.shared,
        };
        let attempt = Attempt { kind, outcome, account_known: step.known, source, counts };
        let Some(decision) = detector.decide(attempt).await else {
            line.push_str(": the component failed; protection fails open");
            lines.push(line);
            continue;
        };
        for measure in &decision.measures {
            if measure.kind == MeasureKind::SourceBlocked {
                let seconds = i64::from(measure.seconds.unwrap_or(u32::MAX));
                blocked_until.insert(&step.source, now + TimeDelta::seconds(seconds));
                record_block(&counters, &scenario.realm, &step.source, now).await?;
            }
        }
        describe(&mut line, &decision);
        lines.push(line);
    }
    Ok(lines)
}

fn describe(line: &mut String, decision: &Decision) {
    if decision.measures.is_empty() {
        return;
    }
    let measures: Vec<String> = decision
        .measures
        .iter()
        .map(|m| match m.seconds {
            Some(seconds) => format!("{} for {seconds} s", name(m.kind)),
            None => format!("{}, never lapses", name(m.kind)),
        })
        .collect();
    let _ = write!(line, ": {}", measures.join(", "));
    if let (Some(classification), Some(severity)) = (decision.classification, decision.severity) {
        let _ = write!(line, " [{}, {}]", name(classification), name(severity));
    }
    if !decision.reasons.is_empty() {
        let _ = write!(line, " because {}", decision.reasons.join("; "));
    }
}

/// The variant's name alone (`SourceBlocked`, not `MeasureKind::SourceBlocked`).
fn name(value: impl std::fmt::Debug) -> String {
    let text = format!("{value:?}");
    text.rsplit("::").next().unwrap_or(&text).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detector() -> AttackDetector {
        AttackDetector::load(None).unwrap_or_else(|error| panic!("{error:#}"))
    }

    #[tokio::test]
    async fn a_list_worked_through_from_one_address_is_blocked_then_refused_until_the_block_lapses() {
        let scenario = r#"{ "realm": "acme", "attempts": [
            { "at": 0, "every": 10, "repeat": 9, "source": "203.0.113.7", "account": "user{n}",
              "kind": "password", "outcome": "failed" },
            { "at": 899, "source": "203.0.113.7", "account": "ada", "kind": "password", "outcome": "failed", "known": true },
            { "at": 970, "source": "203.0.113.7", "account": "ada", "kind": "password", "outcome": "failed", "known": true } ] }"#;
        let lines = replay(&detector(), scenario).await.unwrap_or_else(|error| panic!("{error:#}"));
        assert_eq!(lines.len(), 11);
        assert_eq!(lines[6], "+60s 203.0.113.7 user7 password failed", "below 8 accounts nothing happens");
        assert!(
            lines[7].starts_with(
                "+70s 203.0.113.7 user8 password failed: SourceBlocked for 900 s [CredentialStuffing, Medium] because"
            ),
            "{}",
            lines[7]
        );
        assert_eq!(lines[8], "+80s 203.0.113.7 user9 password failed: refused, source blocked for 890 s more");
        assert_eq!(lines[9], "+899s 203.0.113.7 ada password failed: refused, source blocked for 71 s more");
        assert_eq!(lines[10], "+970s 203.0.113.7 ada password failed", "lapsed; the 10-minute window moved on");
    }

    #[tokio::test]
    async fn a_second_block_within_a_day_lasts_an_hour() {
        let scenario = r#"{ "realm": "acme", "attempts": [
            { "at": 0, "every": 1, "repeat": 4, "source": "198.51.100.9", "account": "u{n}", "kind": "password",
              "outcome": "failed", "tor": true },
            { "at": 2000, "every": 1, "repeat": 4, "source": "198.51.100.9", "account": "v{n}", "kind": "password",
              "outcome": "failed", "tor": true } ] }"#;
        let lines = replay(&detector(), scenario).await.unwrap_or_else(|error| panic!("{error:#}"));
        assert!(lines[3].contains("SourceBlocked for 900 s"), "{}", lines[3]);
        assert!(lines[3].contains("Tor exit: source thresholds halved"), "{}", lines[3]);
        assert!(lines[7].contains("SourceBlocked for 3600 s"), "{}", lines[7]);
    }

    #[tokio::test]
    async fn the_shipped_scenario_shows_each_measure_of_a_password_attack() {
        let scenario = include_str!("../../../plugins/detector/scenarios/credential-stuffing.json");
        let lines = replay(&detector(), scenario).await.unwrap_or_else(|error| panic!("{error:#}"));
        let measures: Vec<&str> = lines
            .iter()
            .filter_map(|line| line.split_once(": ").map(|(_, decided)| decided))
            .map(|decided| decided.split(" because").next().unwrap_or(decided))
            .collect();
        assert_eq!(
            measures,
            [
                "PasswordExposed, never lapses [CredentialStuffing, Critical]",
                "SourceBlocked for 900 s [CredentialStuffing, Medium]",
                "refused, source blocked for 895 s more",
                "ClosedToUnknownAddresses for 1800 s [BruteForce, High]",
                "SignInPushesPaused for 1800 s [PushBombing, High]",
            ]
        );
    }

    #[tokio::test]
    async fn a_scenario_that_does_not_parse_says_where() {
        let error = replay(&detector(), r#"{ "realm": "acme", "attempts": [ { "at": 0 } ] }"#).await.unwrap_err();
        assert!(format!("{error:#}").contains("missing field"), "{error:#}");
        let unknown = r#"{ "realm": "a", "attempts": [ { "at": 0, "source": "s", "account": "a", "kind": "sms", "outcome": "failed" } ] }"#;
        assert!(format!("{:#}", replay(&detector(), unknown).await.unwrap_err()).contains("unknown kind"));
    }
}
