//! Identifiers: the ids of the tenancy (account, realm, client, person) as types of their own, the
//! ones chosen by callers parsed once at the edge (realm and client ids), and GUIDs.

use std::fmt;

use serde::Serialize;

use crate::validate::Rule;

/// An identifier type: text with a meaning, which only its own kind of thing carries. It reads as
/// `&str` wherever one is wanted and serialises as its text; a value is made by parsing what a
/// caller chose (`parse`), by minting a GUID (`fresh`), or from what the service stored (`known`).
macro_rules! id_type {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// An id the service wrote itself (a stored row, a token it signed): no rule is
            /// checked again.
            pub fn known(text: impl Into<String>) -> Self {
                Self(text.into())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.0
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }
    };
}

id_type! {
    /// A realm id: 1 to 64 of lowercase letters, digits, `-` and `_`, starting and ending with a
    /// letter or digit. It appears in every protocol URL of the realm.
    RealmId
}

id_type! {
    /// A client id, unique within its realm: 1 to 128 of letters, digits, `-`, `_`, `.` and `:`,
    /// starting with a letter or digit.
    ClientId
}

id_type! {
    /// An account: the customer that owns realms, API secrets and a team. A GUID.
    AccountId
}

id_type! {
    /// A person of a realm. A GUID.
    UserId
}

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
}

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
}

impl AccountId {
    /// A fresh GUID, for a new one.
    pub fn fresh() -> Self {
        Self(new_guid())
    }
}

impl UserId {
    /// A fresh GUID, for a new one.
    pub fn fresh() -> Self {
        Self(new_guid())
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
