//! Who a credential is: an API key, a personal access token, a consumer key, a bearer token from
//! an account client secret or a console session, each checked (expiry, rotation, status) and
//! turned into the principal the policies decide for, with the grants its roles give.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::http::HeaderMap;
use chrono::{DateTime, Utc};

use super::{API_KEY_HEADER, ConsolePerson, Refusal, Rejection};
use crate::authz::{BUILTIN_ROLES, Principal, PrincipalKind};
use crate::directory::consumers::CONSUMER_KEY_PREFIX;
use crate::http::AppState;
use crate::kernel::ids::{PLATFORM_REALM, UserId};
use crate::oauth::tokens;
use crate::runtime::cache::KnownCredential;
use crate::runtime::error::Error;
use crate::store::accounts;
use crate::store::roles;
use crate::store::secrets::{self, SecretType};
use crate::store::trail::{self, ActorType};
use crate::store::users::{User, UserStatus};

/// Who a credential turned out to be.
pub(super) struct Identified {
    pub(super) principal: Principal,
    pub(super) person: Option<Principal>,
    pub(super) actor: trail::Actor,
}

/// Finds and checks the credential.
pub(super) async fn identify(
    state: &AppState,
    headers: &HeaderMap,
    now: DateTime<Utc>,
) -> Result<Identified, Box<Rejection>> {
    let refuse = |reason, credential: Option<&secrets::Credential>| {
        Err(Box::new(Rejection::Refused(Refusal { reason, credential: credential.cloned().map(Box::new) })))
    };
    let known = if let Some(key) = headers.get(API_KEY_HEADER).and_then(|v| v.to_str().ok()).filter(|k| !k.is_empty()) {
        if key.starts_with(CONSUMER_KEY_PREFIX) {
            return refuse("a consumer API key: validated at its realm's introspection endpoint only", None);
        }
        let hash = state.hasher.hash(key);
        let known = match state.caches.credential(&hash) {
            Some(known) => known,
            None => {
                let credential = match secrets::find_by_hash(state.store.pool(), &hash).await {
                    Ok(Some(found)) => found,
                    Ok(None) => return refuse("unknown credential", None),
                    Err(error) => return Err(Box::new(Rejection::Failed(error.into()))),
                };
                let grants = custom_grants(state, &credential).await.map_err(|e| Box::new(Rejection::Failed(e)))?;
                let known = KnownCredential { credential: Arc::new(credential), grants: Arc::new(grants) };
                state.caches.keep_credential(hash.clone(), known.clone());
                known
            }
        };
        // The previous value of a rotated key stops here once its overlap has passed, cached or not.
        if !known.credential.secret.accepts(&hash, now) {
            return refuse("previous value of a rotated credential", Some(&known.credential));
        }
        if !matches!(known.credential.secret.secret_type, SecretType::ApiKey | SecretType::PersonalAccessToken) {
            return refuse("not an API key", Some(&known.credential));
        }
        known
    } else if let Some(token) = bearer_token(headers) {
        let active = tokens::active_access_token(state, PLATFORM_REALM, token)
            .await
            .map_err(|e| Box::new(Rejection::Failed(e)))?
            .filter(|t| t.client_id == PLATFORM_REALM);
        let Some(active) = active else { return refuse("bearer token not active at the platform realm", None) };
        if let Some((_, person)) = &active.person {
            return person_caller(state, person).await;
        }
        let credential = match secrets::find_credential(state.store.pool(), &active.subject).await {
            Ok(Some(found)) => found,
            Ok(None) => return refuse("the bearer token's secret no longer exists", None),
            Err(error) => return Err(Box::new(Rejection::Failed(error.into()))),
        };
        if credential.secret.secret_type != SecretType::ClientSecret {
            return refuse("bearer token not issued for an account client secret", Some(&credential));
        }
        if credential.secret.revoked_token(active.issued_at) {
            return refuse("bearer token revoked by a compromise rotation", Some(&credential));
        }
        let grants = custom_grants(state, &credential).await.map_err(|e| Box::new(Rejection::Failed(e)))?;
        KnownCredential { credential: Arc::new(credential), grants: Arc::new(grants) }
    } else {
        return refuse("no credential", None);
    };
    let credential = known.credential.as_ref();
    if credential.secret.expires_at.is_some_and(|at| at <= now) {
        return refuse("expired credential", Some(credential));
    }

    let secret = &credential.secret;
    let mut person = None;
    if secret.secret_type == SecretType::PersonalAccessToken {
        // A personal access token acts for its person, and never beyond what the person holds now.
        let member = match &secret.acts_for_user_id {
            Some(person) => accounts::membership(state.store.pool(), person)
                .await
                .map_err(|e| Box::new(Rejection::Failed(e.into())))?
                .filter(|m| m.account_id == secret.account_id),
            None => None,
        };
        let Some(member) = member else {
            return refuse("the person of a personal access token is no longer on the team", Some(credential));
        };
        let held = member.roles.clone();
        let grants = grants_of(state, &secret.account_id, &held).await.map_err(|e| Box::new(Rejection::Failed(e)))?;
        person = Some(Principal {
            id: member.user_id.to_string(),
            account_id: member.account_id,
            // Still a machine credential: the person's roles bound it, they do not make it a person.
            kind: PrincipalKind::Credential,
            roles: builtin(held),
            grants,
            scopes: None,
        });
    }
    let principal = Principal {
        id: secret.id.clone().into(),
        account_id: secret.account_id.clone(),
        kind: PrincipalKind::Credential,
        roles: builtin(secret.roles.clone()),
        grants: known.grants.as_ref().clone(),
        scopes: secret.scopes.as_ref().map(|s| s.iter().cloned().collect()),
    };
    let actor = trail::Actor {
        account_id: secret.account_id.clone(),
        actor_type: ActorType::Credential,
        user_id: secret.acts_for_user_id.clone().map(UserId::known),
        username: credential.acts_for_username.clone(),
        email: credential.acts_for_email.clone(),
        credential_id: Some(secret.id.clone()),
        credential_name: Some(secret.name.clone()),
        ip_address: String::new(),
    };
    Ok(Identified { principal, person, actor })
}

/// The person of a console session, while their platform session lives.
pub(super) async fn identify_console(
    state: &AppState,
    signed_in: &ConsolePerson,
    now: DateTime<Utc>,
) -> Result<Identified, Box<Rejection>> {
    let found = state.session_reads.find_with_person(&signed_in.session_id).await;
    let found = found.map_err(|e| Box::new(Rejection::Failed(e.into())))?;
    let live = found.filter(|(session, person)| {
        session.realm_id == PLATFORM_REALM
            && session.is_live(now)
            && person.id == signed_in.user_id
            && person.status == UserStatus::Active
    });
    match live {
        Some((_, person)) => person_caller(state, &person).await,
        None => {
            let reason = "the console session's platform session has ended";
            Err(Box::new(Rejection::Refused(Refusal { reason, credential: None })))
        }
    }
}

/// The built-in roles among `held` (custom ones reach the policies as grants).
fn builtin(held: Vec<String>) -> Vec<String> {
    held.into_iter().filter(|role| BUILTIN_ROLES.contains(&role.as_str())).collect()
}

/// The token of an `Authorization: Bearer` header.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(axum::http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// The permissions granted by the custom roles a credential holds.
async fn custom_grants(state: &AppState, credential: &secrets::Credential) -> Result<BTreeSet<String>, Error> {
    grants_of(state, &credential.secret.account_id, &credential.secret.roles).await
}

/// The permissions granted by the custom roles among `held`.
async fn grants_of(state: &AppState, account_id: &str, held: &[String]) -> Result<BTreeSet<String>, Error> {
    let mut grants = BTreeSet::new();
    if held.iter().any(|role| !BUILTIN_ROLES.contains(&role.as_str())) {
        for role in roles::all_of_account(state.store.pool(), account_id).await? {
            if held.contains(&role.name) {
                grants.extend(role.permissions.clone());
            }
        }
    }
    Ok(grants)
}

/// A person signed in to the console (a platform-realm token of a live session): they act with
/// the account roles they hold on the team now.
async fn person_caller(state: &AppState, person: &User) -> Result<Identified, Box<Rejection>> {
    let failed = |e: Error| Box::new(Rejection::Failed(e));
    let member = accounts::membership(state.store.pool(), &person.id).await.map_err(|e| failed(e.into()))?;
    let Some(member) = member else {
        return Err(Box::new(Rejection::Refused(Refusal { reason: "the person is on no team", credential: None })));
    };
    let held = member.roles.clone();
    let grants = grants_of(state, &member.account_id, &held).await.map_err(failed)?;
    let principal = Principal {
        id: person.id.to_string(),
        account_id: member.account_id.clone(),
        kind: PrincipalKind::Person,
        roles: builtin(held),
        grants,
        scopes: None,
    };
    let actor = trail::Actor {
        account_id: member.account_id,
        actor_type: ActorType::User,
        user_id: Some(person.id.clone()),
        username: Some(person.username.clone()),
        email: person.email.clone(),
        credential_id: None,
        credential_name: None,
        ip_address: String::new(),
    };
    Ok(Identified { principal, person: None, actor })
}
