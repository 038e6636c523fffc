//! A sign-in through an external identity provider, with the realm as the provider's relying
//! party: the authorization request sent upstream (code flow, PKCE with S256, a `state` bound to
//! the browser, a `nonce` for OpenID Connect), and the provider's answer read back: its issuer
//! checked when it names one (RFC 9207, mix-up protection), the code redeemed at the provider's
//! token endpoint, the ID token verified ([`super::id_token`]), and the user-info read (the whole
//! answer of a plain OAuth 2.0 provider; for OpenID Connect, only claims the ID token lacks, of the
//! same subject, and nothing when it cannot be read).

use chrono::TimeDelta;
use serde_json::{Map, Value};

use super::id_token::{self, Expected};
use super::upstream;
use crate::kernel::crypto::generate_secret;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::browser::{self, UpstreamSignIn};
use crate::store::identity_providers::{IdentityProvider, Protocol};
use crate::store::realms::Realm;

pub use crate::directory::identity_providers::{SEALING_PURPOSE, callback_address};
/// How long a sign-in may stay at the provider.
pub const LIFETIME: TimeDelta = TimeDelta::minutes(10);
/// The largest answer read from a token endpoint or a user-info address.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// Why a sign-in through a provider did not give a person.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error("the provider cannot be used: {0}")]
    Unreachable(String),
    #[error("the provider answered with the error {0}")]
    Declined(String),
    #[error("the answer names the issuer {0:?}, not the provider's (RFC 9207)")]
    MixUp(Option<String>),
    #[error("the provider's token endpoint refused the code: {0}")]
    CodeRefused(String),
    #[error(transparent)]
    Token(#[from] id_token::Refused),
    #[error("the provider's user-info is not about the person the ID token names")]
    UserInfo,
    #[error(transparent)]
    Failed(#[from] Error),
}

impl From<crate::store::Error> for Failure {
    fn from(error: crate::store::Error) -> Self {
        Self::Failed(error.into())
    }
}

/// The provider's addresses, from its metadata or its configuration.
pub struct Endpoints {
    /// The issuer an OpenID provider names itself by.
    issuer: Option<String>,
    sends_issuer: bool,
    authorization: String,
    token: String,
    userinfo: Option<String>,
    jwks_uri: Option<String>,
}

impl Endpoints {
    /// The addresses a discovery document gives.
    pub async fn discovered(context: &Context, address: &str) -> Result<Self, Failure> {
        let metadata = upstream::discover(context, address).await.map_err(Failure::Unreachable)?;
        Ok(Endpoints {
            issuer: Some(metadata.issuer),
            sends_issuer: metadata.sends_issuer,
            authorization: metadata.authorization_endpoint,
            token: metadata.token_endpoint,
            userinfo: metadata.userinfo_endpoint,
            jwks_uri: Some(metadata.jwks_uri),
        })
    }

    /// The addresses of a plain OAuth 2.0 server, as configured.
    pub fn configured(
        authorization: Option<&str>,
        token: Option<&str>,
        userinfo: Option<&str>,
    ) -> Result<Self, Failure> {
        let missing = || Failure::Unreachable("its configuration lacks an address".into());
        Ok(Endpoints {
            issuer: None,
            sends_issuer: false,
            authorization: authorization.ok_or_else(missing)?.to_owned(),
            token: token.ok_or_else(missing)?.to_owned(),
            userinfo: userinfo.map(str::to_owned),
            jwks_uri: None,
        })
    }
}

/// An authorization server the realm is a client of, and what it holds there: an identity
/// provider, or a connection provider.
pub struct Authority<'a> {
    pub id: &'a str,
    pub client_id: &'a str,
    /// Sealed.
    pub client_secret: Option<&'a str>,
    pub scopes: &'a [String],
    /// Where it sends the person back.
    pub callback: String,
    pub endpoints: Endpoints,
    /// Whether an ID token comes back, bound to a `nonce`.
    pub openid: bool,
}

impl<'a> Authority<'a> {
    /// An identity provider, as the realm signs people in through it.
    pub async fn identity_provider(
        context: &Context,
        realm_id: &str,
        provider: &'a IdentityProvider,
    ) -> Result<Self, Failure> {
        let lacking = |what: &str| Failure::Unreachable(format!("its configuration lacks {what}"));
        let endpoints = match provider.protocol {
            Protocol::OpenIdConnect => {
                let address = provider.discovery_url.as_deref().ok_or_else(|| lacking("a discovery address"))?;
                Endpoints::discovered(context, address).await?
            }
            Protocol::OAuth2 => {
                let userinfo = provider.userinfo_url.as_deref().ok_or_else(|| lacking("a user-info address"))?;
                let (authorization, token) = (provider.authorization_url.as_deref(), provider.token_url.as_deref());
                Endpoints::configured(authorization, token, Some(userinfo))?
            }
        };
        Ok(Self {
            id: provider.id.as_str(),
            client_id: &provider.client_id,
            client_secret: provider.client_secret.as_deref(),
            scopes: &provider.scopes,
            callback: callback_address(context, realm_id, provider.id.as_str()),
            endpoints,
            openid: provider.protocol == Protocol::OpenIdConnect,
        })
    }
}

/// A sign-in sent to the provider: the address the browser goes to, and the value of the cookie
/// that binds the sign-in to it.
#[derive(Debug, Clone)]
pub struct Started {
    pub address: String,
    pub cookie: String,
}

/// Sends a sign-in to `provider`, keeping `request` (the client's authorization request) to answer
/// once the person is back. `login_hint` goes upstream: the address the person typed.
pub async fn start(
    context: &Context,
    realm: &Realm,
    provider: &IdentityProvider,
    request: &[(&str, &str)],
    login_hint: Option<&str>,
) -> Result<Started, Failure> {
    let authority = Authority::identity_provider(context, &realm.id, provider).await?;
    start_at(context, realm, &authority, request, login_hint, None).await
}

/// Sends the browser to `authority`, keeping `request` to answer once it is back; `user_id` names
/// the person already signed in who connects an account there.
pub async fn start_at(
    context: &Context,
    realm: &Realm,
    authority: &Authority<'_>,
    request: &[(&str, &str)],
    login_hint: Option<&str>,
    user_id: Option<&str>,
) -> Result<Started, Failure> {
    let now = context.clock.now();
    let (sign_in_state, nonce, verifier, cookie) =
        (generate_secret(""), generate_secret(""), generate_secret(""), generate_secret(""));
    let pairs: Vec<[&str; 2]> = request.iter().map(|(name, value)| [*name, *value]).collect();
    let waiting = UpstreamSignIn {
        state_hash: context.hasher.hash(&sign_in_state),
        realm_id: realm.id.clone(),
        provider_id: authority.id.to_owned(),
        user_id: user_id.map(str::to_owned),
        browser_hash: context.hasher.hash(&cookie),
        nonce: nonce.clone(),
        code_verifier: context.hasher.sealer(SEALING_PURPOSE).seal(verifier.as_bytes()),
        request: serde_json::to_string(&pairs).map_err(|e| Error::Internal(e.into()))?,
        created_at: now,
        expires_at: now + LIFETIME,
    };
    browser::insert_upstream(context.store.writer(), &waiting).await?;
    let mut address = url::Url::parse(&authority.endpoints.authorization)
        .map_err(|_| Failure::Unreachable("a bad address".into()))?;
    {
        let mut query = address.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", authority.client_id)
            .append_pair("redirect_uri", &authority.callback)
            .append_pair("state", &sign_in_state)
            .append_pair("code_challenge", &crate::oauth::signin::codes::s256(&verifier))
            .append_pair("code_challenge_method", "S256");
        if !authority.scopes.is_empty() {
            query.append_pair("scope", &authority.scopes.join(" "));
        }
        if authority.openid {
            query.append_pair("nonce", &nonce);
        }
        if let Some(hint) = login_hint {
            query.append_pair("login_hint", hint);
        }
    }
    Ok(Started { address: address.into(), cookie })
}

/// The waiting sign-in a provider's answer names by its `state`, taken (it is good once), when it
/// is the provider's, still in time, and the browser holds the cookie it was bound to.
pub async fn take(
    context: &Context,
    realm: &Realm,
    provider_id: &str,
    sign_in_state: &str,
    cookie: Option<&str>,
) -> Result<Option<Waiting>, Error> {
    let taken = browser::take_upstream(context.store.writer(), &realm.id, &context.hasher.hash(sign_in_state)).await?;
    let now = context.clock.now();
    let bound =
        |waiting: &UpstreamSignIn| cookie.is_some_and(|cookie| context.hasher.matches(cookie, &waiting.browser_hash));
    let Some(waiting) = taken.filter(|w| w.provider_id == provider_id && w.expires_at > now && bound(w)) else {
        return Ok(None);
    };
    let request: Vec<(String, String)> = serde_json::from_str::<Vec<[String; 2]>>(&waiting.request)
        .map_err(|e| Error::Internal(e.into()))?
        .into_iter()
        .map(|[name, value]| (name, value))
        .collect();
    Ok(Some(Waiting { stored: waiting, request }))
}

/// A sign-in back from its provider.
#[derive(Debug, Clone)]
pub struct Waiting {
    stored: UpstreamSignIn,
    /// The client's authorization request, as it was carried.
    pub request: Vec<(String, String)>,
}

impl Waiting {
    pub fn provider_id(&self) -> &str {
        &self.stored.provider_id
    }

    /// The person connecting an account, for a connection.
    pub fn user_id(&self) -> Option<&str> {
        self.stored.user_id.as_deref()
    }
}

/// What the provider's answer carried.
#[derive(Debug, Clone, Copy, Default)]
pub struct Answer<'a> {
    pub code: Option<&'a str>,
    pub iss: Option<&'a str>,
    pub error: Option<&'a str>,
}

/// The claims the provider gives of the person its answer is about, every check passed.
pub async fn claims(
    context: &Context,
    realm: &Realm,
    provider: &IdentityProvider,
    waiting: &Waiting,
    answer: Answer<'_>,
) -> Result<Map<String, Value>, Failure> {
    let authority = Authority::identity_provider(context, &realm.id, provider).await?;
    let tokens = answered(context, &authority, waiting, answer).await?;
    let endpoints = &authority.endpoints;
    let access_token = tokens.get("access_token").and_then(Value::as_str);
    let mut claims = match provider.protocol {
        Protocol::OpenIdConnect => {
            let token = tokens.get("id_token").and_then(Value::as_str).ok_or(id_token::Refused::Malformed)?;
            let issuer = endpoints.issuer.as_deref().unwrap_or_default();
            let expected = Expected {
                issuer,
                audience: &provider.client_id,
                nonce: &waiting.stored.nonce,
                now: context.clock.now(),
            };
            verified(context, endpoints.jwks_uri.as_deref().unwrap_or_default(), token, expected).await?
        }
        Protocol::OAuth2 => Map::new(),
    };
    if let (Some(address), Some(token)) = (&endpoints.userinfo, access_token) {
        let info = match user_info(context, address, token).await {
            Ok(info) => info,
            // An OpenID provider's ID token is enough: its user-info only completes it.
            Err(failure) if provider.protocol == Protocol::OpenIdConnect => {
                tracing::warn!(provider = %provider.id, %failure, "the provider's user-info is not read");
                Map::new()
            }
            Err(failure) => return Err(failure),
        };
        if !info.is_empty() && claims.get("sub").is_some_and(|sub| info.get("sub") != Some(sub)) {
            // OpenID Connect Core §5.3.2: a user-info about anyone else is not used.
            return Err(Failure::UserInfo);
        }
        for (name, value) in info {
            claims.entry(name).or_insert(value);
        }
    } else if provider.protocol == Protocol::OAuth2 {
        return Err(Failure::CodeRefused("the answer carries no access token".into()));
    }
    Ok(claims)
}

/// The token endpoint's answer to the code an authorization answer carries, every check of the
/// answer passed: an error it names, its issuer (RFC 9207 §2.4: one it names must be the
/// server's; a server that says it sends it must).
pub async fn answered(
    context: &Context,
    authority: &Authority<'_>,
    waiting: &Waiting,
    answer: Answer<'_>,
) -> Result<Map<String, Value>, Failure> {
    if let Some(error) = answer.error {
        return Err(Failure::Declined(error.chars().take(64).collect()));
    }
    let endpoints = &authority.endpoints;
    match (answer.iss, &endpoints.issuer) {
        (Some(named), Some(expected)) if named != expected => return Err(Failure::MixUp(Some(named.to_owned()))),
        (None, Some(_)) if endpoints.sends_issuer => return Err(Failure::MixUp(None)),
        _ => {}
    }
    let code = answer.code.ok_or_else(|| Failure::Declined("no code".into()))?;
    let verifier = opened(context, authority.id, &waiting.stored.code_verifier)?;
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", authority.callback.as_str()),
        ("code_verifier", verifier.as_str()),
    ];
    token_endpoint(context, authority, &form).await
}

/// A value sealed for a provider (its client secret, a PKCE verifier, a connection's token),
/// opened; `whose` names the provider in the error.
pub fn opened(context: &Context, whose: &str, sealed: &str) -> Result<String, Error> {
    let plain =
        context.hasher.sealer(SEALING_PURPOSE).open(sealed).ok().and_then(|plain| String::from_utf8(plain).ok());
    plain.ok_or_else(|| Error::Internal(anyhow::anyhow!("a sealed value of provider {whose} cannot be opened")))
}

/// The answer of the authority's token endpoint to `form`: its JSON object when it took it, else
/// the error it named. A client with a secret authenticates with HTTP Basic; one without names
/// itself.
pub async fn token_endpoint(
    context: &Context,
    authority: &Authority<'_>,
    form: &[(&str, &str)],
) -> Result<Map<String, Value>, Failure> {
    let secret = authority.client_secret.map(|sealed| opened(context, authority.id, sealed)).transpose()?;
    let basic = secret.as_deref().map(|secret| (authority.client_id, secret));
    let mut form = form.to_vec();
    if basic.is_none() {
        form.push(("client_id", authority.client_id));
    }
    let what = "the provider's token endpoint";
    let token = &authority.endpoints.token;
    let answered = crate::runtime::outbound::documents::post_form(context, what, token, &form, basic, MAX_ANSWER_BYTES)
        .await
        .map_err(Failure::Unreachable)?;
    let body: Option<Map<String, Value>> = serde_json::from_slice(&answered.body).ok();
    match body {
        Some(body) if answered.status.is_success() => Ok(body),
        Some(body) => {
            let error = body.get("error").and_then(Value::as_str).unwrap_or("no error code");
            Err(Failure::CodeRefused(error.chars().take(64).collect()))
        }
        None => Err(Failure::CodeRefused(format!("an answer {} that is not a JSON object", answered.status))),
    }
}

/// The ID token's claims; a token signed by a key the kept set lacks fetches the set again.
async fn verified(
    context: &Context,
    jwks_uri: &str,
    token: &str,
    expected: Expected<'_>,
) -> Result<Map<String, Value>, Failure> {
    let keys = upstream::keys(context, jwks_uri, false).await.map_err(Failure::Unreachable)?;
    match id_token::verify(token, &keys, expected) {
        Err(id_token::Refused::Signature) => {
            let keys = upstream::keys(context, jwks_uri, true).await.map_err(Failure::Unreachable)?;
            Ok(id_token::verify(token, &keys, expected)?)
        }
        verified => Ok(verified?),
    }
}

async fn user_info(context: &Context, address: &str, token: &str) -> Result<Map<String, Value>, Failure> {
    let what = "the provider's user-info address";
    let answered =
        crate::runtime::outbound::documents::fetch_with_token(context, what, address, token, MAX_ANSWER_BYTES)
            .await
            .map_err(Failure::Unreachable)?;
    if !answered.status.is_success() {
        return Err(Failure::Unreachable(format!("{what} answered {}", answered.status)));
    }
    serde_json::from_slice(&answered.body).map_err(|_| Failure::Unreachable(format!("{what} gave no JSON object")))
}
