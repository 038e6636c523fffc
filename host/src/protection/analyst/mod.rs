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

use self::component::AnalystComponent;
pub use self::figures::{Bucket, Figures, MeasureFigures, SettingsFigures};
use self::words::{changes_of, noticed, title};
use crate::kernel::clock::iso;
use crate::kernel::config::AnalystSettings;
use crate::protection::recommendations::Change;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::analyses::{self as store, Action, Analysis, AnalysisStatus, Classification, Moment};
use crate::store::realms::RealmSettings;
use crate::store::threats::Incident;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

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

/// One reading, in one language.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnalysisView {
    pub id: String,
    pub incident_id: String,
    pub realm_id: String,
    /// Opened (the incident had run five minutes), TurnedCritical, or Closed.
    pub moment: Moment,
    /// Running, Completed, or Failed (it can be asked for again).
    pub status: AnalysisStatus,
    /// The language of the words: the caller's (`Accept-Language`), en or fr.
    pub language: &'static str,
    /// `component` (the analyst the service runs offline) or `model:{name}` (the language model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub produced_by: Option<String>,
    /// Why the language model's answer was passed over, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_failure: Option<String>,
    /// One of the five kinds, LegitimateSurge, Misconfiguration or Inconclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classification: Option<String>,
    /// How sure the analyst is, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what_happened: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what_was_done: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exposed_passwords: Option<String>,
    /// Up to three changes that would make the realm stricter.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recommendations: Vec<RecommendationView>,
    /// The post-incident report: in the closing reading only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<Report>,
    /// Why a failed reading failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    pub created_at: String,
    /// Its latest run; retries count toward the account's 12 readings a UTC day.
    pub ran_at: String,
    pub runs: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecommendationView {
    /// Its index, counted from zero, as `apply` takes it.
    pub index: usize,
    /// RefuseBreachedPasswords, LockOutSooner, LockOutLonger, LockOutNewAccounts or RequireLongerPasswords.
    pub change: &'static str,
    pub title: &'static str,
    /// The realm setting it changes, by its admin API name.
    pub setting: &'static str,
    #[schema(value_type = Object)]
    pub value: serde_json::Value,
    /// The realm's value now.
    #[schema(value_type = Object)]
    pub current_value: serde_json::Value,
    /// Whether applying it would still make the realm stricter.
    pub tightens: bool,
    /// What the realm's users will notice.
    pub noticed: String,
    /// Why, in the analyst's words.
    pub why: String,
    /// The action that applied it, while not reverted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied_action_id: Option<String>,
}

/// A recommended change applied to the realm.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionView {
    pub id: String,
    pub analysis_id: String,
    pub realm_id: String,
    pub recommendation: i64,
    pub change: String,
    #[schema(value_type = Object)]
    pub applied_value: serde_json::Value,
    /// What a revert restores.
    #[schema(value_type = Object)]
    pub previous_value: serde_json::Value,
    pub applied_at: String,
    pub applied_by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverted_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverted_by: Option<String>,
}

impl From<&Action> for ActionView {
    fn from(a: &Action) -> Self {
        let json = |text: &str| serde_json::from_str(text).unwrap_or_default();
        Self {
            id: a.id.to_string(),
            analysis_id: a.analysis_id.to_string(),
            realm_id: a.realm_id.to_string(),
            recommendation: a.recommendation,
            change: a.change.clone(),
            applied_value: json(&a.applied_value),
            previous_value: json(&a.previous_value),
            applied_at: iso(a.applied_at),
            applied_by: a.applied_by.clone(),
            reverted_at: a.reverted_at.map(iso),
            reverted_by: a.reverted_by.clone(),
        }
    }
}

/// The words of a reading in `language`.
fn words_in(analysis: &Analysis, language: Language) -> Option<Words> {
    let mut all: BTreeMap<String, Words> = serde_json::from_str(analysis.texts.as_deref()?).ok()?;
    all.remove(language.tag())
}

pub fn view(analysis: &Analysis, settings: &RealmSettings, actions: &[Action], language: Language) -> AnalysisView {
    let words = words_in(analysis, language);
    let recommendations = changes_of(analysis.recommendations.as_deref())
        .into_iter()
        .enumerate()
        .map(|(index, change)| RecommendationView {
            index,
            change: change.name(),
            title: title(change, language),
            setting: change.setting(),
            value: change.value(),
            current_value: change.current(settings),
            tightens: change.tightens(settings),
            noticed: noticed(change, language),
            why: words.as_ref().and_then(|w| w.why.get(index).cloned()).unwrap_or_default(),
            applied_action_id: actions
                .iter()
                .find(|a| a.analysis_id == analysis.id && a.recommendation == index as i64 && a.reverted_at.is_none())
                .map(|a| a.id.to_string()),
        })
        .collect();
    AnalysisView {
        id: analysis.id.to_string(),
        incident_id: analysis.incident_id.to_string(),
        realm_id: analysis.realm_id.to_string(),
        moment: analysis.moment,
        status: analysis.status,
        language: language.tag(),
        produced_by: analysis.produced_by.clone(),
        model_failure: analysis.model_failure.clone(),
        classification: analysis.classification.clone(),
        confidence: analysis.confidence,
        what_happened: words.as_ref().map(|w| w.what_happened.clone()),
        what_was_done: words.as_ref().map(|w| w.what_was_done.clone()),
        exposed_passwords: words.as_ref().map(|w| w.exposed_passwords.clone()),
        recommendations,
        report: words.and_then(|w| w.report),
        failure: analysis.failure.clone(),
        created_at: iso(analysis.created_at),
        ran_at: iso(analysis.ran_at),
        runs: analysis.runs,
    }
}

/// What readings are shown against: the realm's current settings and the incident's actions.
async fn shown_against(
    context: &Context,
    realm_id: &str,
    incident_id: &str,
) -> Result<(RealmSettings, Vec<Action>), Error> {
    let realm = crate::store::realms::find(context.store.pool(), realm_id).await?;
    let actions = store::actions_of_incident(context.store.pool(), incident_id).await?;
    Ok((realm.map(|r| r.settings).unwrap_or_default(), actions))
}

/// The reading as the caller reads it.
pub async fn current_view(context: &Context, analysis: &Analysis, language: Language) -> Result<AnalysisView, Error> {
    let (settings, actions) = shown_against(context, &analysis.realm_id, &analysis.incident_id).await?;
    Ok(view(analysis, &settings, &actions, language))
}

/// The readings of `incident`, newest first, in `language`.
pub async fn readings(context: &Context, incident: &Incident, language: Language) -> Result<Vec<AnalysisView>, Error> {
    let readings = store::of_incident(context.store.pool(), &incident.id).await?;
    let (settings, actions) = shown_against(context, &incident.realm_id, &incident.id).await?;
    Ok(readings.iter().map(|a| view(a, &settings, &actions, language)).collect())
}
