//! Suspensions of a person's use of one client, written and lifted by administrators.
//!
//! A suspension is Scheduled until its start, Active until its end (without one, until lifted),
//! then Ended; a lift ends it early. Its effect follows these instants to the millisecond, on every
//! host, whatever the suspensions job has done yet: while one is in force, a **Full** suspension
//! refuses every sign-in and token of the person at the client, and the tokens already issued
//! answer `active: false`; a **Restricted** one takes its scopes out of new tokens. Either may
//! withhold every role of the person, or named ones, from the client's new tokens, and end the
//! person's sessions at the client when it starts. Lifting (or running out) gives back what was
//! withheld: nothing was taken from the person's role assignments.
//!
//! `user_suspended` is published when a suspension is written, `user_suspension_ended` when it is
//! lifted or runs out (the job announces that once, whichever host runs it first).

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};

use crate::kernel::clock::iso;
use crate::kernel::error_code::ErrorCode;
use crate::kernel::validate::{Notification, Rule};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::events::{self, Event, EventType};
use crate::store::realm_roles::{self, Role};
use crate::store::suspensions::{self as store, Suspension, SuspensionLevel};
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::{Connection, Store, sessions};

/// Why sessions end when a suspension starts, in the session's `end_reason`.
const SESSION_END_REASON: &str = "suspended";
/// Suspensions one run of the job settles at most, per kind of work; the next run takes the rest.
const BATCH: i64 = 500;

/// What the suspensions in force take from one person at one client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Standing {
    /// A Full suspension is in force.
    refused: bool,
    scopes: BTreeSet<String>,
    every_role: bool,
    roles: BTreeSet<String>,
}

impl Standing {
    /// Whether no sign-in and no token of the person at the client are allowed.
    pub fn refuses(&self) -> bool {
        self.refused
    }

    /// The scopes a new token may carry, of those granted.
    pub fn narrow(&self, scopes: &[String]) -> Vec<String> {
        scopes.iter().filter(|scope| !self.scopes.contains(*scope)).cloned().collect()
    }

    /// The roles a new token may carry, of those the person holds.
    pub fn roles(&self, held: &[Role]) -> Vec<Role> {
        if self.every_role {
            return Vec::new();
        }
        held.iter().filter(|role| !self.roles.contains(role.id.as_str())).cloned().collect()
    }

    fn add(&mut self, suspension: &Suspension) {
        self.refused |= suspension.level == SuspensionLevel::Full;
        self.scopes.extend(suspension.restricted_scopes.iter().cloned());
        self.every_role |= suspension.revokes_every_role;
        self.roles.extend(suspension.revoked_role_ids.iter().cloned());
    }
}

/// What the suspensions in force at `now` take from the person at the client.
pub async fn standing(
    context: &Context,
    realm_id: &str,
    client_id: &str,
    user_id: &str,
    now: DateTime<Utc>,
) -> Result<Standing, Error> {
    let of_realm = of_realm(context, realm_id).await?;
    let mut standing = Standing::default();
    let concerned = of_realm.iter().filter(|s| s.client_id == client_id && s.user_id == user_id);
    for suspension in concerned.filter(|s| s.in_force(now)) {
        standing.add(suspension);
    }
    Ok(standing)
}

/// Whether a Full suspension of the person at the client is in force at `now`: no sign-in, no
/// token, and the tokens already issued are inactive.
pub async fn refuses(
    context: &Context,
    realm_id: &str,
    client_id: &str,
    user_id: &str,
    now: DateTime<Utc>,
) -> Result<bool, Error> {
    Ok(standing(context, realm_id, client_id, user_id, now).await?.refuses())
}

/// The realm's suspensions whose end was not announced, from this host's cache when it holds them.
async fn of_realm(context: &Context, realm_id: &str) -> Result<Arc<Vec<Suspension>>, Error> {
    if let Some(found) = context.caches.suspensions(realm_id) {
        return Ok(found);
    }
    let found = Arc::new(store::unended_of_realm(context.store.pool(), realm_id).await?);
    context.caches.keep_suspensions(realm_id, found.clone());
    Ok(found)
}

/// The `data` of `user_suspended` and `user_suspension_ended`, its status read at `now`.
pub fn event_data(suspension: &Suspension, now: DateTime<Utc>) -> Value {
    json!({
        "id": suspension.id,
        "user_id": suspension.user_id,
        "level": suspension.level.as_str(),
        "status": suspension.status(now).as_str(),
        "starts_at": iso(suspension.starts_at),
        "ends_at": suspension.ends_at.map(iso),
        "restricted_scopes": suspension.restricted_scopes,
        "revokes_every_role": suspension.revokes_every_role,
        "revoked_role_ids": suspension.revoked_role_ids,
        "sessions_terminated_at": suspension.sessions_terminated_at.map(iso),
        "lifted_at": suspension.lifted_at.map(iso),
    })
}

async fn announce(
    tx: &mut Connection,
    suspension: &Suspension,
    event_type: EventType,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let event = Event {
        event_type,
        account_id: &suspension.account_id,
        realm_id: Some(&suspension.realm_id),
        client_id: Some(&suspension.client_id),
        data: event_data(suspension, now),
    };
    events::publish(tx, event, now).await?;
    Ok(())
}

/// Writes a suspension after checking the roles it names against the realm and the client. One
/// starting now ends the person's sessions at the client at once when it says so; one starting
/// later does when the job finds it started. `user_suspended` commits with it.
pub async fn write<V: Serialize>(
    context: &Context,
    by: Author<'_>,
    mut suspension: Suspension,
    view: impl Fn(&Suspension) -> V,
) -> Result<Suspension, Error> {
    check_roles(context, &suspension).await?;
    let now = context.clock.now();
    let mut tx = context.store.begin().await?;
    if suspension.terminates_sessions && suspension.in_force(now) {
        end_sessions(&mut tx, &suspension, now).await?;
        suspension.sessions_terminated_at = Some(now);
    }
    store::insert(&mut *tx, &suspension).await?;
    announce(&mut tx, &suspension, EventType::UserSuspended, now).await?;
    let change = Change::of(ChangeAction::Create, suspension.place(), 201).after(view(&suspension));
    changes::commit(context, by, tx, change).await?;
    Ok(suspension)
}

/// Lifts a suspension that has not ended: its effect stops at once, and `user_suspension_ended`
/// commits with the lift.
pub async fn lift<V: Serialize>(
    context: &Context,
    by: Author<'_>,
    before: &Suspension,
    view: impl Fn(&Suspension) -> V,
) -> Result<Suspension, Error> {
    let now = context.clock.now();
    let mut tx = context.store.begin().await?;
    let Some(lifted) = store::lift(&mut *tx, &before.id, now).await? else {
        return Err(Error::InvalidState(
            ErrorCode::SuspensionAlreadyEnded,
            "the suspension was already lifted or has run out".into(),
        ));
    };
    announce(&mut tx, &lifted, EventType::UserSuspensionEnded, now).await?;
    let change = Change::of(ChangeAction::Update, lifted.place(), 200).before(view(before)).after(view(&lifted));
    changes::commit(context, by, tx, change).await?;
    Ok(lifted)
}

/// The suspensions job: ends the sessions of suspensions that started and say so, and announces
/// the end of those that ran out, each once whichever host gets to it first.
pub async fn settle(store: &Store, now: DateTime<Utc>) -> Result<u64, Error> {
    let mut settled = 0;
    for suspension in store::sessions_to_end(store.pool(), now, BATCH).await? {
        let mut tx = store.begin().await?;
        if store::mark_sessions_ended(&mut *tx, &suspension.id, now).await? {
            end_sessions(&mut tx, &suspension, now).await?;
            settled += 1;
        }
        tx.commit().await?;
    }
    for suspension in store::run_out(store.pool(), now, BATCH).await? {
        let mut tx = store.begin().await?;
        if store::mark_ended(&mut *tx, &suspension.id, now).await? {
            let ended = Suspension { ended_at: Some(now), updated_at: now, ..suspension };
            announce(&mut tx, &ended, EventType::UserSuspensionEnded, now).await?;
            settled += 1;
        }
        tx.commit().await?;
    }
    Ok(settled)
}

async fn end_sessions(tx: &mut Connection, suspension: &Suspension, now: DateTime<Utc>) -> Result<(), Error> {
    let (realm, user, client) = (&suspension.realm_id, &suspension.user_id, &suspension.client_id);
    sessions::end_at_client(&mut *tx, realm, user, client, SESSION_END_REASON, now).await?;
    Ok(())
}

/// Each revoked role must be a realm role or a role of the suspension's client.
async fn check_roles(context: &Context, suspension: &Suspension) -> Result<(), Error> {
    let mut refused = Vec::new();
    for (index, id) in suspension.revoked_role_ids.iter().enumerate() {
        let role = realm_roles::find(context.store.pool(), &suspension.realm_id, id).await?;
        let usable = role.is_some_and(|r| r.client_id.as_ref().is_none_or(|c| *c == suspension.client_id));
        if !usable {
            let message = "no realm role, nor role of the client, has this id";
            refused.push(Notification::new(format!("revokedRoleIds[{index}]"), Rule::NotFound, message));
        }
    }
    if refused.is_empty() { Ok(()) } else { Err(Error::Validation(refused)) }
}
