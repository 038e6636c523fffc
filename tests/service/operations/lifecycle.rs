//! Operations: health, readiness, metrics, the OpenAPI document, the manual clock, bootstrap,
//! starting on a schema without migrating it, and graceful shutdown.

use std::time::{Duration, Instant};

use castellan::Application;
use castellan::store::Backend;
use reqwest::StatusCode;
use serde_json::json;

use crate::support::{TestDatabase, answer, policies, spawn_app, spawn_with};

#[tokio::test]
async fn health_readiness_and_metrics_answer() {
    let app = spawn_app().await;
    let health = app.http.get(format!("{}/healthz", app.base)).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let ready = app.http.get(format!("{}/readyz", app.base)).send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::OK);
    app.get("/realms/platform").await;
    let metrics = app.http.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
    assert!(
        metrics.contains(
            r#"castellan_http_requests_total{method="GET",route="/api/v1/admin/realms/{realm}",status="200"} 1"#
        ),
        "{metrics}"
    );
    assert!(metrics.contains("castellan_http_request_duration_seconds_bucket"));
}

#[tokio::test]
async fn the_openapi_document_describes_the_admin_api() {
    let app = spawn_app().await;
    let document: serde_json::Value =
        app.http.get(format!("{}/openapi.json", app.admin)).send().await.unwrap().json().await.unwrap();
    assert_eq!(document["openapi"], "3.1.0");
    for path in [
        "/realms",
        "/realms/{realm}",
        "/realms/{realm}/clients/{client}",
        "/roles",
        "/secrets",
        "/secrets/{id}/rotate",
        "/secrets/rotation-policy",
        "/realms/{realm}/clients/{client}/client-secret/rotate",
        "/realms/{realm}/clients/{client}/consumers",
        "/realms/{realm}/clients/{client}/consumers/{consumerId}",
        "/audit-trail",
        "/access-logs",
        "/realms/{realm}/webhooks",
        "/realms/{realm}/clients/{client}/webhooks/metrics",
        "/realms/{realm}/clients/{client}/webhooks/events",
        "/realms/{realm}/clients/{client}/webhooks/{webhookId}/deliveries/{deliveryId}/replay",
        "/webhook-captures",
        "/webhook-captures/{captureId}/requests",
    ] {
        assert!(document["paths"].get(path).is_some(), "{path} is documented");
    }
    // A client's sign-in settings: where a browser may go after logout, and the login page's branding.
    let schemas = &document["components"]["schemas"];
    assert!(schemas["ClientConfigurationView"]["properties"].get("postLogoutRedirectUris").is_some());
    assert!(schemas["ClientView"]["properties"].get("branding").is_some());
    assert!(schemas["BrandingView"]["properties"].get("primaryColor").is_some());
    // Realm and client endpoints share their handlers; each operation is documented under both paths,
    // the client's with its own parameter and operation id.
    for (path, method, id) in [
        ("/realms/{realm}/webhooks", "post", "createRealmWebhook"),
        ("/realms/{realm}/clients/{client}/webhooks", "post", "createRealmClientWebhook"),
        ("/realms/{realm}/clients/{client}/webhooks", "get", "listRealmClientWebhooks"),
        ("/realms/{realm}/clients/{client}/webhooks/deliveries", "get", "listRealmClientWebhooksDeliveries"),
        ("/realms/{realm}/clients/{client}/webhooks/{webhookId}", "put", "updateRealmClientWebhook"),
        (
            "/realms/{realm}/clients/{client}/webhooks/{webhookId}/rotate-secret",
            "post",
            "rotateSecretRealmClientWebhook",
        ),
        ("/realms/{realm}/clients/{client}/webhooks/{webhookId}/test", "post", "testRealmClientWebhook"),
    ] {
        let operation = &document["paths"][path][method];
        assert_eq!(operation["operationId"], id, "{method} {path}");
        let names: Vec<&str> =
            operation["parameters"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
        assert_eq!(names.contains(&"client"), path.contains("{client}"), "{method} {path}: {names:?}");
    }
    assert!(document["components"]["schemas"].get("RealmView").is_some());
    assert!(document["components"]["securitySchemes"].get("apiKey").is_some());
}

#[tokio::test]
async fn the_dev_clock_exists_only_with_the_manual_clock() {
    let app = spawn_with(TestDatabase::new().await, |s| s.manual_clock = false).await;
    let response = app.http.get(format!("{}/_dev/clock", app.base)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    let manual = spawn_app().await;
    let before: serde_json::Value =
        manual.http.get(format!("{}/_dev/clock", manual.base)).send().await.unwrap().json().await.unwrap();
    manual.advance(90).await;
    let after: serde_json::Value =
        manual.http.get(format!("{}/_dev/clock", manual.base)).send().await.unwrap().json().await.unwrap();
    let parse =
        |v: &serde_json::Value| chrono::DateTime::parse_from_rfc3339(v["data"]["now"].as_str().unwrap()).unwrap();
    assert_eq!((parse(&after) - parse(&before)).num_seconds(), 90);

    let backwards = manual
        .http
        .post(format!("{}/_dev/clock", manual.base))
        .json(&json!({ "set": "2000-01-01T00:00:00Z" }))
        .send()
        .await
        .unwrap();
    assert_eq!(answer(backwards).await.refused_fields(), vec![("set".to_owned(), "Range".to_owned())]);
}

#[tokio::test]
async fn advancing_the_clock_runs_the_jobs_that_fall_due() {
    let app = spawn_app().await;
    app.get("/realms").await;
    let logged = app.get("/access-logs").await;
    assert!(logged.body["pagination"]["totalItems"].as_i64().unwrap() >= 1);
    // Retention is 90 days; the hourly job removes what is older.
    app.advance(89 * 86_400).await;
    assert!(app.get("/access-logs").await.body["pagination"]["totalItems"].as_i64().unwrap() >= 2);
    app.advance(2 * 86_400).await;
    let after = app.get("/access-logs?pageSize=200").await;
    let newest_only: Vec<&str> = after.items().iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert_eq!(newest_only, vec!["/api/v1/admin/access-logs"], "only the last call, from after the advance, is left");
}

#[tokio::test]
async fn bootstrap_happens_once_and_writes_the_key_file_privately() {
    let db = TestDatabase::new().await;
    let key_file = db.dir.join("bootstrap.key");
    let mut settings = db.settings();
    settings.bootstrap_key_file = Some(key_file.clone());
    let first = Application::build(settings.clone(), &policies()).await.unwrap();
    let key = first.bootstrapped().expect("the first start bootstraps").api_key.clone();
    assert_eq!(std::fs::read_to_string(&key_file).unwrap().trim(), key);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    drop(first);
    std::fs::remove_file(&key_file).unwrap();

    let second = Application::build(settings, &policies()).await.unwrap();
    assert!(second.bootstrapped().is_none(), "never again on later starts");
    assert!(!key_file.exists(), "no key is written again");
}

#[tokio::test]
async fn without_migrating_the_service_starts_only_on_the_schema_it_knows() {
    let db = TestDatabase::new().await;
    let mut settings = db.settings();
    settings.migrate_on_start = false;
    let refused = Application::build(settings.clone(), &policies()).await.err().expect("an empty schema is refused");
    let said = format!("{refused:#}");
    assert!(said.contains("older than this release") && said.contains("run `castellan migrate`"), "{said}");

    // What `castellan migrate` does; then the service starts, and changes nothing itself.
    let store = castellan::store::Store::connect(&db.url, 1).await.unwrap();
    store.migrate().await.unwrap();
    let started = Application::build(settings.clone(), &policies()).await.unwrap();
    drop(started);

    // A migration of a later release: refused again, named.
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(99_999_i64)
    .bind("a later release")
    .bind(true)
    .bind(vec![0_u8; 48])
    .bind(0_i64)
    .execute(store.pool())
    .await
    .unwrap();
    let refused = Application::build(settings, &policies()).await.err().expect("a newer schema is refused");
    let said = format!("{refused:#}");
    assert!(said.contains("newer than this release") && said.contains("migration 99999"), "{said}");
}

#[tokio::test]
async fn a_graceful_stop_keeps_every_access_log_entry() {
    let app = spawn_app().await;
    for _ in 0..25 {
        app.get("/realms").await;
    }
    let url = app.db.url.clone();
    // Once the service has stopped, only the database can show what it stored.
    let store = app.database().await;
    app.stop().await;
    let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM access_log WHERE path = '/api/v1/admin/realms'")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(count, 25, "stored before the stop completed ({url})");
}

#[tokio::test]
async fn a_graceful_stop_lets_in_flight_requests_finish() {
    let mut app = spawn_app().await;
    // Hold the database so that a creation stays in flight.
    let store = app.database().await;
    let mut lock = store.begin().await.unwrap();
    let statement = match store.backend() {
        Backend::Sqlite => "INSERT INTO accounts (id, name, created_at) VALUES ('lock', 'lock', 0)",
        Backend::Postgres => "LOCK TABLE realms IN EXCLUSIVE MODE",
    };
    sqlx::query(statement).execute(&mut *lock).await.unwrap();

    let request =
        app.http.post(format!("{}/realms", app.admin)).header("x-api-key", &app.key).json(&json!({ "id": "late" }));
    let in_flight = tokio::spawn(request.send());
    let deadline = Instant::now() + Duration::from_secs(10);
    while app.state.metrics.requests_in_flight() == 0 {
        assert!(Instant::now() < deadline, "the request never reached the service");
        tokio::task::yield_now().await;
    }
    let stopped = app.begin_stop();
    // Once the service has stopped taking connections, only the request in flight holds it.
    while reqwest::Client::new().get(format!("{}/healthz", app.base)).send().await.is_ok() {
        assert!(Instant::now() < deadline, "the service never began to stop");
        tokio::task::yield_now().await;
    }
    assert!(!stopped.is_finished(), "the service waits for the request in flight");
    lock.rollback().await.unwrap();

    let response = in_flight.await.unwrap().expect("the in-flight request is answered");
    assert_eq!(response.status(), StatusCode::CREATED);
    stopped.await.unwrap().expect("then the service stops");
    let refused = reqwest::Client::new().get(format!("{}/healthz", app.base)).send().await;
    assert!(refused.is_err(), "no new connections after the stop");
}
