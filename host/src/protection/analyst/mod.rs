//! The incident analyst: reads an attack incident's figures (never its addresses or names) when it
//! has run five minutes, when it turns critical and when it closes by itself, and writes what
//! happened, what was done, what became of passwords, up to three changes that would make the realm
//! stricter and, once closed, the post-incident report.
//!
//! The embedded component (`plugins/analyst`) reads offline and is the default. With a language
//! model configured, the model is asked first, on the same figures, and its answer is used only when
//! it is valid; the component answers otherwise, and the reading records which wrote it.
//! Readings run in the background (`schedule`), never in the sign-in path, for accounts whose plan
//! includes the advisor and realms that consent to it.

pub mod actions;
pub mod component;
pub mod figures;
pub mod model;
pub mod scenario;
pub mod schedule;
pub mod words;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use self::component::AnalystComponent;
pub use self::figures::{Bucket, Figures, MeasureFigures, SettingsFigures};
use crate::kernel::config::AnalystSettings;
use crate::protection::recommendations::Change;
use crate::store::analyses::Classification;

/// The languages readings are written in; the first is the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    English,
    French,
}

impl Language {
    pub const ALL: [Self; 2] = [Self::English, Self::French];

    /// Its tag (BCP 47).
    pub fn tag(self) -> &'static str {
        match self {
            Self::English => "en",
            Self::French => "fr",
        }
    }

    /// The language an `Accept-Language` header prefers among ours (by weight, then order),
    /// English when it names none of them.
    pub fn preferred(header: Option<&str>) -> Self {
        let mut best: Option<(f32, Self)> = None;
        for range in header.unwrap_or_default().split(',') {
            let mut parts = range.split(';');
            let tag = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            let weight = parts
                .find_map(|p| p.trim().strip_prefix("q=").and_then(|q| q.trim().parse::<f32>().ok()))
                .unwrap_or(1.0);
            let primary = tag.split('-').next().unwrap_or_default();
            let Some(language) = Self::ALL.into_iter().find(|l| l.tag() == primary) else { continue };
            if weight > 0.0 && best.is_none_or(|(held, _)| weight > held) {
                best = Some((weight, language));
            }
        }
        best.map_or(Self::English, |(_, language)| language)
    }
}

/// A reading's words in one language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Words {
    pub what_happened: String,
    pub what_was_done: String,
    pub exposed_passwords: String,
    /// Why each recommended change, in their order.
    #[serde(default)]
    pub why: Vec<String>,
    #[serde(default)]
    pub report: Option<Report>,
}

/// The post-incident report, in the sections of a data protection authority's form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Report {
    pub nature: String,
    pub data_and_people: String,
    pub risks: String,
    pub measures: String,
    pub communication: String,
}

/// A reading, with its words in every language.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub classification: Classification,
    pub confidence: u8,
    pub changes: Vec<Change>,
    /// Per language tag.
    pub words: BTreeMap<String, Words>,
}

/// Who wrote a reading, and why the model's answer was passed over when it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Author {
    pub produced_by: String,
    pub model_failure: Option<String>,
}

/// What `produced_by` says of the embedded component or another one configured.
pub const COMPONENT: &str = "component";

/// Which accounts' plans include the advisor.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Plan {
    Every,
    Only(Vec<String>),
}

/// The analyst the service runs: its component, the language model when one is configured, and
/// the accounts whose plan includes it.
#[derive(Debug)]
pub struct Analyst {
    component: AnalystComponent,
    model: Option<model::Model>,
    plan: Plan,
}

impl Analyst {
    pub fn load(settings: &AnalystSettings) -> anyhow::Result<Self> {
        let component = AnalystComponent::load(settings.component.as_deref())?;
        let model = model::Model::configured(settings)?;
        let plan = if settings.plan_accounts.iter().any(|a| a == "*") {
            Plan::Every
        } else {
            Plan::Only(settings.plan_accounts.clone())
        };
        Ok(Self { component, model, plan })
    }

    /// Whether the account's plan includes the advisor.
    pub fn included(&self, account_id: &str) -> bool {
        match &self.plan {
            Plan::Every => true,
            Plan::Only(accounts) => accounts.iter().any(|a| a == account_id),
        }
    }

    /// Reads the figures: the model's valid answer when one is configured, else the component's.
    pub async fn read(&self, figures: &Figures) -> Result<(Reading, Author), String> {
        let mut model_failure = None;
        if let Some(model) = &self.model {
            match model.read(figures).await {
                Ok(reading) => {
                    return Ok((reading, Author { produced_by: model.name(), model_failure: None }));
                }
                Err(why) => {
                    tracing::warn!(reason = %why, "the language model's reading was passed over; the component reads");
                    model_failure = Some(why);
                }
            }
        }
        let reading = self.read_offline(figures).await.map_err(|error| match &model_failure {
            Some(why) => format!("{why}; and the analyst component failed: {error:#}"),
            None => format!("the analyst component failed: {error:#}"),
        })?;
        Ok((reading, Author { produced_by: COMPONENT.into(), model_failure }))
    }

    /// The component's reading, asked in each language: the verdict and changes of the first.
    pub async fn read_offline(&self, figures: &Figures) -> anyhow::Result<Reading> {
        let mut words = BTreeMap::new();
        let mut first = None;
        for language in Language::ALL {
            let answer = self.component.read(figures, language).await?;
            words.insert(language.tag().to_owned(), answer.words.clone());
            first.get_or_insert(answer);
        }
        let first = first.ok_or_else(|| anyhow::anyhow!("no language to read in"))?;
        Ok(Reading {
            classification: first.classification,
            confidence: first.confidence,
            changes: first.changes,
            words,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caller_s_language_is_the_best_weighted_of_ours() {
        assert_eq!(Language::preferred(None), Language::English);
        assert_eq!(Language::preferred(Some("fr-CH, fr;q=0.9, en;q=0.8")), Language::French);
        assert_eq!(Language::preferred(Some("de, fr;q=0.5, en;q=0.7")), Language::English);
        assert_eq!(Language::preferred(Some("de, fr;q=0.5")), Language::French);
        assert_eq!(Language::preferred(Some("fr;q=0, es")), Language::English, "q=0 refuses it");
        assert_eq!(Language::preferred(Some("*")), Language::English);
    }
}
