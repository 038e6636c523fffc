//! The event outbox: every event is written in the transaction of the change it announces
//! and delivered later by the webhook worker.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{Any, Executor};

use super::Error;
use super::webhooks::EndpointKind;
use crate::kernel::ids::{AccountId, ClientId, EventId, RealmId};

/// Every event the service publishes, by its name on the wire, each listed once with the
/// endpoints that hear it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    UserCreated,
    UserUpdated,
    UserDeleted,
    LoginSucceeded,
    LoginFailed,
    UserLockedOut,
    TokenRevoked,
    KeysRotated,
    TokenReuseDetected,
    UserSuspended,
    UserSuspensionEnded,
    /// A person's TOTP app, recovery codes or passkey, added or removed.
    AuthenticatorAdded,
    AuthenticatorRemoved,
    AdminResourceCreated,
    AdminResourceUpdated,
    AdminResourceDeleted,
    AttackDetected,
    CredentialCompromised,
    /// Sent to one endpoint by Send test; never published, never subscribed to.
    Ping,
}

impl EventType {
    pub const ALL: [Self; 19] = [
        Self::UserCreated,
        Self::UserUpdated,
        Self::UserDeleted,
        Self::LoginSucceeded,
        Self::LoginFailed,
        Self::UserLockedOut,
        Self::TokenRevoked,
        Self::KeysRotated,
        Self::TokenReuseDetected,
        Self::UserSuspended,
        Self::UserSuspensionEnded,
        Self::AuthenticatorAdded,
        Self::AuthenticatorRemoved,
        Self::AdminResourceCreated,
        Self::AdminResourceUpdated,
        Self::AdminResourceDeleted,
        Self::AttackDetected,
        Self::CredentialCompromised,
        Self::Ping,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::UserCreated => "user_created",
            Self::UserUpdated => "user_updated",
            Self::UserDeleted => "user_deleted",
            Self::LoginSucceeded => "login_succeeded",
            Self::LoginFailed => "login_failed",
            Self::UserLockedOut => "user_locked_out",
            Self::TokenRevoked => "token_revoked",
            Self::KeysRotated => "keys_rotated",
            Self::TokenReuseDetected => "token_reuse_detected",
            Self::UserSuspended => "user_suspended",
            Self::UserSuspensionEnded => "user_suspension_ended",
            Self::AuthenticatorAdded => "authenticator_added",
            Self::AuthenticatorRemoved => "authenticator_removed",
            Self::AdminResourceCreated => "admin_resource_created",
            Self::AdminResourceUpdated => "admin_resource_updated",
            Self::AdminResourceDeleted => "admin_resource_deleted",
            Self::AttackDetected => "attack_detected",
            Self::CredentialCompromised => "credential_compromised",
            Self::Ping => "ping",
        }
    }

    /// The event of this name.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|event| event.as_str() == name)
    }

    /// The endpoints that may subscribe to it: client endpoints hear what happens to people,
    /// their sign-ins, tokens and keys; realm endpoints hear administrative changes and attacks.
    pub fn heard_by(self) -> Option<EndpointKind> {
        match self {
            Self::UserCreated
            | Self::UserUpdated
            | Self::UserDeleted
            | Self::LoginSucceeded
            | Self::LoginFailed
            | Self::UserLockedOut
            | Self::TokenRevoked
            | Self::KeysRotated
            | Self::TokenReuseDetected
            | Self::UserSuspended
            | Self::UserSuspensionEnded
            | Self::AuthenticatorAdded
            | Self::AuthenticatorRemoved => Some(EndpointKind::Client),
            Self::AdminResourceCreated
            | Self::AdminResourceUpdated
            | Self::AdminResourceDeleted
            | Self::AttackDetected
            | Self::CredentialCompromised => Some(EndpointKind::Realm),
            Self::Ping => None,
        }
    }
}

/// One event, as the webhook envelope names its parts.
#[derive(Debug, Clone, PartialEq)]
pub struct Event<'a> {
    pub event_type: EventType,
    pub account_id: &'a str,
    pub realm_id: Option<&'a str>,
    pub client_id: Option<&'a str>,
    pub data: Value,
}

/// Writes the event to the outbox; its id stays the same across every retry and replay.
/// Events of `event_type` published within `[from, to)`, counted per account and realm.
pub async fn counts_by_realm<'c>(
    db: impl Executor<'c, Database = Any>,
    event_type: EventType,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<Vec<(String, String, i64)>, Error> {
    sqlx::query_as(
        "SELECT account_id, realm_id, COUNT(*) FROM event_outbox WHERE event_type = $1 AND created_at >= $2 \
         AND created_at < $3 AND account_id IS NOT NULL AND realm_id IS NOT NULL GROUP BY account_id, realm_id",
    )
    .bind(event_type.as_str())
    .bind(super::millis(from))
    .bind(super::millis(to))
    .fetch_all(db)
    .await
    .map_err(Error::from)
}

pub async fn publish(tx: &mut super::Connection, event: Event<'_>, at: DateTime<Utc>) -> Result<EventId, Error> {
    let id = EventId::fresh();
    sqlx::query(
        "INSERT INTO event_outbox (id, event_type, account_id, realm_id, client_id, created_at, data) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&id)
    .bind(event.event_type.as_str())
    .bind(event.account_id)
    .bind(event.realm_id)
    .bind(event.client_id)
    .bind(super::millis(at))
    .bind(event.data.to_string())
    .execute(&mut *tx)
    .await?;
    Ok(id)
}

/// Writes events of one account, realm and client to the outbox in one statement (a batch of an
/// import), each with its type and data.
pub async fn publish_many<'c>(
    db: impl Executor<'c, Database = Any>,
    (account_id, realm_id, client_id): (&str, &str, &str),
    events: &[(&'static str, Value)],
    at: DateTime<Utc>,
) -> Result<(), Error> {
    if events.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO event_outbox (id, event_type, account_id, realm_id, client_id, created_at, data) VALUES {}",
        super::values_placeholders(events.len(), 7)
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for (event_type, data) in events {
        query = query
            .bind(EventId::fresh().to_string())
            .bind(*event_type)
            .bind(account_id.to_owned())
            .bind(realm_id.to_owned())
            .bind(client_id.to_owned())
            .bind(super::millis(at))
            .bind(data.to_string());
    }
    query.execute(db).await?;
    Ok(())
}

/// A stored event.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StoredEvent {
    pub id: EventId,
    pub event_type: String,
    pub account_id: Option<AccountId>,
    pub realm_id: Option<RealmId>,
    pub client_id: Option<ClientId>,
    #[sqlx(try_from = "super::Millis")]
    pub created_at: DateTime<Utc>,
    pub data: String,
}

/// The `data` of `user_created`, `user_updated` and `user_deleted`: the person as they are, and
/// the client through which they were created when there was one.
pub fn user_data(user: &super::users::User, client_id: Option<&str>) -> Value {
    serde_json::json!({
        "id": user.id,
        "username": user.username,
        "email": user.email,
        "first_name": user.first_name,
        "last_name": user.last_name,
        "email_confirmed": user.email_confirmed,
        "status": user.status.as_str(),
        "realm_id": user.realm_id,
        "client_id": client_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_is_found_by_its_one_name() {
        for event in EventType::ALL {
            assert_eq!(EventType::named(event.as_str()), Some(event));
        }
        assert_eq!(EventType::named("user_created "), None);
    }

    #[test]
    fn client_endpoints_hear_people_and_realm_endpoints_hear_changes_and_attacks() {
        let heard = |kind| EventType::ALL.into_iter().filter(|e| e.heard_by() == Some(kind)).count();
        assert_eq!((heard(EndpointKind::Client), heard(EndpointKind::Realm)), (13, 5));
        assert_eq!(EventType::Ping.heard_by(), None, "ping cannot be subscribed to");
    }
}
