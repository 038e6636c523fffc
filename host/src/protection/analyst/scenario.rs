//! `castellan plugins test COMPONENT INCIDENT`: reads an incident file with an analyst component
//! and prints its reading in every language, so that an analyst can be swapped and tested alone.
//!
//! An incident file holds the figures the service gives an analyst, as JSON (field names as in
//! `plugins/analyst/scenarios`): `kind`, `severity`, `moment` (Opened, TurnedCritical, Closed),
//! the counts, `measures` (each with its kind, minute, seconds, and what the counters held:
//! `sourceFailures`, `sourceAccounts`, `unknownAccountFailures`, `earlierBlocks`,
//! `accountSources`, `datacenter`, `tor`), `timeline` and the realm's `settings`.

use anyhow::Context as _;

use super::{Figures, Language};
use crate::protection::analyst::component::AnalystComponent;

/// The reading of the incident in `text`, as lines to print.
pub async fn replay(component: &AnalystComponent, text: &str) -> anyhow::Result<Vec<String>> {
    let figures: Figures = serde_json::from_str(text).context("the incident file is not an incident's figures")?;
    let mut lines = Vec::new();
    for language in Language::ALL {
        let answer = component.read(&figures, language).await?;
        if lines.is_empty() {
            lines.push(format!("classification: {} ({}%)", answer.classification.as_str(), answer.confidence));
            for change in &answer.changes {
                lines.push(format!("recommends: {} ({} = {})", change.name(), change.setting(), change.value()));
            }
        }
        let tag = language.tag();
        let words = &answer.words;
        lines.push(format!("[{tag}] what happened: {}", words.what_happened));
        lines.push(format!("[{tag}] what was done: {}", words.what_was_done));
        lines.push(format!("[{tag}] exposed passwords: {}", words.exposed_passwords));
        for why in &words.why {
            lines.push(format!("[{tag}] why: {why}"));
        }
        if let Some(report) = &words.report {
            lines.push(format!("[{tag}] report, nature: {}", report.nature));
            lines.push(format!("[{tag}] report, data and people: {}", report.data_and_people));
            lines.push(format!("[{tag}] report, risks: {}", report.risks));
            lines.push(format!("[{tag}] report, measures: {}", report.measures));
            lines.push(format!("[{tag}] report, communication: {}", report.communication));
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each shipped incident file, and what the embedded analyst reads in it.
    const SCENARIOS: [(&str, &str, &str); 10] = [
        (
            "credential-stuffing",
            include_str!("../../../../plugins/analyst/scenarios/credential-stuffing.json"),
            "CredentialStuffing",
        ),
        (
            "password-spraying",
            include_str!("../../../../plugins/analyst/scenarios/password-spraying.json"),
            "PasswordSpraying",
        ),
        ("brute-force", include_str!("../../../../plugins/analyst/scenarios/brute-force.json"), "BruteForce"),
        (
            "brute-force-from-many-addresses",
            include_str!("../../../../plugins/analyst/scenarios/brute-force-from-many-addresses.json"),
            "BruteForce",
        ),
        (
            "brute-force-from-one-address",
            include_str!("../../../../plugins/analyst/scenarios/brute-force-from-one-address.json"),
            "BruteForce",
        ),
        ("push-bombing", include_str!("../../../../plugins/analyst/scenarios/push-bombing.json"), "PushBombing"),
        ("recovery-abuse", include_str!("../../../../plugins/analyst/scenarios/recovery-abuse.json"), "RecoveryAbuse"),
        ("sign-up-abuse", include_str!("../../../../plugins/analyst/scenarios/sign-up-abuse.json"), "SignUpAbuse"),
        (
            "legitimate-surge",
            include_str!("../../../../plugins/analyst/scenarios/legitimate-surge.json"),
            "LegitimateSurge",
        ),
        (
            "misconfiguration",
            include_str!("../../../../plugins/analyst/scenarios/misconfiguration.json"),
            "Misconfiguration",
        ),
    ];

    #[tokio::test]
    async fn the_embedded_analyst_reads_each_shipped_incident_as_its_kind() {
        let component = AnalystComponent::load(None).unwrap_or_else(|error| panic!("{error:#}"));
        for (name, text, expected) in SCENARIOS {
            let lines = replay(&component, text).await.unwrap_or_else(|error| panic!("{name}: {error:#}"));
            assert!(lines[0].starts_with(&format!("classification: {expected} (")), "{name}: {lines:?}");
            assert!(lines.iter().any(|l| l.starts_with("[fr] what happened: ")), "{name}: in French too");
        }
    }

    #[tokio::test]
    async fn a_file_that_is_not_an_incident_is_refused_with_why() {
        let component = AnalystComponent::load(None).unwrap_or_else(|error| panic!("{error:#}"));
        let Err(refused) = replay(&component, r#"{"realm": "acme", "attempts": []}"#).await else {
            panic!("a detector scenario is not an incident")
        };
        assert!(format!("{refused:#}").contains("not an incident's figures"), "{refused:#}");
    }
}
