//! The token endpoint (RFC 6749 §3.2): `client_credentials`, `password`, `refresh_token`, the push
//! grant and token exchange (RFC 8693, in `exchange`). The handler reads the form, authenticates the
//! client, checks that the grant is enabled on it, calls the sign-in operation (`crate::signin`)
//! and answers its tokens or its refusal.

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::{Form, OAuthError, authenticate_client, exchange, json_no_store, realm};
use crate::AppState;
use crate::clock::to_millis;
use crate::error::OAuthCode;
use crate::http::address::ClientAddress;
use crate::ids::{PLATFORM_REALM, new_guid};
use crate::signin::{self, Origin, PasswordAttempt, PasswordOutcome, RefreshAttempt, Tokens};
use crate::store::clients::{Client, GrantType};
use crate::store::realms::Realm;
use crate::store::users as user_store;
use crate::tokens::{self, Grant, Subject};

pub async fn endpoint(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Form,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let grant_type = form.require("grant_type")?;
    let Some(grant) = GrantType::named(grant_type).filter(|grant| *grant != GrantType::AuthorizationCode) else {
        return Err(OAuthError::new(
            OAuthCode::UnsupportedGrantType,
            format!("grant_type {grant_type} is not supported"),
        ));
    };
    let origin = Origin {
        ip_address: address.to_string(),
        user_agent: headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).map(str::to_owned),
    };
    if realm.id == PLATFORM_REALM {
        if grant == GrantType::Password && super::presented_credentials(&headers, &form)?.is_none() {
            return console_sign_in(&state, &realm, &form, &origin).await;
        }
        return platform_token(&state, &headers, &form, grant, address).await;
    }
    let client = authenticate_client(&state, &realm, &headers, &form).await?;
    if grant == GrantType::TokenExchange {
        // Token Exchange has its own switch, and every attempt is in the exchange trail.
        return exchange::exchange(&state, &realm, &client, &form, &origin).await;
    }
    // The push grant ends a password sign-in a phone confirmed: it needs the password grant.
    let needed = if grant == GrantType::Push { GrantType::Password } else { grant };
    if !client.allows(needed) {
        return Err(OAuthError::new(
            OAuthCode::GrantTypeDisabled,
            format!("the {grant_type} grant is not enabled on this client"),
        ));
    }
    let tokens = match grant {
        GrantType::ClientCredentials => {
            let (scopes, resource) = (form.scopes()?, form.get("resource"));
            signin::client_credentials(&state, &realm, &client, scopes, resource, &origin).await?
        }
        GrantType::Password => return password(&state, &realm, &client, &form, &origin).await,
        GrantType::Push => signin::push::collect(&state, &realm, &client, form.require("push_request_id")?).await?,
        _ => {
            let presented = form.require("refresh_token")?;
            let attempt =
                RefreshAttempt { realm: &realm, client: &client, presented, scopes: form.scopes()?, origin: &origin };
            signin::refresh(&state, attempt).await?
        }
    };
    Ok(json_no_store(token_answer(&tokens)))
}

/// A password sign-in: its tokens, or the id of the request a phone must confirm first.
async fn password(
    state: &AppState,
    realm: &Realm,
    client: &Client,
    form: &Form,
    origin: &Origin,
) -> Result<Response, OAuthError> {
    let attempt = PasswordAttempt {
        realm,
        client,
        username: form.require("username")?,
        password: form.require("password")?,
        scopes: form.scopes()?,
        resource: form.get("resource"),
        confirm_on_phone: form.get("confirmation") == Some("push"),
        origin,
    };
    match signin::password(state, attempt).await? {
        PasswordOutcome::SignedIn(tokens) => Ok(json_no_store(token_answer(&tokens))),
        PasswordOutcome::ConfirmationAsked(asked) => Ok(json_no_store(json!({
            "push_request_id": asked.request_id,
            "expires_in": asked.expires_in,
            "interval": asked.interval,
        }))),
    }
}

/// The RFC 6749 §5.1 answer.
fn token_answer(tokens: &Tokens) -> Value {
    let Tokens { access, scopes, refresh, id_token } = tokens;
    let mut answer = json!({
        "access_token": access.token,
        "token_type": "Bearer",
        "expires_in": access.lifetime_seconds,
    });
    if let Some(object) = answer.as_object_mut() {
        if !scopes.is_empty() {
            object.insert("scope".into(), json!(scopes.join(" ")));
        }
        if let Some((token, expires_in)) = refresh {
            object.insert("refresh_token".into(), json!(token));
            object.insert("refresh_expires_in".into(), json!(expires_in));
        }
        if let Some(id_token) = id_token {
            object.insert("id_token".into(), json!(id_token));
        }
    }
    answer
}

/// A person of the account's team signs in to the console: the password grant at the platform
/// realm, by the platform client as a public client (`client_id=platform`, no secret). The token
/// is a bearer token for the admin API acting with the person's account roles; the realm's lockout
/// and events apply as to any password sign-in. The console gets no refresh token. Each attempt on
/// a person of a team is in their account's access log.
async fn console_sign_in(
    state: &AppState,
    realm: &Realm,
    form: &Form,
    origin: &Origin,
) -> Result<Response, OAuthError> {
    use crate::store::access_log::{AccessEntry, AccessOutcome};

    if form.get("client_id") != Some(PLATFORM_REALM) {
        return Err(OAuthError::invalid_client(false));
    }
    let Some(platform) = crate::store::clients::find(state.store.pool(), PLATFORM_REALM, PLATFORM_REALM).await? else {
        return Err(OAuthError::invalid_client(false));
    };
    let now = to_millis(state.clock.now());
    let answer = password(state, realm, &platform, form, origin).await;
    let pool = state.store.pool();
    let person = match form.get("username") {
        Some(login) => user_store::find_by_login(pool, PLATFORM_REALM, login).await?,
        None => None,
    };
    let member = match &person {
        Some(person) => crate::store::accounts::membership(pool, &person.id).await?,
        None => None,
    };
    if let Some(member) = member {
        let (status, outcome, reason) = match &answer {
            Ok(_) => (200, AccessOutcome::Accepted, "console sign-in".to_owned()),
            Err(refused) => {
                (i64::from(refused.status().as_u16()), AccessOutcome::Refused, refused.code.as_str().to_owned())
            }
        };
        let entry = AccessEntry {
            id: new_guid(),
            occurred_at: now,
            account_id: Some(member.account_id),
            credential_id: None,
            credential_name: None,
            actor_user_id: Some(member.user_id),
            ip_address: origin.ip_address.clone(),
            method: "POST".into(),
            path: format!("/realms/{PLATFORM_REALM}/protocol/openid-connect/token"),
            status,
            outcome,
            reason: Some(reason),
        };
        state.access_log.record(entry).await;
    }
    answer
}

/// `client_credentials` at the platform realm with the platform client id and an account client
/// secret: a bearer token for the admin API that acts with the secret's roles and scopes and never
/// outlives it. The issuance is written to the account's access log.
async fn platform_token(
    state: &AppState,
    headers: &HeaderMap,
    form: &Form,
    grant: GrantType,
    address: std::net::IpAddr,
) -> Result<Response, OAuthError> {
    use crate::store::access_log::{AccessEntry, AccessOutcome};
    use crate::store::secrets::{self, SecretType};

    let Some((client_id, value, basic)) = super::presented_credentials(headers, form)? else {
        return Err(OAuthError::invalid_client(false));
    };
    let now = to_millis(state.clock.now());
    let value_hash = state.hasher.hash(&value);
    let credential = match client_id == PLATFORM_REALM {
        true => secrets::find_by_hash(state.store.pool(), &value_hash).await?,
        false => None,
    };
    let Some(credential) = credential.filter(|c| {
        c.secret.secret_type == SecretType::ClientSecret
            && c.secret.accepts(&value_hash, now)
            && c.secret.expires_at.is_none_or(|until| until > now)
    }) else {
        return Err(OAuthError::invalid_client(basic));
    };
    if grant != GrantType::ClientCredentials {
        return Err(OAuthError::new(
            OAuthCode::GrantTypeDisabled,
            "an account client secret is exchanged only with client_credentials",
        ));
    }
    let Some(platform) = crate::store::clients::find(state.store.pool(), PLATFORM_REALM, PLATFORM_REALM).await? else {
        return Err(OAuthError::invalid_client(basic));
    };
    let secret = &credential.secret;
    let scopes = secret.scopes.clone().unwrap_or_default();
    let subject =
        Subject::AccountSecret { secret_id: &secret.id, account_id: &secret.account_id, expires_at: secret.expires_at };
    let grant = Grant { client: &platform, subject, scopes: &scopes, resource: None };
    let issued = tokens::access_token(state, &grant).await?;
    state
        .access_log
        .record(AccessEntry {
            id: new_guid(),
            occurred_at: now,
            account_id: Some(secret.account_id.clone()),
            credential_id: Some(secret.id.clone()),
            credential_name: Some(secret.name.clone()),
            actor_user_id: secret.acts_for_user_id.clone(),
            ip_address: address.to_string(),
            method: "POST".into(),
            path: format!("/realms/{PLATFORM_REALM}/protocol/openid-connect/token"),
            status: 200,
            outcome: AccessOutcome::Accepted,
            reason: Some("bearer token issued".into()),
        })
        .await;
    Ok(json_no_store(token_answer(&Tokens { access: issued, scopes, refresh: None, id_token: None })))
}
