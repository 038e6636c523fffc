//! People of a realm: every way a person comes to be (an administrator, an invitation to the team,
//! a sign-up, a first sign-in through an identity provider) writes them and their `user_created`
//! event here, and an administrator's changes check, write, trail and announce them here.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::kernel::ids::ClientId;
use crate::kernel::passwords::BreachedPasswords;
use crate::kernel::validate::{Notification, Rule};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Connection;
use crate::store::events::{self, Event, EventType};
use crate::store::realms::Realm;
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::users::{self as user_store, User};

/// How a person came to be, as their `user_created` event tells it.
#[derive(Debug, Clone, Copy)]
pub enum Arrival<'a> {
    /// Through the admin API, the console or an invitation to the team: the realm's, no client's.
    Administered,
    /// Signed up at a client.
    SignedUp { client: &'a ClientId },
    /// Signed in for the first time through an identity provider, at a client.
    Federated { client: &'a ClientId, provider: &'a str },
}

/// Writes a new person inside `tx`, with their `user_created` event. False when the realm has a
/// person of that username already (the store's uniqueness decides between two at once).
pub async fn add(
    tx: &mut Connection,
    realm: &Realm,
    user: &User,
    arrival: Arrival<'_>,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    if !user_store::insert(&mut *tx, user).await? {
        return Ok(false);
    }
    let client = match arrival {
        Arrival::Administered => None,
        Arrival::SignedUp { client } | Arrival::Federated { client, .. } => Some(client.as_str()),
    };
    let mut data = events::user_data(user, client);
    if let Arrival::Federated { provider, .. } = arrival {
        data["identity_provider"] = Value::from(provider);
    }
    publish(tx, realm, EventType::UserCreated, client, data, now).await?;
    Ok(true)
}

/// Refuses a username or e-mail another person of the realm has.
pub async fn check_unique(context: &Context, user: &User) -> Result<(), Error> {
    let (name_taken, email_taken) =
        user_store::taken(context.store.pool(), &user.realm_id, &user.id, &user.username, user.email.as_deref())
            .await?;
    let mut refused = Vec::new();
    if name_taken {
        refused.push(Notification::new("username", Rule::Duplicate, "another user of the realm has this username"));
    }
    if email_taken {
        refused.push(Notification::new("email", Rule::Duplicate, "another user of the realm has this e-mail address"));
    }
    if refused.is_empty() { Ok(()) } else { Err(Error::Validation(refused)) }
}

/// The hash of a password chosen for a person of `realm`; with the realm's "Block breached
/// passwords" on, a password known from a breach is refused.
pub async fn chosen_password(breached: &BreachedPasswords, realm: &Realm, password: String) -> Result<String, Error> {
    if realm.settings.block_breached_passwords && breached.contains(&password).await {
        return Err(Error::invalid(
            "password",
            Rule::Breached,
            "this password appears in a list of breached passwords; choose another",
        ));
    }
    Ok(crate::kernel::passwords::hash(password).await?)
}

/// Creates a person as an administrator asked (`by`): their username and e-mail must be free in
/// the realm and the password (when one is given) acceptable. The change is trailed with
/// `describe`'s view of the person.
pub async fn create<View: Serialize>(
    context: &Context,
    breached: &BreachedPasswords,
    realm: &Realm,
    mut user: User,
    password: Option<String>,
    by: Author<'_>,
    describe: impl Fn(&User) -> View,
) -> Result<User, Error> {
    check_unique(context, &user).await?;
    if let Some(password) = password {
        user.password_hash = Some(chosen_password(breached, realm, password).await?);
    }
    let mut tx = context.store.begin().await?;
    if !add(&mut tx, realm, &user, Arrival::Administered, user.created_at).await? {
        return Err(Error::invalid("username", Rule::Duplicate, "another user of the realm has this username"));
    }
    let change = Change::of(ChangeAction::Create, user.place(), 201).after(describe(&user));
    changes::commit(context, by, tx, change).await?;
    Ok(user)
}

/// What an administrator changes of a person: the fields as they are to be, and a new password.
#[derive(Debug)]
pub struct Changed {
    pub user: User,
    pub password: Option<String>,
    /// The request asks for a password change at the next sign-in; otherwise a new password
    /// meets a change that was required.
    pub change_required: bool,
}

/// Changes `before` as an administrator asked (`by`). A new password resolves an exposure of the
/// old one and ends every browser session signed in with it.
pub async fn update<View: Serialize>(
    context: &Context,
    breached: &BreachedPasswords,
    realm: &Realm,
    before: &User,
    changed: Changed,
    by: Author<'_>,
    describe: impl Fn(&User) -> View,
) -> Result<User, Error> {
    let Changed { mut user, password, change_required } = changed;
    check_unique(context, &user).await?;
    let password_changed = password.is_some();
    if let Some(password) = password {
        user.password_hash = Some(chosen_password(breached, realm, password).await?);
        if !change_required {
            user.must_change_password = false;
        }
    }
    let now = context.clock.now();
    user.updated_at = now;
    let mut tx = context.store.begin().await?;
    user_store::update(&mut *tx, &user).await?;
    if password_changed {
        crate::store::exposures::password_changed(&mut tx, &user.id, now).await?;
        crate::store::browser::end_sessions_of(&mut *tx, &user.id, "password_changed", now).await?;
    }
    publish(&mut tx, realm, EventType::UserUpdated, None, events::user_data(&user, None), now).await?;
    let change = Change::of(ChangeAction::Update, user.place(), 200).before(describe(before)).after(describe(&user));
    changes::commit(context, by, tx, change).await?;
    Ok(user)
}

/// Deletes a person as an administrator asked (`by`); their sessions end with them.
pub async fn delete<View: Serialize>(
    context: &Context,
    realm: &Realm,
    user: &User,
    by: Author<'_>,
    describe: impl Fn(&User) -> View,
) -> Result<(), Error> {
    let now = context.clock.now();
    let mut tx = context.store.begin().await?;
    user_store::delete(&mut *tx, &realm.id, &user.id).await?;
    publish(&mut tx, realm, EventType::UserDeleted, None, events::user_data(user, None), now).await?;
    let change = Change::of(ChangeAction::Delete, user.place(), 200).before(describe(user));
    changes::commit(context, by, tx, change).await
}

async fn publish(
    tx: &mut Connection,
    realm: &Realm,
    event_type: EventType,
    client: Option<&str>,
    data: Value,
    at: DateTime<Utc>,
) -> Result<(), Error> {
    let event = Event { event_type, account_id: &realm.account_id, realm_id: Some(&realm.id), client_id: client, data };
    events::publish(tx, event, at).await?;
    Ok(())
}
