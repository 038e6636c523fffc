//! Delegation at the token endpoint: OAuth 2.0 Token Exchange (RFC 8693), where a client acts for
//! a person with a narrower access token, only under a delegation grant an administrator wrote.
//!
//! The checks run in a fixed order: the subject token is active (check 1, the introspection
//! rules); then the policies in `policies/delegation.cedar` decide, once per grant, whether the
//! scopes fit the subject token and one grant, the depth the grant's `maxDepth`, and the person
//! its organization (checks 2 to 4). Every attempt, granted or refused, is written to the exchange
//! trail with its `login_succeeded` or `login_failed` event.

pub mod grants;

use crate::oauth::signin::assurance::Level;
use chrono::{DateTime, Utc};

use crate::authz::Authorizer;
use crate::authz::delegation::{DelegationVerdict, ExchangeFacts, GrantFacts, Refusal as PolicyRefusal};
use crate::kernel::ids::{ExchangeId, GrantId, SessionId};
use crate::oauth::signin::{Login, Origin, ResourceError, login_data, requested_resource};
use crate::oauth::tokens::{self, Grant, Issued, Subject, delegation};
use crate::runtime::context::Context;
use crate::runtime::error::{Error, OAuthCode};
use crate::store::clients::{Client, GrantType};
use crate::store::delegation::{DelegationGrant, Exchange, ExchangeOutcome};
use crate::store::events::EventType;
use crate::store::memberships::{self, Membership};
use crate::store::realms::Realm;
use crate::store::users::{User, UserStatus};
use crate::store::write_queue::{ExchangeRecord, QueuedEvent};

/// The only token type that can be exchanged, and the only one issued.
pub const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// An exchange as the client asked for it; the client is already authenticated.
#[derive(Debug, Clone)]
pub struct ExchangeRequest<'a> {
    pub realm: &'a Realm,
    pub client: &'a Client,
    pub subject_token: Option<&'a str>,
    pub subject_token_type: Option<&'a str>,
    pub requested_token_type: Option<&'a str>,
    /// The scopes asked for; those of the subject token when `None`.
    pub scopes: Option<Vec<String>>,
    pub resource: Option<&'a str>,
    pub origin: &'a Origin,
}

/// The delegated access token of a granted exchange, with its scopes.
#[derive(Debug, Clone)]
pub struct Exchanged {
    pub access: Issued,
    pub scopes: Vec<String>,
}

/// Why an exchange was refused; `code` is its `error_code`, kept in the exchange trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExchangeRefusal {
    /// Token Exchange is not enabled on the acting client.
    NotEnabled,
    /// A part of the request every exchange needs, named as the request names it.
    Missing(&'static str),
    SubjectTokenTypeUnsupported,
    RequestedTokenTypeUnsupported,
    /// The subject token is not an active access token of an Active person of this realm.
    SubjectTokenInactive,
    /// No grant lets the client act for the person; `why` says so in words.
    NotPermitted {
        why: &'static str,
    },
    /// The scopes exceed `whose` (the subject token, the grant, or the client's own); the excess.
    ScopesExceedGrant {
        whose: &'static str,
        excess: Vec<String>,
    },
    /// The resource is not among the grant's; `None` when the grant confines tokens and none was sent.
    ResourceExceedsGrant {
        resource: Option<String>,
    },
    DepthExceeded {
        depth: i64,
        max_depth: i64,
    },
    /// The sign-in behind the subject token reached `reached`; the grant asks for `needed`.
    AssuranceTooLow {
        reached: &'static str,
        needed: String,
    },
    /// No resource server this client may request tokens for has this address.
    ResourceNotAllowed {
        address: String,
    },
}

impl ExchangeRefusal {
    pub fn code(&self) -> OAuthCode {
        match self {
            Self::NotEnabled => OAuthCode::GrantTypeDisabled,
            Self::Missing(_) => OAuthCode::MissingParameter,
            Self::SubjectTokenTypeUnsupported => OAuthCode::DelegationSubjectTokenTypeUnsupported,
            Self::RequestedTokenTypeUnsupported => OAuthCode::RequestedTokenTypeUnsupported,
            Self::SubjectTokenInactive => OAuthCode::DelegationSubjectTokenInactive,
            Self::NotPermitted { .. } => OAuthCode::DelegationNotPermitted,
            Self::ScopesExceedGrant { .. } => OAuthCode::DelegationScopesExceedGrant,
            Self::ResourceExceedsGrant { .. } => OAuthCode::DelegationResourceExceedsGrant,
            Self::DepthExceeded { .. } => OAuthCode::DelegationDepthExceeded,
            Self::AssuranceTooLow { .. } => OAuthCode::DelegationAssuranceTooLow,
            Self::ResourceNotAllowed { .. } => OAuthCode::ResourceNotAllowed,
        }
    }
}

/// An exchange that did not succeed: refused (and recorded), or failed in the service itself.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    #[error("exchange refused: {0:?}")]
    Refused(ExchangeRefusal),
    #[error(transparent)]
    Failed(#[from] Error),
}

impl From<ExchangeRefusal> for ExchangeError {
    fn from(refusal: ExchangeRefusal) -> Self {
        Self::Refused(refusal)
    }
}

impl From<crate::store::Error> for ExchangeError {
    fn from(error: crate::store::Error) -> Self {
        Self::Failed(error.into())
    }
}

impl From<anyhow::Error> for ExchangeError {
    fn from(error: anyhow::Error) -> Self {
        Self::Failed(Error::Internal(error))
    }
}

impl From<ResourceError> for ExchangeError {
    fn from(error: ResourceError) -> Self {
        match error {
            ResourceError::NotAllowed { address } => Self::Refused(ExchangeRefusal::ResourceNotAllowed { address }),
            ResourceError::Failed(failure) => Self::Failed(failure),
        }
    }
}

/// What is known of an attempt so far, for its trail row and event.
#[derive(Debug, Default)]
struct Attempt {
    user: Option<User>,
    session_id: Option<SessionId>,
    methods: Vec<String>,
    grant_id: Option<GrantId>,
    scopes: Vec<String>,
    resource: Option<String>,
    depth: Option<i64>,
}

/// Decides the exchange, issues the delegated token when it is granted, and records the attempt
/// either way.
pub async fn exchange(
    context: &Context,
    authz: &Authorizer,
    request: ExchangeRequest<'_>,
) -> Result<Exchanged, ExchangeError> {
    let mut attempt = Attempt {
        scopes: request.scopes.clone().unwrap_or_default(),
        resource: request.resource.map(str::to_owned),
        ..Attempt::default()
    };
    let refusal = match decide(context, authz, &request, &mut attempt).await {
        Ok(exchanged) => return Ok(exchanged),
        Err(ExchangeError::Refused(refusal)) => refusal,
        // A failure of the service itself is not an exchange refused.
        Err(failure) => return Err(failure),
    };
    record(context, request.realm, request.client, request.origin, &attempt, Err(&refusal)).await?;
    Err(refusal.into())
}

async fn decide(
    context: &Context,
    authz: &Authorizer,
    request: &ExchangeRequest<'_>,
    attempt: &mut Attempt,
) -> Result<Exchanged, ExchangeError> {
    let ExchangeRequest { realm, client, subject_token, subject_token_type, requested_token_type, origin, .. } =
        *request;
    if !client.token_exchange_enabled {
        return Err(ExchangeRefusal::NotEnabled.into());
    }
    let subject_token = subject_token.ok_or(ExchangeRefusal::Missing("subject_token"))?;
    if subject_token_type.ok_or(ExchangeRefusal::Missing("subject_token_type"))? != ACCESS_TOKEN_TYPE {
        return Err(ExchangeRefusal::SubjectTokenTypeUnsupported.into());
    }
    if requested_token_type.is_some_and(|t| t != ACCESS_TOKEN_TYPE) {
        return Err(ExchangeRefusal::RequestedTokenTypeUnsupported.into());
    }

    // Check 1: the subject token is an active access token of a person of this realm.
    let active = tokens::active_access_token(context, &realm.id, subject_token)
        .await?
        .ok_or(ExchangeRefusal::SubjectTokenInactive)?;
    let (session, user) = active
        .person
        .clone()
        .filter(|(_, u)| u.status == UserStatus::Active)
        .ok_or(ExchangeRefusal::SubjectTokenInactive)?;
    let session_id = session.id.clone();
    let subject_scopes = active.scopes();
    if request.scopes.is_none() {
        attempt.scopes.clone_from(&subject_scopes);
    }
    let depth = delegation::depth(&active.claims);
    attempt.user = Some(user.clone());
    attempt.session_id = Some(session_id.clone());
    attempt.methods = session.authentication_methods.clone();
    attempt.depth = Some(depth);
    if crate::oauth::suspensions::refuses(context, &realm.id, &client.id, &user.id, context.clock.now()).await? {
        return Err(ExchangeRefusal::NotPermitted { why: "the person is suspended at this client" }.into());
    }

    // Checks 2 to 4, by the policies, under one grant at a time: grants never add up.
    let grants = delegation::grants_for(context, &realm.id, &client.id, &user.id).await?;
    let mut organizations = Vec::new();
    for organization in grants.iter().filter_map(|g| g.organization_id.as_deref()) {
        if !organizations.iter().any(|known| known == organization)
            && memberships::is_member(context.store.pool(), Membership::Organization, organization, &user.id).await?
        {
            organizations.push(organization.to_owned());
        }
    }
    let client_scopes = client.allowed_scopes.clone();
    let facts = ExchangeFacts {
        realm_id: &realm.id,
        client_id: &client.id,
        person_id: &user.id,
        person_organizations: &organizations,
        now: context.clock.now(),
        scopes: &attempt.scopes,
        subject_scopes: &subject_scopes,
        client_scopes: &client_scopes,
        depth,
        resource: attempt.resource.as_deref(),
        subject_level: Level::of_methods(&session.authentication_methods).rank(),
    };
    let mut allowed = None;
    // The refusal of the grant that came closest: the one refused by the latest check.
    let mut closest: Option<(u32, PolicyRefusal, &DelegationGrant)> = None;
    for grant in grants.iter() {
        let scopes = grant.scopes.clone();
        let resources = grant.allowed_resources.clone();
        let grant_facts = GrantFacts {
            id: &grant.id,
            client_id: &grant.client_id,
            subject_user_id: &grant.subject_user_id,
            scopes: &scopes,
            max_depth: grant.max_depth,
            allowed_resources: &resources,
            organization_id: grant.organization_id.as_deref(),
            expires_at: grant.expires_at,
            minimum_level: grant.minimum_acr.as_deref().and_then(Level::of_acr).map(Level::rank),
        };
        let verdict = authz.decide_delegation(&grant_facts, &facts).map_err(anyhow::Error::new)?;
        match verdict {
            DelegationVerdict::Allow => {
                allowed = Some(grant);
                break;
            }
            DelegationVerdict::Deny { refusal, precedence, .. } => {
                if closest.is_none_or(|(best, ..)| precedence > best) {
                    closest = Some((precedence, refusal, grant));
                }
            }
        }
    }
    let Some(grant) = allowed else {
        return Err(match closest {
            None => ExchangeRefusal::NotPermitted { why: NO_GRANT },
            Some((_, refusal, grant)) => {
                attempt.grant_id = Some(grant.id.clone());
                refusal_of(refusal, &facts, grant)
            }
        }
        .into());
    };
    attempt.grant_id = Some(grant.id.clone());
    let server = requested_resource(context, client, request.resource).await?;
    let resource = server.as_ref().map(|s| s.address.clone());

    let act = delegation::next_act(&client.id, &active.claims);
    let subject = Subject::Delegated {
        user: &user,
        session_id: &session_id,
        signed_in_to: &session.client_id,
        act: &act,
        delegation_id: &grant.id,
        expires_at: grant.expires_at,
        auth_time: session.created_at,
        methods: &session.authentication_methods,
    };
    let issued = tokens::access_token(
        context,
        &Grant {
            client,
            subject,
            scopes: &attempt.scopes,
            resource: resource.as_deref(),
            // Delegated tokens are bearer tokens: Token Exchange takes no DPoP proof here.
            dpop_jkt: None,
        },
    )
    .await?;
    let stands = record(context, realm, client, origin, attempt, Ok((&issued.jti, issued.expires_at))).await?;
    if !stands {
        return Err(ExchangeRefusal::NotPermitted { why: "the delegation grant has been withdrawn" }.into());
    }
    Ok(Exchanged { scopes: issued.scopes.clone(), access: issued })
}

const NO_GRANT: &str = "no live delegation grant lets this client act for this person";

/// The refusal of the grant that came closest, naming what exceeds.
fn refusal_of(refusal: PolicyRefusal, facts: &ExchangeFacts<'_>, grant: &DelegationGrant) -> ExchangeRefusal {
    let beyond =
        |ceiling: &[String]| -> Vec<String> { facts.scopes.iter().filter(|s| !ceiling.contains(s)).cloned().collect() };
    match refusal {
        PolicyRefusal::ScopesExceedGrant => {
            let granted = grant.scopes.clone();
            let (whose, excess) = [
                ("the subject token", beyond(facts.subject_scopes)),
                ("the delegation grant", beyond(&granted)),
                ("the scopes this client may request", beyond(facts.client_scopes)),
            ]
            .into_iter()
            .find(|(_, excess)| !excess.is_empty())
            .unwrap_or(("the delegation grant", Vec::new()));
            ExchangeRefusal::ScopesExceedGrant { whose, excess }
        }
        PolicyRefusal::ResourceExceedsGrant => {
            ExchangeRefusal::ResourceExceedsGrant { resource: facts.resource.map(str::to_owned) }
        }
        PolicyRefusal::DepthExceeded => {
            ExchangeRefusal::DepthExceeded { depth: facts.depth, max_depth: grant.max_depth }
        }
        PolicyRefusal::AssuranceTooLow => {
            let reached = Level::ALL.into_iter().find(|l| l.rank() == facts.subject_level).unwrap_or(Level::OneFactor);
            let needed = grant.minimum_acr.clone().unwrap_or_default();
            ExchangeRefusal::AssuranceTooLow { reached: reached.acr(), needed }
        }
        PolicyRefusal::NotPermitted => {
            let why = if grant.organization_id.is_some() && grant.expires_at.is_none_or(|until| until > facts.now) {
                "the person is no longer a member of the organization the delegation grant is confined to"
            } else {
                NO_GRANT
            };
            ExchangeRefusal::NotPermitted { why }
        }
    }
}

/// `DelegationNotPermitted` → `delegation_not_permitted`: the `failure_reason` of a refusal.
fn failure_reason(code: &str) -> String {
    let mut reason = String::with_capacity(code.len() + 4);
    for (index, c) in code.chars().enumerate() {
        if c.is_ascii_uppercase() && index > 0 {
            reason.push('_');
        }
        reason.push(c.to_ascii_lowercase());
    }
    reason
}

/// Writes the attempt's trail row and event in one group commit: `Ok` with the issued token's id
/// and expiry for a granted exchange, the refusal otherwise. `false` when the grant was
/// withdrawn before the exchange could commit.
async fn record(
    context: &Context,
    realm: &Realm,
    client: &Client,
    origin: &Origin,
    attempt: &Attempt,
    outcome: Result<(&str, DateTime<Utc>), &ExchangeRefusal>,
) -> Result<bool, Error> {
    let now = context.clock.now();
    let reason = outcome.err().map(|refused| failure_reason(refused.code().as_str()));
    let methods: Vec<&str> = attempt.methods.iter().map(String::as_str).collect();
    let data = login_data(
        Login {
            grant_type: GrantType::TokenExchange.as_str(),
            resource: attempt.resource.as_deref(),
            user: attempt.user.as_ref(),
            session_id: attempt.session_id.as_deref(),
            failure_reason: reason.as_deref(),
            scopes: &attempt.scopes,
            methods: &methods,
        },
        origin,
    );
    let (event_type, outcome_name, error_code, token_id) = match outcome {
        Ok((jti, _)) => (EventType::LoginSucceeded, ExchangeOutcome::Granted, None, Some(jti.to_owned())),
        Err(refused) => {
            (EventType::LoginFailed, ExchangeOutcome::Refused, Some(refused.code().as_str().to_owned()), None)
        }
    };
    let record = ExchangeRecord {
        issued: outcome.ok().and_then(|(_, expires_at)| attempt.grant_id.clone().map(|grant| (grant, expires_at))),
        trail: Exchange {
            id: ExchangeId::fresh(),
            realm_id: realm.id.clone(),
            client_id: client.id.clone(),
            subject_user_id: attempt.user.as_ref().map(|u| u.id.clone()),
            grant_id: attempt.grant_id.clone(),
            outcome: outcome_name,
            error_code,
            scopes: attempt.scopes.clone(),
            resource: attempt.resource.clone(),
            depth: attempt.depth,
            token_id,
            ip_address: origin.ip_address.clone(),
            occurred_at: now,
            connection_provider: None,
        },
        event: QueuedEvent {
            event_type,
            account_id: realm.account_id.clone(),
            realm_id: Some(realm.id.clone()),
            client_id: Some(client.id.clone()),
            data,
            at: now,
        },
    };
    Ok(context.writes.record_exchange(record).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_reasons_are_the_codes_in_snake_case() {
        assert_eq!(failure_reason("DelegationNotPermitted"), "delegation_not_permitted");
        assert_eq!(failure_reason("GrantTypeDisabled"), "grant_type_disabled");
    }
}
