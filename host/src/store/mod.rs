//! Persistence on SQLite (embedded default) or PostgreSQL through sqlx's runtime-selected driver.
//!
//! SQL is written once with `$1` placeholders, `RETURNING` and `ON CONFLICT`, which both backends
//! understand; what must differ per backend lives here and nowhere else. Instants are stored as
//! milliseconds since the epoch and lists as JSON text, so every column decodes the same way on
//! both backends.

pub mod access_log;
pub mod accounts;
pub mod analyses;
pub mod assertions;
pub mod authenticators;
pub mod browser;
pub mod captures;
pub mod changes;
pub mod clients;
pub mod connections;
pub mod consents;
pub mod console_sessions;
pub mod consumers;
pub mod delegation;
pub mod deliveries;
pub mod devices;
mod error;
pub mod events;
pub mod exposures;
pub mod identity_providers;
pub mod imports;
pub mod instance_settings;
pub mod invitations;
pub mod lockout;
pub mod memberships;
pub mod notifications;
pub mod organizations;
pub mod page;
pub mod push;
pub mod readings;
pub mod realm_roles;
pub mod realms;
pub mod recovery;
pub mod registration;
pub mod resource_servers;
pub mod roles;
pub mod scopes;
pub mod secrets;
pub mod session_reads;
pub mod sessions;
pub mod sign_ups;
pub mod signing_keys;
pub mod suspensions;
pub mod threat_summary;
pub mod threats;
pub mod trail;
pub mod users;
pub mod webhooks;
pub mod write_queue;

mod connection;
pub use connection::{Backend, Store, Transaction};
pub use error::{Error, is_unreachable};

use chrono::{DateTime, Utc};

pub use sqlx::AnyConnection as Connection;

/// An enum stored and shown by its variant names (`Active`, `Confidential`, …).
macro_rules! text_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[$vmeta:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        $vis enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            pub const NAMES: &'static [(&'static str, Self)] = &[$((stringify!($variant), Self::$variant)),+];

            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => stringify!($variant)),+ }
            }
        }

        impl TryFrom<String> for $name {
            type Error = String;
            fn try_from(text: String) -> Result<Self, String> {
                Self::NAMES
                    .iter()
                    .find(|(name, _)| *name == text)
                    .map(|(_, value)| *value)
                    .ok_or_else(|| format!("unknown {} {text}", stringify!($name)))
            }
        }
    };
}
pub(crate) use text_enum;

text_enum! {
    /// Whether a realm or client is in service.
    pub enum Status {
        Active,
        Disabled,
    }
}

/// Rows per multi-row `INSERT`. One statement per row costs a round trip each; SQLite resolves
/// bound parameter names in time linear in their number, so one huge statement is quadratic.
/// 32 rows is near the best of both (measured on the access log).
pub const ROWS_PER_STATEMENT: usize = 32;

/// The numbered placeholders of an `IN (…)` list: `$2, $3, $4` for 3 values from `$2`.
pub fn list_placeholders(first: usize, count: usize) -> String {
    (first..first + count).map(|n| format!("${n}")).collect::<Vec<_>>().join(", ")
}

/// A column list with each column taken from `table`: `s.id, s.realm_id` for `id, realm_id`.
pub fn qualified(table: &str, columns: &str) -> String {
    columns.split(',').map(|column| format!("{table}.{}", column.trim())).collect::<Vec<_>>().join(", ")
}

/// The `VALUES` list of a multi-row insert: `($1, $2), ($3, $4)` for 2 rows of 2 columns.
pub fn values_placeholders(rows: usize, per_row: usize) -> String {
    (0..rows)
        .map(|row| {
            let numbers: Vec<String> = (1..=per_row).map(|i| format!("${}", row * per_row + i)).collect();
            format!("({})", numbers.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A boolean column. PostgreSQL stores `BOOLEAN`; SQLite stores `INTEGER` 0/1, because the
/// runtime-selected driver cannot map SQLite's `BOOLEAN`. Fields read it with
/// `#[sqlx(try_from = "Flag")]` and stay plain `bool`; binding a `bool` works on both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag(pub bool);

impl From<Flag> for bool {
    fn from(flag: Flag) -> Self {
        flag.0
    }
}

impl sqlx::Type<sqlx::Any> for Flag {
    fn type_info() -> sqlx::any::AnyTypeInfo {
        <bool as sqlx::Type<sqlx::Any>>::type_info()
    }

    fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
        ty.kind() == sqlx::any::AnyTypeInfoKind::Bool || ty.kind().is_integer()
    }
}

impl<'r> sqlx::Decode<'r, sqlx::Any> for Flag {
    fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        match <i64 as sqlx::Decode<sqlx::Any>>::decode(value.clone()) {
            Ok(number) => Ok(Self(number != 0)),
            Err(_) => <bool as sqlx::Decode<sqlx::Any>>::decode(value).map(Self),
        }
    }
}

/// A list column as stored: JSON text on both backends. Rows read it into a `Vec<String>` with
/// `#[sqlx(try_from = "super::JsonList")]`; a malformed value (never written by us) reads as empty.
#[derive(Debug)]
pub struct JsonList(String);

/// A list column that may be NULL, read into an `Option<Vec<String>>`.
#[derive(Debug)]
pub struct OptionalJsonList(Option<String>);

/// A text column that may be NULL, read into an `Option` of one of the [`text_enum`]s; a value
/// none of its names (never written by us) reads as NULL.
#[derive(Debug)]
pub struct OptionalText(pub Option<String>);

impl From<JsonList> for Vec<String> {
    fn from(list: JsonList) -> Self {
        from_json_list(&list.0)
    }
}

impl From<OptionalJsonList> for Option<Vec<String>> {
    fn from(list: OptionalJsonList) -> Self {
        list.0.as_deref().map(from_json_list)
    }
}

/// The identifier types read and bind as their text.
macro_rules! text_id {
    ($($id:ty),+) => {$(
        impl sqlx::Type<sqlx::Any> for $id {
            fn type_info() -> sqlx::any::AnyTypeInfo {
                <String as sqlx::Type<sqlx::Any>>::type_info()
            }

            fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
                <String as sqlx::Type<sqlx::Any>>::compatible(ty)
            }
        }

        impl<'r> sqlx::Decode<'r, sqlx::Any> for $id {
            fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                <String as sqlx::Decode<sqlx::Any>>::decode(value).map(<$id>::known)
            }
        }

        impl<'q> sqlx::Encode<'q, sqlx::Any> for $id {
            fn encode_by_ref(
                &self,
                buf: &mut <sqlx::Any as sqlx::Database>::ArgumentBuffer,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <String as sqlx::Encode<'q, sqlx::Any>>::encode(self.as_str().to_owned(), buf)
            }
        }
    )+};
}

text_id!(
    crate::kernel::ids::AccountId,
    crate::kernel::ids::RealmId,
    crate::kernel::ids::ClientId,
    crate::kernel::ids::IdentityProviderId,
    crate::kernel::ids::ConnectionProviderId,
    crate::kernel::ids::ConnectionId,
    crate::kernel::ids::UserId,
    crate::kernel::ids::SessionId,
    crate::kernel::ids::BrowserSessionId,
    crate::kernel::ids::RefreshTokenId,
    crate::kernel::ids::CredentialId,
    crate::kernel::ids::OrganizationId,
    crate::kernel::ids::GrantId,
    crate::kernel::ids::ExchangeId,
    crate::kernel::ids::EventId,
    crate::kernel::ids::EndpointId,
    crate::kernel::ids::AttemptId,
    crate::kernel::ids::IncidentId,
    crate::kernel::ids::MeasureId,
    crate::kernel::ids::KeyId,
    crate::kernel::ids::DeviceId,
    crate::kernel::ids::PushRequestId,
    crate::kernel::ids::AuthenticatorId,
    crate::kernel::ids::RoleId,
    crate::kernel::ids::GroupId,
    crate::kernel::ids::AccountRoleId,
    crate::kernel::ids::ScopeId,
    crate::kernel::ids::ResourceServerId,
    crate::kernel::ids::ConsumerId,
    crate::kernel::ids::InvitationId,
    crate::kernel::ids::CaptureId,
    crate::kernel::ids::NotificationId,
    crate::kernel::ids::ResetId,
    crate::kernel::ids::SignUpId,
    crate::kernel::ids::InitialAccessTokenId,
    crate::kernel::ids::SuspensionId,
    crate::kernel::ids::ImportId,
    crate::kernel::ids::AnalysisId,
    crate::kernel::ids::AnalysisActionId
);

/// An instant column as stored: milliseconds since the Unix epoch, an integer on both backends.
/// Rows read it into a `DateTime<Utc>` with `#[sqlx(try_from = "super::Millis")]`; a value out of
/// chrono's range (never written by us) reads as the epoch.
#[derive(Debug)]
pub struct Millis(i64);

/// An instant column that may be NULL, read into an `Option<DateTime<Utc>>`.
#[derive(Debug)]
pub struct OptionalMillis(Option<i64>);

fn instant_of(millis: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(millis).unwrap_or_default()
}

impl From<Millis> for DateTime<Utc> {
    fn from(millis: Millis) -> Self {
        instant_of(millis.0)
    }
}

impl From<OptionalMillis> for Option<DateTime<Utc>> {
    fn from(millis: OptionalMillis) -> Self {
        millis.0.map(instant_of)
    }
}

/// An instant (or an optional one) as its column stores it.
trait Stored {
    type Column;
    fn stored(self) -> Self::Column;
}

impl Stored for DateTime<Utc> {
    type Column = i64;
    fn stored(self) -> i64 {
        self.timestamp_millis()
    }
}

impl Stored for Option<DateTime<Utc>> {
    type Column = Option<i64>;
    fn stored(self) -> Option<i64> {
        self.map(|at| at.timestamp_millis())
    }
}

/// What to bind for an instant column: `.bind(millis(session.created_at))`.
fn millis<T: Stored>(at: T) -> T::Column {
    at.stored()
}

/// The column types that read through the driver's own decoding of a base type: `Name(read) as
/// base`, where `read` is the base type or an `Option` of it.
macro_rules! stored_column {
    ($($name:ident($read:ty) as $base:ty),+ $(,)?) => {$(
        impl sqlx::Type<sqlx::Any> for $name {
            fn type_info() -> sqlx::any::AnyTypeInfo {
                <$base as sqlx::Type<sqlx::Any>>::type_info()
            }

            fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
                <$base as sqlx::Type<sqlx::Any>>::compatible(ty)
            }
        }

        impl<'r> sqlx::Decode<'r, sqlx::Any> for $name {
            fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                <$read as sqlx::Decode<sqlx::Any>>::decode(value).map(Self)
            }
        }
    )+};
}

stored_column!(
    Millis(i64) as i64,
    OptionalMillis(Option<i64>) as i64,
    JsonList(String) as String,
    OptionalJsonList(Option<String>) as String,
    OptionalText(Option<String>) as String,
);

/// A list as its column stores it.
fn to_json_list(items: &[String]) -> String {
    serde_json::Value::from(items).to_string()
}

fn from_json_list(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_number_rows_then_columns() {
        assert_eq!(values_placeholders(2, 3), "($1, $2, $3), ($4, $5, $6)");
        assert_eq!(list_placeholders(2, 3), "$2, $3, $4");
    }

    #[test]
    fn instants_are_stored_to_the_millisecond() {
        let at = DateTime::from_timestamp_millis(1_763_812_345_678).unwrap();
        assert_eq!(millis(at), 1_763_812_345_678);
        assert_eq!(millis(Some(at)), Some(1_763_812_345_678));
        assert_eq!(millis(None::<DateTime<Utc>>), None);
        assert_eq!(DateTime::<Utc>::from(Millis(1_763_812_345_678)), at);
        assert_eq!(Option::<DateTime<Utc>>::from(OptionalMillis(None)), None);
        assert_eq!(DateTime::<Utc>::from(Millis(i64::MAX)), DateTime::UNIX_EPOCH, "out of range reads as the epoch");
    }
}
