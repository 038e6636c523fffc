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

use crate::directory::client_fields::scope_token;
use crate::kernel::clock::iso;
use crate::kernel::error_code::ErrorCode;
use crate::kernel::ids::SuspensionId;
use crate::kernel::validate::{Body, Notification, Rule, boolean, instant, list_of, one_of, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients::Client;
use crate::store::events::{self, Event, EventType};
use crate::store::realm_roles::{self, Role};
use crate::store::suspensions::{self as store, Suspension, SuspensionLevel, SuspensionStatus};
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::users::User;
use crate::store::{Connection, Store, sessions};
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use utoipa::ToSchema;

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

/// A suspension as the admin API shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuspensionView {
    pub id: String,
    pub realm_id: String,
    pub client_id: String,
    pub user_id: String,
    /// Restricted: the restricted scopes and revoked roles are withheld from new tokens. Full: no
    /// sign-in and no token at the client, and its tokens already issued are inactive.
    pub level: SuspensionLevel,
    /// Scheduled, Active, Ended or Lifted, read from the instants at the time of the answer.
    pub status: SuspensionStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub starts_at: String,
    /// None: until lifted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ends_at: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restricted_scopes: Vec<String>,
    pub revokes_every_role: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub revoked_role_ids: Vec<String>,
    /// Whether the person's sessions at the client end when the suspension starts.
    pub terminates_sessions: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions_terminated_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifted_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl SuspensionView {
    pub(crate) fn of(suspension: &Suspension, now: DateTime<Utc>) -> Self {
        Self {
            id: suspension.id.to_string(),
            realm_id: suspension.realm_id.to_string(),
            client_id: suspension.client_id.to_string(),
            user_id: suspension.user_id.to_string(),
            level: suspension.level,
            status: suspension.status(now),
            reason: suspension.reason.clone(),
            starts_at: iso(suspension.starts_at),
            ends_at: suspension.ends_at.map(iso),
            restricted_scopes: suspension.restricted_scopes.clone(),
            revokes_every_role: suspension.revokes_every_role,
            revoked_role_ids: suspension.revoked_role_ids.clone(),
            terminates_sessions: suspension.terminates_sessions,
            sessions_terminated_at: suspension.sessions_terminated_at.map(iso),
            lifted_at: suspension.lifted_at.map(iso),
            created_at: iso(suspension.created_at),
            updated_at: iso(suspension.updated_at),
        }
    }
}

/// The body of a suspension.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct SuspensionInput {
    /// Restricted or Full.
    #[schema(value_type = SuspensionLevel, required = true)]
    pub(crate) level: Option<SuspensionLevel>,
    /// Up to 1,024 characters.
    pub(crate) reason: Option<String>,
    /// ISO 8601 UTC, not in the past and at most ten years ahead; now when omitted.
    #[schema(value_type = Option<String>)]
    pub(crate) starts_at: DateTime<Utc>,
    /// ISO 8601 UTC, after `startsAt`, at most ten years ahead; none: until lifted.
    #[schema(value_type = Option<String>)]
    pub(crate) ends_at: Option<DateTime<Utc>>,
    /// Scopes withheld from the person's new tokens at the client (up to 100).
    #[schema(value_type = Option<Vec<String>>)]
    pub(crate) restricted_scopes: Vec<String>,
    /// Withhold every role of the person from the client's new tokens; then `revokedRoleIds` is empty.
    #[schema(value_type = Option<bool>)]
    pub(crate) revokes_every_role: bool,
    /// Realm roles, or roles of this client, withheld from its new tokens (up to 100).
    #[schema(value_type = Option<Vec<String>>)]
    pub(crate) revoked_role_ids: Vec<String>,
    /// End the person's sessions at the client when the suspension starts.
    #[schema(value_type = Option<bool>)]
    pub(crate) terminate_sessions: bool,
}

impl SuspensionInput {
    /// The suspension `body` asks for at `now`, its term and what it withholds checked.
    pub(crate) fn read(body: &mut Body, now: DateTime<Utc>) -> Self {
        let level = body.required("level", one_of(SuspensionLevel::NAMES));
        let reason = body.optional("reason", text(1, 1024));
        let horizon = now + TimeDelta::days(MAX_TERM_DAYS);
        let starts_at = body.optional("startsAt", instant).unwrap_or(now);
        if starts_at < now {
            body.refuse("startsAt", Rule::Range, "startsAt must not be in the past");
        } else if starts_at > horizon {
            body.refuse("startsAt", Rule::Range, format!("startsAt must be at most {MAX_TERM_DAYS} days ahead"));
        }
        let ends_at = body.optional("endsAt", instant);
        if let Some(end) = ends_at {
            if end <= starts_at {
                body.refuse("endsAt", Rule::Range, "endsAt must be after startsAt");
            } else if end > horizon {
                body.refuse("endsAt", Rule::Range, format!("endsAt must be at most {MAX_TERM_DAYS} days ahead"));
            }
        }
        let restricted_scopes = body.optional("restrictedScopes", list_of(100, scope_token)).unwrap_or_default();
        let revokes_every_role = body.optional("revokesEveryRole", boolean).unwrap_or(false);
        let revoked_role_ids = body.optional("revokedRoleIds", list_of(100, text(1, 64))).unwrap_or_default();
        if revokes_every_role && !revoked_role_ids.is_empty() {
            body.refuse("revokedRoleIds", Rule::Conflict, "revokedRoleIds must be empty when revokesEveryRole is true");
        }
        let terminate_sessions = body.optional("terminateSessions", boolean).unwrap_or(false);
        let takes_nothing = restricted_scopes.is_empty() && !revokes_every_role && revoked_role_ids.is_empty();
        if level == Some(SuspensionLevel::Restricted) && takes_nothing {
            body.refuse(
                "restrictedScopes",
                Rule::Required,
                "a Restricted suspension withholds at least one scope or role (restrictedScopes, revokesEveryRole, revokedRoleIds)",
            );
        }
        Self {
            level,
            reason,
            starts_at,
            ends_at,
            restricted_scopes,
            revokes_every_role,
            revoked_role_ids,
            terminate_sessions,
        }
    }

    /// The suspension of `user` at `client`, made at `now`; `None` without a level.
    pub(crate) fn of(
        self,
        (client, user): (&Client, &User),
        account_id: &str,
        now: DateTime<Utc>,
    ) -> Option<Suspension> {
        Some(Suspension {
            id: SuspensionId::fresh(),
            account_id: crate::kernel::ids::AccountId::known(account_id),
            realm_id: client.realm_id.clone(),
            client_id: client.id.clone(),
            user_id: user.id.clone(),
            level: self.level?,
            reason: self.reason,
            starts_at: self.starts_at,
            ends_at: self.ends_at,
            restricted_scopes: self.restricted_scopes,
            revokes_every_role: self.revokes_every_role,
            revoked_role_ids: self.revoked_role_ids,
            terminates_sessions: self.terminate_sessions,
            sessions_terminated_at: None,
            lifted_at: None,
            ended_at: None,
            created_at: now,
            updated_at: now,
        })
    }
}

/// The farthest ahead a suspension may start or end.
pub(crate) const MAX_TERM_DAYS: i64 = 3650;
