//! What operators read: one structured log line per request, every line of a request naming its
//! id, no secret in any line; and with the database unreachable, 503 answers that say to come back
//! (`Retry-After`) from the admin API, the token endpoint and readiness alike.

use std::io::Write;
use std::sync::{Arc, Mutex};

use reqwest::StatusCode;
use serde_json::Value;

use crate::support::proxy::Proxy;
use crate::support::{TestApp, TestClient, answer, spawn_app};

/// The JSON log lines written while it lives, on this test's thread (where its service runs).
struct CapturedLog {
    lines: Arc<Mutex<Vec<u8>>>,
    _guard: tracing::subscriber::DefaultGuard,
}

#[derive(Clone)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl CapturedLog {
    /// Captures at `info`, in the service's JSON format.
    fn start() -> Self {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Sink(lines.clone());
        let subscriber = tracing_subscriber::fmt()
            .json()
            .with_env_filter("info,sqlx=warn")
            .with_writer(move || sink.clone())
            .finish();
        Self { lines, _guard: tracing::subscriber::set_default(subscriber) }
    }

    fn text(&self) -> String {
        String::from_utf8(self.lines.lock().unwrap().clone()).unwrap()
    }

    fn lines(&self) -> Vec<Value> {
        self.text().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    }

    /// The lines logged while serving the request with this id.
    fn of_request(&self, id: &str) -> Vec<Value> {
        self.lines().into_iter().filter(|line| line["span"]["request_id"] == id).collect()
    }

    /// The one request line of the request with this id.
    fn request_line(&self, id: &str) -> Value {
        let lines: Vec<Value> =
            self.of_request(id).into_iter().filter(|line| line["fields"]["message"] == "request").collect();
        assert_eq!(lines.len(), 1, "one request line for {id}: {}", self.text());
        lines[0]["fields"].clone()
    }
}

/// A client credentials grant sent with the request id `id`.
async fn token_with_id(app: &TestApp, client: &TestClient, secret: &str, id: &str) -> crate::support::Answer {
    let url = format!("{}/realms/{}/protocol/openid-connect/token", app.base, client.realm);
    let sent = app
        .http
        .post(url)
        .basic_auth(&client.id, Some(secret))
        .header("x-request-id", id)
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    answer(sent).await
}

/// An admin GET sent with the request id `id`.
async fn admin_get_with_id(app: &TestApp, path: &str, id: &str) -> crate::support::Answer {
    let sent = app
        .http
        .get(format!("{}{path}", app.admin))
        .header("x-api-key", &app.key)
        .header("x-request-id", id)
        .send()
        .await
        .unwrap();
    answer(sent).await
}

#[tokio::test]
async fn every_request_is_logged_in_one_line_with_its_route_realm_caller_and_id_and_no_secret() {
    let log = CapturedLog::start();
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let shop = app.create_client("acme", "shop", &["client_credentials"], &[]).await;

    let listed = admin_get_with_id(&app, "/realms/acme/clients", "listing-1").await;
    assert_eq!(listed.status, StatusCode::OK);
    let line = log.request_line("listing-1");
    assert_eq!(line["method"], "GET");
    assert_eq!(line["route"], "/api/v1/admin/realms/{realm}/clients");
    assert_eq!(line["status"], 200);
    assert_eq!(line["realm"], "acme");
    assert!(line["caller"].as_str().unwrap().starts_with("credential:"), "{line}");
    assert!(line["duration_ms"].as_f64().unwrap() >= 0.0);

    let issued = token_with_id(&app, &shop, &shop.secret, "token-1").await;
    assert_eq!(issued.status, StatusCode::OK);
    let line = log.request_line("token-1");
    assert_eq!(
        (&line["method"], &line["route"], &line["status"], &line["realm"], &line["caller"]),
        (
            &Value::from("POST"),
            &Value::from("/realms/{realm}/protocol/openid-connect/token"),
            &Value::from(200),
            &Value::from("acme"),
            &Value::from("client:shop")
        )
    );
    let refused = token_with_id(&app, &shop, "cstl_cs_wrong", "token-2").await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert_eq!(log.request_line("token-2")["status"], 401);

    // Neither the API key, the client secret nor the token appear in any line.
    let text = log.text();
    let token = issued.body["access_token"].as_str().unwrap();
    for secret in [app.key.as_str(), shop.secret.as_str(), token] {
        assert!(!text.contains(secret), "a secret was logged");
    }
}

#[tokio::test]
async fn with_the_database_unreachable_the_admin_api_and_the_token_endpoint_answer_503_to_retry() {
    let log = CapturedLog::start();
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let web = app.create_client("acme", "web", &["password"], &[]).await;
    app.create_user("acme", "ada", "analytical engine").await;
    app.state.store.close().await;

    let admin = admin_get_with_id(&app, "/realms/acme/users", "outage-admin").await;
    assert_eq!((admin.status, admin.error_code()), (StatusCode::SERVICE_UNAVAILABLE, "ServiceUnavailable"));
    assert_eq!(admin.headers["retry-after"], "5");

    let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let form = [("grant_type", "password"), ("username", "ada"), ("password", "analytical engine")];
    let sent = app
        .http
        .post(url)
        .basic_auth(&web.id, Some(&web.secret))
        .header("x-request-id", "outage-token")
        .form(&form)
        .send()
        .await
        .unwrap();
    let token = answer(sent).await;
    assert_eq!(token.status, StatusCode::SERVICE_UNAVAILABLE, "{:?}", token.body);
    assert_eq!(token.body["error"], "temporarily_unavailable");
    assert_eq!(token.headers["retry-after"], "5");

    let ready = app.http.get(format!("{}/readyz", app.base)).send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::SERVICE_UNAVAILABLE);

    // Each failure is logged at error level under the id of the request that met it.
    for id in ["outage-admin", "outage-token"] {
        let lines = log.of_request(id);
        assert!(lines.iter().any(|line| line["level"] == "ERROR"), "an error line for {id}: {lines:?}");
        assert_eq!(log.request_line(id)["status"], 503);
    }
}

/// What a collector received: the content type and body of each post.
type Posts = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A collector on loopback that keeps the bodies posted to `/v1/traces`.
async fn collector() -> (String, Posts) {
    let received: Posts = Arc::default();
    let kept = received.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
            let kept = kept.clone();
            async move {
                let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
                kept.lock().unwrap().push((content_type, body.to_vec()));
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}"), received)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_otlp_endpoint_each_request_is_exported_as_a_trace_holding_its_route_and_id() {
    use tracing_subscriber::layer::SubscriberExt as _;

    let (endpoint, received) = collector().await;
    let traces = Arc::new(castellan::runtime::telemetry::Traces::export_to(&endpoint).unwrap());
    let subscriber =
        tracing_subscriber::registry().with(tracing_subscriber::EnvFilter::new("info,sqlx=warn")).with(traces.layer());
    // The service's tasks run on the runtime's threads: the subscriber is the process's.
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let listed = admin_get_with_id(&app, "/realms/acme/clients", "traced-request-1").await;
    assert_eq!(listed.status, StatusCode::OK);

    // The request's span closes on the server's thread once its answer is sent, which may be a
    // moment after the client read it: flush again (each flush a round trip to the collector)
    // until it arrived, a bounded number of times.
    let mut bytes: Vec<u8> = Vec::new();
    for _ in 0..50 {
        let flushing = traces.clone();
        tokio::task::spawn_blocking(move || flushing.flush()).await.unwrap().unwrap();
        let posts = received.lock().unwrap().clone();
        assert!(!posts.is_empty(), "the collector received the spans");
        assert!(posts.iter().all(|(content_type, _)| content_type == "application/x-protobuf"), "OTLP/HTTP protobuf");
        bytes = posts.into_iter().flat_map(|(_, body)| body).collect();
        if bytes.windows(16).any(|window| window == b"traced-request-1") {
            break;
        }
    }
    let holds = |text: &str| bytes.windows(text.len()).any(|window| window == text.as_bytes());
    assert!(holds("traced-request-1"), "the request's span carries its id");
    assert!(holds("/api/v1/admin/realms/{realm}/clients"), "and its route, logged inside it");
    assert!(holds("castellan"), "under the service's name");
}

#[tokio::test]
async fn a_postgresql_server_that_stops_answering_gives_503s_not_500s() {
    let db = crate::support::TestDatabase::new().await;
    if !db.url.starts_with("postgres") {
        // SQLite is a file of this process: there is no server to lose. Its closed pool gives the
        // same 503s (the test above).
        return;
    }
    let upstream = url::Url::parse(&db.url).unwrap();
    let upstream_address = format!("{}:{}", upstream.host_str().unwrap(), upstream.port().unwrap_or(5432));
    let proxy = Proxy::to(upstream_address.clone()).await;
    let mut through = upstream.clone();
    through.set_port(Some(proxy.address.port())).unwrap();
    let through = through.to_string();
    let app = crate::support::spawn_with(db, |settings| settings.database_url = through).await;
    app.create_realm("acme").await;
    let web = app.create_client("acme", "web", &["password"], &[]).await;
    app.create_user("acme", "ada", "analytical engine").await;

    proxy.cut();
    let admin = admin_get_with_id(&app, "/realms/acme/users", "lost-admin").await;
    assert_eq!(
        (admin.status, admin.error_code()),
        (StatusCode::SERVICE_UNAVAILABLE, "ServiceUnavailable"),
        "{:?}",
        admin.body
    );
    assert_eq!(admin.headers["retry-after"], "5");
    let form = [("grant_type", "password"), ("username", "ada"), ("password", "analytical engine")];
    let token = app.token(&web, &form).await;
    assert_eq!(
        (token.status, token.body["error"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("temporarily_unavailable"))
    );
    assert_eq!(token.headers["retry-after"], "5");
}

/// Makes [`log_process`] set up the service's log in the format it names and write one line.
const LOG_PROCESS_FORMAT: &str = "CASTELLAN_TEST_LOG_FORMAT";

/// The service's log set up as `castellan serve` sets it up, in a process of its own (a process
/// has one global subscriber), writing one warning. Without its environment it does nothing.
#[test]
#[ignore = "run by the log tests as a process of its own"]
fn log_process() {
    let Ok(format) = std::env::var(LOG_PROCESS_FORMAT) else { return };
    let settings = castellan::kernel::config::Settings {
        log_format: if format == "json" {
            castellan::kernel::config::LogFormat::Json
        } else {
            castellan::kernel::config::LogFormat::Text
        },
        ..castellan::kernel::config::Settings::default()
    };
    let _logging = castellan::runtime::telemetry::init_logging(&settings).unwrap();
    tracing::warn!(reason = "a test", "a line of the log");
}

/// The service's log written to a pipe (as to a file or a collector): text without a colour code,
/// and JSON one object per line.
#[tokio::test]
async fn a_log_written_to_a_pipe_holds_no_colour_codes() {
    for format in ["text", "json"] {
        let ran = tokio::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &own_test("log_process"), "--ignored", "--nocapture"])
            .env(LOG_PROCESS_FORMAT, format)
            .env_remove("CASTELLAN_LOG")
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .unwrap();
        assert!(ran.status.success(), "{format}: {}", String::from_utf8_lossy(&ran.stderr));
        let log = String::from_utf8(ran.stderr).unwrap();
        let line = log.lines().find(|line| line.contains("a line of the log")).expect("the line is written");
        assert!(!log.contains('\u{1b}'), "{format}: no escape code in a pipe: {log:?}");
        if format == "json" {
            let parsed: Value = serde_json::from_str(line).unwrap();
            assert_eq!((parsed["level"].as_str(), parsed["fields"]["reason"].as_str()), (Some("WARN"), Some("a test")));
        } else {
            assert!(line.contains("WARN") && line.contains("reason=\"a test\""), "{line}");
        }
    }
}

/// The path the test binary knows a test of this module by (its module path without the binary's
/// name), so that a move of the module moves the name with it.
fn own_test(name: &str) -> String {
    let module = module_path!().split_once("::").map_or(module_path!(), |(_, path)| path);
    format!("{module}::{name}")
}
