//! Webhooks: endpoint rules, signed at-least-once delivery to real HTTPS receivers on loopback,
//! retries on the manual clock, health, replay and secret rotation.

use hmac::{Hmac, Mac};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::Sha256;

use castellan::kernel::config::Settings;

use crate::support::receiver::{Delivery, Receiver, authority_file};
use crate::support::{TestApp, TestDatabase, spawn_app, spawn_with};

/// The client endpoints of the realm `hooks` and its client `shop`.
pub const SHOP_HOOKS: &str = "/realms/hooks/clients/shop/webhooks";

/// Lets a service deliver to loopback and trust the receivers' test authority.
pub fn receiving(settings: &mut Settings) {
    settings.webhook_allowed_networks = vec!["127.0.0.0/8".parse().unwrap()];
    settings.webhook_ca_file = Some(authority_file());
}

/// A service that may deliver to the receivers, with the realm `hooks` and its client `shop`.
pub async fn spawn_receiving() -> TestApp {
    let app = spawn_with(TestDatabase::new().await, receiving).await;
    app.create_realm("hooks").await;
    app.create_client("hooks", "shop", &["client_credentials"], &[]).await;
    app
}

/// Verifies a delivery as a receiver following Stripe's published scheme does: HMAC-SHA256 over
/// `<t>.<raw body>` keyed with the whole secret, constant-time comparison, 300 s tolerance.
fn verify(secret: &str, delivery: &Delivery, now: i64) -> Result<i64, String> {
    let header = delivery.header("x-service-signature");
    let (mut t, mut v1) = (None, None);
    for part in header.split(',') {
        match part.split_once('=') {
            Some(("t", value)) => t = Some(value),
            Some(("v1", value)) => v1 = Some(value),
            _ => {}
        }
    }
    let t = t.filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())).ok_or("t must be digits")?;
    let v1 = v1
        .filter(|v| v.len() == 64 && v.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .ok_or("v1 must be 64 lowercase hex characters")?;
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(&delivery.body);
    mac.verify_slice(&hex::decode(v1).unwrap()).map_err(|_| "the signature does not match")?;
    let t: i64 = t.parse().unwrap();
    if (now - t).abs() > 300 {
        return Err(format!("t={t} is more than 5 minutes from {now}"));
    }
    Ok(t)
}

fn now(app: &TestApp) -> i64 {
    app.state.clock.now().timestamp()
}

pub async fn register(app: &TestApp, path: &str, body: Value) -> (String, String) {
    let created = app.post(path, body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let data = created.data();
    (data["id"].as_str().unwrap().to_owned(), data["signingSecret"].as_str().unwrap_or("").to_owned())
}

/// The attempts listed for the client's endpoints, newest first.
async fn deliveries(app: &TestApp, path: &str) -> Vec<Value> {
    let listed = app.get(&format!("{path}/deliveries?pageSize=200")).await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    listed.items().clone()
}

/// The attempts listed once the deliveries due now have run, of which at least `count` are in
/// state `state`.
pub async fn recorded(app: &TestApp, path: &str, state: &str, count: usize) -> Vec<Value> {
    app.settle().await;
    let all = deliveries(app, path).await;
    assert!(all.iter().filter(|a| a["state"] == state).count() >= count, "expected {count} attempts {state}: {all:?}");
    all
}

pub async fn create_user(app: &TestApp, realm: &str, username: &str) -> String {
    let created = app
        .post(
            &format!("/realms/{realm}/users"),
            json!({ "username": username, "email": format!("{username}@example.com") }),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    created.data()["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn registration_follows_every_rule_of_the_endpoint_fields() {
    let app = spawn_app().await;
    app.create_realm("hooks").await;
    app.create_client("hooks", "shop", &["client_credentials"], &[]).await;
    let path = SHOP_HOOKS;

    let empty = app.post(path, json!({})).await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST);
    let fields = empty.refused_fields();
    for field in ["name", "url", "events"] {
        assert!(fields.contains(&(field.to_owned(), "Required".to_owned())), "{field}: {fields:?}");
    }

    let refused = app
        .post(
            path,
            json!({
                "name": "n".repeat(129), "url": "http://example.com/hook", "events": ["ping", "admin_resource_created", "user_teleported"],
                "retries": 11, "firstRetryAfterSeconds": 29,
            }),
        )
        .await;
    assert_eq!(refused.error_code(), "ValidationFailed");
    let fields: Vec<String> = refused.refused_fields().into_iter().map(|(field, _)| field).collect();
    for field in ["name", "url", "events[0]", "events[1]", "events[2]", "retries", "firstRetryAfterSeconds"] {
        assert!(fields.contains(&field.to_owned()), "{field}: {fields:?}");
    }
    let no_events = app.post(path, json!({ "name": "n", "url": "https://127.0.0.1/x", "events": [] })).await;
    assert!(no_events.refused_fields().contains(&("events".to_owned(), "MinLength".to_owned())));

    // Addresses inside are refused, however they are written.
    for inside in [
        "https://127.0.0.1/hook",
        "https://10.1.2.3/hook",
        "https://169.254.169.254/latest",
        "https://[::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://100.64.0.1/hook",
        "https://0.0.0.0/hook",
    ] {
        let answer = app.post(path, json!({ "name": "inside", "url": inside, "events": ["user_created"] })).await;
        assert_eq!(answer.refused_fields(), [("url".to_owned(), "Format".to_owned())], "{inside}");
    }
    let long = format!("https://h.example/{}", "a".repeat(2048));
    assert_eq!(
        app.post(path, json!({ "name": "l", "url": long, "events": ["user_created"] })).await.refused_fields()[0].0,
        "url"
    );

    // A realm endpoint hears only administrative and attack events.
    let realm_path = "/realms/hooks/webhooks";
    let wrong =
        app.post(realm_path, json!({ "name": "r", "url": "https://127.0.0.1/x", "events": ["user_created"] })).await;
    assert!(wrong.refused_fields().contains(&("events[0]".to_owned(), "OneOf".to_owned())), "{:?}", wrong.body);
}

#[tokio::test]
async fn the_signing_secret_is_shown_once_and_only_to_holders_of_secret_read() {
    let app = spawn_receiving().await;
    let receiver = Receiver::start().await;
    let path = SHOP_HOOKS;
    let created = app.post(path, json!({ "name": "Orders", "url": receiver.url, "events": ["user_created"] })).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let data = created.data();
    let secret = data["signingSecret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_") && secret.len() > 40, "{secret}");
    assert_eq!(data["signingSecretLastFour"], secret[secret.len() - 4..]);
    assert_eq!(
        (data["retries"].as_i64(), data["firstRetryAfterSeconds"].as_i64(), data["status"].as_str()),
        (Some(5), Some(60), Some("Active"))
    );
    let id = data["id"].as_str().unwrap();
    let read = app.get(&format!("{path}/{id}")).await;
    assert!(read.data().get("signingSecret").is_none());
    assert_eq!(read.data()["signingSecretLastFour"], data["signingSecretLastFour"]);

    // A credential that may register endpoints but not read secrets never sees it.
    let role = app
        .post(
            "/roles",
            json!({ "name": "hook-builder", "permissions": ["client:write", "webhook:read", "webhook:update"] }),
        )
        .await;
    assert_eq!(role.status, StatusCode::CREATED, "{:?}", role.body);
    let builder = app.key_with(&["hook-builder"], None).await;
    let body = json!({ "name": "Second", "url": receiver.url, "events": ["user_created"] });
    let theirs = app.call_as(&builder, reqwest::Method::POST, path, Some(body)).await;
    assert_eq!(theirs.status, StatusCode::CREATED, "{:?}", theirs.body);
    assert!(theirs.data().get("signingSecret").is_none());
    let rotated = app.call_as(&builder, reqwest::Method::POST, &format!("{path}/{id}/rotate-secret"), None).await;
    assert_eq!(rotated.status, StatusCode::OK, "{:?}", rotated.body);
    assert!(rotated.data().get("signingSecret").is_none());
    assert_ne!(rotated.data()["signingSecretLastFour"], data["signingSecretLastFour"]);

    // client:write is required to register: webhook permissions alone are not enough.
    app.post("/roles", json!({ "name": "hook-reader", "permissions": ["webhook:read", "webhook:create"] })).await;
    let reader = app.key_with(&["hook-reader"], None).await;
    let body = json!({ "name": "Third", "url": receiver.url, "events": ["user_created"] });
    let refused = app.call_as(&reader, reqwest::Method::POST, path, Some(body)).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn deliveries_are_signed_with_the_envelope_and_reach_only_subscribed_endpoints() {
    let app = spawn_receiving().await;
    let client_hook = Receiver::start().await;
    let realm_hook = Receiver::start().await;
    let (_, client_secret) =
        register(&app, SHOP_HOOKS, json!({ "name": "Users", "url": client_hook.url, "events": ["user_created"] }))
            .await;
    let (_, realm_secret) = register(
        &app,
        "/realms/hooks/webhooks",
        json!({ "name": "Audit", "url": realm_hook.url, "events": ["admin_resource_created"] }),
    )
    .await;

    let user_id = create_user(&app, "hooks", "ann").await;
    let delivered = client_hook.delivered(&app, 1).await;
    let delivery = &delivered[0];
    assert_eq!(verify(&client_secret, delivery, now(&app)), Ok(now(&app)));
    assert!(verify(&realm_secret, delivery, now(&app)).is_err(), "each endpoint has its own secret");
    assert_eq!(delivery.header("x-service-event"), "user_created");
    assert_eq!(delivery.header("content-type"), "application/json");
    let body = delivery.json();
    assert_eq!(delivery.header("x-service-event-id"), body["id"].as_str().unwrap());
    assert_eq!(body["type"], "user_created");
    assert_eq!(body["realm_id"], "hooks");
    assert_eq!(body["client_id"], Value::Null);
    assert!(body["created_at"].as_i64().is_some_and(|at| (at - now(&app)).abs() <= 1));
    let data = body["data"].as_object().unwrap();
    let mut fields: Vec<&str> = data.keys().map(String::as_str).collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        ["client_id", "email", "email_confirmed", "first_name", "id", "last_name", "realm_id", "status", "username"]
    );
    assert_eq!((data["id"].as_str(), data["username"].as_str()), (Some(user_id.as_str()), Some("ann")));

    // The realm endpoint heard the administrative change, which names the credential that made it.
    let audit = realm_hook.delivered(&app, 1).await;
    let user_change = audit.iter().find(|d| d.json()["data"]["resource_type"] == "user").expect("the user's creation");
    let change = user_change.json();
    assert!(verify(&realm_secret, user_change, now(&app)).is_ok());
    assert_eq!(change["type"], "admin_resource_created");
    assert_eq!(change["data"]["resource_id"], user_id.as_str());
    assert_eq!(change["data"]["actor_type"], "Credential");
    assert!(audit.iter().all(|d| d.json()["type"] == "admin_resource_created"), "only what it subscribed to");

    // Each attempt is in the history with its request body and the response.
    let history = recorded(&app, SHOP_HOOKS, "Succeeded", 1).await;
    let attempt = &history[0];
    assert_eq!((attempt["kind"].as_str(), attempt["responseStatus"].as_i64()), (Some("Event"), Some(200)));
    assert_eq!(attempt["requestBody"].as_str().unwrap().as_bytes(), &delivery.body[..]);
    assert!(client_hook.received().len() == 1, "the user event went to the client endpoint once");
}

#[tokio::test]
async fn failed_deliveries_are_retried_on_schedule_and_ten_failures_disable_the_endpoint() {
    let app = spawn_receiving().await;
    let receiver = Receiver::start().await;
    receiver.answer_with(500);
    let path = SHOP_HOOKS;
    let (id, secret) = register(&app, path, json!({ "name": "Flaky", "url": receiver.url, "events": ["user_created"], "retries": 2, "firstRetryAfterSeconds": 60 })).await;

    create_user(&app, "hooks", "bob").await;
    let first = receiver.delivered(&app, 1).await[0].clone();
    // The failure and its retry are recorded together.
    let history = recorded(&app, path, "Failed", 1).await;
    let failed = history.iter().find(|a| a["state"] == "Failed").unwrap();
    assert_eq!((failed["kind"].as_str(), failed["responseStatus"].as_i64()), (Some("Event"), Some(500)));
    let retry = history.iter().find(|a| a["state"] == "Scheduled").unwrap();
    assert_eq!((retry["kind"].as_str(), retry["retryNumber"].as_i64()), (Some("Retry"), Some(1)));
    let wait = |attempt: &Value| {
        let due = chrono::DateTime::parse_from_rfc3339(attempt["dueAt"].as_str().unwrap()).unwrap().timestamp();
        due - now(&app)
    };
    assert!((48..=72).contains(&wait(retry)), "the first retry comes 60 s ± 20 % later, not {}", wait(retry));

    // Not yet due: nothing more is sent until the clock passes the retry's time.
    app.advance(wait(retry) + 1).await;
    let second = receiver.delivered(&app, 2).await[1].clone();
    assert_eq!(second.header("x-service-event-id"), first.header("x-service-event-id"));
    assert_eq!(second.body, first.body, "a retry sends the same payload");
    assert!(
        verify(&secret, &second, now(&app)).unwrap() > verify(&secret, &first, now(&app)).unwrap(),
        "with a fresh t"
    );
    let history = recorded(&app, path, "Failed", 2).await;
    let retry = history.iter().find(|a| a["state"] == "Scheduled").unwrap();
    assert_eq!(retry["retryNumber"], 2);
    assert!((240..=360).contains(&wait(retry)), "the second retry waits 5 × 60 s ± 20 %, not {}", wait(retry));

    receiver.answer_with(204);
    app.advance(wait(retry) + 1).await;
    receiver.delivered(&app, 3).await;
    let history = recorded(&app, path, "Succeeded", 1).await;
    assert!(history.iter().all(|a| a["state"] != "Scheduled"), "no retry after a success: {history:?}");
    let endpoint = app.get(&format!("{path}/{id}")).await;
    assert_eq!(endpoint.data()["consecutiveFailures"], 0, "a success resets the count");

    // Ten failures in a row (tests count, retries do not) disable it; an update brings it back.
    receiver.answer_with(503);
    for n in 1..=10 {
        let test = app.post(&format!("{path}/{id}/test"), json!({})).await;
        assert_eq!(test.status, StatusCode::CREATED, "{:?}", test.body);
        recorded(&app, path, "Failed", 2 + n).await;
    }
    let endpoint = app.get(&format!("{path}/{id}")).await;
    assert_eq!(
        (endpoint.data()["status"].as_str(), endpoint.data()["consecutiveFailures"].as_i64()),
        (Some("Disabled"), Some(10))
    );
    assert!(deliveries(&app, path).await.iter().all(|a| a["state"] != "Scheduled"), "tests are never retried");
    let ping = receiver.received().last().unwrap().json();
    assert_eq!((ping["type"].as_str(), ping["data"]["subscription"].as_str()), (Some("ping"), Some(id.as_str())));

    let revived = app.put(&format!("{path}/{id}"), json!({})).await;
    assert_eq!(revived.status, StatusCode::OK, "{:?}", revived.body);
    assert_eq!(
        (revived.data()["status"].as_str(), revived.data()["consecutiveFailures"].as_i64()),
        (Some("Active"), Some(0))
    );
}

#[tokio::test]
async fn replay_resends_the_stored_payload_and_a_rotated_secret_signs_at_once() {
    let app = spawn_receiving().await;
    let receiver = Receiver::start().await;
    receiver.answer_with(500);
    let path = SHOP_HOOKS;
    let (id, old_secret) =
        register(&app, path, json!({ "name": "Replayed", "url": receiver.url, "events": ["user_created"] })).await;

    create_user(&app, "hooks", "cy").await;
    let original = receiver.delivered(&app, 1).await[0].clone();
    let history = recorded(&app, path, "Failed", 1).await;
    let failed = history.iter().find(|a| a["state"] == "Failed").unwrap()["id"].as_str().unwrap().to_owned();

    let rotated = app.post(&format!("{path}/{id}/rotate-secret"), json!({})).await;
    let new_secret = rotated.data()["signingSecret"].as_str().unwrap().to_owned();
    assert_ne!(new_secret, old_secret);

    receiver.answer_with(200);
    let replay = app.post(&format!("{path}/{id}/deliveries/{failed}/replay"), json!({})).await;
    assert_eq!(replay.status, StatusCode::CREATED, "{:?}", replay.body);
    assert_eq!(replay.data()["kind"], "Replay");
    let replayed = receiver.delivered(&app, 2).await[1].clone();
    assert_eq!(replayed.body, original.body, "the stored payload, unchanged");
    assert_eq!(replayed.header("x-service-event-id"), original.header("x-service-event-id"));
    assert!(verify(&new_secret, &replayed, now(&app)).is_ok(), "signed with the new secret");
    assert!(verify(&old_secret, &replayed, now(&app)).is_err(), "the old secret is invalid at once");
    let history = recorded(&app, path, "Succeeded", 1).await;
    assert!(
        history.iter().any(|a| a["kind"] == "Retry" && a["state"] == "Cancelled"),
        "the replay cancelled the retry: {history:?}"
    );

    // Only an Active endpoint replays.
    let paused = app.put(&format!("{path}/{id}"), json!({ "status": "Paused" })).await;
    assert_eq!(paused.data()["status"], "Paused");
    let refused = app.post(&format!("{path}/{id}/deliveries/{failed}/replay"), json!({})).await;
    assert_eq!((refused.status, refused.error_code()), (StatusCode::CONFLICT, "WebhookNotActive"));
    // A Paused endpoint hears no new events.
    create_user(&app, "hooks", "dee").await;
    app.settle().await;
    app.put(&format!("{path}/{id}"), json!({ "status": "Active" })).await;
    create_user(&app, "hooks", "eve").await;
    let all = receiver.delivered(&app, 3).await;
    assert_eq!(all[2].json()["data"]["username"], "eve");
    assert_eq!(all.len(), 3);
}

/// The number of events published so far.
async fn published(app: &TestApp) -> i64 {
    // Events no endpoint heard are shown by no answer: the outbox counts them all.
    let store = app.database().await;
    sqlx::query_scalar("SELECT COUNT(*) FROM event_outbox").fetch_one(store.pool()).await.unwrap()
}

/// The fan-out status of each event the client's endpoints heard, by the username it carries.
async fn fan_out_status(app: &TestApp) -> Vec<(String, String, i64, i64)> {
    let listed = app.get(&format!("{SHOP_HOOKS}/events?pageSize=200&sortDirection=asc")).await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    listed
        .items()
        .iter()
        .map(|e| {
            (
                e["eventType"].as_str().unwrap().to_owned(),
                e["status"].as_str().unwrap().to_owned(),
                e["endpoints"].as_i64().unwrap(),
                e["delivered"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn events_show_their_fan_out_status_and_metrics_sum_up_the_attempts() {
    let app = spawn_receiving().await;
    let (steady, flaky) = (Receiver::start().await, Receiver::start().await);
    let events = json!(["user_created"]);
    let (steady_id, _) =
        register(&app, SHOP_HOOKS, json!({ "name": "Steady", "url": steady.url, "events": events, "retries": 0 }))
            .await;
    let body =
        json!({ "name": "Flaky", "url": flaky.url, "events": events, "retries": 1, "firstRetryAfterSeconds": 30 });
    let (flaky_id, _) = register(&app, SHOP_HOOKS, body).await;

    // One endpoint accepts, the other fails and has a retry scheduled: Pending.
    flaky.answer_with(500);
    create_user(&app, "hooks", "fay").await;
    recorded(&app, SHOP_HOOKS, "Failed", 1).await;
    recorded(&app, SHOP_HOOKS, "Succeeded", 1).await;
    assert_eq!(fan_out_status(&app).await, [("user_created".into(), "Pending".into(), 2, 1)]);

    // The retry fails too and nothing is left scheduled: Partial.
    app.advance(40).await;
    recorded(&app, SHOP_HOOKS, "Failed", 2).await;
    assert_eq!(fan_out_status(&app).await[0].1, "Partial");

    // Both accept the next event: Delivered. Both refuse the one after (the steady endpoint has
    // no retries, the flaky one a retry); once the retry fails too: Failed.
    flaky.answer_with(200);
    create_user(&app, "hooks", "gus").await;
    recorded(&app, SHOP_HOOKS, "Succeeded", 3).await;
    steady.answer_with(503);
    flaky.answer_with(503);
    app.advance(1).await;
    create_user(&app, "hooks", "hal").await;
    recorded(&app, SHOP_HOOKS, "Failed", 4).await;
    app.advance(40).await;
    recorded(&app, SHOP_HOOKS, "Failed", 5).await;
    let statuses: Vec<String> = fan_out_status(&app).await.into_iter().map(|(_, status, ..)| status).collect();
    assert_eq!(statuses, ["Partial", "Delivered", "Failed"]);
    let failed = app.get(&format!("{SHOP_HOOKS}/events?status=Failed")).await;
    assert_eq!(failed.items().len(), 1);

    // Tests appear in the deliveries and the metrics, not among the events.
    let test = app.post(&format!("{SHOP_HOOKS}/{steady_id}/test"), json!({})).await;
    assert_eq!(test.status, StatusCode::CREATED);
    recorded(&app, SHOP_HOOKS, "Failed", 6).await;
    assert_eq!(fan_out_status(&app).await.len(), 3);

    // Attempts made: steady 3 events + 1 test, flaky 3 events + 2 retries; 3 accepted.
    let metrics = app.get(&format!("{SHOP_HOOKS}/metrics")).await;
    assert_eq!(metrics.status, StatusCode::OK, "{:?}", metrics.body);
    let all = metrics.data();
    assert_eq!(
        (all["attempts"].as_i64(), all["succeeded"].as_i64(), all["failed"].as_i64()),
        (Some(9), Some(3), Some(6))
    );
    assert_eq!(all["scheduled"], 0);
    assert!((all["acceptanceRate"].as_f64().unwrap() - 3.0 / 9.0).abs() < 1e-9);
    let latency = &all["latencyMs"];
    let p = |name: &str| latency[name].as_i64().unwrap();
    assert!(p("p50") <= p("p95") && p("p95") <= p("p99"), "{latency}");
    let failures: Vec<(Option<i64>, i64)> = all["topFailures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["responseStatus"].as_i64(), f["count"].as_i64().unwrap()))
        .collect();
    assert_eq!(failures, [(Some(503), 4), (Some(500), 2)], "most frequent first");

    let one = app.get(&format!("{SHOP_HOOKS}/metrics?webhookId={flaky_id}")).await;
    assert_eq!((one.data()["attempts"].as_i64(), one.data()["succeeded"].as_i64()), (Some(5), Some(1)));
    assert_eq!(one.data()["webhookId"], flaky_id.as_str());

    // A window before any attempt is empty; a window must have a start before its end.
    let before = app.get(&format!("{SHOP_HOOKS}/metrics?createdTo=2001-01-01T00:00:00Z")).await;
    assert_eq!((before.data()["attempts"].as_i64(), before.data()["acceptanceRate"].is_null()), (Some(0), true));
    assert!(before.data()["latencyMs"].is_null());
    let empty =
        app.get(&format!("{SHOP_HOOKS}/metrics?createdFrom=2030-01-02T00:00:00Z&createdTo=2030-01-01T00:00:00Z")).await;
    assert_eq!(empty.refused_fields(), [("createdFrom".to_owned(), "Range".to_owned())]);
    let unknown = app.get(&format!("{SHOP_HOOKS}/metrics?pageSize=3&createdTo=yesterday")).await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert_eq!(unknown.refused_fields().len(), 2, "{:?}", unknown.body);
    let stranger = app.get(&format!("{SHOP_HOOKS}/metrics?webhookId={}", uuid::Uuid::new_v4())).await;
    assert_eq!(stranger.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn tests_replays_and_refused_changes_publish_nothing() {
    let app = spawn_receiving().await;
    let receiver = Receiver::start().await;
    let (id, _) =
        register(&app, SHOP_HOOKS, json!({ "name": "Quiet", "url": receiver.url, "events": ["user_created"] })).await;
    create_user(&app, "hooks", "ida").await;
    receiver.delivered(&app, 1).await;
    let delivered = recorded(&app, SHOP_HOOKS, "Succeeded", 1).await[0]["id"].as_str().unwrap().to_owned();
    let before = published(&app).await;

    let test = app.post(&format!("{SHOP_HOOKS}/{id}/test"), json!({})).await;
    assert_eq!(test.status, StatusCode::CREATED);
    let replay = app.post(&format!("{SHOP_HOOKS}/{id}/deliveries/{delivered}/replay"), json!({})).await;
    assert_eq!(replay.status, StatusCode::CREATED);
    let refused = app.post("/realms/hooks/users", json!({ "username": "" })).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let duplicate = app.post("/realms/hooks/users", json!({ "username": "ida" })).await;
    assert_eq!(duplicate.refused_fields(), [("username".to_owned(), "Duplicate".to_owned())]);
    receiver.delivered(&app, 3).await;
    assert_eq!(published(&app).await, before, "no event for a test, a replay or a refused change");
    // The test and the replay are sent at once, in either order: one of them repeats the first.
    let replayed = receiver.received();
    let first = replayed[0].header("x-service-event-id");
    assert_eq!(replayed[1..].iter().filter(|r| r.header("x-service-event-id") == first).count(), 1);
}

#[tokio::test]
async fn a_capture_endpoint_records_every_request_for_a_day() {
    let app = spawn_app().await;
    let created = app.post("/webhook-captures", json!({})).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let capture = created.data().clone();
    let (id, url) = (capture["id"].as_str().unwrap().to_owned(), capture["url"].as_str().unwrap().to_owned());
    let token = url.rsplit('/').next().unwrap();
    assert!(url.starts_with(&format!("{}/captures/", app.base)), "{url}");
    assert!(token.len() >= 43, "a random path of 256 bits: {token}");
    let other = app.post("/webhook-captures", json!({})).await;
    assert_ne!(other.data()["url"], capture["url"], "each capture has its own address");

    // Any method, any body, any path below the address is recorded with its headers.
    let sent = app
        .http
        .post(format!("{url}?attempt=1"))
        .header("x-service-event", "user_created")
        .header("content-type", "application/json")
        .body(r#"{"id":"evt_1"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), StatusCode::OK);
    let big = vec![b'x'; 70_000];
    let put = app.http.put(format!("{url}/nested/path")).body(big).send().await.unwrap();
    assert_eq!(put.status(), StatusCode::OK);

    let listed = app.get(&format!("/webhook-captures/{id}/requests?sortDirection=asc")).await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    let requests = listed.items();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!((first["method"].as_str(), first["path"].as_str()), (Some("POST"), Some("")));
    assert_eq!((first["query"].as_str(), first["body"].as_str()), (Some("attempt=1"), Some(r#"{"id":"evt_1"}"#)));
    assert_eq!(first["headers"]["x-service-event"], "user_created");
    assert_eq!(first["sourceIp"], "127.0.0.1");
    let second = &requests[1];
    assert_eq!((second["method"].as_str(), second["path"].as_str()), (Some("PUT"), Some("nested/path")));
    assert_eq!((second["body"].as_str().unwrap().len(), second["bodySize"].as_i64()), (65_536, Some(70_000)));
    let other_id = other.data()["id"].as_str().unwrap();
    assert!(app.get(&format!("/webhook-captures/{other_id}/requests")).await.items().is_empty());

    // Only the account reads it; a wrong path records nothing.
    let stranger = app.http.post(format!("{}/captures/{}x", app.base, token)).send().await.unwrap();
    assert_eq!(stranger.status(), StatusCode::NOT_FOUND);
    app.post("/roles", json!({ "name": "hook-watcher", "permissions": ["realm:read"] })).await;
    let watcher = app.key_with(&["hook-watcher"], None).await;
    let refused = app.call_as(&watcher, reqwest::Method::GET, &format!("/webhook-captures/{id}/requests"), None).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);

    // After 24 hours the address answers 404, the capture is gone from the API and the cleanup
    // removes what it recorded.
    app.advance(24 * 3600).await;
    let late = app.http.post(&url).body("late").send().await.unwrap();
    assert_eq!(late.status(), StatusCode::NOT_FOUND);
    assert_eq!(app.get(&format!("/webhook-captures/{id}")).await.status, StatusCode::NOT_FOUND);
    assert!(app.get("/webhook-captures").await.items().is_empty());
    // The capture is gone from the API: only the table shows whether its requests went with it.
    let store = app.database().await;
    let kept: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM webhook_captured_requests").fetch_one(store.pool()).await.unwrap();
    assert_eq!(kept, 0, "the hourly cleanup removed the expired capture's requests");
}

#[tokio::test]
async fn a_capture_holds_a_thousand_requests_and_stops_recording_once_removed() {
    let app = spawn_app().await;
    let created = app.post("/webhook-captures", json!({})).await;
    let (id, url) = (created.data()["id"].as_str().unwrap(), created.data()["url"].as_str().unwrap());
    assert_eq!(app.get("/webhook-captures").await.items().len(), 1);

    let mut senders = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (http, url) = (app.http.clone(), url.to_owned());
        senders.spawn(async move {
            for _ in 0..125 {
                assert_eq!(http.post(&url).body("{}").send().await.unwrap().status(), StatusCode::OK);
            }
        });
    }
    senders.join_all().await;
    let full = app.http.post(url).body("{}").send().await.unwrap();
    assert_eq!(full.status(), StatusCode::CONFLICT);
    let refusal: Value = full.json().await.unwrap();
    assert_eq!(refusal["errorCode"], "CaptureFull");
    assert_eq!(app.get(&format!("/webhook-captures/{id}/requests")).await.body["pagination"]["totalItems"], 1000);

    assert_eq!(app.delete(&format!("/webhook-captures/{id}")).await.status, StatusCode::OK);
    let sent = app.http.post(url).body("{}").send().await.unwrap();
    assert_eq!(sent.status(), StatusCode::NOT_FOUND);
    assert_eq!(app.get(&format!("/webhook-captures/{id}/requests")).await.status, StatusCode::NOT_FOUND);
}

/// Addresses are checked on every connection, not only at registration: an endpoint whose name
/// resolved to an allowed address when it was registered is refused when, at sending time, it
/// resolves to one the sending host does not allow (what DNS rebinding relies on); a literal
/// address is checked again on every send too. Here the registering host allows loopback and the
/// sending host, on the same database, does not.
#[tokio::test]
async fn every_connection_checks_the_address_again() {
    let receiver = Receiver::start().await;
    let port = url::Url::parse(&receiver.url).unwrap().port().unwrap();
    let mut first = spawn_with(TestDatabase::new().await, |settings| {
        receiving(settings);
        settings.webhook_allowed_networks.push("::1/128".parse().unwrap());
    })
    .await;
    first.create_realm("hooks").await;
    first.create_client("hooks", "shop", &["client_credentials"], &[]).await;
    let named = format!("https://localhost:{port}/hooks");
    let (by_name, _) =
        register(&first, SHOP_HOOKS, json!({ "name": "named", "url": named, "events": ["user_created"] })).await;
    let (by_address, _) =
        register(&first, SHOP_HOOKS, json!({ "name": "literal", "url": receiver.url, "events": ["user_created"] }))
            .await;
    first.begin_stop().await.unwrap().unwrap();

    let second =
        crate::support::spawn_beside_with(&first, |settings| settings.webhook_ca_file = Some(authority_file())).await;
    second.create_user("hooks", "jo", "correct-horse-battery").await;
    let failed = recorded(&second, SHOP_HOOKS, "Failed", 2).await;
    let error_of = |id: &str| {
        let attempt = failed.iter().find(|a| a["webhookId"] == id && a["state"] == "Failed").unwrap();
        attempt["error"].as_str().unwrap().to_owned()
    };
    let by_name = error_of(&by_name);
    assert!(by_name.contains("localhost resolves to") && by_name.contains("not a public address"), "{by_name}");
    assert!(error_of(&by_address).contains("127.0.0.1 is not a public address"));
    assert!(receiver.received().is_empty(), "nothing reached inside");
}

/// The verdicts of Stripe's and Standard Webhooks' own libraries on `delivery` checked with
/// `secret` (`tests/receivers/verify.py`): "verified" or the error each raised.
fn library_verdicts(secret: &str, delivery: &Delivery) -> (String, String) {
    use std::io::Write;
    let headers: serde_json::Map<String, Value> = delivery
        .headers
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), value.to_str().unwrap().into()))
        .collect();
    let input =
        json!({ "secret": secret, "body": String::from_utf8(delivery.body.to_vec()).unwrap(), "headers": headers });
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("receivers/verify.py");
    let mut child = std::process::Command::new(crate::support::python_tool("python"))
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the verifiers run");
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let verdicts: Value = serde_json::from_slice(&output.stdout).unwrap();
    (verdicts["stripe"].as_str().unwrap().to_owned(), verdicts["standardwebhooks"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn stripes_and_standard_webhooks_libraries_both_verify_a_delivery_until_the_secret_rotates() {
    let app = spawn_receiving().await;
    let receiver = Receiver::start().await;
    let path = SHOP_HOOKS;
    let (id, old_secret) =
        register(&app, path, json!({ "name": "Both", "url": receiver.url, "events": ["user_created"] })).await;

    create_user(&app, "hooks", "fay").await;
    let first = receiver.delivered(&app, 1).await[0].clone();
    let verified = ("verified".to_owned(), "verified".to_owned());
    assert_eq!(library_verdicts(&old_secret, &first), verified);
    assert_eq!(first.header("webhook-id"), first.header("x-service-event-id"));
    assert_eq!(first.header("webhook-id"), first.json()["id"]);
    assert_eq!(first.header("webhook-timestamp"), &first.header("x-service-signature")[2..12]);
    // A body changed on the way verifies with neither.
    let mut tampered = first.clone();
    tampered.body = first.body.iter().map(|&b| if b == b'f' { b'g' } else { b }).collect::<Vec<u8>>().into();
    let (stripe, standard) = library_verdicts(&old_secret, &tampered);
    assert!(stripe.starts_with("SignatureVerificationError"), "{stripe}");
    assert!(standard.starts_with("WebhookVerificationError"), "{standard}");

    let rotated = app.post(&format!("{path}/{id}/rotate-secret"), json!({})).await;
    let new_secret = rotated.data()["signingSecret"].as_str().unwrap().to_owned();
    create_user(&app, "hooks", "gil").await;
    let second = receiver.delivered(&app, 2).await[1].clone();
    assert_eq!(library_verdicts(&new_secret, &second), verified);
    let (stripe, standard) = library_verdicts(&old_secret, &second);
    assert!(
        stripe.starts_with("SignatureVerificationError") && standard.starts_with("WebhookVerificationError"),
        "the old secret is invalid at once: {stripe} / {standard}"
    );
}

/// A receiver that answers `200` and its head, then closes the connection without TLS
/// close_notify before the body its `Content-Length` announced has all been sent: the status is
/// the receiver's answer, so the delivery counts as delivered (any 2xx is), with what cut the body
/// short kept beside the attempt, and nothing is retried.
#[tokio::test]
async fn a_2xx_is_a_delivery_even_when_the_receiver_cuts_its_answers_body_short() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let app = spawn_receiving().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://127.0.0.1:{}/hooks", listener.local_addr().unwrap().port());
    let acceptor = tokio_rustls::TlsAcceptor::from(crate::support::receiver::server_config());
    let (got, mut received) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let receiver = tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let Ok(mut tls) = acceptor.accept(tcp).await else { continue };
            let mut request = Vec::new();
            let mut buffer = [0_u8; 4096];
            // The head, then as much body as it announces.
            while let Ok(read) = tls.read(&mut buffer).await {
                if read == 0 {
                    break;
                }
                request.extend_from_slice(&buffer[..read]);
                let text = String::from_utf8_lossy(&request).to_ascii_lowercase();
                if let Some(end) = text.find("\r\n\r\n") {
                    let length = text
                        .lines()
                        .find_map(|line| line.strip_prefix("content-length:"))
                        .and_then(|value| value.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    if request.len() >= end + 4 + length {
                        break;
                    }
                }
            }
            tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nreceived").await.unwrap();
            tls.flush().await.unwrap();
            // Gone without close_notify: the TCP connection closes under the TLS session.
            let (tcp, _) = tls.into_inner();
            drop(tcp);
            let _ = got.send(request);
        }
    });
    let (id, _) = register(&app, SHOP_HOOKS, json!({ "name": "Cut", "url": url, "events": ["user_created"] })).await;

    create_user(&app, "hooks", "ann").await;
    let history = recorded(&app, SHOP_HOOKS, "Succeeded", 1).await;
    let request = received.recv().await.expect("the receiver got the delivery");
    assert!(String::from_utf8_lossy(&request).starts_with("POST /hooks"));
    assert_eq!(history.len(), 1, "no retry: {history:?}");
    let attempt = &history[0];
    assert_eq!(attempt["responseStatus"], 200);
    let error = attempt["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("reading the answer's body"), "the cut body is told: {attempt}");
    let endpoint = app.get(&format!("{SHOP_HOOKS}/{id}")).await;
    assert_eq!(endpoint.data()["consecutiveFailures"], 0);
    receiver.abort();
}
