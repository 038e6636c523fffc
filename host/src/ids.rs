//! Identifiers chosen by callers, parsed once at the edge (realm and client ids).

use std::fmt;

use serde::Serialize;

use crate::validate::Rule;

/// A realm id: 1 to 64 of lowercase letters, digits, `-` and `_`, starting and ending with a
/// letter or digit. It appears in every protocol URL of the realm.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct RealmId(String);

/// The realm created at bootstrap, whose client id is the same value.
pub const PLATFORM_REALM: &str = "platform";

impl RealmId {
    pub fn parse(text: &str) -> Result<Self, (Rule, String)> {
        let valid_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_';
        let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        if text.is_empty() || text.len() > 64 {
            return Err((Rule::Pattern, "must have 1 to 64 characters".into()));
        }
        if !text.chars().all(valid_char) || !edge(text.chars().next()) || !edge(text.chars().last()) {
            return Err((
                Rule::Pattern,
                "only lowercase letters, digits, '-' and '_', starting and ending with a letter or digit".into(),
            ));
        }
        Ok(Self(text.to_owned()))
    }

    pub fn platform() -> Self {
        Self(PLATFORM_REALM.to_owned())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RealmId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A client id, unique within its realm: 1 to 128 of letters, digits, `-`, `_`, `.` and `:`,
/// starting with a letter or digit.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct ClientId(String);

impl ClientId {
    pub fn parse(text: &str) -> Result<Self, (Rule, String)> {
        let valid_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':');
        if text.is_empty() || text.len() > 128 {
            return Err((Rule::Pattern, "must have 1 to 128 characters".into()));
        }
        if !text.chars().all(valid_char) || !text.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            return Err((
                Rule::Pattern,
                "only letters, digits, '-', '_', '.' and ':', starting with a letter or digit".into(),
            ));
        }
        Ok(Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A fresh time-ordered GUID (uuid v7) for ids the service chooses.
pub fn new_guid() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// A GUID (uuid v7) that carries `at`, to the millisecond, by the service's clock: the id of
/// something whose instant must be read back exactly (an access token's `jti`).
pub fn guid_at(at: chrono::DateTime<chrono::Utc>) -> String {
    let seconds = u64::try_from(at.timestamp()).unwrap_or(0);
    uuid::Uuid::new_v7(uuid::Timestamp::from_unix(uuid::NoContext, seconds, at.timestamp_subsec_nanos())).to_string()
}

/// The instant a uuid v7 carries, to the millisecond; `None` for any other text.
pub fn guid_instant(id: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let uuid = uuid::Uuid::parse_str(id).ok()?;
    if uuid.get_version_num() != 7 {
        return None;
    }
    let (seconds, nanos) = uuid.get_timestamp()?.to_unix();
    chrono::DateTime::from_timestamp(i64::try_from(seconds).ok()?, nanos / 1_000_000 * 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guid_carries_its_instant_to_the_millisecond() {
        let at = chrono::DateTime::from_timestamp_millis(1_790_000_000_123).expect("instant");
        let id = guid_at(at);
        assert_eq!(guid_instant(&id), Some(at));
        assert_ne!(guid_at(at), id, "random beyond the instant");
        assert_eq!(guid_instant("not-a-guid"), None);
        assert_eq!(guid_instant(&uuid::Uuid::new_v4().to_string()), None);
    }

    #[test]
    fn realm_ids_follow_the_pattern() {
        for good in ["a", "acme", "acme-prod_2", "0"] {
            assert!(RealmId::parse(good).is_ok(), "{good}");
        }
        let long = "a".repeat(65);
        for bad in ["", "Acme", "-acme", "acme-", "ac me", "acmé", long.as_str()] {
            assert!(RealmId::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn client_ids_follow_the_pattern() {
        for good in ["web", "My.App:v2", "svc_1-a"] {
            assert!(ClientId::parse(good).is_ok(), "{good}");
        }
        for bad in ["", ".hidden", "a b", "a/b"] {
            assert!(ClientId::parse(bad).is_err(), "{bad}");
        }
    }
}
