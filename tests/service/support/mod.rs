//! Spawns the real service in-process on a free port, on a fresh SQLite file or a fresh
//! PostgreSQL schema (`TEST_DATABASE_URL`), with the manual clock.

pub mod authority;
pub mod fleet;
pub mod node;
pub mod proxy;
pub mod receiver;
pub mod smtp;
pub mod upstreams;
pub mod webdriver;

use std::path::{Path, PathBuf};

use castellan::kernel::config::Settings;
use castellan::store::Store;
use castellan::{Application, Services};
use reqwest::{Method, StatusCode, header::HeaderMap};
use serde_json::{Value, json};
use tokio::sync::oneshot;

pub fn policies_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../policies")
}

/// The policies the service runs with by default: those built into it.
/// A command of the suite's Python tools: in `CASTELLAN_PYTHON_TOOLS`, or where `scripts/test`
/// installs them; the test that needs it says how to get it when it is missing.
pub fn python_tool(name: &str) -> PathBuf {
    let bin = std::env::var_os("CASTELLAN_PYTHON_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/python-tools/bin"));
    let tool = bin.join(name);
    assert!(
        tool.exists(),
        "{name} is not installed at {}: scripts/test installs the suite's Python tools (or set CASTELLAN_PYTHON_TOOLS)",
        tool.display()
    );
    tool
}

pub fn policies() -> castellan::authz::PolicyFiles {
    castellan::authz::PolicyFiles::shipped()
}

/// A database for one test: a temporary SQLite file, or a new schema in the PostgreSQL database
/// named by `TEST_DATABASE_URL`.
pub struct TestDatabase {
    pub url: String,
    pub dir: PathBuf,
    /// Whether dropping it removes its folder: only the test that made the folder does.
    owned: bool,
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl TestDatabase {
    pub async fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("castellan-test-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("temporary folder");
        let url = match std::env::var("TEST_DATABASE_URL").ok().filter(|u| !u.is_empty()) {
            Some(base) => {
                let schema = format!("t_{}", uuid::Uuid::new_v4().simple());
                sqlx::any::install_default_drivers();
                let pool = sqlx::AnyPool::connect(&base).await.expect("TEST_DATABASE_URL reachable");
                // Installed once in `public`, outside every test's schema, as an operator would:
                // the migrations then find it. Tests racing to install it lose to one another.
                if sqlx::query("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public").execute(&pool).await.is_err() {
                    let installed = sqlx::query("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'");
                    installed.fetch_one(&pool).await.expect("pg_trgm installed by another test");
                }
                sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
                    .execute(&pool)
                    .await
                    .expect("create schema");
                pool.close().await;
                let separator = if base.contains('?') { '&' } else { '?' };
                format!("{base}{separator}options=-c%20search_path%3D{schema}")
            }
            None => format!("sqlite://{}", dir.join("castellan.db").display()),
        };
        Self { url, dir, owned: true }
    }

    /// The database and folder another test database made, for a second host or process; the
    /// folder stays when this one is dropped.
    pub fn beside(url: String, dir: PathBuf) -> Self {
        Self { url, dir, owned: false }
    }

    pub fn settings(&self) -> Settings {
        Settings {
            listen: "127.0.0.1:0".parse().expect("address"),
            database_url: self.url.clone(),
            database_max_connections: 8,
            manual_clock: true,
            trusted_proxies: vec!["127.0.0.1/32".parse().expect("network")],
            bootstrap_key_file: None,
            secret_key_file: self.dir.join("secret.key"),
            mail_outbox: self.dir.join("outbox"),
            // The suite moves the manual clock by hours and days while its clients keep their
            // connections alive: only the tests of the idle timeout set one.
            idle_timeout_seconds: u32::MAX,
            ..Settings::default()
        }
    }
}

pub struct TestApp {
    pub base: String,
    pub admin: String,
    pub key: String,
    pub account_id: String,
    pub state: std::sync::Arc<Services>,
    pub http: reqwest::Client,
    pub db: TestDatabase,
    /// The link the first start gave the Owner to choose a password (the first host only).
    pub owner_link: Option<String>,
    stop: Option<oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
}

/// What a call answered.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Answer {
    pub fn data(&self) -> &Value {
        &self.body["data"]
    }

    pub fn items(&self) -> &Vec<Value> {
        self.body["pagination"]["items"].as_array().expect("a paged answer")
    }

    pub fn error_code(&self) -> &str {
        self.body["errorCode"].as_str().unwrap_or("")
    }

    /// `(field, code)` of every notification.
    pub fn refused_fields(&self) -> Vec<(String, String)> {
        self.body["notifications"]
            .as_array()
            .map(|all| {
                all.iter()
                    .map(|n| {
                        (n["field"].as_str().unwrap_or("").to_owned(), n["code"].as_str().unwrap_or("").to_owned())
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

pub async fn spawn_app() -> TestApp {
    let db = TestDatabase::new().await;
    spawn_with(db, |_| {}).await
}

pub async fn spawn_with(db: TestDatabase, adjust: impl FnOnce(&mut Settings)) -> TestApp {
    spawn_with_policies(db, adjust, &policies()).await
}

/// The service serving `policies` instead of those it ships.
pub async fn spawn_with_policies(
    db: TestDatabase,
    adjust: impl FnOnce(&mut Settings),
    policies: &castellan::authz::PolicyFiles,
) -> TestApp {
    let mut settings = db.settings();
    adjust(&mut settings);
    let app = Application::build(settings, policies).await.expect("the service starts");
    let first = app.bootstrapped().cloned().expect("a fresh database is bootstrapped");
    serve(app, db, first.api_key, first.account_id.into())
}

/// A second host on the same database (and secret key) as `first`.
pub async fn spawn_beside(first: &TestApp) -> TestApp {
    spawn_beside_with(first, |_| {}).await
}

/// A second host on the same database as `first`, with its settings adjusted.
pub async fn spawn_beside_with(first: &TestApp, adjust: impl FnOnce(&mut Settings)) -> TestApp {
    let db = TestDatabase::beside(first.db.url.clone(), first.db.dir.clone());
    let mut settings = db.settings();
    adjust(&mut settings);
    // Hosts of one deployment share one public address, hence one issuer per realm.
    settings.public_url = Some(first.state.public_url.clone());
    let app = Application::build(settings, &policies()).await.expect("the second host starts");
    assert!(app.bootstrapped().is_none());
    let second = serve(app, db, first.key.clone(), first.account_id.clone());
    // Each host connects its listener for the deployment's changes once it runs: until both
    // listen, neither counts the other among the hosts a change waits for.
    let both =
        async { tokio::join!(first.state.store.until_hearing_changes(), second.state.store.until_hearing_changes()) };
    tokio::time::timeout(std::time::Duration::from_secs(10), both).await.expect("the hosts hear each other's changes");
    second
}

fn serve(app: Application, db: TestDatabase, key: String, account_id: String) -> TestApp {
    let address = app.local_addr();
    let state = app.services().clone();
    let owner_link = app.owner_link();
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(app.run_until_stopped(async move {
        let _ = stopped.await;
    }));
    let base = format!("http://{address}");
    TestApp {
        admin: format!("{base}/api/v1/admin"),
        base,
        key,
        account_id,
        state,
        http: reqwest::Client::new(),
        db,
        owner_link,
        stop: Some(stop),
        server: Some(server),
    }
}

impl TestApp {
    /// Calls the admin API with `key`.
    pub async fn call_as(&self, key: &str, method: Method, path: &str, body: Option<Value>) -> Answer {
        let mut request = self.http.request(method, format!("{}{path}", self.admin)).header("x-api-key", key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        answer(request.send().await.expect("the service answers")).await
    }

    pub async fn get(&self, path: &str) -> Answer {
        self.call_as(&self.key, Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Answer {
        self.call_as(&self.key, Method::POST, path, Some(body)).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Answer {
        self.call_as(&self.key, Method::PUT, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> Answer {
        self.call_as(&self.key, Method::DELETE, path, None).await
    }

    pub async fn create_realm(&self, id: &str) -> Answer {
        let answer = self.post("/realms", json!({ "id": id })).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        answer
    }

    /// Creates an API key with these roles (and scopes) and returns its value.
    pub async fn key_with(&self, roles: &[&str], scopes: Option<&[&str]>) -> String {
        let mut body = json!({ "name": format!("key {}", roles.join("+")), "roles": roles });
        if let Some(scopes) = scopes {
            body["scopes"] = json!(scopes);
        }
        let answer = self.post("/secrets", body).await;
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        answer.data()["value"].as_str().expect("a value").to_owned()
    }

    /// Moves the manual clock forward, running every job that falls due and every delivery due
    /// on the way.
    pub async fn advance(&self, seconds: i64) {
        let response = self
            .http
            .post(format!("{}/_dev/clock", self.base))
            .json(&json!({ "advanceSeconds": seconds }))
            .send()
            .await
            .expect("clock answers");
        assert_eq!(response.status(), StatusCode::OK);
    }

    /// Runs what is due at the clock's time without moving it: webhook deliveries, notification
    /// posts, and the sends detached from requests already answered. Once it returns, whatever
    /// was not sent was not due.
    pub async fn settle(&self) {
        self.advance(0).await;
    }

    /// A second connection to the service's database, for checking what was stored.
    pub async fn database(&self) -> Store {
        Store::connect(&self.db.url, 2).await.expect("database")
    }

    /// Asks the service to stop (as SIGTERM does) and returns the task that ends when it has.
    pub fn begin_stop(&mut self) -> tokio::task::JoinHandle<anyhow::Result<()>> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.server.take().expect("the service is running")
    }

    /// Stops the service gracefully and waits for it.
    pub async fn stop(mut self) {
        self.begin_stop().await.expect("server task").expect("server stops cleanly");
    }
}

pub async fn answer(response: reqwest::Response) -> Answer {
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.expect("a body");
    let body = if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap_or(Value::String(text)) };
    Answer { status, headers, body }
}

/// A realm client able to sign people in, as the protocol tests need it.
#[derive(Debug, Clone)]
pub struct TestClient {
    pub realm: String,
    pub id: String,
    pub secret: String,
}

impl TestApp {
    /// Creates a confidential client with these grant types and scopes; returns its credentials.
    pub async fn create_client(&self, realm: &str, id: &str, grant_types: &[&str], scopes: &[&str]) -> TestClient {
        self.create_scopes(realm, scopes).await;
        let body = json!({
            "id": id,
            "clientConfiguration": { "grantTypes": grant_types, "allowedScopes": scopes },
        });
        let created = self.post(&format!("/realms/{realm}/clients"), body).await;
        assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
        let secret = created.data()["clientSecret"].as_str().expect("a secret").to_owned();
        TestClient { realm: realm.to_owned(), id: id.to_owned(), secret }
    }

    /// Creates the realm scopes among `names` that do not exist yet.
    pub async fn create_scopes(&self, realm: &str, names: &[&str]) {
        for name in names.iter().filter(|n| !["openid", "profile", "email"].contains(n)) {
            let created = self.post(&format!("/realms/{realm}/scopes"), json!({ "name": name })).await;
            assert!(matches!(created.status, StatusCode::CREATED | StatusCode::CONFLICT), "{:?}", created.body);
        }
    }

    /// Creates a user with a password; returns the user's id.
    pub async fn create_user(&self, realm: &str, username: &str, password: &str) -> String {
        let body = json!({ "username": username, "email": format!("{username}@example.com"), "password": password });
        let created = self.post(&format!("/realms/{realm}/users"), body).await;
        assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
        created.data()["id"].as_str().expect("an id").to_owned()
    }

    /// Posts a form to a protocol endpoint of the realm, authenticating as `client` with HTTP Basic.
    pub async fn protocol(&self, client: &TestClient, endpoint: &str, form: &[(&str, &str)]) -> Answer {
        let url = format!("{}/realms/{}/protocol/openid-connect/{endpoint}", self.base, client.realm);
        let response = self
            .http
            .post(url)
            .basic_auth(&client.id, Some(&client.secret))
            .form(form)
            .send()
            .await
            .expect("the service answers");
        answer(response).await
    }

    /// A GET of `url` on the service answered with JSON, its body.
    pub async fn get_json(&self, url: &str) -> Value {
        self.http.get(url).send().await.expect("the service answers").json().await.expect("a JSON body")
    }

    /// The realm's JWKS.
    pub async fn jwks(&self, realm: &str) -> Value {
        self.get_json(&format!("{}/realms/{realm}/protocol/openid-connect/certs", self.base)).await
    }

    /// The realm's OpenID Provider metadata.
    pub async fn discovery(&self, realm: &str) -> Value {
        self.get_json(&format!("{}/realms/{realm}/.well-known/openid-configuration", self.base)).await
    }

    /// The token endpoint.
    pub async fn token(&self, client: &TestClient, form: &[(&str, &str)]) -> Answer {
        self.protocol(client, "token", form).await
    }

    /// The events of this type in the outbox, oldest first, as `(realm_id, client_id, data)`.
    pub async fn events(&self, event_type: &str) -> Vec<(Option<String>, Option<String>, Value)> {
        // The outbox itself is shown by no answer (deliveries show what endpoints received, and
        // only for subscribed endpoints): tests of what is published read it.
        let store = self.database().await;
        let rows: Vec<(Option<String>, Option<String>, String)> = sqlx::query_as(
            "SELECT realm_id, client_id, data FROM event_outbox WHERE event_type = $1 ORDER BY created_at, id",
        )
        .bind(event_type)
        .fetch_all(store.pool())
        .await
        .expect("outbox readable");
        rows.into_iter().map(|(r, c, d)| (r, c, serde_json::from_str(&d).expect("JSON data"))).collect()
    }
}

/// The claims of a JWT, unverified (signatures are checked in the token tests).
pub fn claims(token: &str) -> Value {
    use base64::Engine as _;
    let payload = token.split('.').nth(1).expect("a JWT");
    serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).expect("base64url"))
        .expect("JSON claims")
}

/// Creates a resource at `path` and returns its id.
pub async fn created_id(app: &TestApp, path: &str, body: Value) -> String {
    let created = app.post(path, body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{path}: {:?}", created.body);
    created.data()["id"].as_str().expect("an id").to_owned()
}

/// `text` as one segment of a path: a client id that is an address, say, with its `/` and `:`
/// escaped.
pub fn segment(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}
