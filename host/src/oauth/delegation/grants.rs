//! Delegation grants: what an administrator writes to let a client act for a person through token
//! exchange. A grant is written once and never edited; it can only be withdrawn, at once and for
//! good, and the tokens issued under it end with it.

use crate::authz::caller::Caller;
use crate::kernel::clock::iso;
use crate::kernel::error_code::ErrorCode;
use crate::kernel::ids::{ClientId, GrantId, OrganizationId, UserId};
use crate::kernel::validate::{Body, Notification, Rule, instant, integer, list_of, one_of, text};
use crate::oauth::signin::assurance::Level;
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::delegation::{self as store, DelegationGrant, Exchange, ExchangeOutcome, GrantState, Withdrawal};
use crate::store::memberships::{self, Membership};
use crate::store::realms::Realm;
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::{clients, organizations, resource_servers, users};
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

/// A grant withdrawn, and how many seconds its last issued token may still be used.
#[derive(Debug, Clone)]
pub struct Withdrawn {
    pub grant: DelegationGrant,
    pub revocation_limit_seconds: i64,
}

/// Writes a grant after checking every reference it makes against the realm (one refusal per
/// refused field); `view` is how the trail shows it.
pub async fn write<V: Serialize>(
    context: &Context,
    by: Author<'_>,
    realm: &Realm,
    grant: &DelegationGrant,
    view: impl Fn(&DelegationGrant) -> V,
) -> Result<(), Error> {
    check_references(context, realm, grant).await?;
    let mut tx = context.store.begin().await?;
    store::insert(&mut *tx, grant).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Create, grant.place(), 201).after(view(grant))).await
}

/// Withdraws a live grant for `reason`, recording who did it.
pub async fn withdraw<V: Serialize>(
    context: &Context,
    by: Author<'_>,
    before: &DelegationGrant,
    reason: &str,
    view: impl Fn(&DelegationGrant) -> V,
) -> Result<Withdrawn, Error> {
    let now = context.clock.now();
    let by_id = by.actor.acting_id();
    let withdrawal = Withdrawal { reason, by_type: by.actor.actor_type, by_id: by_id.as_deref(), at: now };
    let mut tx = context.store.begin().await?;
    let Some(grant) = store::withdraw(&mut *tx, &before.id, &withdrawal).await? else {
        return Err(Error::InvalidState(
            ErrorCode::DelegationGrantAlreadyWithdrawn,
            "the delegation grant is already withdrawn".into(),
        ));
    };
    let limit = grant.issued_tokens_expire_at.map_or(0, |until| ((until - now).num_milliseconds().max(0) + 999) / 1000);
    let change = Change::of(ChangeAction::Update, grant.place(), 200)
        .before(view(before))
        .after(view(&grant))
        .details(json!({ "reason": reason, "revocation_limit_seconds": limit }));
    changes::commit(context, by, tx, change).await?;
    Ok(Withdrawn { grant, revocation_limit_seconds: limit })
}

fn refuse(field: impl Into<String>, rule: Rule, message: impl Into<String>) -> Notification {
    Notification::new(field, rule, message)
}

/// Checks every reference of the grant against the realm, one notification per refused field.
async fn check_references(context: &Context, realm: &Realm, grant: &DelegationGrant) -> Result<(), Error> {
    let pool = context.store.pool();
    let mut refused = Vec::new();
    match clients::find(pool, &realm.id, &grant.client_id).await? {
        None => refused.push(refuse("clientId", Rule::NotFound, format!("no client {} in the realm", grant.client_id))),
        Some(client) if !client.token_exchange_enabled => refused.push(refuse(
            "clientId",
            Rule::NotEnabled,
            format!("Token Exchange is not enabled on the client {}", client.id),
        )),
        Some(client) => {
            let allowed = client.allowed_scopes.clone();
            for (index, scope) in grant.scopes.iter().enumerate() {
                if !allowed.contains(scope) {
                    let message = format!("{scope} is not a scope the client {} may request", client.id);
                    refused.push(refuse(format!("scopes[{index}]"), Rule::NotFound, message));
                }
            }
        }
    }
    let person = users::find(pool, &realm.id, &grant.subject_user_id).await?;
    if person.is_none() {
        refused.push(refuse("subjectUserId", Rule::NotFound, "no person with this id in the realm"));
    }
    for (index, address) in grant.allowed_resources.iter().enumerate() {
        if resource_servers::find_by_address(pool, &realm.id, address).await?.is_none() {
            let message = format!("{address} is not a resource server of the realm");
            refused.push(refuse(format!("allowedResources[{index}]"), Rule::NotFound, message));
        }
    }
    if let Some(organization) = &grant.organization_id {
        if organizations::find(pool, &realm.id, organization).await?.is_none() {
            refused.push(refuse("organizationId", Rule::NotFound, "no organization with this id in the realm"));
        } else if person.is_some()
            && !memberships::is_member(pool, Membership::Organization, organization, &grant.subject_user_id).await?
        {
            refused.push(refuse("organizationId", Rule::NotFound, "the person is not a member of the organization"));
        }
    }
    if refused.is_empty() { Ok(()) } else { Err(Error::Validation(refused)) }
}

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
    /// The level of assurance (`acr`: 1, 2, phr or phrh) the person's sign-in behind a subject
    /// token must have reached; none when any will do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum_acr: Option<String>,
    /// Live, Expired or Withdrawn.
    pub state: GrantState,
    pub created_at: String,
    pub created_by: ActorView,
    /// Who withdrew it, when and why; none while it is not withdrawn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withdrawal: Option<WithdrawalView>,
}

impl DelegationGrantView {
    pub(crate) fn of(grant: &DelegationGrant, now: DateTime<Utc>) -> Self {
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
            minimum_acr: grant.minimum_acr.clone(),
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
    pub(crate) client_id: Option<String>,
    /// A person of the realm.
    #[schema(value_type = String, required = true)]
    pub(crate) subject_user_id: Option<String>,
    /// At least one; each a scope the client may request.
    #[schema(value_type = Vec<String>, required = true)]
    pub(crate) scopes: Option<Vec<String>>,
    /// 0 to 3; 0 when omitted.
    #[schema(value_type = Option<i64>)]
    pub(crate) max_depth: i64,
    /// ISO 8601 UTC; in the future and at most 365 days ahead. Without it the grant lasts until
    /// withdrawn.
    #[schema(value_type = Option<String>)]
    pub(crate) expires_at: Option<DateTime<Utc>>,
    /// Addresses of the realm's resource servers.
    #[schema(value_type = Option<Vec<String>>)]
    pub(crate) allowed_resources: Vec<String>,
    /// An organization of the realm the person belongs to.
    pub(crate) organization_id: Option<String>,
    /// 1, 2, phr or phrh: the least level of assurance of the sign-in behind a subject token.
    pub(crate) minimum_acr: Option<String>,
}

impl DelegationGrantInput {
    /// The fields `body` gives; an expiry after `now` and within the longest term.
    pub(crate) fn read(body: &mut Body, now: DateTime<Utc>) -> Self {
        let client_id = body.required("clientId", text(1, 128));
        let subject_user_id = body.required("subjectUserId", text(1, 64));
        let scopes = body.required("scopes", list_of(100, crate::directory::client_fields::scope_token));
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
        let minimum_acr = body.optional("minimumAcr", one_of(&Level::NAMES)).map(|level| level.acr().to_owned());
        Self {
            client_id,
            subject_user_id,
            scopes,
            max_depth,
            expires_at,
            allowed_resources,
            organization_id,
            minimum_acr,
        }
    }

    /// The grant of `realm` that `caller` writes at `now`; `None` without a required field.
    pub(crate) fn grant(self, realm: &Realm, caller: &Caller, now: DateTime<Utc>) -> Option<DelegationGrant> {
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
            minimum_acr: self.minimum_acr,
        })
    }
}

/// The body of a withdrawal.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct WithdrawalInput {
    /// Why the grant is withdrawn; 1–1,024 characters.
    pub(crate) reason: String,
}

impl WithdrawalInput {
    pub(crate) fn read(body: &mut Body) -> Option<Self> {
        Some(Self { reason: body.required("reason", text(1, 1024))? })
    }
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

/// Actors a token exchanged under a grant may already carry when `maxDepth` is not given: only the
/// person's own token can be exchanged.
pub const DEFAULT_MAX_DEPTH: i64 = 0;

/// The farthest a grant's term may reach.
pub(crate) const MAX_TERM_DAYS: i64 = 365;
