//! The person an upstream provider vouched for, as a person of the realm: found by the link made
//! at their first sign-in through the provider; else linked to the person of the realm with their
//! e-mail address, only when three things hold: the provider is trusted for verified addresses, it
//! says this one is verified, and this service itself confirmed the address for the person of the
//! realm (by its own confirmation, an invitation, or an administrator who set it confirmed); else
//! created (raising `user_created` with the provider). A person of the realm who has the address
//! without those assurances is never linked and never doubled: the sign-in is refused, so an
//! address nobody proved cannot take over an account, and an account someone opened with another
//! person's address before them cannot capture that person's upstream identity. The provider's
//! role mappings are applied at every sign-in. The platform realm takes nobody from a provider:
//! its people are the accounts' teams, who join by invitation.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::directory::people::{self, Arrival};
use crate::kernel::ids::{PLATFORM_REALM, UserId};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients::Client;
use crate::store::identity_providers::{self as provider_store, IdentityProvider};
use crate::store::imports::{self as names, Link};
use crate::store::realms::Realm;
use crate::store::users::{self as user_store, User, UserStatus};

/// How the person was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Through the link their first sign-in made.
    Linked,
    /// By their verified e-mail address, and linked now.
    ByVerifiedEmail,
    /// Created now.
    Created,
}

/// Why the upstream person cannot sign in here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("the provider named no subject")]
    NoSubject,
    #[error("a person of the realm has this e-mail address, and the provider cannot vouch for it")]
    EmailTaken,
    #[error("the person is disabled")]
    Disabled,
    #[error("the provider gave nothing to name the person by")]
    NoUsername,
    #[error("the platform realm's people join by invitation, never through a provider")]
    PlatformRealm,
    #[error("the provider's answer holds the character U+0000")]
    Unreadable,
}

#[derive(Debug, thiserror::Error)]
pub enum TakeError {
    #[error(transparent)]
    Refused(#[from] Refused),
    #[error(transparent)]
    Failed(#[from] Error),
}

impl From<crate::store::Error> for TakeError {
    fn from(error: crate::store::Error) -> Self {
        Self::Failed(error.into())
    }
}

/// The provider's names for the person's fields.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Claims {
    username: String,
    email: String,
    email_verified: Option<String>,
    given_name: Option<String>,
    family_name: Option<String>,
}

/// What the upstream said, read through the provider's claim names.
struct Upstream {
    subject: String,
    username: Option<String>,
    email: Option<String>,
    email_verified: bool,
    given_name: Option<String>,
    family_name: Option<String>,
}

fn read(provider: &IdentityProvider, claims: &Map<String, Value>) -> Result<Upstream, Refused> {
    let names: Claims = serde_json::from_str(&provider.claims).map_err(|_| Refused::NoUsername)?;
    let text = |name: &str| match claims.get(name) {
        Some(Value::String(text)) if !text.trim().is_empty() => Some(text.trim().to_owned()),
        Some(Value::Number(number)) => Some(number.to_string()),
        _ => None,
    };
    // OpenID Connect's `sub`; a plain OAuth 2.0 user-info's `id` (GitHub's numeric one).
    let subject = text("sub").or_else(|| text("id")).ok_or(Refused::NoSubject)?;
    let verified = names.email_verified.as_deref().and_then(|name| claims.get(name));
    Ok(Upstream {
        subject,
        username: text(&names.username),
        email: text(&names.email),
        email_verified: matches!(verified, Some(Value::Bool(true))) || verified.and_then(Value::as_str) == Some("true"),
        given_name: names.given_name.as_deref().and_then(text),
        family_name: names.family_name.as_deref().and_then(text),
    })
}

/// The person of `realm` the provider's `claims` name, found, linked or created as the module
/// says, with the provider's role mappings applied; `client` is the one signing them in.
pub async fn take(
    context: &Context,
    realm: &Realm,
    client: &Client,
    provider: &IdentityProvider,
    claims: &Map<String, Value>,
) -> Result<(User, Found), TakeError> {
    if realm.id == PLATFORM_REALM {
        return Err(Refused::PlatformRealm.into());
    }
    // No field of a person holds it (and PostgreSQL cannot store it): an answer that does is refused
    // like any other the service cannot use.
    if claims.iter().any(|(name, value)| name.contains('\0') || crate::kernel::validate::holds_nul(value)) {
        return Err(Refused::Unreadable.into());
    }
    let upstream = read(provider, claims)?;
    let now = context.clock.now();
    let pool = context.store.pool();
    let linked = provider_store::linked(pool, &realm.id, &provider.id, &upstream.subject).await?;
    let (user, found) = match linked {
        Some(id) => match user_store::find(pool, &realm.id, &id).await? {
            Some(user) => (user, Found::Linked),
            None => return Err(Error::NotFound("user").into()),
        },
        None => first_sign_in(context, realm, client, provider, &upstream, now).await?,
    };
    if user.status != UserStatus::Active {
        return Err(Refused::Disabled.into());
    }
    apply_mappings(context, realm, provider, claims, &user, now).await?;
    Ok((user, found))
}

async fn first_sign_in(
    context: &Context,
    realm: &Realm,
    client: &Client,
    provider: &IdentityProvider,
    upstream: &Upstream,
    now: DateTime<Utc>,
) -> Result<(User, Found), TakeError> {
    let pool = context.store.pool();
    let holder = match &upstream.email {
        Some(email) => user_store::find_by_login(pool, &realm.id, email)
            .await?
            .filter(|user| user.email.as_deref().is_some_and(|held| held.eq_ignore_ascii_case(email))),
        None => None,
    };
    let vouched = provider.trust_verified_email && upstream.email_verified;
    if let Some(holder) = holder {
        // Both sides must have proved the address: the provider to its person, this service to ours.
        if !(vouched && holder.email_confirmed) {
            return Err(Refused::EmailTaken.into());
        }
        provider_store::link(context.store.writer(), &realm.id, &provider.id, &upstream.subject, &holder.id, now)
            .await?;
        return Ok((holder, Found::ByVerifiedEmail));
    }
    let mut username = upstream.username.clone().or_else(|| upstream.email.clone()).ok_or(Refused::NoUsername)?;
    username.retain(|c| !c.is_whitespace() && !c.is_control());
    if username.is_empty() || user_store::find_by_login(pool, &realm.id, &username).await?.is_some() {
        // A local person has the name: the provider's own name for them cannot clash.
        username = format!("{}.{}", provider.id, upstream.subject);
    }
    let user = User {
        id: UserId::fresh(),
        realm_id: realm.id.clone(),
        username,
        email: upstream.email.clone(),
        first_name: upstream.given_name.clone(),
        last_name: upstream.family_name.clone(),
        // Confirmed only when the provider is trusted to say so: an address an untrusted provider
        // calls verified could be anyone's, and a confirmed address is what later links by e-mail.
        email_confirmed: vouched,
        status: UserStatus::Active,
        password_hash: None,
        must_change_password: false,
        created_at: now,
        updated_at: now,
    };
    let mut tx = context.store.begin().await?;
    let arrival = Arrival::Federated { client: &client.id, provider: &provider.id };
    if !people::add(&mut tx, realm, &user, arrival, now).await? {
        return Err(Refused::NoUsername.into());
    }
    if !provider_store::link(&mut *tx, &realm.id, &provider.id, &upstream.subject, &user.id, now).await? {
        // The same subject's first sign-in on another host won: that one stands.
        return take_linked(context, realm, provider, &upstream.subject).await;
    }
    tx.commit().await?;
    Ok((user, Found::Created))
}

async fn take_linked(
    context: &Context,
    realm: &Realm,
    provider: &IdentityProvider,
    subject: &str,
) -> Result<(User, Found), TakeError> {
    let pool = context.store.pool();
    let id = provider_store::linked(pool, &realm.id, &provider.id, subject).await?;
    let user = match id {
        Some(id) => user_store::find(pool, &realm.id, &id).await?,
        None => None,
    };
    user.map(|user| (user, Found::Linked)).ok_or_else(|| Error::NotFound("user").into())
}

/// Gives the person the roles and groups of every mapping whose claim holds its value (a list
/// claim: contains it). Roles and groups the mappings name that the realm no longer has are passed
/// over; what the person holds already stays.
async fn apply_mappings(
    context: &Context,
    realm: &Realm,
    provider: &IdentityProvider,
    claims: &Map<String, Value>,
    user: &User,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    #[derive(serde::Deserialize)]
    struct Mapping {
        claim: String,
        value: String,
        #[serde(default)]
        roles: Vec<String>,
        #[serde(default)]
        groups: Vec<String>,
    }
    let mappings: Vec<Mapping> = serde_json::from_str(&provider.role_mappings).unwrap_or_default();
    let holds = |mapping: &Mapping| match claims.get(&mapping.claim) {
        Some(Value::String(text)) => *text == mapping.value,
        Some(Value::Array(values)) => values.iter().any(|v| v.as_str() == Some(mapping.value.as_str())),
        Some(Value::Bool(flag)) => flag.to_string() == mapping.value,
        Some(Value::Number(number)) => number.to_string() == mapping.value,
        _ => false,
    };
    let matching: Vec<&Mapping> = mappings.iter().filter(|mapping| holds(mapping)).collect();
    if matching.is_empty() {
        return Ok(());
    }
    let known = names::names(context.store.pool(), &realm.id).await?;
    let id_of = |kind: &str, name: &str| {
        known.iter().find(|(k, n, _)| k == kind && n == name).map(|(_, _, id)| (id.clone(), user.id.to_string()))
    };
    let roles: Vec<(String, String)> =
        matching.iter().flat_map(|m| m.roles.iter().filter_map(|name| id_of("realm_role", name))).collect();
    let groups: Vec<(String, String)> =
        matching.iter().flat_map(|m| m.groups.iter().filter_map(|name| id_of("group", name))).collect();
    let mut tx = context.store.begin().await?;
    names::link(&mut *tx, Link::Role, &roles, now).await?;
    names::link(&mut *tx, Link::Group, &groups, now).await?;
    tx.commit().await?;
    Ok(())
}
