//! The token endpoint (RFC 6749 §3.2): `client_credentials`, `password` and `refresh_token`
//! with rotation and reuse detection; token exchange (RFC 8693) lives in `exchange`. Every
//! sign-in outcome writes its `login_succeeded` or `login_failed` event in the transaction that
//! records it.

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::{Form, OAuthError, authenticate_client, exchange, json_no_store, realm};
use crate::AppState;
use crate::clock::to_millis;
use crate::error::Error;
use crate::http::address::ClientAddress;
use crate::ids::{PLATFORM_REALM, new_guid};
use crate::mail::Letter;
use crate::plugins::detector::{AttemptKind, Outcome};
use crate::protection::incidents::{self, Attack, Recorded};
use crate::protection::{Hold, Seen};
use crate::store::clients::Client;
use crate::store::events::{self, Event};
use crate::store::lockout::{self, Failures};
use crate::store::realms::Realm;
use crate::store::resource_servers::{self, ResourceServer};
use crate::store::sessions::{self, RefreshToken, Session};
use crate::store::threats;
use crate::store::users::{self as user_store, User, UserStatus};
use crate::store::write_queue::{QueuedEvent, Rotation};
use crate::store::{from_json_list, to_json_list};
use crate::tokens::{self, Grant, Subject};

/// Scopes of OpenID Connect every client may ask for in a person's sign-in.
const OIDC_SCOPES: &[&str] = &["openid", "profile", "email"];
/// A session's last activity is written at most this often (refreshes in between leave it).
const SESSION_ACTIVITY_GRANULARITY_MS: i64 = 60_000;

/// Where a sign-in came from.
#[derive(Debug, Clone)]
pub struct Origin {
    pub ip_address: String,
    pub user_agent: Option<String>,
}

pub async fn exchange(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(ClientAddress(address)): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Form,
) -> Result<Response, OAuthError> {
    let realm = realm(&state, &realm_id).await?;
    let grant_type = form.require("grant_type")?;
    if !matches!(
        grant_type,
        "client_credentials" | "password" | "refresh_token" | exchange::GRANT_TYPE | super::push::GRANT_TYPE
    ) {
        return Err(OAuthError::new(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "UnsupportedGrantType",
            format!("grant_type {grant_type} is not supported"),
        ));
    }
    let origin = Origin {
        ip_address: address.to_string(),
        user_agent: headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).map(str::to_owned),
    };
    if realm.id == PLATFORM_REALM {
        if grant_type == "password" && super::presented_credentials(&headers, &form)?.is_none() {
            return console_sign_in(&state, &realm, &form, &origin).await;
        }
        return platform_token(&state, &headers, &form, grant_type, address).await;
    }
    let client = authenticate_client(&state, &realm, &headers, &form).await?;
    if grant_type == exchange::GRANT_TYPE {
        // Token Exchange has its own switch, and every attempt is in the exchange trail.
        return exchange::exchange(&state, &realm, &client, &form, &origin).await;
    }
    // The push grant ends a password sign-in a phone confirmed: it needs the password grant.
    let needed = if grant_type == super::push::GRANT_TYPE { "password" } else { grant_type };
    if !from_json_list(&client.grant_types).iter().any(|g| g == needed) {
        return Err(OAuthError::new(
            StatusCode::BAD_REQUEST,
            "unauthorized_client",
            "GrantTypeDisabled",
            format!("the {grant_type} grant is not enabled on this client"),
        ));
    }
    match grant_type {
        "client_credentials" => client_credentials(&state, &realm, &client, &form, &origin).await,
        "password" => password(&state, &realm, &client, &form, &origin).await,
        super::push::GRANT_TYPE => super::push::exchange(&state, &realm, &client, &form).await,
        _ => refresh(&state, &realm, &client, &form, &origin).await,
    }
}

/// The requested scopes, each one the client may request and, for a token addressed to a resource
/// server, one the server accepts; without `scope`, every such scope. An excess is refused with
/// the excess named, never trimmed.
fn requested_scopes(
    client: &Client,
    form: &Form,
    person: bool,
    server: Option<&ResourceServer>,
) -> Result<Vec<String>, OAuthError> {
    let mut allowed = from_json_list(&client.allowed_scopes);
    if let Some(server) = server {
        let accepted = from_json_list(&server.scopes);
        allowed.retain(|scope| accepted.contains(scope));
    }
    let Some(scopes) = form.scopes()? else { return Ok(allowed) };
    let excess: Vec<&str> = scopes
        .iter()
        .map(String::as_str)
        .filter(|s| !(allowed.iter().any(|a| a == s) || (person && OIDC_SCOPES.contains(s))))
        .collect();
    if !excess.is_empty() {
        let whose = if server.is_some() {
            "this client may not request for this resource"
        } else {
            "this client may not request"
        };
        return Err(OAuthError::new(
            StatusCode::BAD_REQUEST,
            "invalid_scope",
            "ScopeNotAllowed",
            format!("{whose}: {}", excess.join(" ")),
        ));
    }
    Ok(scopes)
}

/// RFC 8707 `resource`: an active resource server of the realm that lists the client among those
/// that may request tokens for it.
pub(super) async fn requested_resource(
    state: &AppState,
    client: &Client,
    form: &Form,
) -> Result<Option<ResourceServer>, OAuthError> {
    let Some(address) = form.get("resource") else { return Ok(None) };
    let server = resource_servers::find_by_address(state.store.pool(), &client.realm_id, address).await?;
    let allowed = server.filter(|s| {
        s.status == crate::store::Status::Active && from_json_list(&s.allowed_clients).contains(&client.id)
    });
    match allowed {
        Some(server) => Ok(Some(server)),
        None => Err(OAuthError::new(
            StatusCode::BAD_REQUEST,
            "invalid_target",
            "ResourceNotAllowed",
            format!("{address} is not a resource server this client may request tokens for"),
        )),
    }
}

/// What a sign-in event tells about one attempt.
#[derive(Debug, Clone, Copy)]
pub(super) struct Login<'a> {
    pub grant_type: &'a str,
    pub resource: Option<&'a str>,
    pub user: Option<&'a User>,
    pub session_id: Option<&'a str>,
    pub failure_reason: Option<&'a str>,
    pub scopes: &'a [String],
    pub methods: &'a [&'a str],
}

/// The `data` of `login_succeeded` and `login_failed` (SPEC "Fields of data").
pub(super) fn login_data(login: Login<'_>, origin: &Origin) -> Value {
    let Login { grant_type, resource, user, session_id, failure_reason, scopes, methods } = login;
    json!({
        "grant_type": grant_type,
        "user_id": user.map(|u| u.id.clone()),
        "username": user.map(|u| u.username.clone()),
        "email": user.and_then(|u| u.email.clone()),
        "ip_address": origin.ip_address,
        "user_agent": origin.user_agent,
        "session_id": session_id,
        "failure_reason": failure_reason,
        "resource": resource,
        "scopes": scopes,
        "authentication_methods": methods,
        "acr": if methods.is_empty() { Value::Null } else { json!("1") },
        "identity_provider": null,
        "consumer_id": null,
        "consumer_name": null,
    })
}

async fn publish(
    tx: &mut crate::store::Connection,
    realm: &Realm,
    client: &Client,
    event_type: &'static str,
    data: Value,
    at: i64,
) -> Result<(), OAuthError> {
    let event = Event {
        event_type,
        account_id: &realm.account_id,
        realm_id: Some(&realm.id),
        client_id: Some(&client.id),
        data,
    };
    events::publish(tx, event, at).await?;
    Ok(())
}

async fn client_credentials(
    state: &AppState,
    realm: &Realm,
    client: &Client,
    form: &Form,
    origin: &Origin,
) -> Result<Response, OAuthError> {
    let server = requested_resource(state, client, form).await?;
    let scopes = requested_scopes(client, form, false, server.as_ref())?;
    let resource = server.as_ref().map(|s| s.address.clone());
    let grant = Grant { client, subject: Subject::Client, scopes: &scopes, resource: resource.as_deref() };
    let issued = tokens::access_token(state, &grant).await?;
    let now = to_millis(state.clock.now());
    let data = login_data(
        Login {
            grant_type: "client_credentials",
            resource: resource.as_deref(),
            user: None,
            session_id: None,
            failure_reason: None,
            scopes: &scopes,
            methods: &["client_secret"],
        },
        origin,
    );
    // Nothing else changes with this sign-in: its event goes through the group commit.
    let event = QueuedEvent {
        event_type: "login_succeeded",
        account_id: realm.account_id.clone(),
        realm_id: Some(realm.id.clone()),
        client_id: Some(client.id.clone()),
        data,
        at: now,
    };
    state.writes.publish(event).await?;
    Ok(json_no_store(token_answer(&issued, &scopes, None, None)))
}

fn token_answer(
    access: &tokens::Issued,
    scopes: &[String],
    refresh: Option<(&str, i64)>,
    id_token: Option<String>,
) -> Value {
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

/// Why a password sign-in was refused, as `failure_reason` names it and the client is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    InvalidCredentials,
    LockedOut,
    UserDisabled,
    PasswordChangeRequired,
}

impl Refusal {
    fn reason(self) -> &'static str {
        match self {
            Self::InvalidCredentials => "invalid_credentials",
            Self::LockedOut => "user_locked_out",
            Self::UserDisabled => "user_disabled",
            Self::PasswordChangeRequired => "password_change_required",
        }
    }

    fn answer(self) -> OAuthError {
        match self {
            Self::InvalidCredentials => OAuthError::invalid_grant("InvalidCredentials", "invalid username or password"),
            Self::LockedOut => OAuthError::invalid_grant(
                "UserTemporarilyLocked",
                "too many failed sign-ins from this address; try again later",
            ),
            Self::UserDisabled => OAuthError::invalid_grant("UserDisabled", "the account is disabled"),
            Self::PasswordChangeRequired => OAuthError::invalid_grant(
                "PasswordChangeRequired",
                "the password must be changed before the next sign-in",
            ),
        }
    }
}

/// The answer to a source attack protection blocked: the rate-limit answer, the same whatever was
/// typed.
pub(super) fn source_blocked() -> OAuthError {
    Error::RateLimited { retry_after_seconds: 60 }.into()
}

/// Sends attack protection's e-mail once the attempt's transaction committed, without holding up
/// the answer.
pub(super) fn send_letters(state: &AppState, letters: Vec<Letter>) {
    if letters.is_empty() {
        return;
    }
    let state = state.clone();
    tokio::spawn(async move {
        for letter in &letters {
            state.mailer.deliver(letter).await;
        }
    });
}

async fn password(
    state: &AppState,
    realm: &Realm,
    client: &Client,
    form: &Form,
    origin: &Origin,
) -> Result<Response, OAuthError> {
    let now = to_millis(state.clock.now());
    let address = origin.ip_address.as_str();
    // A blocked source is refused before anything else, whatever it typed.
    if state.protection.refuses(Hold::SourceBlocked, &realm.id, address, now).await {
        return Err(source_blocked());
    }
    let username = form.require("username")?;
    let password = form.require("password")?;
    let server = requested_resource(state, client, form).await?;
    let scopes = requested_scopes(client, form, true, server.as_ref())?;
    let resource = server.as_ref().map(|s| s.address.clone());
    let pool = state.store.pool();
    let user = user_store::find_by_login(pool, &realm.id, username).await?;

    let approved = match &user {
        Some(user) => lockout::is_approved(pool, &user.id, address).await?,
        None => false,
    };
    let typed = username.to_lowercase();
    // A name the realm does not have is locked out exactly like an account, so that the lockout's
    // answer never tells which accounts exist (SPEC: refusals are identical whatever name was typed).
    let name_hash;
    let target = match &user {
        Some(user) => lockout::Target::Account { user_id: &user.id },
        None => {
            name_hash = state.hasher.hash(&typed);
            lockout::Target::UnknownName { realm_id: &realm.id, name_hash: &name_hash }
        }
    };
    // The realm lockout applies at an address the account never signed in from.
    let guarded = realm.settings.lockout_enabled && !approved;
    let mut failures = if guarded { lockout::failures(pool, target, address).await? } else { None };
    let locked = failures.as_ref().and_then(|f| f.locked_until).is_some_and(|until| until > now);
    // Smart lockout: an account closed to the addresses it was never approved at.
    let closed = match &user {
        Some(user) if !approved => {
            state.protection.refuses(Hold::ClosedToUnknownAddresses, &realm.id, &user.id, now).await
        }
        _ => false,
    };
    let stored = user.as_ref().and_then(|u| u.password_hash.clone());
    let matched = !locked && crate::passwords::verify(password.to_owned(), stored).await? && user.is_some();

    let seen = Seen {
        realm_id: &realm.id,
        kind: AttemptKind::Password,
        outcome: if matched && !closed { Outcome::Succeeded } else { Outcome::Failed },
        source: address,
        account: user.as_ref().map_or(typed.as_str(), |u| u.id.as_str()),
        account_known: user.is_some(),
        approved,
    };
    // Every attempt counts, those the realm lockout refuses included.
    let decision = state.protection.judge(&state.store, &seen, now).await?;
    let mut tx = state.store.begin().await?;
    let recorded = match &decision {
        Some(decision) => {
            let attack = Attack { realm, client, user: user.as_ref(), address };
            incidents::record(state, &mut tx, &attack, decision, now).await?
        }
        None => Recorded::default(),
    };
    let refusal = match &user {
        _ if locked => Some(Refusal::LockedOut),
        // Closed to this address, or the correct password from an attack: refused as if wrong.
        _ if !matched || closed || recorded.password_exposed => Some(Refusal::InvalidCredentials),
        Some(user) if user.status != UserStatus::Active => Some(Refusal::UserDisabled),
        Some(user) if user.must_change_password => {
            // An exposed password is told apart from a wrong one only where the account signed in
            // before: anywhere else it may be the attacker holding it.
            let exposure = threats::exposure_of(pool, &user.id).await?;
            if !approved && exposure.is_some_and(|e| e.resolved_at.is_none()) {
                Some(Refusal::InvalidCredentials)
            } else {
                Some(Refusal::PasswordChangeRequired)
            }
        }
        _ => None,
    };

    if let Some(refusal) = refusal {
        let data = login_data(
            Login {
                grant_type: "password",
                resource: resource.as_deref(),
                user: user.as_ref(),
                session_id: None,
                failure_reason: Some(refusal.reason()),
                scopes: &scopes,
                methods: &["pwd"],
            },
            origin,
        );
        publish(&mut tx, realm, client, "login_failed", data, now).await?;
        if let (true, Refusal::InvalidCredentials) = (guarded, refusal) {
            let mut counted = match failures.take() {
                Some(f) if now - f.first_failed_at < lockout::FAILURE_WINDOW_MS => f,
                _ => Failures { failed_count: 0, first_failed_at: now, locked_until: None },
            };
            counted.failed_count += 1;
            if counted.failed_count >= realm.settings.max_failed_attempts {
                let until = now + realm.settings.lockout_duration_minutes * 60_000;
                if let Some(user) = &user {
                    let data = json!({
                        "user_id": user.id,
                        "username": user.username,
                        "email": user.email,
                        "lockout_end": crate::clock::iso(crate::clock::from_millis(until)),
                        "access_failed_count": counted.failed_count,
                    });
                    publish(&mut tx, realm, client, "user_locked_out", data, now).await?;
                }
                counted = Failures { failed_count: 0, first_failed_at: now, locked_until: Some(until) };
            }
            lockout::save(&mut *tx, target, address, &counted).await?;
        }
        tx.commit().await?;
        send_letters(state, recorded.letters);
        return Err(refusal.answer());
    }
    let Some(user) = user else { return Err(Refusal::InvalidCredentials.answer()) };
    if form.get("confirmation") == Some("push") {
        // The password is right; the person confirms on a phone before any token is issued.
        let (answer, deliveries) =
            super::push::ask(state, &mut tx, realm, client, &user, &scopes, resource.as_deref(), origin, now).await?;
        tx.commit().await?;
        super::push::deliver(state, deliveries);
        send_letters(state, recorded.letters);
        return Ok(answer);
    }
    let signed_in =
        SignIn { realm, client, user: &user, scopes: &scopes, resource: resource.as_deref(), methods: &["pwd"] };
    let answer = open_session(state, tx, &signed_in, origin, now).await;
    send_letters(state, recorded.letters);
    answer
}

/// A person whose sign-in succeeded, and how.
pub(super) struct SignIn<'a> {
    pub realm: &'a Realm,
    pub client: &'a Client,
    pub user: &'a User,
    pub scopes: &'a [String],
    pub resource: Option<&'a str>,
    /// `pwd`, and `push` when a phone confirmed it.
    pub methods: &'a [&'a str],
}

/// Opens the session of a successful sign-in in `tx`: the address is approved for the account,
/// `login_succeeded` is published, and the tokens are answered once it commits.
pub(super) async fn open_session(
    state: &AppState,
    mut tx: crate::store::Transaction,
    signed_in: &SignIn<'_>,
    origin: &Origin,
    now: i64,
) -> Result<Response, OAuthError> {
    let SignIn { realm, client, user, scopes, resource, methods } = *signed_in;
    let methods_list: Vec<String> = methods.iter().map(|m| (*m).to_owned()).collect();
    let session = Session {
        id: new_guid(),
        realm_id: realm.id.clone(),
        client_id: client.id.clone(),
        user_id: user.id.clone(),
        ip_address: origin.ip_address.clone(),
        user_agent: origin.user_agent.clone(),
        authentication_methods: to_json_list(&methods_list),
        created_at: now,
        last_active_at: now,
        expires_at: now + i64::from(state.settings.session_seconds) * 1000,
        ended_at: None,
        end_reason: None,
    };
    sessions::insert(&mut *tx, &session).await?;
    lockout::approve(&mut tx, &user.id, &origin.ip_address, now).await?;
    let refresh = next_refresh(state, client, &session, scopes, resource, now);
    if let Some((row, _, _)) = &refresh {
        sessions::insert_refresh(&mut *tx, row).await?;
    }
    let refresh = refresh.map(|(_, value, expires_in)| (value, expires_in));
    let data = login_data(
        Login {
            grant_type: "password",
            resource,
            user: Some(user),
            session_id: Some(&session.id),
            failure_reason: None,
            scopes,
            methods,
        },
        origin,
    );
    publish(&mut tx, realm, client, "login_succeeded", data, now).await?;
    tx.commit().await?;
    person_tokens(state, client, user, &session, scopes, resource, refresh).await
}

/// A new refresh token in the session when the client uses the refresh grant, never outliving the
/// session: the row to store, the value to hand out, and its lifetime in seconds.
fn next_refresh(
    state: &AppState,
    client: &Client,
    session: &Session,
    scopes: &[String],
    resource: Option<&str>,
    now: i64,
) -> Option<(RefreshToken, String, i64)> {
    if !from_json_list(&client.grant_types).iter().any(|g| g == "refresh_token") {
        return None;
    }
    let id = new_guid();
    let value = tokens::new_refresh_token(&id);
    let expires_at = (now + i64::from(state.settings.refresh_token_seconds) * 1000).min(session.expires_at);
    let token = RefreshToken {
        id,
        session_id: session.id.clone(),
        token_hash: state.hasher.hash(&value),
        scopes: to_json_list(scopes),
        resource: resource.map(str::to_owned),
        created_at: now,
        expires_at,
        exchanged_at: None,
        revoked_at: None,
    };
    Some((token, value, (expires_at - now) / 1000))
}

async fn person_tokens(
    state: &AppState,
    client: &Client,
    user: &User,
    session: &Session,
    scopes: &[String],
    resource: Option<&str>,
    refresh: Option<(String, i64)>,
) -> Result<Response, OAuthError> {
    let auth_time = session.created_at / 1000;
    let subject = Subject::Person { user, session_id: &session.id, auth_time };
    let grant = Grant { client, subject, scopes, resource };
    let access = tokens::access_token(state, &grant).await?;
    let id_token = if scopes.iter().any(|s| s == "openid") {
        Some(tokens::id_token(state, client, user, &session.id, auth_time, scopes).await?)
    } else {
        None
    };
    let refresh = refresh.as_ref().map(|(token, expires_in)| (token.as_str(), *expires_in));
    Ok(json_no_store(token_answer(&access, scopes, refresh, id_token)))
}

fn refused_refresh() -> OAuthError {
    OAuthError::invalid_grant("InvalidRefreshToken", "the refresh token is invalid, expired or revoked")
}

async fn refresh(
    state: &AppState,
    realm: &Realm,
    client: &Client,
    form: &Form,
    origin: &Origin,
) -> Result<Response, OAuthError> {
    let presented = form.require("refresh_token")?;
    let pool = state.store.pool();
    let now = to_millis(state.clock.now());
    let Some(id) = tokens::refresh_token_id(presented) else { return Err(refused_refresh()) };
    let found = sessions::find_refresh_grant(pool, id).await?;
    let Some((token, session, user)) = found.filter(|(t, _, _)| state.hasher.matches(presented, &t.token_hash)) else {
        return Err(refused_refresh());
    };
    if session.realm_id != realm.id || session.client_id != client.id {
        return Err(refused_refresh());
    }
    if token.exchanged_at.is_some() {
        return reuse_detected(state, realm, client, &token, &session, origin, now).await;
    }
    // Everything that can refuse is read before the write transaction, which stays short.
    if token.revoked_at.is_some() || token.expires_at <= now || !session.is_live(now) {
        return Err(refused_refresh());
    }
    if client.revoked_token(token.created_at) {
        return Err(refused_refresh());
    }
    if user.status != UserStatus::Active {
        return Err(refused_refresh());
    }
    let granted = from_json_list(&token.scopes);
    let scopes = match form.scopes()? {
        None => granted,
        Some(asked) => {
            let excess: Vec<&str> =
                asked.iter().map(String::as_str).filter(|s| !granted.iter().any(|g| g == s)).collect();
            if !excess.is_empty() {
                return Err(OAuthError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_scope",
                    "ScopeNotAllowed",
                    format!("beyond the scopes originally granted: {}", excess.join(" ")),
                ));
            }
            asked
        }
    };
    let next = next_refresh(state, client, &session, &scopes, token.resource.as_deref(), now);
    let methods: Vec<String> = from_json_list(&session.authentication_methods);
    let methods: Vec<&str> = methods.iter().map(String::as_str).collect();
    let data = login_data(
        Login {
            grant_type: "refresh_token",
            resource: token.resource.as_deref(),
            user: Some(&user),
            session_id: Some(&session.id),
            failure_reason: None,
            scopes: &scopes,
            methods: &methods,
        },
        origin,
    );
    let event = QueuedEvent {
        event_type: "login_succeeded",
        account_id: realm.account_id.clone(),
        realm_id: Some(realm.id.clone()),
        client_id: Some(client.id.clone()),
        data,
        at: now,
    };
    let rotation = Rotation {
        exchanged: token.id.clone(),
        session_id: session.id.clone(),
        touch: now - session.last_active_at >= SESSION_ACTIVITY_GRANULARITY_MS,
        next: next.as_ref().map(|(row, _, _)| row.clone()),
        event,
    };
    // The exchange, the next token and the event commit together, in a group commit.
    if !state.writes.rotate(rotation).await? {
        // Another request exchanged it a moment ago.
        return reuse_detected(state, realm, client, &token, &session, origin, now).await;
    }
    let refresh = next.map(|(_, value, expires_in)| (value, expires_in));
    person_tokens(state, client, &user, &session, &scopes, token.resource.as_deref(), refresh).await
}

/// A refresh token presented after it was exchanged: two parties hold it, so the session behind it
/// ends (its tokens go inactive) and `token_reuse_detected` is raised once.
async fn reuse_detected(
    state: &AppState,
    realm: &Realm,
    client: &Client,
    token: &RefreshToken,
    session: &Session,
    origin: &Origin,
    now: i64,
) -> Result<Response, OAuthError> {
    let mut tx = state.store.begin().await?;
    if sessions::end(&mut *tx, &session.id, "refresh_token_reuse", now).await? {
        let data = json!({
            "token_id": token.id,
            "subject": session.user_id,
            "session_id": session.id,
            "ip_address": origin.ip_address,
            "user_agent": origin.user_agent,
        });
        publish(&mut tx, realm, client, "token_reuse_detected", data, now).await?;
    }
    tx.commit().await?;
    Err(OAuthError::invalid_grant("RefreshTokenReused", "the refresh token was already used; the session has ended"))
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
            Err(refused) => (i64::from(refused.status.as_u16()), AccessOutcome::Refused, refused.code.to_owned()),
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
    grant_type: &str,
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
    if grant_type != "client_credentials" {
        return Err(OAuthError::new(
            StatusCode::BAD_REQUEST,
            "unauthorized_client",
            "GrantTypeDisabled",
            "an account client secret is exchanged only with client_credentials",
        ));
    }
    let Some(platform) = crate::store::clients::find(state.store.pool(), PLATFORM_REALM, PLATFORM_REALM).await? else {
        return Err(OAuthError::invalid_client(basic));
    };
    let secret = &credential.secret;
    let scopes = secret.scopes.as_deref().map(from_json_list).unwrap_or_default();
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
    Ok(json_no_store(token_answer(&issued, &scopes, None, None)))
}
