//! People of a realm: every way a person comes to be (an administrator, an invitation to the team,
//! a sign-up, a first sign-in through an identity provider) writes them and their `user_created`
//! event here, and an administrator's changes check, write, trail and announce them here.

use crate::kernel::clock::iso;
use crate::kernel::ids::ClientId;
use crate::kernel::passwords::BreachedPasswords;
use crate::kernel::validate::{Body, Notification, Rule, boolean, email, one_of, parsed, text, username};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Connection;
use crate::store::events::{self, Event, EventType};
use crate::store::realms::Realm;
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::users::{self as user_store, User, UserStatus};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

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
pub async fn create(
    context: &Context,
    breached: &BreachedPasswords,
    realm: &Realm,
    mut user: User,
    password: Option<String>,
    by: Author<'_>,
) -> Result<User, Error> {
    check_unique(context, &user).await?;
    if let Some(password) = password {
        user.password_hash = Some(chosen_password(breached, realm, password).await?);
    }
    let mut tx = context.store.begin().await?;
    if !add(&mut tx, realm, &user, Arrival::Administered, user.created_at).await? {
        return Err(Error::invalid("username", Rule::Duplicate, "another user of the realm has this username"));
    }
    let change = Change::of(ChangeAction::Create, user.place(), 201).after(UserView::of(&user));
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
pub async fn update(
    context: &Context,
    breached: &BreachedPasswords,
    realm: &Realm,
    before: &User,
    changed: Changed,
    by: Author<'_>,
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
    let change =
        Change::of(ChangeAction::Update, user.place(), 200).before(UserView::of(before)).after(UserView::of(&user));
    changes::commit(context, by, tx, change).await?;
    Ok(user)
}

/// Deletes a person as an administrator asked (`by`); their sessions end with them.
pub async fn delete(context: &Context, realm: &Realm, user: &User, by: Author<'_>) -> Result<(), Error> {
    let now = context.clock.now();
    let mut tx = context.store.begin().await?;
    user_store::delete(&mut *tx, &realm.id, &user.id).await?;
    publish(&mut tx, realm, EventType::UserDeleted, None, events::user_data(user, None), now).await?;
    let change = Change::of(ChangeAction::Delete, user.place(), 200).before(UserView::of(user));
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

/// A person as the admin API shows it. The password never leaves the service, hashed or not.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserView {
    pub id: String,
    pub realm_id: String,
    pub username: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    pub email_confirmed: bool,
    pub status: UserStatus,
    /// Whether a password is set.
    pub has_password: bool,
    /// The person must choose a new password before the next sign-in.
    pub must_change_password: bool,
    pub created_at: String,
    pub updated_at: String,
}

impl UserView {
    pub(crate) fn of(user: &User) -> Self {
        Self {
            id: user.id.to_string(),
            realm_id: user.realm_id.to_string(),
            username: user.username.clone(),
            email: user.email.clone(),
            first_name: user.first_name.clone(),
            last_name: user.last_name.clone(),
            email_confirmed: user.email_confirmed,
            status: user.status,
            has_password: user.password_hash.is_some(),
            must_change_password: user.must_change_password,
            created_at: iso(user.created_at),
            updated_at: iso(user.updated_at),
        }
    }
}

/// The body of a user creation. An update takes the same fields, each optional; omitted fields
/// keep their value.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct UserInput {
    /// 1–255 characters without spaces or control characters; unique in the realm. Required at creation.
    #[schema(value_type = String, required = true)]
    pub(crate) username: Option<String>,
    /// An e-mail address, unique in the realm; null clears it.
    #[schema(value_type = Option<String>)]
    pub(crate) email: Option<Option<String>>,
    /// Up to 255 characters.
    #[schema(value_type = Option<String>)]
    pub(crate) first_name: Option<Option<String>>,
    /// Up to 255 characters.
    #[schema(value_type = Option<String>)]
    pub(crate) last_name: Option<Option<String>>,
    pub(crate) email_confirmed: Option<bool>,
    /// Active (default) or Disabled.
    pub(crate) status: Option<UserStatus>,
    /// At least the realm's Minimum Length, at most 1024 characters; never returned.
    pub(crate) password: Option<String>,
    /// Ask for a new password at the next sign-in.
    pub(crate) must_change_password: Option<bool>,
}

impl UserInput {
    /// The fields `body` gives; a password is held to the realm's Minimum Length.
    pub(crate) fn read(body: &mut Body, realm: &Realm) -> Self {
        let name = |path: &str, value: &Value| text(0, 255)(path, value);
        let minimum = usize::try_from(realm.settings.minimum_password_length).unwrap_or(8);
        Self {
            username: body.optional("username", username),
            email: body.nullable("email", parsed(email)),
            first_name: body.nullable("firstName", name).map(|first| first.filter(|n| !n.is_empty())),
            last_name: body.nullable("lastName", name).map(|last| last.filter(|n| !n.is_empty())),
            email_confirmed: body.optional("emailConfirmed", boolean),
            status: body.optional("status", one_of(UserStatus::NAMES)),
            must_change_password: body.optional("mustChangePassword", boolean),
            password: body.optional("password", |path, value| {
                let password = text(0, crate::kernel::passwords::MAX_PASSWORD_LENGTH)(path, value)?;
                if password.chars().count() < minimum {
                    return Err(vec![Notification::new(
                        path,
                        Rule::MinLength,
                        format!("{path} must have at least {minimum} characters (the realm's Minimum Length)"),
                    )]);
                }
                Ok(password)
            }),
        }
    }

    /// Changes the fields given on `user`; returns the new password when one was given.
    pub(crate) fn apply(self, user: &mut User) -> Option<String> {
        let Self { username, email, first_name, last_name, email_confirmed, status, password, must_change_password } =
            self;
        user.username = username.unwrap_or(std::mem::take(&mut user.username));
        user.email = email.unwrap_or(user.email.take());
        user.first_name = first_name.unwrap_or(user.first_name.take());
        user.last_name = last_name.unwrap_or(user.last_name.take());
        user.email_confirmed = email_confirmed.unwrap_or(user.email_confirmed);
        user.status = status.unwrap_or(user.status);
        user.must_change_password = must_change_password.unwrap_or(user.must_change_password);
        password
    }
}
