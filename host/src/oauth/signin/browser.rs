//! Sign-in through a browser, OpenID Connect's authorization code flow: the authorization request
//! checked once (exact redirect URIs, PKCE with S256), the realm session a browser holds for single
//! sign-on, and the authorization a signed-in browser gives a client: a single-use code, exchanged
//! for tokens and the client session at the token endpoint (`super::codes`). The password itself is checked by
//! [`super::password`], the same operation as the password grant's.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};

use super::assurance::Level;
use super::codes::{CODE_LIFETIME, CodeGrant};
use super::{Login, Origin};
use crate::authz::Authorizer;
use crate::authz::admission::{AdmissionVerdict, Refusal as Admission};
use crate::kernel::crypto::generate_secret;
use crate::kernel::ids::{BrowserSessionId, PLATFORM_REALM, SessionId};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Transaction;
use crate::store::browser::{self, BrowserSession};
use crate::store::clients::{Client, ClientType, GrantType, Registration};
use crate::store::devices::DeviceAuthorization;
use crate::store::events::EventType;
use crate::store::lockout;
use crate::store::realms::Realm;
use crate::store::sessions::{self, Session};
use crate::store::users::{User, UserStatus};
use crate::store::write_queue::Authorized;

/// The longest a browser stays signed in to a realm: a session's lifetime (`session_seconds`).
pub fn browser_session_lifetime(context: &Context) -> TimeDelta {
    TimeDelta::seconds(i64::from(context.settings.session_seconds))
}

/// The parameters of an authorization request as the client sent them (query or form).
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked<'a> {
    pub client_id: Option<&'a str>,
    pub redirect_uri: Option<&'a str>,
    pub response_type: Option<&'a str>,
    pub scope: Option<&'a str>,
    pub state: Option<&'a str>,
    pub nonce: Option<&'a str>,
    pub code_challenge: Option<&'a str>,
    pub code_challenge_method: Option<&'a str>,
    pub prompt: Option<&'a str>,
    pub max_age: Option<&'a str>,
    pub login_hint: Option<&'a str>,
    pub ui_locales: Option<&'a str>,
    /// An ID token the realm issued, naming whom the client expects to be signed in.
    pub id_token_hint: Option<&'a str>,
    /// The resource server the tokens are for (RFC 8707): one of the realm's, open to the client.
    pub resource: Option<&'a str>,
    /// The levels of assurance the sign-in may reach (`super::assurance`), space-separated.
    pub acr_values: Option<&'a str>,
    /// The `claims` request (OIDC Core §5.5): only an essential `acr` of the ID token is read.
    pub claims: Option<&'a str>,
    /// Request objects (`request`, `request_uri`) are not supported; named to be refused.
    pub request: Option<&'a str>,
    pub request_uri: Option<&'a str>,
    /// A device's authorization (RFC 8628) the person approves, named by its user code's hash
    /// once they typed the code on the verification page; instead of a client's request.
    pub device: Option<&'a str>,
    /// A connection provider of the realm at which the person connects an account before the
    /// client is answered.
    pub connect: Option<&'a str>,
}

/// An authorization request that passed every check.
#[derive(Debug, Clone)]
pub struct Authorization {
    pub client: Arc<Client>,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub nonce: Option<String>,
    pub scopes: Vec<String>,
    /// The resource server's address the tokens will carry as their audience.
    pub resource: Option<String>,
    pub code_challenge: Option<String>,
    /// `prompt=none`: answer at once, never show a page.
    pub prompt_none: bool,
    /// `prompt=login`: the person types their credentials again, signed in or not.
    pub prompt_login: bool,
    /// `prompt=create`: the person is shown the sign-up form first.
    pub prompt_create: bool,
    /// `prompt=consent`: the person is asked to consent again, whatever they allowed before.
    pub prompt_consent: bool,
    /// `max_age`: the longest since the person last typed their credentials.
    pub max_age: Option<TimeDelta>,
    /// The least level of assurance the sign-in must reach (`acr_values`, or an essential `acr`).
    pub least_level: Option<Level>,
    /// The least level the second-factor rule of the realm and client asks of any sign-in that
    /// answers the client ([`super::factor_rule::floor`]).
    pub rule_level: Option<Level>,
    pub login_hint: Option<String>,
    pub ui_locales: Option<String>,
    /// The person an `id_token_hint` names: a browser signed in as anyone else counts as not
    /// signed in.
    pub expected_subject: Option<String>,
    /// The device authorization this request approves (RFC 8628): answered with a page, not a
    /// redirect.
    pub device: Option<DeviceAuthorization>,
    /// The Active connection provider the person connects an account at before the client is
    /// answered.
    pub connect: Option<String>,
}

/// Why an authorization request cannot be trusted with a redirect: the person is shown a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unredirectable {
    ClientMissing,
    ClientUnknown,
    RedirectUriMissing,
    RedirectUriNotRegistered,
    /// The device authorization is unknown, answered or expired.
    DeviceNotWaiting,
}

/// The `error` of an authorization response sent back to the client (RFC 6749 §4.1.2.1, OIDC
/// Core §3.1.2.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    InvalidRequest,
    UnauthorizedClient,
    UnsupportedResponseType,
    InvalidScope,
    LoginRequired,
    ConsentRequired,
    /// The sign-in did not reach the level of assurance the request asks for.
    UnmetAuthenticationRequirements,
    /// The person refused the consent the client asked for.
    AccessDenied,
    InvalidTarget,
    RequestNotSupported,
    RequestUriNotSupported,
    ServerError,
    TemporarilyUnavailable,
}

impl Denial {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::UnauthorizedClient => "unauthorized_client",
            Self::UnsupportedResponseType => "unsupported_response_type",
            Self::InvalidScope => "invalid_scope",
            Self::LoginRequired => "login_required",
            Self::ConsentRequired => "consent_required",
            Self::UnmetAuthenticationRequirements => "unmet_authentication_requirements",
            Self::AccessDenied => "access_denied",
            Self::InvalidTarget => "invalid_target",
            Self::RequestNotSupported => "request_not_supported",
            Self::RequestUriNotSupported => "request_uri_not_supported",
            Self::ServerError => "server_error",
            Self::TemporarilyUnavailable => "temporarily_unavailable",
        }
    }
}

/// An authorization request refused.
#[derive(Debug)]
pub enum AuthorizationError {
    /// Shown to the person; nothing is redirected.
    Unredirectable(Unredirectable),
    /// Sent back to the client's registered redirect URI with the request's `state`.
    Denied {
        redirect_uri: String,
        state: Option<String>,
        denial: Denial,
        description: String,
    },
    Failed(Error),
}

impl From<Error> for AuthorizationError {
    fn from(error: Error) -> Self {
        Self::Failed(error)
    }
}

impl From<crate::store::Error> for AuthorizationError {
    fn from(error: crate::store::Error) -> Self {
        Self::Failed(error.into())
    }
}

/// Checks an authorization request of `realm`. The client and its redirect URI are checked first:
/// until both are trusted, no answer goes to the address the request names.
pub async fn check(
    context: &Context,
    authz: &Authorizer,
    realm: &Realm,
    asked: &Asked<'_>,
) -> Result<Authorization, AuthorizationError> {
    use AuthorizationError::Unredirectable as Shown;
    if let Some(handle) = asked.device {
        return device_request(context, realm, handle, asked).await;
    }
    let client_id = asked.client_id.ok_or(Shown(Unredirectable::ClientMissing))?;
    let client = crate::oauth::tokens::find_client(context, &realm.id, client_id)
        .await?
        .filter(|client| crate::oauth::metadata_documents::usable(realm, client))
        .ok_or(Shown(Unredirectable::ClientUnknown))?;
    // People sign in to the console through the platform client.
    let client = if realm.id == PLATFORM_REALM && client.id == PLATFORM_REALM {
        Arc::new(super::console::for_browsers(context, &client))
    } else {
        client
    };
    let redirect_uri = asked.redirect_uri.ok_or(Shown(Unredirectable::RedirectUriMissing))?;
    // Exact string comparison, but for the port of a loopback address (`addresses`).
    if !client
        .redirect_uris
        .iter()
        .any(|registered| crate::kernel::addresses::redirect_uri_registered(registered, redirect_uri))
    {
        return Err(Shown(Unredirectable::RedirectUriNotRegistered));
    }
    let deny = |denial: Denial, description: &str| AuthorizationError::Denied {
        redirect_uri: redirect_uri.to_owned(),
        state: asked.state.map(str::to_owned),
        denial,
        description: description.to_owned(),
    };
    if asked.request.is_some() {
        return Err(deny(Denial::RequestNotSupported, "request objects are not supported"));
    }
    if asked.request_uri.is_some() {
        return Err(deny(Denial::RequestUriNotSupported, "request_uri is not supported"));
    }
    match asked.response_type {
        None => return Err(deny(Denial::InvalidRequest, "response_type is required")),
        Some("code") => {}
        Some(_) => return Err(deny(Denial::UnsupportedResponseType, "only response_type=code is supported")),
    }
    if !client.allows(GrantType::AuthorizationCode) {
        return Err(deny(Denial::UnauthorizedClient, "the authorization_code grant is not enabled on this client"));
    }
    let code_challenge = match (asked.code_challenge, asked.code_challenge_method) {
        (None, Some(_)) => return Err(deny(Denial::InvalidRequest, "code_challenge_method needs a code_challenge")),
        (Some(_), Some(method)) if method != "S256" => {
            return Err(deny(Denial::InvalidRequest, "only the S256 code_challenge_method is supported"));
        }
        // Without a method the challenge would be `plain` (RFC 7636 §4.3), which is refused.
        (Some(_), None) => return Err(deny(Denial::InvalidRequest, "code_challenge_method=S256 is required")),
        (Some(challenge), Some(_)) if !is_s256_challenge(challenge) => {
            return Err(deny(Denial::InvalidRequest, "code_challenge must be 43 base64url characters"));
        }
        (challenge, _) => challenge.map(str::to_owned),
    };
    if code_challenge.is_none() && client.client_type == ClientType::Public {
        return Err(deny(Denial::InvalidRequest, "a public client must send a PKCE code_challenge"));
    }
    let asked_scopes = asked.scope.map(|text| {
        let mut scopes: Vec<String> = Vec::new();
        for scope in text.split(' ').filter(|s| !s.is_empty()) {
            if !scopes.iter().any(|seen| seen == scope) {
                scopes.push(scope.to_owned());
            }
        }
        scopes
    });
    if asked_scopes.as_ref().is_some_and(|scopes| scopes.len() > super::MAX_SCOPES) {
        return Err(deny(Denial::InvalidScope, "too many scopes"));
    }
    let server = match super::requested_resource(context, &client, asked.resource).await {
        Ok(server) => server,
        Err(super::ResourceError::NotAllowed { address }) => {
            return Err(deny(Denial::InvalidTarget, &format!("{address} is not a resource this client may ask for")));
        }
        Err(super::ResourceError::Failed(error)) => return Err(error.into()),
    };
    let scopes = super::requested_scopes(&client, asked_scopes, true, server.as_ref())
        .map_err(|_| deny(Denial::InvalidScope, "a requested scope is not allowed for this client"))?;
    if client.registration == Registration::MetadataDocument {
        let verdict = crate::oauth::metadata_documents::admission(authz, realm, &client.id, &scopes, server.as_ref())?;
        if let AdmissionVerdict::Deny { refusal, .. } = verdict {
            let (denial, description) = match refusal {
                Admission::UnauthorizedClient => (Denial::UnauthorizedClient, "this realm does not take this client"),
                Admission::InvalidScope => (Denial::InvalidScope, "a requested scope is not open to this client"),
                Admission::InvalidTarget => (Denial::InvalidTarget, "the resource is not open to this client"),
            };
            return Err(deny(denial, description));
        }
    }
    let prompts: Vec<&str> = asked.prompt.unwrap_or("").split(' ').filter(|p| !p.is_empty()).collect();
    // `create` (Initiating User Registration via OpenID Connect) only where people may sign up.
    let supported = |p: &str| matches!(p, "none" | "login" | "consent" | "select_account" | "create");
    let sign_up_open = super::signup::open(context, realm);
    if let Some(unknown) = prompts.iter().find(|p| !supported(p) || (**p == "create" && !sign_up_open)) {
        return Err(deny(Denial::InvalidRequest, &format!("prompt={unknown} is not supported")));
    }
    let prompt_none = prompts.contains(&"none");
    if prompt_none && prompts.len() > 1 {
        return Err(deny(Denial::InvalidRequest, "prompt=none cannot be combined with another prompt"));
    }
    let expected_subject = match asked.id_token_hint {
        None => None,
        Some(token) => match crate::oauth::tokens::id_token_hint(context, &realm.id, token).await? {
            Some(hint) => Some(hint.subject),
            None => return Err(deny(Denial::InvalidRequest, "id_token_hint is not an ID token of this realm")),
        },
    };
    let connect = match asked.connect {
        None => None,
        Some(_) if prompt_none => {
            return Err(deny(Denial::InvalidRequest, "connecting an account needs the person: not with prompt=none"));
        }
        Some(id) => match crate::oauth::federation::connections::active_provider(context, &realm.id, id).await? {
            Some(provider) => Some(provider.id.to_string()),
            None => {
                return Err(deny(Denial::InvalidRequest, "connect names no active connection provider of the realm"));
            }
        },
    };
    let mut acr_values: Vec<String> =
        asked.acr_values.unwrap_or("").split(' ').filter(|v| !v.is_empty()).map(str::to_owned).collect();
    if let Some(claims) = asked.claims {
        match super::assurance::essential_in_claims(claims) {
            Ok(values) => acr_values.extend(values),
            Err(_) => return Err(deny(Denial::InvalidRequest, "claims must be a JSON object")),
        }
    }
    let least_level = super::assurance::least_asked(acr_values.iter().map(String::as_str));
    let max_age = match asked.max_age {
        None => None,
        Some(text) => match text.parse::<u32>() {
            Ok(seconds) => Some(TimeDelta::seconds(i64::from(seconds))),
            Err(_) => return Err(deny(Denial::InvalidRequest, "max_age must be a whole number of seconds")),
        },
    };
    Ok(Authorization {
        redirect_uri: redirect_uri.to_owned(),
        state: asked.state.map(str::to_owned),
        nonce: asked.nonce.map(str::to_owned),
        scopes,
        resource: server.map(|server| server.address),
        code_challenge,
        prompt_none,
        prompt_login: prompts.contains(&"login"),
        prompt_create: prompts.contains(&"create"),
        prompt_consent: prompts.contains(&"consent"),
        max_age,
        least_level,
        rule_level: super::factor_rule::floor(super::factor_rule::rule(realm, &client)),
        login_hint: asked.login_hint.map(str::to_owned),
        ui_locales: asked.ui_locales.map(str::to_owned),
        expected_subject,
        client,
        device: None,
        connect,
    })
}

/// The request a person approves for a device whose user code they typed: the device's client,
/// scopes and resource, always put to the person on the consent page.
async fn device_request(
    context: &Context,
    realm: &Realm,
    handle: &str,
    asked: &Asked<'_>,
) -> Result<Authorization, AuthorizationError> {
    use AuthorizationError::Unredirectable as Shown;
    let now = context.clock.now();
    let device =
        super::device::pending(context, realm, handle, now).await?.ok_or(Shown(Unredirectable::DeviceNotWaiting))?;
    let client = crate::oauth::tokens::find_client(context, &realm.id, &device.client_id)
        .await?
        .filter(|client| {
            crate::oauth::metadata_documents::usable(realm, client) && client.allows(GrantType::DeviceCode)
        })
        .ok_or(Shown(Unredirectable::ClientUnknown))?;
    let rule_level = super::factor_rule::floor(super::factor_rule::rule(realm, &client));
    Ok(Authorization {
        client,
        redirect_uri: String::new(),
        state: None,
        nonce: None,
        scopes: device.scopes.clone(),
        resource: device.resource.clone(),
        code_challenge: None,
        prompt_none: false,
        prompt_login: false,
        prompt_create: false,
        prompt_consent: true,
        max_age: None,
        least_level: None,
        rule_level,
        login_hint: asked.login_hint.map(str::to_owned),
        ui_locales: asked.ui_locales.map(str::to_owned),
        expected_subject: None,
        device: Some(device),
        connect: None,
    })
}

/// RFC 7636 §4.2: BASE64URL(SHA256(verifier)) is always 43 characters.
fn is_s256_challenge(challenge: &str) -> bool {
    challenge.len() == 43 && challenge.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A browser's realm session and its person, when the cookie names a live one of an Active person.
pub async fn signed_in(
    context: &Context,
    realm: &Realm,
    cookie: &str,
) -> Result<Option<(BrowserSession, User)>, Error> {
    let pool = context.store.pool();
    let now = context.clock.now();
    let found = browser::find_session_with_person(pool, &realm.id, &context.hasher.hash(cookie)).await?;
    Ok(found.filter(|(session, user)| session.is_live(now) && user.status == UserStatus::Active))
}

/// Whether the browser's sign-in answers the request: recent enough (`max_age`), not asked to be
/// typed again (`prompt=login`), of the person an `id_token_hint` names, and strong enough.
pub fn satisfies(authorization: &Authorization, session: &BrowserSession, now: DateTime<Utc>) -> bool {
    !authorization.prompt_login && still_answers(authorization, session, now)
}

/// Whether a sign-in the browser made (a moment ago, or for another request) answers the request:
/// recent enough, of the person an `id_token_hint` names, and of the level it asks for.
pub fn still_answers(authorization: &Authorization, session: &BrowserSession, now: DateTime<Utc>) -> bool {
    authorization.max_age.is_none_or(|max| now - session.authenticated_at <= max)
        && authorization.expected_subject.as_ref().is_none_or(|subject| *subject == session.user_id)
        && reaches(authorization, session)
}

/// Whether the browser's sign-in reaches the level the request asks for, and the level the
/// client's second-factor rule asks of every sign-in.
pub fn reaches(authorization: &Authorization, session: &BrowserSession) -> bool {
    let least = authorization.least_level.max(authorization.rule_level);
    least.is_none_or(|least| Level::of_methods(&session.authentication_methods) >= least)
}

/// A new realm session for a browser whose person just typed their credentials: the session, and
/// the cookie value that names it (kept only as a keyed hash).
pub fn new_browser_session(
    context: &Context,
    realm: &Realm,
    user: &User,
    methods: &[&str],
    origin: &Origin,
    now: DateTime<Utc>,
) -> (BrowserSession, String) {
    let cookie = generate_secret("");
    let session = BrowserSession {
        id: BrowserSessionId::fresh(),
        realm_id: realm.id.clone(),
        user_id: user.id.clone(),
        cookie_hash: context.hasher.hash(&cookie),
        authentication_methods: methods.iter().map(|m| (*m).to_owned()).collect(),
        authenticated_at: now,
        ip_address: origin.ip_address.clone(),
        user_agent: origin.user_agent.clone(),
        created_at: now,
        expires_at: now + browser_session_lifetime(context),
        ended_at: None,
        end_reason: None,
        identity_provider: None,
    };
    (session, cookie)
}

/// Authorizes the client for the browser's person: publishes `login_succeeded`, approves the
/// browser's address for the person, and returns the code the client exchanges for tokens and its
/// client session (`super::codes`). A person under a Full
/// suspension at the client is sent back to it with `access_denied`.
pub async fn authorize(
    context: &Context,
    realm: &Realm,
    authorization: &Authorization,
    browser: &BrowserSession,
    user: &User,
    origin: &Origin,
) -> Result<String, AuthorizationError> {
    let now = context.clock.now();
    if super::suspended(context, &authorization.client, &user.id, now).await? {
        return Err(AuthorizationError::Denied {
            redirect_uri: authorization.redirect_uri.clone(),
            state: authorization.state.clone(),
            denial: Denial::AccessDenied,
            description: "the person is suspended at this client".into(),
        });
    }
    let opening = Opening { realm, authorization, browser, user, origin, grant_type: GrantType::AuthorizationCode };
    let session = opening.session(now);
    let grant = CodeGrant {
        realm_id: realm.id.to_string(),
        client_id: authorization.client.id.to_string(),
        session_id: session.id.to_string(),
        browser_session_id: browser.id.to_string(),
        redirect_uri: authorization.redirect_uri.clone(),
        scopes: authorization.scopes.clone(),
        nonce: authorization.nonce.clone(),
        code_challenge: authorization.code_challenge.clone(),
        resource: authorization.resource.clone(),
        authenticated_at: browser.authenticated_at.timestamp_millis(),
        methods: browser.authentication_methods.clone(),
        ip_address: origin.ip_address.clone(),
        user_agent: origin.user_agent.clone(),
        expires_at: (now + CODE_LIFETIME).timestamp_millis(),
    };
    let event = super::succeeded_event(realm, &authorization.client, opening.event_data(&session), now);
    let approval = (user.id.clone(), origin.ip_address.clone());
    context.writes.authorize(Authorized { approval, event }).await.map_err(Error::Internal)?;
    Ok(grant.seal(context))
}

/// A client session a browser's person opens by signing in: through a code, or by approving a
/// device.
pub(super) struct Opening<'a> {
    pub realm: &'a Realm,
    pub authorization: &'a Authorization,
    pub browser: &'a BrowserSession,
    pub user: &'a User,
    pub origin: &'a Origin,
    pub grant_type: GrantType,
}

impl Opening<'_> {
    /// The client session, part of the browser's.
    pub fn session(&self, now: DateTime<Utc>) -> Session {
        let browser = self.browser;
        Session {
            id: SessionId::fresh(),
            realm_id: self.realm.id.clone(),
            client_id: self.authorization.client.id.clone(),
            user_id: self.user.id.clone(),
            ip_address: self.origin.ip_address.clone(),
            user_agent: self.origin.user_agent.clone(),
            authentication_methods: browser.authentication_methods.clone(),
            // The person's sign-in is the browser's: `auth_time` is when they typed their credentials.
            created_at: browser.authenticated_at,
            last_active_at: now,
            expires_at: browser.expires_at,
            ended_at: None,
            end_reason: None,
            browser_session_id: Some(browser.id.clone()),
        }
    }

    /// Writes the session, approves the address for the account, and publishes `login_succeeded`.
    pub async fn open(&self, tx: &mut Transaction, session: &Session, now: DateTime<Utc>) -> Result<(), Error> {
        sessions::insert(&mut **tx, session).await?;
        lockout::approve(tx, &self.user.id, &self.origin.ip_address, now).await?;
        let data = self.event_data(session);
        super::publish(tx, self.realm, &self.authorization.client, EventType::LoginSucceeded, data, now).await
    }

    /// The `data` of the session's `login_succeeded`.
    fn event_data(&self, session: &Session) -> serde_json::Value {
        let authorization = self.authorization;
        let methods: Vec<&str> = self.browser.authentication_methods.iter().map(String::as_str).collect();
        let login = Login {
            grant_type: self.grant_type.as_str(),
            resource: authorization.resource.as_deref(),
            user: Some(self.user),
            session_id: Some(&session.id),
            failure_reason: None,
            scopes: &authorization.scopes,
            methods: &methods,
        };
        let mut data = super::login_data(login, self.origin);
        if let Some(provider) = &self.browser.identity_provider {
            data["identity_provider"] = provider.as_str().into();
        }
        data
    }
}
