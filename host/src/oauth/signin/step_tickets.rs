//! The tickets that carry a browser's sign-in from its right password to a later step (a second
//! factor, or a factor to add): sealed with the deployment key for one purpose, so that a ticket of
//! one step is never taken by another, naming the realm, the client and the person, good for five
//! minutes, with what the step needs to know.

use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Refusal, SignInError};
use crate::runtime::context::Context;
use crate::store::clients::Client;
use crate::store::realms::Realm;
use crate::store::users::{self as user_store, User, UserStatus};

/// How long a step waits after the password.
pub const TICKET_SECONDS: i64 = 300;

/// What a ticket seals.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sealed<T> {
    realm: String,
    client: String,
    user: String,
    expires: i64,
    step: T,
}

/// The ticket of the step `purpose` names, for the person whose password was right.
pub(super) fn seal<T: Serialize>(
    context: &Context,
    purpose: &str,
    (realm, client, user): (&Realm, &Client, &User),
    step: T,
    now: DateTime<Utc>,
) -> String {
    let sealed = Sealed {
        realm: realm.id.to_string(),
        client: client.id.to_string(),
        user: user.id.to_string(),
        expires: (now + TimeDelta::seconds(TICKET_SECONDS)).timestamp(),
        step,
    };
    let plain = serde_json::to_vec(&sealed).unwrap_or_else(|_| unreachable!("a ticket serialises"));
    context.hasher.sealer(purpose).seal(&plain)
}

/// The person's id and what the step knows, when `ticket` is one of `purpose` for this realm and
/// client and is still good.
pub(super) fn open<T: DeserializeOwned>(
    context: &Context,
    purpose: &str,
    (realm, client): (&Realm, &Client),
    ticket: &str,
) -> Option<(String, T)> {
    let plain = context.hasher.sealer(purpose).open(ticket).ok()?;
    let sealed: Sealed<T> = serde_json::from_slice(&plain).ok()?;
    let good = sealed.realm == realm.id.as_str()
        && sealed.client == client.id.as_str()
        && sealed.expires > context.clock.now().timestamp();
    good.then_some((sealed.user, sealed.step))
}

/// The person a good ticket names, while they are Active.
pub(super) async fn person(context: &Context, realm: &Realm, user_id: Option<&str>) -> Result<User, SignInError> {
    let user = match user_id {
        Some(id) => user_store::find(context.store.pool(), &realm.id, id).await?,
        None => None,
    };
    let Some(user) = user else { return Err(Refusal::SecondFactorExpired.into()) };
    if user.status != UserStatus::Active {
        return Err(Refusal::UserDisabled.into());
    }
    Ok(user)
}
