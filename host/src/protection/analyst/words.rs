//! What the service itself says of a recommended change, in each language: its title and what the
//! realm's users will notice once it is applied. (The reasons for it are the analyst's.)

use serde_json::{Value, json};

use super::Language;
use crate::protection::recommendations::Change;

/// The stored form of a reading's changes: `[{change, value}]`.
pub fn changes_json(changes: &[Change]) -> String {
    let listed: Vec<Value> = changes.iter().map(|c| json!({ "change": c.name(), "value": c.value() })).collect();
    Value::Array(listed).to_string()
}

/// The changes stored by [`changes_json`]; an unreadable entry is left out.
pub fn changes_of(stored: Option<&str>) -> Vec<Change> {
    let listed: Vec<Value> = stored.and_then(|text| serde_json::from_str(text).ok()).unwrap_or_default();
    listed
        .iter()
        .filter_map(|entry| {
            let name = entry["change"].as_str()?;
            let value = entry["value"].as_i64().unwrap_or(1);
            Change::named(name, value)
        })
        .collect()
}

pub fn title(change: Change, language: Language) -> &'static str {
    match (change, language) {
        (Change::RefuseBreachedPasswords, Language::English) => "Refuse breached passwords",
        (Change::LockOutSooner { .. }, Language::English) => "Lock out sooner",
        (Change::LockOutLonger { .. }, Language::English) => "Lock out for longer",
        (Change::LockOutNewAccounts, Language::English) => "Lock out new accounts too",
        (Change::RequireLongerPasswords { .. }, Language::English) => "Require longer passwords",
        (Change::RefuseBreachedPasswords, Language::French) => "Refuser les mots de passe divulgués",
        (Change::LockOutSooner { .. }, Language::French) => "Verrouiller plus tôt",
        (Change::LockOutLonger { .. }, Language::French) => "Verrouiller plus longtemps",
        (Change::LockOutNewAccounts, Language::French) => "Verrouiller aussi les nouveaux comptes",
        (Change::RequireLongerPasswords { .. }, Language::French) => "Exiger des mots de passe plus longs",
    }
}

/// What the realm's users will notice once the change is made.
pub fn noticed(change: Change, language: Language) -> String {
    match (change, language) {
        (Change::RefuseBreachedPasswords, Language::English) => {
            "Choosing or changing a password that appears in a known breach is refused; existing passwords keep \
             working."
                .into()
        }
        (Change::RefuseBreachedPasswords, Language::French) => {
            "Choisir un mot de passe présent dans une fuite connue est refusé ; les mots de passe actuels restent \
             valables."
                .into()
        }
        (Change::LockOutSooner { max_failed_attempts: n }, Language::English) => format!(
            "After {n} wrong passwords within an hour from an address never used before, that address is locked out \
             of the account for the lockout duration; known devices keep working."
        ),
        (Change::LockOutSooner { max_failed_attempts: n }, Language::French) => format!(
            "Après {n} mots de passe erronés en une heure depuis une adresse jamais utilisée, cette adresse est \
             bloquée sur le compte pendant la durée du verrouillage ; les appareils connus continuent de fonctionner."
        ),
        (Change::LockOutLonger { lockout_duration_minutes: m }, Language::English) => {
            format!("Someone locked out from a new address waits {m} minutes before trying again from it.")
        }
        (Change::LockOutLonger { lockout_duration_minutes: m }, Language::French) => {
            format!("Une personne bloquée depuis une nouvelle adresse attend {m} minutes avant de réessayer.")
        }
        (Change::LockOutNewAccounts, Language::English) => {
            "Every account, new ones included, is locked against an address after repeated wrong passwords.".into()
        }
        (Change::LockOutNewAccounts, Language::French) => {
            "Tous les comptes, nouveaux compris, sont verrouillés contre une adresse après des erreurs répétées.".into()
        }
        (Change::RequireLongerPasswords { minimum_password_length: n }, Language::English) => format!(
            "New and changed passwords need at least {n} characters; existing passwords keep working until changed."
        ),
        (Change::RequireLongerPasswords { minimum_password_length: n }, Language::French) => format!(
            "Les nouveaux mots de passe doivent compter au moins {n} caractères ; les actuels restent valables."
        ),
    }
}
