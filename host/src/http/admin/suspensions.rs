//! `/realms/{realm}/clients/{client}/users/{userId}/suspensions` (a person's suspensions at a
//! client) and `/suspensions` (every suspension of the account). Writing and lifting need
//! `user:update`; reading needs `user:read`.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::ListQuery;
use super::client_fields::scope_token;
use super::reach::{ClientUser, UserRead, UserUpdate};
use crate::authz::permission;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::{self, Answer};
use crate::kernel::clock::iso;
use crate::kernel::ids::SuspensionId;
use crate::kernel::validate::{Body, Rule, boolean, instant, list_of, one_of, text};
use crate::oauth::suspensions;
use crate::runtime::error::Error;
use crate::store::clients::Client;
use crate::store::suspensions::{self as store, Suspension, SuspensionFilter, SuspensionLevel, SuspensionStatus};
use crate::store::users::User;

/// The farthest ahead a suspension may start or end.
const MAX_TERM_DAYS: i64 = 3650;

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
    fn of(suspension: &Suspension, now: DateTime<Utc>) -> Self {
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
    level: Option<SuspensionLevel>,
    /// Up to 1,024 characters.
    reason: Option<String>,
    /// ISO 8601 UTC, not in the past and at most ten years ahead; now when omitted.
    #[schema(value_type = Option<String>)]
    starts_at: DateTime<Utc>,
    /// ISO 8601 UTC, after `startsAt`, at most ten years ahead; none: until lifted.
    #[schema(value_type = Option<String>)]
    ends_at: Option<DateTime<Utc>>,
    /// Scopes withheld from the person's new tokens at the client (up to 100).
    #[schema(value_type = Option<Vec<String>>)]
    restricted_scopes: Vec<String>,
    /// Withhold every role of the person from the client's new tokens; then `revokedRoleIds` is empty.
    #[schema(value_type = Option<bool>)]
    revokes_every_role: bool,
    /// Realm roles, or roles of this client, withheld from its new tokens (up to 100).
    #[schema(value_type = Option<Vec<String>>)]
    revoked_role_ids: Vec<String>,
    /// End the person's sessions at the client when the suspension starts.
    #[schema(value_type = Option<bool>)]
    terminate_sessions: bool,
}

impl SuspensionInput {
    /// The suspension `body` asks for at `now`, its term and what it withholds checked.
    fn read(body: &mut Body, now: DateTime<Utc>) -> Self {
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
    fn of(self, (client, user): (&Client, &User), account_id: &str, now: DateTime<Utc>) -> Option<Suspension> {
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

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/users/{userId}/suspensions", tag = "Suspensions",
    params(("realm" = String, Path), ("client" = String, Path), ("userId" = String, Path)),
    request_body = SuspensionInput,
    responses((status = 201, description = "The suspension, in `data`; `user_suspended` is published with it", body = SuspensionView),
              (status = 400, description = "ValidationFailed, one notification per refused field"),
              (status = 403), (status = 404, description = "No such client, or no such person in the realm")),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    ClientUser { client, user, caller, .. }: ClientUser<UserUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<SuspensionView>, Error> {
    let now = state.clock.now();
    let input = SuspensionInput::read(&mut body, now);
    body.finish()?;
    let suspension = input.of((&client, &user), caller.account_id(), now);
    let Some(suspension) = suspension else {
        return Err(Error::Internal(anyhow::anyhow!("a refused body passed validation")));
    };
    let written = suspensions::write(&state, caller.author(), suspension, |s| SuspensionView::of(s, now)).await?;
    Ok(Answer::Created(SuspensionView::of(&written, now)))
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/users/{userId}/suspensions", tag = "Suspensions",
    params(("realm" = String, Path), ("client" = String, Path), ("userId" = String, Path),
           ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("status" = Option<String>, Query, description = "Scheduled, Active, Ended or Lifted"),
           ("sortBy" = Option<String>, Query, description = "createdAt, startsAt, endsAt"), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the person's suspensions at the client, in `pagination`", body = [SuspensionView]),
              (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn list_of_user(
    State(state): State<AppState>,
    ClientUser { client, user, caller, .. }: ClientUser<UserRead>,
    RawQuery(query): RawQuery,
) -> Result<Response, Error> {
    let list = ListQuery::parse(query, &[])?;
    let filter = SuspensionFilter {
        realm_id: Some(&client.realm_id),
        client_id: Some(&client.id),
        user_id: Some(&user.id),
        status: status_filter(&list)?,
    };
    page(&state, &caller, filter, &list).await
}

#[utoipa::path(get, path = "/suspensions", tag = "Suspensions",
    params(("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query), ("searchTerm" = Option<String>, Query),
           ("realmId" = Option<String>, Query), ("clientId" = Option<String>, Query), ("userId" = Option<String>, Query),
           ("status" = Option<String>, Query, description = "Scheduled, Active, Ended or Lifted"),
           ("sortBy" = Option<String>, Query, description = "createdAt, startsAt, endsAt"), ("sortDirection" = Option<String>, Query),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query)),
    responses((status = 200, description = "A page of the account's suspensions, newest first, in `pagination`", body = [SuspensionView]),
              (status = 400), (status = 403)),
    security(("apiKey" = [])))]
pub async fn list(State(state): State<AppState>, caller: Caller, RawQuery(query): RawQuery) -> Result<Response, Error> {
    caller.require_account(&state, permission::USER_READ)?;
    let list = ListQuery::parse(query, &["realmId", "clientId", "userId"])?;
    let filter = SuspensionFilter {
        realm_id: list.filter("realmId"),
        client_id: list.filter("clientId"),
        user_id: list.filter("userId"),
        status: status_filter(&list)?,
    };
    page(&state, &caller, filter, &list).await
}

async fn page(
    state: &AppState,
    caller: &Caller,
    filter: SuspensionFilter<'_>,
    list: &ListQuery,
) -> Result<Response, Error> {
    let now = state.clock.now();
    let found = store::page(&state.store, caller.account_id(), now, filter, &list.page).await?;
    Ok(envelope::paged(found.map(|suspension| SuspensionView::of(&suspension, now))))
}

fn status_filter(list: &ListQuery) -> Result<Option<SuspensionStatus>, Error> {
    list.page
        .status
        .as_ref()
        .map(|name| {
            SuspensionStatus::try_from(name.clone())
                .map_err(|_| Error::invalid("status", Rule::OneOf, "status must be Scheduled, Active, Ended or Lifted"))
        })
        .transpose()
}

/// The suspension the path names, of the person at the client.
async fn named(state: &AppState, client: &Client, user: &User, id: &str) -> Result<Suspension, Error> {
    store::find(state.store.pool(), &client.realm_id, id)
        .await?
        .filter(|s| s.client_id == client.id && s.user_id == user.id)
        .ok_or(Error::NotFound("suspension"))
}

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/users/{userId}/suspensions/{suspensionId}", tag = "Suspensions",
    params(("realm" = String, Path), ("client" = String, Path), ("userId" = String, Path), ("suspensionId" = String, Path)),
    responses((status = 200, body = SuspensionView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    ClientUser { client, user, .. }: ClientUser<UserRead>,
    Path((_, _, _, id)): Path<(String, String, String, String)>,
) -> Result<Response, Error> {
    let suspension = named(&state, &client, &user, &id).await?;
    Ok(envelope::ok(SuspensionView::of(&suspension, state.clock.now())))
}

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/users/{userId}/suspensions/{suspensionId}/lift", tag = "Suspensions",
    params(("realm" = String, Path), ("client" = String, Path), ("userId" = String, Path), ("suspensionId" = String, Path)),
    responses((status = 200, description = "The lifted suspension; `user_suspension_ended` is published with it", body = SuspensionView),
              (status = 403), (status = 404),
              (status = 409, description = "SuspensionAlreadyEnded: it was already lifted or has run out")),
    security(("apiKey" = [])))]
pub async fn lift(
    State(state): State<AppState>,
    ClientUser { client, user, caller, .. }: ClientUser<UserUpdate>,
    Path((_, _, _, id)): Path<(String, String, String, String)>,
) -> Result<Response, Error> {
    let before = named(&state, &client, &user, &id).await?;
    let now = state.clock.now();
    let lifted = suspensions::lift(&state, caller.author(), &before, |s| SuspensionView::of(s, now)).await?;
    Ok(envelope::ok(SuspensionView::of(&lifted, now)))
}
