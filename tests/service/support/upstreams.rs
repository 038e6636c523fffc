//! Identity providers on loopback for the federation tests, each over HTTPS with a certificate of
//! the test authority: a TLS front that puts the service itself at an https address (so that one
//! of its realms is another's upstream OpenID provider), and a provider whose answers each test
//! scripts (an OpenID provider whose ID tokens can be tampered with, or a GitHub-style OAuth 2.0
//! provider that has only a user-info address).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::oauth::browser::challenge;
use crate::oauth::client_keys::ClientKey;
use crate::support::receiver::{authority_file, serve_tls, server_config};
use crate::support::{TestApp, TestDatabase, spawn_with};

/// A TLS listener on loopback forwarding every connection to a plain HTTP address.
pub struct TlsFront {
    /// `https://127.0.0.1:<port>`
    pub url: String,
    listener: Option<TcpListener>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

impl TlsFront {
    pub async fn bind() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("https://127.0.0.1:{}", listener.local_addr().unwrap().port());
        Self { url, listener: Some(listener), task: None }
    }

    pub fn forward_to(&mut self, target: SocketAddr) {
        let listener = self.listener.take().expect("forwarding once");
        let acceptor = TlsAcceptor::from(server_config());
        self.task = Some(tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                    let Ok(mut plain) = tokio::net::TcpStream::connect(target).await else { return };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        }));
    }
}

/// The service at an https public address (its TLS front's), trusting the test authority and
/// allowed to reach loopback: its realms can be one another's upstream providers.
pub async fn spawn_at_https() -> (TestApp, TlsFront) {
    spawn_at_https_with(|_| {}).await
}

/// The service behind a TLS front, with its settings adjusted.
pub async fn spawn_at_https_with(adjust: impl FnOnce(&mut castellan::kernel::config::Settings)) -> (TestApp, TlsFront) {
    let mut front = TlsFront::bind().await;
    let public = front.url.clone();
    let app = spawn_with(TestDatabase::new().await, |settings| {
        settings.public_url = Some(public);
        trust_loopback(settings);
        adjust(settings);
    })
    .await;
    front.forward_to(app.base.trim_start_matches("http://").parse().unwrap());
    (app, front)
}

/// Lets the service reach the test's HTTPS servers on loopback.
pub fn trust_loopback(settings: &mut castellan::kernel::config::Settings) {
    settings.webhook_allowed_networks = vec!["127.0.0.0/8".parse().unwrap()];
    settings.webhook_ca_file = Some(authority_file());
}

/// What the scripted provider answers.
#[derive(Default)]
struct Script {
    /// Claims of the person (ID token and user-info alike).
    person: Value,
    /// Changes to the ID token's claims (null removes one).
    tampering: Value,
    /// Signs ID tokens with a key its JWK Set does not hold.
    forged: bool,
    /// OAuth 2.0 only: no ID token, the person read at the user-info address.
    plain_oauth: bool,
    /// The `iss` its authorization answers carry, when not its own.
    answered_issuer: Option<String>,
    /// Gives refresh tokens and access tokens living a minute, and takes the refresh grant.
    refreshing: bool,
    /// What its user-info answers instead of the person: a status, or other claims.
    user_info: Option<Result<Value, u16>>,
    /// Refresh tokens it honours (it rotates them), and how many access tokens it issued.
    refresh_tokens: Vec<String>,
    issued: usize,
    /// Codes issued: the authorization request's parameters.
    codes: HashMap<String, HashMap<String, String>>,
    /// Every authorization request received.
    pub requests: Vec<HashMap<String, String>>,
}

#[derive(Clone)]
struct Shared {
    base: String,
    script: Arc<Mutex<Script>>,
    key: Arc<ClientKey>,
    forger: Arc<ClientKey>,
    jwk: Value,
    now: Arc<dyn Fn() -> i64 + Send + Sync>,
}

/// A provider whose answers the test scripts.
pub struct ScriptedProvider {
    /// `https://127.0.0.1:<port>`: its issuer.
    pub base: String,
    shared: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ScriptedProvider {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ScriptedProvider {
    /// Starts a provider whose tokens live by `app`'s clock, vouching for `person`.
    pub async fn start(app: &TestApp, person: Value) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("https://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let (key, jwk) = ClientKey::new("upstream-1");
        let (forger, _) = ClientKey::new("upstream-1");
        let state = app.state.clone();
        let shared = Shared {
            base: base.clone(),
            script: Arc::new(Mutex::new(Script { person, ..Script::default() })),
            key: Arc::new(key),
            forger: Arc::new(forger),
            jwk,
            now: Arc::new(move || state.clock.now().timestamp()),
        };
        let router = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/jwks", get(jwks))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .route("/userinfo", get(userinfo))
            .with_state(shared.clone());
        let task = serve_tls(listener, router);
        Self { base, shared, task }
    }

    pub fn discovery_url(&self) -> String {
        format!("{}/.well-known/openid-configuration", self.base)
    }

    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        self.shared.script.lock().unwrap()
    }

    /// The person it vouches for from now on.
    pub fn vouch_for(&self, person: Value) {
        self.script().person = person;
    }

    /// Changes its ID tokens' claims from now on (`{}`: none).
    pub fn tamper(&self, tampering: Value) {
        self.script().tampering = tampering;
    }

    pub fn forge_signatures(&self, forged: bool) {
        self.script().forged = forged;
    }

    pub fn plain_oauth(&self) {
        self.script().plain_oauth = true;
    }

    /// Its user-info answers `answer` from now on (claims, or an error status) instead of the person.
    pub fn user_info_answers(&self, answer: Result<Value, u16>) {
        self.script().user_info = Some(answer);
    }

    /// Gives refresh tokens from now on, and access tokens that live a minute.
    pub fn refreshing(&self) {
        self.script().refreshing = true;
    }

    /// Forgets every refresh token it gave: the next refresh is refused with `invalid_grant`.
    pub fn revoke_refresh_tokens(&self) {
        self.script().refresh_tokens.clear();
    }

    /// The last access token it issued.
    pub fn last_access_token(&self) -> String {
        format!("at-{}", self.script().issued)
    }

    /// The `iss` its answers carry from now on.
    pub fn answer_as(&self, issuer: &str) {
        self.script().answered_issuer = Some(issuer.to_owned());
    }

    /// The parameters of the last authorization request it received.
    pub fn last_request(&self) -> HashMap<String, String> {
        self.script().requests.last().cloned().expect("an authorization request")
    }
}

async fn discovery(State(shared): State<Shared>) -> Json<Value> {
    let base = &shared.base;
    Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "userinfo_endpoint": format!("{base}/userinfo"),
        "jwks_uri": format!("{base}/jwks"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": true,
    }))
}

async fn jwks(State(shared): State<Shared>) -> Json<Value> {
    Json(json!({ "keys": [shared.jwk] }))
}

/// The person is signed in here already: the answer goes straight back with a code.
async fn authorize(State(shared): State<Shared>, RawQuery(query): RawQuery) -> Response {
    let query = pairs(query.unwrap_or_default().as_bytes());
    let code = uuid::Uuid::new_v4().to_string();
    let mut script = shared.script.lock().unwrap();
    script.requests.push(query.clone());
    script.codes.insert(code.clone(), query.clone());
    let mut back = url::Url::parse(&query["redirect_uri"]).unwrap();
    let issuer = script.answered_issuer.clone().unwrap_or_else(|| shared.base.clone());
    back.query_pairs_mut().append_pair("code", &code).append_pair("state", &query["state"]).append_pair("iss", &issuer);
    (StatusCode::SEE_OTHER, [(header::LOCATION, back.to_string())]).into_response()
}

fn pairs(text: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(text).into_owned().collect()
}

async fn token(State(shared): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let form = pairs(&body);
    let refused = |error: &str| (StatusCode::BAD_REQUEST, Json(json!({ "error": error }))).into_response();
    if !headers.get(header::AUTHORIZATION).is_some_and(|value| value.to_str().unwrap().starts_with("Basic ")) {
        return (StatusCode::UNAUTHORIZED, Json(json!({ "error": "invalid_client" }))).into_response();
    }
    let mut script = shared.script.lock().unwrap();
    if form.get("grant_type").map(String::as_str) == Some("refresh_token") {
        let presented = form.get("refresh_token").cloned().unwrap_or_default();
        let Some(at) = script.refresh_tokens.iter().position(|token| *token == presented) else {
            return refused("invalid_grant");
        };
        script.refresh_tokens.remove(at);
        return Json(refreshed(&mut script)).into_response();
    }
    let Some(asked) = form.get("code").and_then(|code| script.codes.get(code)).cloned() else {
        return refused("invalid_grant");
    };
    let verifier = form.get("code_verifier").map(String::as_str).unwrap_or_default();
    if asked.get("code_challenge") != Some(&challenge(verifier))
        || form.get("redirect_uri") != asked.get("redirect_uri")
    {
        return refused("invalid_grant");
    }
    if script.refreshing {
        return Json(refreshed(&mut script)).into_response();
    }
    let access_token = format!("at-{}", form["code"]);
    if script.plain_oauth {
        return Json(json!({ "access_token": access_token, "token_type": "bearer" })).into_response();
    }
    let now = (shared.now)();
    let mut claims = json!({
        "iss": shared.base, "aud": asked["client_id"], "nonce": asked.get("nonce"), "exp": now + 300, "iat": now,
    });
    for (source, removing) in [(&script.person, false), (&script.tampering, true)] {
        for (name, value) in source.as_object().into_iter().flatten() {
            match value {
                Value::Null if removing => {
                    claims.as_object_mut().unwrap().remove(name);
                }
                value => claims[name] = value.clone(),
            }
        }
    }
    let signer = if script.forged { &shared.forger } else { &shared.key };
    let id_token = signer.sign(&claims);
    Json(json!({ "access_token": access_token, "token_type": "Bearer", "id_token": id_token })).into_response()
}

/// A new access token living a minute, and a new refresh token in place of the one presented.
fn refreshed(script: &mut Script) -> Value {
    script.issued += 1;
    let refresh_token = format!("rt-{}", uuid::Uuid::new_v4());
    script.refresh_tokens.push(refresh_token.clone());
    json!({
        "access_token": format!("at-{}", script.issued), "token_type": "Bearer", "expires_in": 60,
        "refresh_token": refresh_token, "scope": "calendar.read",
    })
}

async fn userinfo(State(shared): State<Shared>, headers: HeaderMap) -> Response {
    let bearer = headers.get(header::AUTHORIZATION).and_then(|value| value.to_str().ok()).unwrap_or_default();
    if !bearer.starts_with("Bearer at-") {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let script = shared.script.lock().unwrap();
    match &script.user_info {
        Some(Ok(claims)) => Json(claims.clone()).into_response(),
        Some(Err(status)) => StatusCode::from_u16(*status).unwrap().into_response(),
        None => Json(script.person.clone()).into_response(),
    }
}
