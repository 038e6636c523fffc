//! A language model as the analyst: an OpenAI-compatible chat-completions address is sent the
//! incident's figures (the same the component reads: no address, name, e-mail or identifier) and
//! asked for a reading as JSON. Its answer is used only when it is valid: a classification of the
//! eight, a confidence in percent, at most three of the five changes, each within its limit and
//! making the realm stricter, and the words in every language the service speaks.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::{Figures, Language, Reading, Words};
use crate::kernel::config::AnalystSettings;
use crate::protection::recommendations::Change;
use crate::store::analyses::{Classification, Moment};
use crate::store::realms::RealmSettings;

/// The longest text of a reading's section.
const MAX_TEXT: usize = 4_000;
/// The largest answer read.
const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// What the model is told, before the figures.
const INSTRUCTIONS: &str = r#"You are the incident analyst of an identity service. You receive the figures of one attack incident detected by its attack protection, as JSON: kind, severity, moment (Opened, TurnedCritical or Closed), counts, the measures taken (with what the counters held when each was taken: failures, accounts tried, failures naming accounts that do not exist, earlier blocks, datacenter or Tor source), a timeline and the realm's current settings. Read them as a security expert would: a surge of failures from many residential addresses on real accounts, each retried several times, reads differently from a list being worked through from a datacenter; one ordinary address failing again and again against one account is usually a client holding a stale password.
Answer with one JSON object and nothing else:
{"classification": one of "CredentialStuffing", "PasswordSpraying", "BruteForce", "PushBombing", "RecoveryAbuse", "SignUpAbuse", "SecondFactorGuessing", "LegitimateSurge", "Misconfiguration", "Inconclusive",
 "confidence": an integer from 0 to 100,
 "recommendations": at most 3 of {"change": one of "RefuseBreachedPasswords", "LockOutSooner" (value: max failed attempts, at least 3), "LockOutLonger" (value: lockout minutes, at most 1440), "LockOutNewAccounts", "RequireLongerPasswords" (value: minimum length, at most 64), "value": an integer (1 for the changes that turn a setting on)}, each making the realm stricter than its current settings, none for a legitimate surge or a misconfiguration,
 "words": {"en": WORDS in English, "fr": WORDS in French}}
where WORDS is {"whatHappened": text, "whatWasDone": text, "exposedPasswords": text, "why": [one text per recommendation], "report": null, or when the moment is Closed {"nature": text, "dataAndPeople": text, "risks": text, "measures": text, "communication": text}, the sections of a report to a data protection authority}."#;

/// The configured model.
#[derive(Debug)]
pub struct Model {
    http: reqwest::Client,
    url: String,
    model: String,
    key: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Completion {
    choices: Vec<Choice>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    message: Message,
}

#[derive(Debug, Deserialize)]
struct Message {
    content: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    classification: String,
    confidence: i64,
    #[serde(default)]
    recommendations: Vec<Recommended>,
    words: BTreeMap<String, Words>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Recommended {
    change: String,
    #[serde(default)]
    value: i64,
}

impl Model {
    /// The model the settings name, if any.
    pub fn configured(settings: &AnalystSettings) -> anyhow::Result<Option<Self>> {
        let Some(url) = &settings.model_url else { return Ok(None) };
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(settings.model_timeout_seconds))
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Some(Self { http, url: url.clone(), model: settings.model.clone(), key: settings.model_key.clone() }))
    }

    /// How readings it wrote name it.
    pub fn name(&self) -> String {
        format!("model:{}", self.model)
    }

    /// The request sent for `figures`.
    pub fn request(&self, figures: &Figures) -> serde_json::Value {
        json!({
            "model": self.model,
            "temperature": 0,
            "response_format": { "type": "json_object" },
            "messages": [
                { "role": "system", "content": INSTRUCTIONS },
                { "role": "user", "content": serde_json::to_string(figures).unwrap_or_default() },
            ],
        })
    }

    /// The model's reading of `figures`, or why there is none.
    pub async fn read(&self, figures: &Figures) -> Result<Reading, String> {
        let mut request = self.http.post(&self.url).json(&self.request(figures));
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let response =
            request.send().await.map_err(|error| format!("the language model cannot be reached: {error}"))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("the language model answered {status}"));
        }
        let body = response.bytes().await.map_err(|error| format!("the language model's answer broke off: {error}"))?;
        if body.len() > MAX_ANSWER_BYTES {
            return Err("the language model's answer is too large".into());
        }
        let completion: Completion = serde_json::from_slice(&body)
            .map_err(|error| format!("the language model's answer is not a chat completion: {error}"))?;
        let content = completion
            .choices
            .into_iter()
            .next()
            .and_then(|choice| choice.message.content)
            .ok_or("the language model answered no message")?;
        let answer: Answer = serde_json::from_str(strip_fence(&content))
            .map_err(|error| format!("the reading is not of its shape: {error}"))?;
        validate(answer, figures)
    }
}

/// The JSON inside a Markdown code fence, as some models wrap it.
fn strip_fence(content: &str) -> &str {
    let trimmed = content.trim();
    trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|inner| inner.strip_suffix("```"))
        .map_or(trimmed, str::trim)
}

/// The settings the figures give, to tell whether a change tightens them.
fn settings_of(figures: &Figures) -> RealmSettings {
    let s = figures.settings;
    RealmSettings {
        max_failed_attempts: i64::from(s.max_failed_attempts),
        lockout_duration_minutes: i64::from(s.lockout_duration_minutes),
        lockout_enabled: s.lockout_enabled,
        minimum_password_length: i64::from(s.minimum_password_length),
        block_breached_passwords: s.block_breached_passwords,
        ..RealmSettings::default()
    }
}

fn validate(answer: Answer, figures: &Figures) -> Result<Reading, String> {
    let classification = Classification::try_from(answer.classification.clone())
        .map_err(|_| format!("the classification {:?} is not one a reading may give", answer.classification))?;
    let confidence = u8::try_from(answer.confidence)
        .ok()
        .filter(|c| *c <= 100)
        .ok_or_else(|| format!("the confidence {} is not a percentage", answer.confidence))?;
    if answer.recommendations.len() > 3 {
        return Err(format!("{} recommendations, of at most 3", answer.recommendations.len()));
    }
    let settings = settings_of(figures);
    let mut changes = Vec::new();
    for recommended in &answer.recommendations {
        let change = Change::named(&recommended.change, recommended.value)
            .ok_or_else(|| format!("{:?} is none of the five recommendations", recommended.change))?;
        if !change.within_bounds() {
            return Err(format!("{} to {} is beyond its limit", recommended.change, recommended.value));
        }
        if !change.tightens(&settings) {
            return Err(format!("{} would not make the realm stricter", recommended.change));
        }
        changes.push(change);
    }
    if changes.iter().map(|c| c.name()).collect::<BTreeSet<_>>().len() != changes.len() {
        return Err("a recommendation is given twice".into());
    }
    let mut words = BTreeMap::new();
    for language in Language::ALL {
        let tag = language.tag();
        let mut said = answer.words.get(tag).cloned().ok_or_else(|| format!("no words in {tag}"))?;
        if figures.moment != Moment::Closed {
            said.report = None;
        }
        check_words(&said, changes.len(), figures.moment).map_err(|why| format!("the words in {tag}: {why}"))?;
        words.insert(tag.to_owned(), said);
    }
    Ok(Reading { classification, confidence, changes, words })
}

fn check_words(words: &Words, recommendations: usize, moment: Moment) -> Result<(), String> {
    let mut texts = vec![&words.what_happened, &words.what_was_done, &words.exposed_passwords];
    texts.extend(&words.why);
    if let Some(r) = &words.report {
        texts.extend([&r.nature, &r.data_and_people, &r.risks, &r.measures, &r.communication]);
    }
    if texts.iter().any(|text| text.trim().is_empty() || text.chars().count() > MAX_TEXT) {
        return Err(format!("every section must say something, in at most {MAX_TEXT} characters"));
    }
    if words.why.len() != recommendations {
        return Err("one reason per recommendation".into());
    }
    if moment == Moment::Closed && words.report.is_none() {
        return Err("the closing reading has no report".into());
    }
    Ok(())
}
