//! A person's authenticators beyond the password: apps showing one-time passwords (`totp`), the
//! set of recovery codes for when those are out of reach (`recovery_codes`), and passkeys. What
//! the person and administrators see of them, and their removal: each addition and removal
//! commits with its `authenticator_added` or `authenticator_removed` event, and an
//! administrator's is trailed as well.

pub mod passkeys;
pub mod recovery_codes;
pub mod totp;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::kernel::clock::iso;
use crate::kernel::validate::{Notification, Rule};
use crate::runtime::changes::Author;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Connection;
use crate::store::authenticators::{self as store, Authenticator, AuthenticatorKind};
use crate::store::events::{self, Event, EventType};
use crate::store::realms::Realm;
use crate::store::trail::{self, Change, ChangeAction, Place, Placed, ResourceKind};
use crate::store::users::User;

/// What the person and administrators see of an authenticator: never its secret.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticatorView {
    pub id: String,
    pub kind: AuthenticatorKind,
    pub name: String,
    pub created_at: String,
    pub last_used_at: Option<String>,
    /// Recovery codes: how many are still unused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub codes_left: Option<i64>,
}

impl AuthenticatorView {
    fn of(authenticator: &Authenticator, codes_left: Option<i64>) -> Self {
        Self {
            id: authenticator.id.to_string(),
            kind: authenticator.kind,
            name: authenticator.name.clone(),
            created_at: iso(authenticator.created_at),
            last_used_at: authenticator.last_used_at.map(iso),
            codes_left,
        }
    }
}

impl Placed for Authenticator {
    fn place(&self) -> Place {
        Place::in_realm(ResourceKind::Authenticator, &self.id, &self.realm_id).under(&self.user_id)
    }
}

/// Who changes a person's authenticators.
#[derive(Debug, Clone, Copy)]
pub enum By<'a> {
    /// The person, on their account page or with their own token.
    Owner,
    /// An administrator of the realm, through the admin API or the console.
    Administrator(Author<'a>),
}

impl By<'_> {
    fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "user",
            Self::Administrator(_) => "administrator",
        }
    }
}

/// The person's authenticators, the oldest first.
pub async fn list(context: &Context, user: &User) -> Result<Vec<AuthenticatorView>, Error> {
    let mut views = Vec::new();
    for authenticator in store::of_user(context.store.pool(), &user.id).await? {
        views.push(view(context, &authenticator).await?);
    }
    Ok(views)
}

async fn view(context: &Context, authenticator: &Authenticator) -> Result<AuthenticatorView, Error> {
    let codes_left = match authenticator.kind {
        AuthenticatorKind::RecoveryCodes => Some(store::codes_left(context.store.pool(), &authenticator.id).await?),
        AuthenticatorKind::Totp | AuthenticatorKind::Passkey => None,
    };
    Ok(AuthenticatorView::of(authenticator, codes_left))
}

/// Removes one of the person's authenticators. Removing the last second factor removes the
/// recovery codes with it: they recover a second factor, and there is none left.
pub async fn remove(context: &Context, realm: &Realm, user: &User, id: &str, by: By<'_>) -> Result<(), Error> {
    let now = context.clock.now();
    let mut tx = context.store.begin().await?;
    let removed = store::remove(&mut *tx, &user.id, id).await?.ok_or(Error::NotFound("authenticator"))?;
    let mut all = vec![removed];
    let left = store::of_user(&mut *tx, &user.id).await?;
    if !left.iter().any(|a| a.kind != AuthenticatorKind::RecoveryCodes) {
        all.extend(store::remove_kind(&mut *tx, &user.id, AuthenticatorKind::RecoveryCodes).await?);
    }
    finish_removal(tx, realm, user, &all, by, now).await
}

/// Removes every authenticator of the person ("reset second factors"): they sign in with their
/// password alone until they enrol again. Answers how many were removed.
pub async fn reset(context: &Context, realm: &Realm, user: &User, by: By<'_>) -> Result<usize, Error> {
    let now = context.clock.now();
    let mut tx = context.store.begin().await?;
    let mut all = Vec::new();
    for kind in [AuthenticatorKind::Totp, AuthenticatorKind::Passkey, AuthenticatorKind::RecoveryCodes] {
        all.extend(store::remove_kind(&mut *tx, &user.id, kind).await?);
    }
    let count = all.len();
    finish_removal(tx, realm, user, &all, by, now).await?;
    Ok(count)
}

async fn finish_removal(
    mut tx: crate::store::Transaction,
    realm: &Realm,
    user: &User,
    removed: &[Authenticator],
    by: By<'_>,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    for authenticator in removed {
        announce(&mut tx, realm, user, authenticator, EventType::AuthenticatorRemoved, by, now).await?;
    }
    if let By::Administrator(author) = by {
        for authenticator in removed {
            let change = Change::of(ChangeAction::Delete, authenticator.place(), 200)
                .before(AuthenticatorView::of(authenticator, None));
            trail::record_change(&mut tx, author.actor, author.request, &change, now).await?;
        }
    }
    Ok(tx.commit().await?)
}

/// Publishes `authenticator_added` or `authenticator_removed` in `tx`.
async fn announce(
    tx: &mut Connection,
    realm: &Realm,
    user: &User,
    authenticator: &Authenticator,
    event_type: EventType,
    by: By<'_>,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let data = event_data(user, authenticator, by);
    let event = Event { event_type, account_id: &realm.account_id, realm_id: Some(&realm.id), client_id: None, data };
    events::publish(tx, event, now).await?;
    Ok(())
}

/// The `data` of `authenticator_added` and `authenticator_removed`.
fn event_data(user: &User, authenticator: &Authenticator, by: By<'_>) -> Value {
    json!({
        "user_id": user.id,
        "username": user.username,
        "authenticator_id": authenticator.id,
        "kind": authenticator.kind.as_str(),
        "name": authenticator.name,
        "by": by.as_str(),
    })
}

pub use crate::store::authenticators::MAX_NAME;

/// The name a person gives an authenticator, trimmed; `default` when none.
fn checked_name(name: Option<&str>, default: &str) -> Result<String, Error> {
    let name = name.map(str::trim).filter(|n| !n.is_empty()).unwrap_or(default);
    if name.chars().count() > MAX_NAME {
        return Err(refused("name", Rule::MaxLength, &format!("name must have at most {MAX_NAME} characters")));
    }
    if name.chars().any(char::is_control) {
        return Err(refused("name", Rule::Pattern, "name must not hold control characters"));
    }
    Ok(name.to_owned())
}

fn refused(field: &str, rule: Rule, message: &str) -> Error {
    Error::Validation(vec![Notification::new(field, rule, message)])
}
