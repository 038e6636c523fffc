//! OAuth 2.0 Token Exchange (RFC 8693) at the token endpoint: a client acts for a person with a
//! narrower access token, only under a delegation grant an administrator wrote (SPEC "Token
//! exchange").
//!
//! The checks run in the SPEC's order: the subject token is active (check 1, the introspection
//! rules); then the policies in `policies/delegation.cedar` decide, once per grant, whether the
//! scopes fit the subject token and one grant, the depth the grant's `maxDepth`, and the person
//! its organization (checks 2 to 4). Every attempt, granted or refused, is written to the exchange
//! trail with its `login_succeeded` or `login_failed` event.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use super::{Form, OAuthError, json_no_store};
use crate::AppState;
use crate::authz::delegation::{DelegationVerdict, ExchangeFacts, GrantFacts, Refusal};
use crate::clock::to_millis;
use crate::ids::new_guid;
use crate::signin::{Login, Origin, login_data, requested_resource};
use crate::store::clients::Client;
use crate::store::delegation::{DelegationGrant, Exchange, ExchangeOutcome};
use crate::store::memberships::{self, Membership};
use crate::store::realms::Realm;
use crate::store::users::{User, UserStatus};
use crate::store::write_queue::{ExchangeRecord, QueuedEvent};
use crate::store::{from_json_list, to_json_list};
use crate::tokens::{self, Grant, Subject, delegation};

pub const GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The only token type that can be exchanged, and the only one issued.
pub const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// What is known of an attempt so far, for its trail row and event.
#[derive(Debug, Default)]
struct Attempt {
    user: Option<User>,
    session_id: Option<String>,
    methods: Vec<String>,
    grant_id: Option<String>,
    scopes: Vec<String>,
    resource: Option<String>,
    depth: Option<i64>,
}

/// A token exchange by `client`, already authenticated.
pub(super) async fn exchange(
    state: &AppState,
    realm: &Realm,
    client: &Client,
    form: &Form,
    origin: &Origin,
) -> Result<Response, OAuthError> {
    let mut attempt = Attempt {
        scopes: form.scopes()?.unwrap_or_default(),
        resource: form.get("resource").map(str::to_owned),
        ..Attempt::default()
    };
    let refused = match decide(state, realm, client, form, origin, &mut attempt).await {
        Ok(answer) => return Ok(answer),
        Err(refused) => refused,
    };
    // A refusal is recorded; a failure of the service itself is not an exchange refused.
    if !refused.status.is_server_error() {
        record(state, realm, client, origin, &attempt, Err(&refused)).await?;
    }
    Err(refused)
}

async fn decide(
    state: &AppState,
    realm: &Realm,
    client: &Client,
    form: &Form,
    origin: &Origin,
    attempt: &mut Attempt,
) -> Result<Response, OAuthError> {
    if !client.token_exchange_enabled {
        return Err(OAuthError::new(
            StatusCode::BAD_REQUEST,
            "unauthorized_client",
            "GrantTypeDisabled",
            "Token Exchange is not enabled on this client",
        ));
    }
    let subject_token = form.require("subject_token")?;
    if form.require("subject_token_type")? != ACCESS_TOKEN_TYPE {
        return Err(OAuthError::invalid_request(
            "DelegationSubjectTokenTypeUnsupported",
            format!("subject_token_type must be {ACCESS_TOKEN_TYPE}: only access tokens are exchanged"),
        ));
    }
    if form.get("requested_token_type").is_some_and(|t| t != ACCESS_TOKEN_TYPE) {
        return Err(OAuthError::invalid_request(
            "RequestedTokenTypeUnsupported",
            format!("requested_token_type must be {ACCESS_TOKEN_TYPE}: only access tokens are issued"),
        ));
    }

    // Check 1: the subject token is an active access token of a person of this realm.
    let inactive = || {
        OAuthError::invalid_request(
            "DelegationSubjectTokenInactive",
            "the subject token is not an active access token of a person in this realm",
        )
    };
    let active = tokens::active_access_token(state, &realm.id, subject_token).await?.ok_or_else(inactive)?;
    let (session, user) = active.person.clone().filter(|(_, u)| u.status == UserStatus::Active).ok_or_else(inactive)?;
    let session_id = session.id.clone();
    let subject_scopes = active.scopes();
    if form.get("scope").is_none() {
        attempt.scopes.clone_from(&subject_scopes);
    }
    let depth = delegation::depth(&active.claims);
    attempt.user = Some(user.clone());
    attempt.session_id = Some(session_id.clone());
    attempt.methods = from_json_list(&session.authentication_methods);
    attempt.depth = Some(depth);

    // Checks 2 to 4, by the policies, under one grant at a time: grants never add up.
    let grants = delegation::grants_for(state, &realm.id, &client.id, &user.id).await?;
    let mut organizations = Vec::new();
    for organization in grants.iter().filter_map(|g| g.organization_id.as_deref()) {
        if !organizations.iter().any(|known| known == organization)
            && memberships::is_member(state.store.pool(), Membership::Organization, organization, &user.id).await?
        {
            organizations.push(organization.to_owned());
        }
    }
    let client_scopes = from_json_list(&client.allowed_scopes);
    let facts = ExchangeFacts {
        realm_id: &realm.id,
        client_id: &client.id,
        person_id: &user.id,
        person_organizations: &organizations,
        now: to_millis(state.clock.now()),
        scopes: &attempt.scopes,
        subject_scopes: &subject_scopes,
        client_scopes: &client_scopes,
        depth,
        resource: attempt.resource.as_deref(),
    };
    let mut allowed = None;
    // The refusal of the grant that came closest: the one refused by the latest check.
    let mut closest: Option<(u32, Refusal, &DelegationGrant)> = None;
    for grant in grants.iter() {
        let scopes = from_json_list(&grant.scopes);
        let resources = from_json_list(&grant.allowed_resources);
        let grant_facts = GrantFacts {
            id: &grant.id,
            client_id: &grant.client_id,
            subject_user_id: &grant.subject_user_id,
            scopes: &scopes,
            max_depth: grant.max_depth,
            allowed_resources: &resources,
            organization_id: grant.organization_id.as_deref(),
            expires_at: grant.expires_at,
        };
        let verdict =
            state.authz.decide_delegation(&grant_facts, &facts).map_err(|e| OAuthError::from(anyhow::Error::new(e)))?;
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
            None => OAuthError::invalid_request(
                "DelegationNotPermitted",
                "no live delegation grant lets this client act for this person",
            ),
            Some((_, refusal, grant)) => {
                attempt.grant_id = Some(grant.id.clone());
                refusal_answer(refusal, &facts, grant)
            }
        });
    };
    attempt.grant_id = Some(grant.id.clone());
    let server = requested_resource(state, client, form.get("resource")).await?;
    let resource = server.as_ref().map(|s| s.address.clone());

    let act = delegation::next_act(&client.id, &active.claims);
    let subject = Subject::Delegated {
        user: &user,
        session_id: &session_id,
        act: &act,
        delegation_id: &grant.id,
        expires_at: grant.expires_at,
    };
    let issued =
        tokens::access_token(state, &Grant { client, subject, scopes: &attempt.scopes, resource: resource.as_deref() })
            .await?;
    let stands = record(state, realm, client, origin, attempt, Ok((&issued.jti, issued.expires_at * 1000))).await?;
    if !stands {
        return Err(OAuthError::invalid_request("DelegationNotPermitted", "the delegation grant has been withdrawn"));
    }
    let mut answer = json!({
        "access_token": issued.token,
        "issued_token_type": ACCESS_TOKEN_TYPE,
        "token_type": "Bearer",
        "expires_in": issued.lifetime_seconds,
    });
    if !attempt.scopes.is_empty()
        && let Some(object) = answer.as_object_mut()
    {
        object.insert("scope".into(), json!(attempt.scopes.join(" ")));
    }
    Ok(json_no_store(answer))
}

/// The answer to a refusal, naming what exceeds.
fn refusal_answer(refusal: Refusal, facts: &ExchangeFacts<'_>, grant: &DelegationGrant) -> OAuthError {
    let beyond = |ceiling: &[String]| -> Vec<&str> {
        facts.scopes.iter().filter(|s| !ceiling.contains(s)).map(String::as_str).collect()
    };
    match refusal {
        Refusal::ScopesExceedGrant => {
            let granted = from_json_list(&grant.scopes);
            let (whose, excess) = [
                ("the subject token", beyond(facts.subject_scopes)),
                ("the delegation grant", beyond(&granted)),
                ("the scopes this client may request", beyond(facts.client_scopes)),
            ]
            .into_iter()
            .find(|(_, excess)| !excess.is_empty())
            .unwrap_or(("the delegation grant", Vec::new()));
            OAuthError::new(
                StatusCode::BAD_REQUEST,
                "invalid_scope",
                refusal.code(),
                format!("beyond {whose}: {}", excess.join(" ")),
            )
        }
        Refusal::ResourceExceedsGrant => OAuthError::new(
            StatusCode::BAD_REQUEST,
            "invalid_target",
            refusal.code(),
            match facts.resource {
                Some(resource) => format!("{resource} is not among the resources the delegation grant lists"),
                None => "the delegation grant confines tokens to the resources it lists: send resource".to_owned(),
            },
        ),
        Refusal::DepthExceeded => OAuthError::invalid_request(
            refusal.code(),
            format!(
                "the subject token already carries {} actor(s); the delegation grant allows {}",
                facts.depth, grant.max_depth
            ),
        ),
        Refusal::NotPermitted => {
            let why = if grant.organization_id.is_some() && grant.expires_at.is_none_or(|until| until > facts.now) {
                "the person is no longer a member of the organization the delegation grant is confined to"
            } else {
                "no live delegation grant lets this client act for this person"
            };
            OAuthError::invalid_request(refusal.code(), why)
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
/// and expiry (epoch ms) for a granted exchange, the refusal otherwise. `false` when the grant was
/// withdrawn before the exchange could commit.
async fn record(
    state: &AppState,
    realm: &Realm,
    client: &Client,
    origin: &Origin,
    attempt: &Attempt,
    outcome: Result<(&str, i64), &OAuthError>,
) -> Result<bool, OAuthError> {
    let now = to_millis(state.clock.now());
    let reason = outcome.err().map(|refused| failure_reason(refused.code));
    let methods: Vec<&str> = attempt.methods.iter().map(String::as_str).collect();
    let data = login_data(
        Login {
            grant_type: GRANT_TYPE,
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
        Ok((jti, _)) => ("login_succeeded", ExchangeOutcome::Granted, None, Some(jti.to_owned())),
        Err(refused) => ("login_failed", ExchangeOutcome::Refused, Some(refused.code.to_owned()), None),
    };
    let record = ExchangeRecord {
        issued: outcome.ok().and_then(|(_, expires_at)| attempt.grant_id.clone().map(|grant| (grant, expires_at))),
        trail: Exchange {
            id: new_guid(),
            realm_id: realm.id.clone(),
            client_id: client.id.clone(),
            subject_user_id: attempt.user.as_ref().map(|u| u.id.clone()),
            grant_id: attempt.grant_id.clone(),
            outcome: outcome_name,
            error_code,
            scopes: to_json_list(&attempt.scopes),
            resource: attempt.resource.clone(),
            depth: attempt.depth,
            token_id,
            ip_address: origin.ip_address.clone(),
            occurred_at: now,
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
    Ok(state.writes.record_exchange(record).await?)
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
