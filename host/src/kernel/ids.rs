//! Identifiers: every kind of record the service names has an id type of its own, so one kind's id
//! cannot stand for another's. Ids chosen by callers (realm and client ids) are parsed once at the
//! edge; the rest are GUIDs the service mints.

use std::fmt;

use serde::Serialize;

use crate::kernel::validate::Rule;

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
    /// An identity provider's id, unique within its realm and named by `idp_hint`: the form of a
    /// realm id.
    IdentityProviderId
}

id_type! {
    /// A connection provider's id, unique within its realm and named in the token exchange for a
    /// connected account: the form of a realm id.
    ConnectionProviderId
}

/// An identifier the service mints itself: a GUID, made by `fresh`.
macro_rules! guid_type {
    ($($(#[$meta:meta])* $name:ident;)+) => {$(
        id_type! { $(#[$meta])* $name }

        impl $name {
            /// A fresh GUID, for a new one.
            pub fn fresh() -> Self {
                Self(new_guid())
            }
        }
    )+};
}

guid_type! {
    /// An account: the customer that owns realms, API secrets and a team.
    AccountId;
    /// A person of a realm.
    UserId;
    /// A sign-in session of a person at a client.
    SessionId;
    /// A browser's sign-in to a realm, which lets its clients sign the person in without a form.
    BrowserSessionId;
    /// One refresh token of a session's rotation chain.
    RefreshTokenId;
    /// An API secret (or an API key): a credential of an account, or a client's secret.
    CredentialId;
    /// An organization of a realm.
    OrganizationId;
    /// A delegation grant: what a person allowed an agent to do for them.
    GrantId;
    /// One token exchange, allowed or refused, as recorded.
    ExchangeId;
    /// An event the service published.
    EventId;
    /// A webhook endpoint of a realm or a client.
    EndpointId;
    /// One delivery attempt of an event to an endpoint.
    AttemptId;
    /// An attack incident of a realm.
    IncidentId;
    /// A measure an incident took (a block, a lock, a challenge).
    MeasureId;
    /// A signing key, which tokens name in their `kid` header.
    KeyId;
    /// A phone registered to confirm sign-ins.
    DeviceId;
    /// A sign-in waiting for a phone's answer.
    PushRequestId;
    /// A person's authenticator beyond the password: a TOTP app, recovery codes or a passkey.
    AuthenticatorId;
    /// A role of a realm, or a client role.
    RoleId;
    /// A group of a realm.
    GroupId;
    /// A custom role of an account's team.
    AccountRoleId;
    /// A scope of a realm.
    ScopeId;
    /// A resource server: an API or MCP server a realm issues tokens for.
    ResourceServerId;
    /// A consumer of a client: an API key of a customer's own API.
    ConsumerId;
    /// An invitation to an account's team.
    InvitationId;
    /// A capture: a temporary address that records the requests sent to it.
    CaptureId;
    /// An operational notification to an account.
    NotificationId;
    /// A password reset code sent by recovery e-mail.
    ResetId;
    /// A self sign-up waiting for its e-mail address to be confirmed.
    SignUpId;
    /// A token an administrator hands out for clients to register with (RFC 7591).
    InitialAccessTokenId;
    /// A suspension of a person's use of a client.
    SuspensionId;
    /// An import of users into a realm.
    ImportId;
    /// A reading of an attack incident by the incident analyst.
    AnalysisId;
    /// A recommended change applied to a realm from a reading.
    AnalysisActionId;
    /// An account a person connected at a connection provider.
    ConnectionId;
}

/// The realm created at bootstrap, whose client id is the same value.
pub const PLATFORM_REALM: &str = "platform";

impl RealmId {
    pub fn parse(text: &str) -> Result<Self, (Rule, String)> {
        lowercase_name(text).map(Self)
    }

    pub fn platform() -> Self {
        Self(PLATFORM_REALM.to_owned())
    }
}

impl IdentityProviderId {
    pub fn parse(text: &str) -> Result<Self, (Rule, String)> {
        lowercase_name(text).map(Self)
    }
}

impl ConnectionProviderId {
    pub fn parse(text: &str) -> Result<Self, (Rule, String)> {
        lowercase_name(text).map(Self)
    }
}

/// 1 to 64 of lowercase letters, digits, `-` and `_`, starting and ending with a letter or digit.
fn lowercase_name(text: &str) -> Result<String, (Rule, String)> {
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
    Ok(text.to_owned())
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
