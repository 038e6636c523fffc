//! `/realms/{realm}/delegation-grants`: the grants under which a client may act for a person
//! through token exchange. A grant is written once and never edited; it
//! can only be withdrawn, at once and for good. Writing and withdrawing need write access to the
//! realm (`realm:update`); reading needs `realm:read`; the exchange trail needs `audit:read`.

use super::reach::{AuditRead, Found, InRealm, RealmRead, RealmUpdate};
use axum::extract::{RawQuery, State};
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::ListQuery;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::body::JsonBody;
use crate::http::envelope::Answer;
use crate::kernel::clock::iso;
use crate::kernel::ids::{ClientId, GrantId, OrganizationId, UserId};
use crate::kernel::validate::{Body, Rule, instant, integer, list_of, text};
use crate::oauth::delegation::grants;
use crate::runtime::error::Error;
use crate::store::delegation::{self as grant_store, DelegationGrant, Exchange, ExchangeOutcome, GrantState};
use crate::store::realms::Realm;

/// Actors a token exchanged under a grant may already carry when `maxDepth` is not given: only the
/// person's own token can be exchanged.
pub const DEFAULT_MAX_DEPTH: i64 = 0;
/// The farthest a grant's term may reach.
const MAX_TERM_DAYS: i64 = 365;

/// Who wrote or withdrew a grant.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActorView {
    /// User (a person signed in to the console) or Credential (an account credential).
    #[serde(rename = "type")]
    pub actor_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WithdrawalView {
    pub reason: String,
    pub withdrawn_at: String,
    pub withdrawn_by: ActorView,
}

/// A delegation grant as the admin API shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DelegationGrantView {
    /// The grant id; `delegation_id` in the tokens issued under it.
    pub id: String,
    pub realm_id: String,
    /// The acting client.
    pub client_id: String,
    /// The person the client may act for.
    pub subject_user_id: String,
    /// The ceiling of scopes an exchange may ask for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// Actors the exchanged token may already carry (0 to 3).
    pub max_depth: i64,
    /// When the grant stops being live; none when it lasts until withdrawn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Resource servers delegated tokens may be addressed to; empty for any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_resources: Vec<String>,
    /// The organization the grant is confined to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organization_id: Option<String>,
    /// Live, Expired or Withdrawn.
    pub state: GrantState,
    pub created_at: String,
    pub created_by: ActorView,
    /// Who withdrew it, when and why; none while it is not withdrawn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withdrawal: Option<WithdrawalView>,
}

impl DelegationGrantView {
    fn of(grant: &DelegationGrant, now: DateTime<Utc>) -> Self {
        let withdrawal = match (grant.withdrawn_at, &grant.withdrawal_reason) {
            (Some(at), Some(reason)) => Some(WithdrawalView {
                reason: reason.clone(),
                withdrawn_at: iso(at),
                withdrawn_by: ActorView {
                    actor_type: grant.withdrawn_by_type.clone().unwrap_or_default(),
                    id: grant.withdrawn_by_id.clone(),
                },
            }),
            _ => None,
        };
        Self {
            id: grant.id.clone().into(),
            realm_id: grant.realm_id.to_string(),
            client_id: grant.client_id.to_string(),
            subject_user_id: grant.subject_user_id.to_string(),
            scopes: grant.scopes.clone(),
            max_depth: grant.max_depth,
            expires_at: grant.expires_at.map(iso),
            allowed_resources: grant.allowed_resources.clone(),
            organization_id: grant.organization_id.clone().map(String::from),
            state: grant.state(now),
            created_at: iso(grant.created_at),
            created_by: ActorView {
                actor_type: grant.created_by_type.as_str().to_owned(),
                id: grant.created_by_id.clone(),
            },
            withdrawal,
        }
    }
}

/// The answer to a withdrawal.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WithdrawnGrantView {
    #[serde(flatten)]
    pub grant: DelegationGrantView,
    /// The longest remaining lifetime of a delegated access token issued under the grant: APIs
    /// that validate tokens locally may accept one for this long; introspection already answers
    /// `active: false`.
    pub revocation_limit_seconds: i64,
}

/// The body of a grant creation.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct DelegationGrantInput {
    /// A client of the realm with Token Exchange enabled.
    #[schema(value_type = String, required = true)]
    client_id: Option<String>,
    /// A person of the realm.
    #[schema(value_type = String, required = true)]
    subject_user_id: Option<String>,
    /// At least one; each a scope the client may request.
    #[schema(value_type = Vec<String>, required = true)]
    scopes: Option<Vec<String>>,
    /// 0 to 3; 0 when omitted.
    #[schema(value_type = Option<i64>)]
    max_depth: i64,
    /// ISO 8601 UTC; in the future and at most 365 days ahead. Without it the grant lasts until
    /// withdrawn.
    #[schema(value_type = Option<String>)]
    expires_at: Option<DateTime<Utc>>,
    /// Addresses of the realm's resource servers.
    #[schema(value_type = Option<Vec<String>>)]
    allowed_resources: Vec<String>,
    /// An organization of the realm the person belongs to.
    organization_id: Option<String>,
}

impl DelegationGrantInput {
    /// The fields `body` gives; an expiry after `now` and within the longest term.
    fn read(body: &mut Body, now: DateTime<Utc>) -> Self {
        let client_id = body.required("clientId", text(1, 128));
        let subject_user_id = body.required("subjectUserId", text(1, 64));
        let scopes = body.required("scopes", list_of(100, super::clients::scope_token));
        if scopes.as_ref().is_some_and(Vec::is_empty) {
            body.refuse("scopes", Rule::Required, "scopes must list at least one scope");
        }
        let max_depth = body.optional("maxDepth", integer(0, 3)).unwrap_or(DEFAULT_MAX_DEPTH);
        let expires_at = body.optional("expiresAt", instant);
        if let Some(until) = expires_at {
            if until <= now {
                body.refuse("expiresAt", Rule::Range, "expiresAt must be in the future");
            } else if until > now + TimeDelta::days(MAX_TERM_DAYS) {
                body.refuse("expiresAt", Rule::Range, format!("expiresAt must be at most {MAX_TERM_DAYS} days ahead"));
            }
        }
        let allowed_resources = body.optional("allowedResources", list_of(50, text(1, 2048))).unwrap_or_default();
        let organization_id = body.optional("organizationId", text(1, 64));
        Self { client_id, subject_user_id, scopes, max_depth, expires_at, allowed_resources, organization_id }
    }

    /// The grant of `realm` that `caller` writes at `now`; `None` without a required field.
    fn grant(self, realm: &Realm, caller: &Caller, now: DateTime<Utc>) -> Option<DelegationGrant> {
        let (created_by_type, created_by_id) = (caller.actor.actor_type, caller.actor.acting_id());
        Some(DelegationGrant {
            id: GrantId::fresh(),
            realm_id: realm.id.clone(),
            client_id: ClientId::known(self.client_id?),
            subject_user_id: UserId::known(self.subject_user_id?),
            scopes: self.scopes?,
            allowed_resources: self.allowed_resources,
            max_depth: self.max_depth,
            organization_id: self.organization_id.map(OrganizationId::known),
            expires_at: self.expires_at,
            created_at: now,
            created_by_type,
            created_by_id,
            issued_tokens_expire_at: None,
            withdrawn_at: None,
            withdrawal_reason: None,
            withdrawn_by_type: None,
            withdrawn_by_id: None,
        })
    }
}

/// The body of a withdrawal.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct WithdrawalInput {
    /// Why the grant is withdrawn; 1–1,024 characters.
    reason: String,
}

impl WithdrawalInput {
    fn read(body: &mut Body) -> Option<Self> {
        Some(Self { reason: body.required("reason", text(1, 1024))? })
    }
}

#[utoipa::path(post, path = "/realms/{realm}/delegation-grants", tag = "Delegation", params(("realm" = String, Path)),
    request_body = DelegationGrantInput,
    responses((status = 201, description = "The created grant, in `data`", body = DelegationGrantView),
              (status = 400, description = "ValidationFailed, one notification per refused field"), (status = 403)),
    security(("apiKey" = [])))]
pub async fn create(
    State(state): State<AppState>,
    InRealm { realm, caller, .. }: InRealm<RealmUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<DelegationGrantView>, Error> {
    let now = state.clock.now();
    let input = DelegationGrantInput::read(&mut body, now);
    body.finish()?;
    let grant = input.grant(&realm, &caller, now);
    let Some(grant) = grant else { return Err(Error::Internal(anyhow::anyhow!("a refused body passed validation"))) };
    grants::write(&state, caller.author(), &realm, &grant, |grant| DelegationGrantView::of(grant, now)).await?;
    Ok(Answer::Created(DelegationGrantView::of(&grant, now)))
}

#[utoipa::path(get, path = "/realms/{realm}/delegation-grants", tag = "Delegation",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("clientId" = Option<String>, Query, description = "Grants of this acting client"),
           ("subjectUserId" = Option<String>, Query, description = "Grants for this person"),
           ("status" = Option<String>, Query, description = "Live, Expired or Withdrawn"),
           ("state" = Option<String>, Query, description = "The same as status"),
           ("sortBy" = Option<String>, Query, description = "createdAt, expiresAt, clientId"), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's grants, in `pagination`", body = [DelegationGrantView]),
              (status = 400), (status = 403)),
    security(("apiKey" = [])))]
pub async fn list(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<RealmRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<DelegationGrantView>, Error> {
    let list = ListQuery::parse(query, &["clientId", "subjectUserId", "state"])?;
    let now = state.clock.now();
    // `status`, as on every list; `state`, the field's own name, is taken too.
    let state_filter = match (list.status_in(GrantState::NAMES)?, list.filter("state")) {
        (Some(status), _) => Some(status),
        (None, None) => None,
        (None, Some(name)) => Some(
            GrantState::try_from(name.to_owned())
                .map_err(|_| Error::invalid("state", Rule::OneOf, "state must be Live, Expired or Withdrawn"))?,
        ),
    };
    let filter = grant_store::GrantFilter {
        client_id: list.filter("clientId"),
        subject_user_id: list.filter("subjectUserId"),
        state: state_filter,
    };
    let found = grant_store::page(&state.store, &realm.id, now, filter, &list.page).await?;
    Ok(Answer::Paged(found.map(|grant| DelegationGrantView::of(&grant, now))))
}

#[utoipa::path(get, path = "/realms/{realm}/delegation-grants/{grantId}", tag = "Delegation",
    params(("realm" = String, Path), ("grantId" = String, Path)),
    responses((status = 200, body = DelegationGrantView), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn read(
    State(state): State<AppState>,
    Found { item: grant, .. }: Found<DelegationGrant, RealmRead>,
) -> Result<Answer<DelegationGrantView>, Error> {
    Ok(Answer::Ok(DelegationGrantView::of(&grant, state.clock.now())))
}

#[utoipa::path(post, path = "/realms/{realm}/delegation-grants/{grantId}/withdraw", tag = "Delegation",
    params(("realm" = String, Path), ("grantId" = String, Path)), request_body = WithdrawalInput,
    responses((status = 200, description = "The withdrawn grant with `revocationLimitSeconds`", body = WithdrawnGrantView),
              (status = 400, description = "ValidationFailed: no reason"), (status = 403), (status = 404),
              (status = 409, description = "DelegationGrantAlreadyWithdrawn")),
    security(("apiKey" = [])))]
pub async fn withdraw(
    State(state): State<AppState>,
    Found { item: before, caller, .. }: Found<DelegationGrant, RealmUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Answer<WithdrawnGrantView>, Error> {
    let input = WithdrawalInput::read(&mut body);
    body.finish()?;
    let Some(WithdrawalInput { reason }) = input else {
        return Err(Error::invalid("reason", Rule::Required, "reason is required"));
    };
    let now = state.clock.now();
    let view = |grant: &DelegationGrant| DelegationGrantView::of(grant, now);
    let withdrawn = grants::withdraw(&state, caller.author(), &before, &reason, view).await?;
    Ok(Answer::Ok(WithdrawnGrantView {
        grant: DelegationGrantView::of(&withdrawn.grant, now),
        revocation_limit_seconds: withdrawn.revocation_limit_seconds,
    }))
}

/// One token exchange as the trail shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExchangeView {
    pub id: String,
    pub occurred_at: String,
    /// The acting client.
    pub client_id: String,
    /// The person, when the subject token named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject_user_id: Option<String>,
    /// The grant that decided, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grant_id: Option<String>,
    /// Granted or Refused.
    pub outcome: ExchangeOutcome,
    /// The token endpoint's `error_code` for a refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Actors already in the subject token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<i64>,
    /// The `jti` of the token issued.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_id: Option<String>,
    pub ip_address: String,
    /// For an exchange for a connected account: the connection provider whose token was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection_provider: Option<String>,
}

impl From<Exchange> for ExchangeView {
    fn from(row: Exchange) -> Self {
        Self {
            id: row.id.into(),
            occurred_at: iso(row.occurred_at),
            client_id: row.client_id.to_string(),
            subject_user_id: row.subject_user_id.map(String::from),
            grant_id: row.grant_id.map(String::from),
            outcome: row.outcome,
            error_code: row.error_code,
            scopes: row.scopes.clone(),
            resource: row.resource,
            depth: row.depth,
            token_id: row.token_id,
            ip_address: row.ip_address,
            connection_provider: row.connection_provider,
        }
    }
}

#[utoipa::path(get, path = "/realms/{realm}/delegation-exchanges", tag = "Delegation",
    params(("realm" = String, Path), ("pageNumber" = Option<u32>, Query), ("pageSize" = Option<u32>, Query),
           ("clientId" = Option<String>, Query), ("subjectUserId" = Option<String>, Query), ("grantId" = Option<String>, Query),
           ("status" = Option<String>, Query, description = "Granted or Refused"),
           ("createdFrom" = Option<String>, Query), ("createdTo" = Option<String>, Query), ("sortDirection" = Option<String>, Query)),
    responses((status = 200, description = "A page of the realm's token exchanges, granted and refused, newest first", body = [ExchangeView]),
              (status = 400), (status = 403)),
    security(("apiKey" = [])))]
pub async fn exchanges(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<AuditRead>,
    RawQuery(query): RawQuery,
) -> Result<Answer<ExchangeView>, Error> {
    let list = ListQuery::parse(query, &["clientId", "subjectUserId", "grantId"])?;
    list.status_in(crate::store::delegation::ExchangeOutcome::NAMES)?;
    let filter = grant_store::ExchangeFilter {
        client_id: list.filter("clientId"),
        subject_user_id: list.filter("subjectUserId"),
        grant_id: list.filter("grantId"),
    };
    let found = grant_store::exchange_page(&state.store, &realm.id, filter, &list.page).await?;
    Ok(Answer::Paged(found.map(ExchangeView::from)))
}
