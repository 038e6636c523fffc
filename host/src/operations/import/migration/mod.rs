//! Migration from other providers: an export of Keycloak (a realm export, users and their
//! credentials included) or of Auth0 (its Deploy CLI's tenant document with a users export) read
//! into a configuration [`Document`] and user import rows, with a note for every item: mapped as it
//! was, mapped with a change of meaning, or left behind, and why.

mod auth0;
mod keycloak;

use super::configuration::{Collection, Document, Item};
use crate::kernel::validate::{Notification, Rule};
use crate::operations::import::ImportView;
use crate::operations::import::configuration::outcome::ConfigurationImportView;
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// Where an export comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Provider {
    Keycloak,
    Auth0,
}

impl Provider {
    pub const NAMES: &[(&'static str, Provider)] = &[("keycloak", Provider::Keycloak), ("auth0", Provider::Auth0)];
}

/// What became of one item of the export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Mapping {
    /// Carried over with the same meaning.
    Mapped,
    /// Carried over, but it means or behaves differently here: the note says how.
    Changed,
    /// Not carried over: the note says why.
    LeftBehind,
}

/// One line of a translation's report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Note {
    /// The item in the export: its kind and name.
    pub source: String,
    /// What it became here, when it became something.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    pub mapping: Mapping,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// An export read into this service's terms.
#[derive(Debug, Default)]
pub struct Translation {
    /// One realm, with what belongs to it.
    pub document: Document,
    /// The people, as user import rows.
    pub users: Vec<Value>,
    pub notes: Vec<Note>,
}

impl Translation {
    /// The realm everything goes into.
    pub fn realm_id(&self) -> Option<&str> {
        self.document.realms.first().map(|realm| realm.key())
    }

    fn note(&mut self, source: impl Into<String>, target: Option<String>, mapping: Mapping, note: Option<&str>) {
        self.notes.push(Note { source: source.into(), target, mapping, note: note.map(str::to_owned) });
    }

    fn mapped(&mut self, source: impl Into<String>, target: impl Into<String>) {
        self.note(source, Some(target.into()), Mapping::Mapped, None);
    }

    fn changed(&mut self, source: impl Into<String>, target: impl Into<String>, why: &str) {
        self.note(source, Some(target.into()), Mapping::Changed, Some(why));
    }

    fn left_behind(&mut self, source: impl Into<String>, why: &str) {
        self.note(source, None, Mapping::LeftBehind, Some(why));
    }

    /// The notes on the people: how many, and how many come without a password.
    fn people(&mut self, without_password: usize) {
        let count = self.users.len();
        if count > 0 {
            self.mapped(format!("users ({count})"), format!("{count} people"));
        }
        if without_password > 0 {
            self.changed(
                format!("users without a password hash ({without_password})"),
                "people without a password",
                "they set one through a password reset, or sign in another way",
            );
        }
    }

    /// The note on the people the export names nothing to sign in with: left behind.
    fn nameless(&mut self, count: usize) {
        if count > 0 {
            self.left_behind(format!("users with nothing to sign in with ({count})"), "a person here needs a username");
        }
    }

    /// Counts of each mapping: mapped, changed, left behind.
    pub fn counts(&self) -> [usize; 3] {
        let count = |mapping| self.notes.iter().filter(|note| note.mapping == mapping).count();
        [count(Mapping::Mapped), count(Mapping::Changed), count(Mapping::LeftBehind)]
    }
}

/// Reads an export of `provider`; `realm` names the realm it goes into when the export does not,
/// or should not.
pub fn translate(provider: Provider, export: Value, realm: Option<&str>) -> Result<Translation, Vec<Notification>> {
    let Value::Object(export) = export else {
        return Err(vec![Notification::new("", Rule::Type, "the export must be a JSON object")]);
    };
    match provider {
        Provider::Keycloak => keycloak::translate(export, realm),
        Provider::Auth0 => auth0::translate(export, realm),
    }
}

/// `text` in the form of an id here: lowercase letters, digits and `-` (and `extra`), nothing else
/// repeated or at the ends; at most `longest` characters.
fn slug(text: &str, extra: &[char], longest: usize) -> String {
    let mut slug = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() || extra.contains(&c) {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_matches('-').chars().take(longest).collect::<String>().trim_end_matches('-').to_owned()
}

/// A realm id from a name: 1–64 lowercase letters, digits, `-`, `_`.
fn realm_id(name: &str) -> String {
    let id = slug(name, &['_'], 64);
    if id.is_empty() { "imported".to_owned() } else { id }
}

/// A client or role id from a name: letters, digits, `-`, `_`, `.`, `:`.
fn client_id(name: &str) -> String {
    let id: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.:".contains(c) { c } else { '-' }).take(128).collect();
    if id.trim_matches('-').is_empty() { slug(name, &[], 128) } else { id }
}

fn text<'a>(fields: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    fields.get(name).and_then(Value::as_str).filter(|text| !text.is_empty())
}

fn texts(fields: &Map<String, Value>, name: &str) -> Vec<String> {
    fields
        .get(name)
        .and_then(Value::as_array)
        .map(|values| values.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn flag(fields: &Map<String, Value>, name: &str) -> Option<bool> {
    fields.get(name).and_then(Value::as_bool)
}

/// An item of `collection` with these fields (its key read from them).
fn item(collection: Collection, fields: Map<String, Value>) -> Item {
    let key = fields.get(collection.key_field()).and_then(Value::as_str).unwrap_or_default().to_owned();
    Item { key, fields, id: None }
}

/// The start of a user import row: `username`, and from the provider's names of the e-mail
/// address, given name, family name and e-mail confirmation, `email`, `firstName`, `lastName` and
/// `emailConfirmed`; `status` Disabled for a person the provider had disabled.
fn person_row(user: &Map<String, Value>, username: &str, names: [&str; 4], disabled: bool) -> Map<String, Value> {
    let mut row = Map::new();
    row.insert("username".into(), Value::from(username));
    for (from, to) in names.iter().zip(["email", "firstName", "lastName"]) {
        if let Some(value) = text(user, from) {
            row.insert(to.into(), Value::from(value));
        }
    }
    row.insert("emailConfirmed".into(), Value::from(flag(user, names[3]).unwrap_or(false)));
    if disabled {
        row.insert("status".into(), Value::from("Disabled"));
    }
    row
}

/// Addresses a browser may be sent back to here: compared exactly, so a wildcard cannot come.
fn exact_addresses(addresses: Vec<String>) -> (Vec<String>, Vec<String>) {
    addresses.into_iter().filter(|a| !a.is_empty()).partition(|address| !address.contains('*'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn people_with_nothing_to_sign_in_with_are_left_behind_with_a_note() {
        let keycloak =
            serde_json::json!({ "realm": "acme", "users": [{ "email": "x@example.com" }, { "username": "ada" }] });
        let t = translate(Provider::Keycloak, keycloak, None).unwrap();
        assert_eq!(t.users.len(), 1);
        let note = t.notes.iter().find(|n| n.source == "users with nothing to sign in with (1)").unwrap();
        assert_eq!(note.mapping, Mapping::LeftBehind);
        let auth0 = serde_json::json!({ "users": [{ "user_id": "sms|1", "phone_number": "+3312" }] });
        let t = translate(Provider::Auth0, auth0, None).unwrap();
        assert!(t.users.is_empty());
        assert!(
            t.notes
                .iter()
                .any(|n| n.source == "users with nothing to sign in with (1)" && n.mapping == Mapping::LeftBehind)
        );
    }

    #[test]
    fn names_become_ids_of_the_right_form() {
        assert_eq!(realm_id("My Company!"), "my-company");
        assert_eq!(realm_id("***"), "imported");
        assert_eq!(client_id("https://app.example.com/x"), "https:--app.example.com-x");
        assert_eq!(client_id("web-shop"), "web-shop");
        assert_eq!(slug("  Orders  API ", &[], 128), "orders-api");
    }
}

/// How many items of the export each mapping has.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MappingCounts {
    pub mapped: usize,
    pub changed: usize,
    pub left_behind: usize,
}

/// An export read into this service's terms.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TranslationView {
    /// keycloak or auth0.
    pub from: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub realm_id: Option<String>,
    pub counts: MappingCounts,
    /// Every item of the export: `source`, `target`, `mapping` (Mapped, Changed or LeftBehind) and
    /// a `note` saying what changes or why it stays behind.
    #[schema(value_type = Vec<Object>)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<Note>,
    /// The configuration document, as `/import` takes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub document: Option<Value>,
    /// The people, as the rows of a user import.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub users: Option<Vec<Value>>,
}

impl TranslationView {
    pub(crate) fn of(from: &str, translation: &Translation, whole: bool) -> Self {
        let [mapped, changed, left_behind] = translation.counts();
        Self {
            from: from.to_owned(),
            realm_id: translation.realm_id().map(str::to_owned),
            counts: MappingCounts { mapped, changed, left_behind },
            items: translation.notes.clone(),
            document: whole.then(|| translation.document.to_value()),
            users: whole.then(|| translation.users.clone()),
        }
    }
}

/// What a migration did, or in a dry run would do.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MigrationView {
    pub dry_run: bool,
    pub translation: TranslationView,
    pub configuration: ConfigurationImportView,
    /// The people's import through `clientId`, every refused row with its position and reasons;
    /// absent when the export holds no one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub users: Option<ImportView>,
    /// Why the people were not imported, when they were not: the client they come through was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub users_not_imported: Option<String>,
}
