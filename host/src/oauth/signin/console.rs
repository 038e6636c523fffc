//! Sign-in to the console and the admin API at the platform realm: a person of an account's team
//! with a password, or a program with one of the account's client secrets. Both end in a bearer
//! token for the admin API, and each attempt that names someone of an account is written to that
//! account's access log.

use chrono::{DateTime, Utc};

use super::{PasswordAttempt, PasswordOutcome, Refusal, SignInError, Tokens};
use crate::kernel::ids::{PLATFORM_REALM, new_guid};
use crate::oauth::tokens::{self, Grant, Subject};
use crate::protection::Protection;
use crate::runtime::context::Context;
use crate::store::access_log::AccessLog;
use crate::store::access_log::{AccessEntry, AccessOutcome};
use crate::store::clients::{self, Client, ClientType, GrantType};
use crate::store::secrets::{self, SecretType};
use crate::store::{accounts, users};

/// The access log's path for console sign-ins at the token endpoint.
pub fn token_path() -> String {
    format!("/realms/{PLATFORM_REALM}/protocol/openid-connect/token")
}

/// How the edge answered a console sign-in, as the access log keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    pub status: u16,
    /// The protocol error code.
    pub code: &'static str,
}

/// The platform client, through which every console sign-in passes: a public client there.
pub async fn platform_client(context: &Context) -> Result<Client, SignInError> {
    clients::find(context.store.pool(), PLATFORM_REALM, PLATFORM_REALM)
        .await?
        .ok_or(SignInError::Refused(Refusal::ClientUnknown))
}

/// Where the platform realm's login page sends a person back to the console, with the code: the
/// console's own address, derived from the service's public URL so that it follows it.
pub fn redirect_uri(context: &Context) -> String {
    format!("{}/console/callback", context.public_url)
}

/// The platform client as a browser's sign-in sees it: for people it is a public client of the
/// authorization code flow (PKCE required), whose redirect URIs are its registered ones and the
/// console's own. Programs keep authenticating with account client secrets.
pub fn for_browsers(context: &Context, platform: &Client) -> Client {
    let mut client = platform.clone();
    client.client_type = ClientType::Public;
    client.grant_types = vec![GrantType::AuthorizationCode];
    let console = redirect_uri(context);
    if !client.redirect_uris.contains(&console) {
        client.redirect_uris.push(console);
    }
    client
}

/// A person of a team signs in with a password, through the platform client: the realm lockout and
/// events apply as to any password sign-in, and the console gets no refresh token. `path` is where
/// they typed it (the token endpoint, or the login page's form), and `answered` tells what that
/// edge answers a refusal, both for the access log of the person's account.
pub async fn password(
    context: &Context,
    protection: &Protection,
    access_log: &AccessLog,
    attempt: PasswordAttempt<'_>,
    path: &str,
    answered: impl Fn(&SignInError) -> Answered,
) -> Result<PasswordOutcome, SignInError> {
    let now = context.clock.now();
    let (login, address) = (attempt.username.to_owned(), attempt.origin.ip_address.clone());
    let outcome = super::password(context, protection, attempt).await;
    let answer = match &outcome {
        Ok(_) => Ok(()),
        Err(refused) => Err(answered(refused)),
    };
    let attempt = Attempted { login: &login, address: &address, path, at: now };
    record_person(context, access_log, attempt, answer).await?;
    outcome
}

/// A console sign-in attempt, as the access log keeps it.
#[derive(Debug, Clone, Copy)]
pub struct Attempted<'a> {
    /// What the person typed to name themselves.
    pub login: &'a str,
    pub address: &'a str,
    /// Where they typed it.
    pub path: &'a str,
    pub at: DateTime<Utc>,
}

/// Writes a console sign-in of the person who signs in as `login` to their account's access log,
/// when `login` names a person of a team: accepted, or refused with the edge's answer.
pub async fn record_person(
    context: &Context,
    access_log: &AccessLog,
    attempt: Attempted<'_>,
    answer: Result<(), Answered>,
) -> Result<(), SignInError> {
    let Attempted { login, address, path, at } = attempt;
    let pool = context.store.pool();
    let Some(person) = users::find_by_login(pool, PLATFORM_REALM, login).await? else { return Ok(()) };
    let Some(member) = accounts::membership(pool, &person.id).await? else { return Ok(()) };
    let (status, outcome, reason) = match answer {
        Ok(()) => (200, AccessOutcome::Accepted, "console sign-in".to_owned()),
        Err(answer) => (answer.status, AccessOutcome::Refused, answer.code.to_owned()),
    };
    let entry = AccessEntry {
        id: new_guid(),
        occurred_at: at,
        account_id: Some(member.account_id),
        credential_id: None,
        credential_name: None,
        actor_user_id: Some(member.user_id.clone()),
        ip_address: address.to_owned(),
        method: "POST".into(),
        path: path.to_owned(),
        status: i64::from(status),
        outcome,
        reason: Some(reason),
    };
    access_log.record(entry).await;
    Ok(())
}

/// A program exchanges one of its account's client secrets (`client_id` is the platform's) with
/// `client_credentials` for a bearer token that acts with the secret's roles and scopes and never
/// outlives it. The issuance is written to the account's access log.
pub async fn client_secret(
    context: &Context,
    access_log: &AccessLog,
    client_id: &str,
    value: &str,
    grant: GrantType,
    address: &str,
) -> Result<Tokens, SignInError> {
    let now = context.clock.now();
    let value_hash = context.hasher.hash(value);
    let credential = match client_id == PLATFORM_REALM {
        true => secrets::find_by_hash(context.store.pool(), &value_hash).await?,
        false => None,
    };
    let Some(credential) = credential.filter(|c| {
        c.secret.secret_type == SecretType::ClientSecret
            && c.secret.accepts(&value_hash, now)
            && c.secret.expires_at.is_none_or(|until| until > now)
    }) else {
        return Err(Refusal::ClientUnknown.into());
    };
    if grant != GrantType::ClientCredentials {
        return Err(Refusal::SecretOnlyForClientCredentials.into());
    }
    let platform = platform_client(context).await?;
    let secret = &credential.secret;
    let scopes = secret.scopes.clone().unwrap_or_default();
    let subject =
        Subject::AccountSecret { secret_id: &secret.id, account_id: &secret.account_id, expires_at: secret.expires_at };
    let grant = Grant { client: &platform, subject, scopes: &scopes, resource: None, dpop_jkt: None };
    let issued = tokens::access_token(context, &grant).await?;
    access_log
        .record(AccessEntry {
            id: new_guid(),
            occurred_at: now,
            account_id: Some(secret.account_id.clone()),
            credential_id: Some(secret.id.clone()),
            credential_name: Some(secret.name.clone()),
            actor_user_id: secret.acts_for_user_id.clone(),
            ip_address: address.to_owned(),
            method: "POST".into(),
            path: token_path(),
            status: 200,
            outcome: AccessOutcome::Accepted,
            reason: Some("bearer token issued".into()),
        })
        .await;
    Ok(Tokens { access: issued, scopes, refresh: None, id_token: None })
}
