//! The token endpoint (RFC 6749 §3.2): `authorization_code` (with PKCE), `client_credentials`,
//! `password`, `refresh_token`, the device code (RFC 8628), the push grant and token exchange (RFC 8693, in `exchange`). The handler reads the form, authenticates the
//! client, checks that the grant is enabled on it, calls the sign-in operation (`crate::oauth::signin`)
//! and answers its tokens or its refusal.

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::{Form, OAuthError, authenticate_client, exchange, json_no_store, realm};
use crate::http::AppState;
use crate::http::address::ClientAddress;
use crate::kernel::ids::PLATFORM_REALM;
use crate::oauth::signin::codes::CodeExchange;
use crate::oauth::signin::console::{self, Answered, Attempted};
use crate::oauth::signin::device::Poll;
use crate::oauth::signin::{
    self, Opens, Origin, PasswordAttempt, PasswordOutcome, PhoneConfirmation, RefreshAttempt, Refusal, SignInError,
    Tokens,
};
use crate::runtime::error::{Error, OAuthCode};
use crate::store::clients::{Client, GrantType};
use crate::store::realms::Realm;

/// Answers a token request, counted in the metrics by realm, grant type and outcome (`issued`, or
/// the OAuth `error`); requests naming no realm of the service are not counted, so that no caller
/// can make up label values.
pub async fn endpoint(
    State(state): State<AppState>,
    Path(realm_id): Path<String>,
    Extension(address): Extension<ClientAddress>,
    headers: HeaderMap,
    form: Form,
) -> Result<Response, OAuthError> {
    let grant = form.get("grant_type").and_then(GrantType::named).map_or("unsupported", GrantType::as_str);
    let answered = token(&state, &realm_id, address, &headers, &form).await;
    let outcome = match &answered {
        Ok(response) if response.status().is_success() => Some("issued"),
        Ok(_) => Some("refused"),
        Err(refused) if refused.code == OAuthCode::RealmNotFound => None,
        Err(refused) => Some(refused.error()),
    };
    if let Some(outcome) = outcome {
        state.metrics.token_request(&realm_id, grant, outcome);
    }
    answered
}

async fn token(
    state: &AppState,
    realm_id: &str,
    ClientAddress(address): ClientAddress,
    headers: &HeaderMap,
    form: &Form,
) -> Result<Response, OAuthError> {
    let realm = realm(state, realm_id).await?;
    let grant_type = form.require("grant_type")?;
    let Some(grant) = GrantType::named(grant_type) else {
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
        let people = !super::authenticates(headers, form)?;
        if grant == GrantType::Password && people {
            return console_sign_in(state, &realm, form, &origin).await;
        }
        if grant == GrantType::AuthorizationCode && people {
            return console_code(state, &realm, form).await;
        }
        return platform_token(state, headers, form, grant, address).await;
    }
    // A public client holds no secret: it exchanges its code (PKCE proves it), polls with its
    // device code (the person's approval proves it) and refreshes (each refresh token is
    // single-use and its reuse ends the session) naming itself by `client_id`.
    let unauthenticated = !super::authenticates(headers, form)?;
    let public = unauthenticated
        && (grant == GrantType::AuthorizationCode
            || grant == GrantType::DeviceCode
            || (grant == GrantType::RefreshToken && form.get("client_id").is_some()));
    let client = if public {
        super::public_client(state, &realm, form).await?
    } else {
        match authenticate_client(state, &realm, headers, form).await {
            Ok(client) => client,
            Err(refused) => {
                if refused.code == OAuthCode::InvalidClient
                    && let Some(named) = super::client_auth::named_client_id(headers, form)
                {
                    signin::client_refusals::record(state, &state.protection, &realm, &named, grant_type, &origin)
                        .await;
                }
                return Err(refused);
            }
        }
    };
    signin::client_address::enforce(state, &realm, &client, grant_type, address, &origin).await?;
    // A DPoP proof binds the tokens to its key (RFC 9449 §5).
    let url = format!("{}/protocol/openid-connect/token", crate::oauth::tokens::issuer(state, &realm.id));
    let request = crate::oauth::dpop::Request { method: "POST", url: &url, access_token: None, nonce_required: true };
    let dpop_jkt = super::dpop_proof::proven_key(state, headers, request).await?;
    let dpop_jkt = dpop_jkt.as_deref();
    if grant == GrantType::TokenExchange {
        // Token Exchange has its own switch, and every attempt is in the exchange trail.
        return exchange::exchange(state, &realm, &client, form, &origin).await;
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
            signin::client_credentials(state, &realm, &client, scopes, resource, dpop_jkt, &origin).await?
        }
        GrantType::Password => {
            let attempt = PasswordAttempt { dpop_jkt, ..password_attempt(&realm, &client, form, &origin)? };
            return password_answer(signin::password(state, &state.protection, attempt).await?, dpop_jkt.is_some());
        }
        GrantType::Push => {
            let request_id = form.require("push_request_id")?;
            let outcome = signin::push::collect(state, &realm, &client, request_id, Opens::ClientSession).await?;
            // A sign-in a phone confirmed is not bound to a key.
            return password_answer(outcome, false);
        }
        GrantType::AuthorizationCode => {
            let exchange = CodeExchange { dpop_jkt, ..code_exchange(&realm, &client, form)? };
            signin::codes::exchange(state, exchange).await?
        }
        GrantType::DeviceCode => {
            let poll = Poll { realm: &realm, client: &client, device_code: form.require("device_code")?, dpop_jkt };
            signin::device::poll(state, poll).await?
        }
        _ => {
            let presented = form.require("refresh_token")?;
            let attempt = RefreshAttempt {
                realm: &realm,
                client: &client,
                presented,
                scopes: form.scopes()?,
                resource: form.get("resource"),
                dpop_jkt,
                origin: &origin,
            };
            signin::refresh(state, attempt).await?
        }
    };
    Ok(json_no_store(token_answer(&tokens, dpop_jkt.is_some())))
}

/// The password sign-in a form asks for.
fn password_attempt<'a>(
    realm: &'a Realm,
    client: &'a Client,
    form: &'a Form,
    origin: &'a Origin,
) -> Result<PasswordAttempt<'a>, OAuthError> {
    Ok(PasswordAttempt {
        realm,
        client,
        username: form.require("username")?,
        password: form.require("password")?,
        scopes: form.scopes()?,
        resource: form.get("resource"),
        phone: match form.get("confirmation") {
            Some("push") => PhoneConfirmation::Required,
            _ => PhoneConfirmation::NotAsked,
        },
        origin,
        opens: Opens::ClientSession,
        dpop_jkt: None,
    })
}

/// The answer to a password sign-in that was not refused.
fn password_answer(outcome: PasswordOutcome, bound: bool) -> Result<Response, OAuthError> {
    match outcome {
        PasswordOutcome::SignedIn(tokens) => Ok(json_no_store(token_answer(&tokens, bound))),
        PasswordOutcome::ConfirmationAsked(asked) => Ok(json_no_store(json!({
            "push_request_id": asked.request_id,
            "expires_in": asked.expires_in,
            "interval": asked.interval,
        }))),
        // The token endpoint's sign-ins open client sessions, never a browser's.
        PasswordOutcome::InBrowser(_)
        | PasswordOutcome::MustChangePassword { .. }
        | PasswordOutcome::SecondFactorAsked { .. }
        | PasswordOutcome::EnrolmentAsked { .. } => {
            Err(Error::Internal(anyhow::anyhow!("a browser sign-in at the token endpoint")).into())
        }
    }
}

/// The RFC 6749 §5.1 answer; `bound`: the access token is bound to a DPoP key (RFC 9449 §5).
fn token_answer(tokens: &Tokens, bound: bool) -> Value {
    let Tokens { access, scopes, refresh, id_token } = tokens;
    let mut answer = json!({
        "access_token": access.token,
        "token_type": if bound { "DPoP" } else { "Bearer" },
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
/// realm, by the platform client as a public client (`client_id=platform`, no secret).
async fn console_sign_in(
    state: &AppState,
    realm: &Realm,
    form: &Form,
    origin: &Origin,
) -> Result<Response, OAuthError> {
    if form.get("client_id") != Some(PLATFORM_REALM) {
        return Err(OAuthError::invalid_client(false));
    }
    let platform = console::platform_client(state).await?;
    let attempt = match password_attempt(realm, &platform, form, origin) {
        Ok(attempt) => attempt,
        Err(malformed) => {
            // A malformed request that names a person of a team is in their access log too.
            if let Some(login) = form.get("username") {
                let answer = Answered { status: malformed.status().as_u16(), code: malformed.code.as_str() };
                let path = console::token_path();
                let attempt = Attempted { login, address: &origin.ip_address, path: &path, at: state.clock.now() };
                console::record_person(state, &state.access_log, attempt, Err(answer)).await?;
            }
            return Err(malformed);
        }
    };
    let answered = |refused: &SignInError| {
        let (code, status) = OAuthError::answer_to(refused);
        Answered { status: status.as_u16(), code: code.as_str() }
    };
    password_answer(
        console::password(state, &state.protection, &state.access_log, attempt, &console::token_path(), answered)
            .await?,
        false,
    )
}

/// A code of the platform realm's login page, exchanged by the console (the platform client as a
/// public client, with its PKCE verifier) for a bearer token of the person.
async fn console_code(state: &AppState, realm: &Realm, form: &Form) -> Result<Response, OAuthError> {
    if form.get("client_id") != Some(PLATFORM_REALM) {
        return Err(OAuthError::invalid_client(false));
    }
    let platform = console::for_browsers(state, &console::platform_client(state).await?);
    let exchange = code_exchange(realm, &platform, form)?;
    Ok(json_no_store(token_answer(&signin::codes::exchange(state, exchange).await?, false)))
}

/// The code exchange a form asks for.
fn code_exchange<'a>(realm: &'a Realm, client: &'a Client, form: &'a Form) -> Result<CodeExchange<'a>, OAuthError> {
    Ok(CodeExchange {
        realm,
        client,
        code: form.require("code")?,
        redirect_uri: form.get("redirect_uri"),
        code_verifier: form.get("code_verifier"),
        resource: form.get("resource"),
        dpop_jkt: None,
    })
}

/// `client_credentials` at the platform realm with the platform client id and an account client
/// secret: a bearer token for the admin API.
async fn platform_token(
    state: &AppState,
    headers: &HeaderMap,
    form: &Form,
    grant: GrantType,
    address: std::net::IpAddr,
) -> Result<Response, OAuthError> {
    let Some((client_id, value, basic)) = super::presented_credentials(headers, form)? else {
        return Err(OAuthError::invalid_client(false));
    };
    match console::client_secret(state, &state.access_log, &client_id, &value, grant, &address.to_string()).await {
        Ok(tokens) => Ok(json_no_store(token_answer(&tokens, false))),
        Err(SignInError::Refused(Refusal::ClientUnknown)) => Err(OAuthError::invalid_client(basic)),
        Err(error) => Err(error.into()),
    }
}
