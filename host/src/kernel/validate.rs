//! Reading JSON request bodies field by field, so that every refused field gets its own
//! notification (`field` is the camelCase path in the body, `code` the rule that refused it).

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value};

/// The rule a field broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub enum Rule {
    /// The body is not well-formed JSON.
    Json,
    /// The value has the wrong JSON type.
    Type,
    /// A required field is missing or null.
    Required,
    /// The field is not part of this request.
    Unknown,
    MinLength,
    MaxLength,
    /// The text does not have the required form.
    Pattern,
    /// The number or instant is outside its allowed range.
    Range,
    /// The value is not one of the allowed names.
    OneOf,
    /// The text is not in the required format (timestamp, URL, network).
    Format,
    /// The same value appears twice in a list.
    Duplicate,
    /// The value names something that does not exist.
    NotFound,
    /// The field cannot change after creation.
    Immutable,
    /// The value would grant more than the caller holds.
    Escalation,
    /// The value names something that does not allow this use (a client without Token Exchange).
    NotEnabled,
    /// The password appears in a list of breached passwords.
    Breached,
    /// The value cannot go with another field of the same request.
    Conflict,
    /// The text holds a character no field accepts (U+0000).
    Character,
    /// Objects and arrays are nested deeper than a request body may nest them.
    Depth,
}

/// Most levels of objects and arrays in a JSON request body (the deepest request nests three).
pub const MAX_JSON_DEPTH: usize = 16;
/// Most items of any array in a JSON request body; a field's own rule may allow fewer.
pub const MAX_JSON_ITEMS: usize = 1_000;
/// Most refusals one answer lists: a body of many bad values is refused without listing them all.
const MAX_REFUSALS: usize = 100;

/// One refused field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Notification {
    pub field: String,
    pub code: Rule,
    pub message: String,
}

impl Notification {
    pub fn new(field: impl Into<String>, code: Rule, message: impl Into<String>) -> Self {
        Self { field: field.into(), code, message: message.into() }
    }
}

pub type Refusals = Vec<Notification>;

/// A JSON object read one field at a time; [`Body::finish`] reports everything refused at once.
#[derive(Debug)]
pub struct Body {
    fields: Map<String, Value>,
    /// Path of this object in the request body (`clientConfiguration.`), empty at the top.
    prefix: String,
    refused: Refusals,
}

/// The fields of an input that were refused, one notification each; the admin API answers them
/// as `ValidationFailed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub Vec<Notification>);

impl Refused {
    /// One field refused.
    pub fn one(field: impl Into<String>, code: Rule, message: impl Into<String>) -> Self {
        Self(vec![Notification::new(field, code, message)])
    }
}

impl Body {
    /// Parses a request body. An empty body reads as `{}` (every field absent).
    pub fn parse(bytes: &[u8]) -> Result<Self, Refused> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self::from_map(Map::new()));
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(fields)) => {
                let body = Self::from_map(fields);
                if body.refused.is_empty() { Ok(body) } else { Err(Refused(body.refused)) }
            }
            Ok(_) => Err(Refused::one("", Rule::Type, "the body must be a JSON object")),
            Err(error) => Err(Refused::one("", Rule::Json, format!("the body is not valid JSON: {error}"))),
        }
    }

    /// A body of fields read from elsewhere than a request (a row of an import, a document's
    /// item): what no field accepts (see [`Body::parse`]) is refused when it finishes.
    pub fn from_map(fields: Map<String, Value>) -> Self {
        let mut refused = Vec::new();
        for (key, value) in &fields {
            inspect(key, value, 1, &mut refused);
        }
        Self { fields, prefix: String::new(), refused }
    }

    /// The fields not read yet, as a JSON object: for a body that is a document to be read whole.
    pub fn into_value(self) -> Value {
        Value::Object(self.fields)
    }

    fn path(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// A nested object, read with its own fields; call [`Body::absorb`] when done with it.
    pub fn nested(&mut self, key: &str) -> Option<Body> {
        let path = self.path(key);
        match self.fields.remove(key) {
            None | Some(Value::Null) => None,
            Some(Value::Object(fields)) => Some(Body { fields, prefix: format!("{path}."), refused: Vec::new() }),
            Some(_) => {
                self.refused.push(Notification::new(path.clone(), Rule::Type, format!("{path} must be an object")));
                None
            }
        }
    }

    /// Takes over the refusals of a nested object, its unknown fields included.
    pub fn absorb(&mut self, mut nested: Body) {
        nested.refuse_unknown();
        self.refused.append(&mut nested.refused);
    }

    fn refuse_unknown(&mut self) {
        for key in std::mem::take(&mut self.fields).keys() {
            let path = self.path(key);
            self.refused.push(Notification::new(
                path.clone(),
                Rule::Unknown,
                format!("{path} is not a field of this request"),
            ));
        }
    }

    /// Whether the body names the field at all (even as null).
    pub fn has(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }

    /// A field that must be present and not null.
    pub fn required<T>(&mut self, key: &str, parse: impl FnOnce(&str, &Value) -> Result<T, Refusals>) -> Option<T> {
        let path = self.path(key);
        match self.fields.remove(key) {
            None | Some(Value::Null) => {
                self.refused.push(Notification::new(path.clone(), Rule::Required, format!("{path} is required")));
                None
            }
            Some(value) => self.keep(parse(&path, &value)),
        }
    }

    /// A field that may be absent or null (both read as `None`).
    pub fn optional<T>(&mut self, key: &str, parse: impl FnOnce(&str, &Value) -> Result<T, Refusals>) -> Option<T> {
        let path = self.path(key);
        match self.fields.remove(key) {
            None | Some(Value::Null) => None,
            Some(value) => self.keep(parse(&path, &value)),
        }
    }

    /// A field that may be absent (`None`), null (`Some(None)`: clear it) or a value. A refused
    /// value reads as absent and is reported by [`Body::finish`].
    pub fn nullable<T>(
        &mut self,
        key: &str,
        parse: impl FnOnce(&str, &Value) -> Result<T, Refusals>,
    ) -> Option<Option<T>> {
        let path = self.path(key);
        match self.fields.remove(key) {
            None => None,
            Some(Value::Null) => Some(None),
            Some(value) => self.keep(parse(&path, &value)).map(Some),
        }
    }

    /// A field that may repeat its current value but never change it.
    pub fn unchanged(&mut self, key: &str, current: &str) {
        if let Some(sent) = self.optional(key, |_, value| Ok(value.clone()))
            && sent.as_str() != Some(current)
        {
            self.refuse(key, Rule::Immutable, format!("{} cannot change", self.path(key)));
        }
    }

    /// Records a refusal found by a check across fields.
    pub fn refuse(&mut self, key: &str, code: Rule, message: impl Into<String>) {
        let path = self.path(key);
        self.refused.push(Notification::new(path, code, message));
    }

    /// Refuses every field not read, then answers with all refusals, if any.
    pub fn finish(mut self) -> Result<(), Refused> {
        self.refuse_unknown();
        if self.refused.is_empty() { Ok(()) } else { Err(Refused(self.refused)) }
    }

    fn keep<T>(&mut self, parsed: Result<T, Refusals>) -> Option<T> {
        match parsed {
            Ok(value) => Some(value),
            Err(refusals) => {
                self.refused.extend(refusals);
                None
            }
        }
    }
}

/// Whether U+0000 appears anywhere in `value`, in a name or a text: no field of a person, a client
/// or a provider's answer holds it, and PostgreSQL cannot store it in text.
pub fn holds_nul(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains('\0'),
        Value::Array(items) => items.iter().any(holds_nul),
        Value::Object(fields) => fields.iter().any(|(name, item)| name.contains('\0') || holds_nul(item)),
        _ => false,
    }
}

/// Refuses, before any field is read, what no field accepts anywhere in a body: U+0000 in a name or
/// a text, nesting deeper than [`MAX_JSON_DEPTH`], arrays longer than [`MAX_JSON_ITEMS`]. One visit
/// of each value, at most [`MAX_REFUSALS`] refusals.
fn inspect(path: &str, value: &Value, depth: usize, refused: &mut Refusals) {
    if refused.len() >= MAX_REFUSALS {
        return;
    }
    if path.contains('\0') {
        let path = path.replace('\0', "");
        refused.push(Notification::new(path.clone(), Rule::Character, format!("{path}: a name contains U+0000")));
        return;
    }
    match value {
        Value::String(text) if text.contains('\0') => {
            refused.push(Notification::new(path, Rule::Character, format!("{path} contains the character U+0000")));
        }
        Value::Array(_) | Value::Object(_) if depth >= MAX_JSON_DEPTH => refused.push(Notification::new(
            path,
            Rule::Depth,
            format!("{path} nests objects and arrays deeper than {MAX_JSON_DEPTH} levels"),
        )),
        Value::Array(items) if items.len() > MAX_JSON_ITEMS => refused.push(Notification::new(
            path,
            Rule::MaxLength,
            format!("{path} must have at most {MAX_JSON_ITEMS} items"),
        )),
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                inspect(&format!("{path}[{index}]"), item, depth + 1, refused);
            }
        }
        Value::Object(fields) => {
            for (key, item) in fields {
                inspect(&format!("{path}.{key}"), item, depth + 1, refused);
            }
        }
        _ => {}
    }
}

fn refuse<T>(path: &str, code: Rule, message: impl Into<String>) -> Result<T, Refusals> {
    Err(vec![Notification::new(path, code, message)])
}

/// Text of `min..=max` characters.
pub fn text(min: usize, max: usize) -> impl Fn(&str, &Value) -> Result<String, Refusals> {
    move |path, value| {
        let Value::String(text) = value else {
            return refuse(path, Rule::Type, format!("{path} must be a string"));
        };
        let length = text.chars().count();
        if length < min {
            return refuse(path, Rule::MinLength, format!("{path} must have at least {min} characters"));
        }
        if length > max {
            return refuse(path, Rule::MaxLength, format!("{path} must have at most {max} characters"));
        }
        Ok(text.clone())
    }
}

/// A boolean.
pub fn boolean(path: &str, value: &Value) -> Result<bool, Refusals> {
    value.as_bool().map_or_else(|| refuse(path, Rule::Type, format!("{path} must be true or false")), Ok)
}

/// A whole number in `min..=max`.
pub fn integer(min: i64, max: i64) -> impl Fn(&str, &Value) -> Result<i64, Refusals> {
    move |path, value| {
        let Some(number) = value.as_i64() else {
            return refuse(path, Rule::Type, format!("{path} must be a whole number"));
        };
        if !(min..=max).contains(&number) {
            return refuse(path, Rule::Range, format!("{path} must be from {min} to {max}"));
        }
        Ok(number)
    }
}

/// One of a fixed set of names, parsed into its type.
pub fn one_of<T: Copy>(options: &'static [(&'static str, T)]) -> impl Fn(&str, &Value) -> Result<T, Refusals> {
    move |path, value| {
        let Value::String(text) = value else {
            return refuse(path, Rule::Type, format!("{path} must be a string"));
        };
        options.iter().find(|(name, _)| name == text).map(|(_, parsed)| *parsed).map_or_else(
            || {
                let names: Vec<&str> = options.iter().map(|(name, _)| *name).collect();
                refuse(path, Rule::OneOf, format!("{path} must be one of {}", names.join(", ")))
            },
            Ok,
        )
    }
}

/// An ISO 8601 instant with a time zone, read as UTC.
pub fn instant(path: &str, value: &Value) -> Result<DateTime<Utc>, Refusals> {
    let Value::String(text) = value else {
        return refuse(path, Rule::Type, format!("{path} must be an ISO 8601 timestamp string"));
    };
    DateTime::parse_from_rfc3339(text).map(|at| at.with_timezone(&Utc)).or_else(|_| {
        refuse(
            path,
            Rule::Format,
            format!("{path} must be an ISO 8601 timestamp with a zone, such as 2030-01-31T12:00:00Z"),
        )
    })
}

/// A list whose items each pass `item`; items are refused as `path[i]`, and repeats are refused.
pub fn list_of<T: Ord + Clone>(
    max_items: usize,
    item: impl Fn(&str, &Value) -> Result<T, Refusals>,
) -> impl Fn(&str, &Value) -> Result<Vec<T>, Refusals> {
    move |path, value| {
        let Value::Array(items) = value else {
            return refuse(path, Rule::Type, format!("{path} must be an array"));
        };
        if items.len() > max_items {
            return refuse(path, Rule::MaxLength, format!("{path} must have at most {max_items} items"));
        }
        let mut parsed = Vec::with_capacity(items.len());
        let mut seen = BTreeSet::new();
        let mut refused = Vec::new();
        for (index, value) in items.iter().enumerate() {
            let item_path = format!("{path}[{index}]");
            match item(&item_path, value) {
                Ok(value) if !seen.insert(value.clone()) => {
                    refused.push(Notification::new(item_path, Rule::Duplicate, "the same value is listed twice"))
                }
                Ok(value) => parsed.push(value),
                Err(more) => refused.extend(more),
            }
        }
        if refused.is_empty() { Ok(parsed) } else { Err(refused) }
    }
}

/// Applies a typed parser (`RealmId::parse` and the like) to a text field.
pub fn parsed<T>(parse: impl Fn(&str) -> Result<T, (Rule, String)>) -> impl Fn(&str, &Value) -> Result<T, Refusals> {
    move |path, value| {
        let Value::String(text) = value else {
            return refuse(path, Rule::Type, format!("{path} must be a string"));
        };
        parse(text).map_err(|(rule, message)| vec![Notification::new(path, rule, format!("{path}: {message}"))])
    }
}

/// Whether `name` can be a username: 1–255 characters, none a space or a control character.
pub fn is_username(name: &str) -> bool {
    (1..=255).contains(&name.chars().count()) && !name.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// A username field (see [`is_username`]).
pub fn username(path: &str, value: &Value) -> Result<String, Refusals> {
    let name = text(1, 255)(path, value)?;
    if !is_username(&name) {
        return refuse(path, Rule::Pattern, format!("{path} must not contain spaces"));
    }
    Ok(name)
}

/// Whether `text` reads as an e-mail address: one `@`, something before it, a dotted domain
/// after it, no spaces, at most 254 characters.
pub fn is_email(text: &str) -> bool {
    text.len() <= 254
        && !text.chars().any(|c| c.is_whitespace() || c.is_control())
        && text.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !domain.contains('@')
        })
}

/// An e-mail address field, for [`parsed`] (see [`is_email`]).
pub fn email(text: &str) -> Result<String, (Rule, String)> {
    if is_email(text) { Ok(text.to_owned()) } else { Err((Rule::Format, "email must be an e-mail address".into())) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(value: Value) -> Body {
        Body::from_map(value.as_object().cloned().unwrap_or_default())
    }

    #[test]
    fn every_refused_field_gets_its_own_notification() {
        let mut b = body(json!({"name": 5, "scopes": ["a", 7, "a"], "extra": true}));
        let _ = b.required("id", text(1, 10));
        let _ = b.required("name", text(1, 10));
        let _ = b.optional("scopes", list_of(10, text(1, 10)));
        let Err(Refused(refused)) = b.finish() else { panic!("expected a validation failure") };
        let found: Vec<(&str, Rule)> = refused.iter().map(|n| (n.field.as_str(), n.code)).collect();
        assert_eq!(
            found,
            vec![
                ("id", Rule::Required),
                ("name", Rule::Type),
                ("scopes[1]", Rule::Type),
                ("scopes[2]", Rule::Duplicate),
                ("extra", Rule::Unknown),
            ]
        );
    }

    #[test]
    fn nested_fields_are_named_by_their_path() {
        let mut b = body(json!({"config": {"flag": "yes", "other": 1}}));
        let mut nested = b.nested("config").unwrap();
        let _ = nested.optional("flag", boolean);
        b.absorb(nested);
        let Err(Refused(refused)) = b.finish() else { panic!("expected refusals") };
        let found: Vec<(&str, Rule)> = refused.iter().map(|n| (n.field.as_str(), n.code)).collect();
        assert_eq!(found, vec![("config.flag", Rule::Type), ("config.other", Rule::Unknown)]);
    }

    #[test]
    fn malformed_json_is_refused_not_panicked_on() {
        assert!(matches!(Body::parse(b"{\"a\":"), Err(Refused(n)) if n[0].code == Rule::Json));
        assert!(matches!(Body::parse(b"[1]"), Err(Refused(n)) if n[0].code == Rule::Type));
        assert!(Body::parse(b"  ").is_ok());
    }

    #[test]
    fn text_with_u0000_is_refused_wherever_it_stands_with_its_path() {
        let body = br#"{"displayName":"a\u0000b","attributes":{"x":["ok","c\u0000"]},"k\u0000":1}"#;
        let Err(Refused(refused)) = Body::parse(body) else { panic!("expected refusals") };
        let mut found: Vec<(&str, Rule)> = refused.iter().map(|n| (n.field.as_str(), n.code)).collect();
        found.sort_by_key(|(field, _)| *field);
        assert_eq!(
            found,
            vec![("attributes.x[1]", Rule::Character), ("displayName", Rule::Character), ("k", Rule::Character)]
        );
    }

    #[test]
    fn bodies_are_bounded_in_depth_and_array_length() {
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(MAX_JSON_DEPTH), "]".repeat(MAX_JSON_DEPTH));
        let Err(Refused(refused)) = Body::parse(deep.as_bytes()) else { panic!("too deep") };
        assert_eq!(refused[0].code, Rule::Depth);
        let fits = format!("{{\"a\":{}1{}}}", "[".repeat(MAX_JSON_DEPTH - 1), "]".repeat(MAX_JSON_DEPTH - 1));
        assert!(Body::parse(fits.as_bytes()).is_ok());
        let long = format!("{{\"a\":[{}0]}}", "0,".repeat(MAX_JSON_ITEMS));
        let Err(Refused(refused)) = Body::parse(long.as_bytes()) else { panic!("too long") };
        assert_eq!((refused[0].field.as_str(), refused[0].code), ("a", Rule::MaxLength));
        let many = format!("{{{}\"z\":0}}", (0..500).map(|i| format!("\"k{i}\":\"\\u0000\",")).collect::<String>());
        let Err(Refused(refused)) = Body::parse(many.as_bytes()) else { panic!("refused") };
        assert_eq!(refused.len(), MAX_REFUSALS);
    }

    #[test]
    fn ranges_and_lengths_are_inclusive() {
        assert_eq!(integer(0, 3)("d", &json!(3)), Ok(3));
        assert_eq!(integer(0, 3)("d", &json!(4)).unwrap_err()[0].code, Rule::Range);
        assert_eq!(text(1, 3)("n", &json!("abcd")).unwrap_err()[0].code, Rule::MaxLength);
        assert_eq!(text(1, 3)("n", &json!("")).unwrap_err()[0].code, Rule::MinLength);
        assert!(instant("t", &json!("2030-01-01T00:00:00Z")).is_ok());
        assert_eq!(instant("t", &json!("tomorrow")).unwrap_err()[0].code, Rule::Format);
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::*;

        proptest! {
            /// A text field takes exactly the strings whose length in characters is within its bounds.
            #[test]
            fn a_text_field_takes_exactly_the_strings_within_its_bounds(
                text_value in any::<String>(),
                min in 0usize..12,
                longer in 0usize..12,
            ) {
                let max = min + longer;
                let taken = text(min, max)("f", &Value::String(text_value.clone()));
                prop_assert_eq!(taken.is_ok(), (min..=max).contains(&text_value.chars().count()));
            }

            /// Any bytes parse into a body or a refusal naming why, never a panic.
            #[test]
            fn any_bytes_are_read_or_refused(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
                if let Err(Refused(notes)) = Body::parse(&bytes) {
                    prop_assert!(!notes.is_empty());
                }
            }
        }
    }
}
