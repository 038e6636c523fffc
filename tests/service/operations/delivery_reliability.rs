//! At-least-once delivery under failure: a service killed with SIGKILL in the middle of a burst of
//! events delivers every one of them once it is started again, and two hosts on one PostgreSQL
//! database never send an attempt twice. (The same through a load balancer in front of three
//! hosts: `deployment`.)

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::operations::webhooks::{SHOP_HOOKS, receiving};
use crate::support::fleet::{Host, HostSettings, bootstrap_key, free_port};
use crate::support::receiver::Receiver;
use crate::support::{TestApp, TestDatabase, spawn_beside_with, spawn_with};

/// The usernames of the `user_created` deliveries a receiver got, with how often each arrived.
pub fn delivered_users(receiver: &Receiver) -> HashMap<String, usize> {
    let mut seen = HashMap::new();
    for delivery in receiver.received() {
        let body = delivery.json();
        if body["type"] == "user_created" {
            *seen.entry(body["data"]["username"].as_str().unwrap().to_owned()).or_default() += 1;
        }
    }
    seen
}

/// Asks the service at `base` to deliver what is due (its manual clock's step); false when it
/// did not answer.
async fn settle(http: &reqwest::Client, base: &str) -> bool {
    let answered = http.post(format!("{base}/_dev/clock")).json(&json!({ "advanceSeconds": 0 })).send().await;
    answered.is_ok_and(|response| response.status() == StatusCode::OK)
}

/// Keeps asking the service at `base` to deliver what is due until `publishing` turns false,
/// through any outage of the service.
fn deliver_while(http: &reqwest::Client, base: &str, publishing: &Arc<AtomicBool>) -> tokio::task::JoinHandle<()> {
    let (http, base, publishing) = (http.clone(), base.to_owned(), publishing.clone());
    tokio::spawn(async move {
        while publishing.load(Ordering::SeqCst) {
            if !settle(&http, &base).await {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    })
}

async fn call(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    path: &str,
    body: Value,
) -> reqwest::Result<(StatusCode, Value)> {
    let response = http.post(format!("{base}/api/v1/admin{path}")).header("x-api-key", key).json(&body).send().await?;
    let status = response.status();
    Ok((status, response.json().await.unwrap_or(Value::Null)))
}

async fn created(http: &reqwest::Client, base: &str, key: &str, path: &str, body: Value) -> Value {
    let (status, answer) = call(http, base, key, path, body).await.unwrap();
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_event_of_a_burst_is_delivered_although_the_service_was_killed_during_it() {
    const EVENTS: usize = 10_000;
    const SENDERS: usize = 16;
    const KEYS: usize = 45;
    // No service runs in this process to choose the TLS implementation the HTTP clients use.
    let _ = tokio_rustls::rustls::crypto::aws_lc_rs::default_provider().install_default();
    let db = TestDatabase::new().await;
    let receiver = Receiver::start().await;
    let port = free_port();
    let service = Host::start(&db, port, &HostSettings::default()).await;
    let (base, key) = (service.base.clone(), bootstrap_key(&db.dir));
    let http = reqwest::Client::new();
    created(&http, &base, &key, "/realms", json!({ "id": "hooks" })).await;
    let client = json!({ "id": "shop", "clientConfiguration": { "grantTypes": ["client_credentials"] } });
    created(&http, &base, &key, "/realms/hooks/clients", client).await;
    let endpoint = json!({ "name": "Burst", "url": receiver.url, "events": ["user_created"] });
    created(&http, &base, &key, SHOP_HOOKS, endpoint).await;
    // Each key may make 300 calls a minute and the manual clock stands still: the burst moves to
    // the next key when one is spent.
    let mut keys = Vec::new();
    for n in 0..KEYS {
        let secret =
            created(&http, &base, &key, "/secrets", json!({ "name": format!("burst {n}"), "roles": ["Admin"] })).await;
        keys.push(secret["data"]["value"].as_str().unwrap().to_owned());
    }
    let keys = Arc::new(keys);
    let spent = Arc::new(AtomicUsize::new(0));

    // Senders create the users one after the other, each retrying through the outage until the
    // service answers. A creation cut off after its commit is refused as a duplicate on the retry:
    // it happened.
    let created = Arc::new(AtomicUsize::new(0));
    // Deliveries run beside the creations, so the kill cuts some of them off too.
    let publishing = Arc::new(AtomicBool::new(true));
    let delivering = deliver_while(&http, &base, &publishing);
    let mut senders = tokio::task::JoinSet::new();
    for first in 0..SENDERS {
        let (http, base, keys, spent, created) =
            (http.clone(), base.clone(), keys.clone(), spent.clone(), created.clone());
        senders.spawn(async move {
            for n in (first..EVENTS).step_by(SENDERS) {
                let user = json!({ "username": format!("user-{n}") });
                loop {
                    let using = spent.load(Ordering::SeqCst);
                    match call(&http, &base, &keys[using], "/realms/hooks/users", user.clone()).await {
                        Ok((StatusCode::CREATED, _)) => break,
                        Ok((StatusCode::BAD_REQUEST, refusal))
                            if refusal["notifications"][0]["code"] == "Duplicate" =>
                        {
                            break;
                        }
                        Ok((StatusCode::TOO_MANY_REQUESTS, _)) => {
                            let _ = spent.compare_exchange(using, using + 1, Ordering::SeqCst, Ordering::SeqCst);
                        }
                        Ok((status, refusal)) if status.is_client_error() => panic!("user-{n} refused: {refusal}"),
                        _ => tokio::time::sleep(Duration::from_millis(20)).await,
                    }
                }
                created.fetch_add(1, Ordering::SeqCst);
            }
        });
    }

    // A third of the way through, with creations and deliveries in flight, the service is killed.
    while created.load(Ordering::SeqCst) < EVENTS / 3 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    service.kill().await;
    let service = Host::start(&db, port, &HostSettings::default()).await;
    // Attempts the killed process had claimed are sent again once their 60-second lease is over.
    let advanced = http.post(format!("{base}/_dev/clock")).json(&json!({ "advanceSeconds": 61 })).send().await.unwrap();
    assert_eq!(advanced.status(), StatusCode::OK);
    senders.join_all().await;
    assert_eq!(created.load(Ordering::SeqCst), EVENTS);
    publishing.store(false, Ordering::SeqCst);
    delivering.await.unwrap();

    assert!(settle(&http, &base).await, "the service delivers what is due");
    let seen = delivered_users(&receiver);
    let expected: HashSet<String> = (0..EVENTS).map(|n| format!("user-{n}")).collect();
    assert_eq!(seen.keys().cloned().collect::<HashSet<_>>(), expected, "every event, and only those");
    drop(service);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hosts_on_one_database_never_send_an_attempt_twice() {
    const EVENTS: usize = 400;
    let one = spawn_with(TestDatabase::new().await, receiving).await;
    if !one.state.store.is_shared() {
        // SQLite is embedded: a database file belongs to one host, whose single worker claims each
        // attempt once; the kill test above covers it.
        return;
    }
    let two = spawn_beside_with(&one, receiving).await;
    let receiver = Receiver::start().await;
    one.create_realm("hooks").await;
    one.create_client("hooks", "shop", &["client_credentials"], &[]).await;
    let endpoint =
        one.post(SHOP_HOOKS, json!({ "name": "Shared", "url": receiver.url, "events": ["user_created"] })).await;
    assert_eq!(endpoint.status, StatusCode::CREATED, "{:?}", endpoint.body);

    // Both hosts publish events, and both deliver from the same tables while they do.
    let publishing = Arc::new(AtomicBool::new(true));
    let delivering =
        [deliver_while(&one.http, &one.base, &publishing), deliver_while(&two.http, &two.base, &publishing)];
    let mut senders = tokio::task::JoinSet::new();
    for first in 0..16 {
        let (http, key) = (one.http.clone(), one.key.clone());
        let bases = [one.base.clone(), two.base.clone()];
        senders.spawn(async move {
            for n in (first..EVENTS).step_by(16) {
                let user = json!({ "username": format!("user-{n}") });
                created(&http, &bases[n % 2], &key, "/realms/hooks/users", user).await;
            }
        });
    }
    senders.join_all().await;
    publishing.store(false, Ordering::SeqCst);
    for host in delivering {
        host.await.unwrap();
    }
    tokio::join!(one.settle(), two.settle());
    finished(&one).await;
    let seen = delivered_users(&receiver);
    assert_eq!(seen.len(), EVENTS);
    let twice: Vec<_> = seen.iter().filter(|(_, times)| **times > 1).collect();
    assert!(twice.is_empty(), "sent more than once: {twice:?}");
}

/// Asserts that no attempt is scheduled: every one was sent and its outcome recorded. (The
/// deliveries list shows attempts by endpoint, event and kind, not by state: the count is read
/// from the table.)
async fn finished(app: &TestApp) {
    let store = app.database().await;
    let (scheduled,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM webhook_attempts WHERE state = 'Scheduled'")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(scheduled, 0, "attempts are still scheduled");
}

/// A step of the manual clock runs to its end when its caller gives up halfway (as a balancer's
/// timeout does under a burst): the attempt it was sending is recorded once the receiver answers,
/// instead of staying claimed under a lease the standing clock never ends, and is sent once.
#[tokio::test]
async fn an_advance_whose_caller_gives_up_still_records_what_it_sent() {
    let app = spawn_with(TestDatabase::new().await, receiving).await;
    app.create_realm("hooks").await;
    app.create_client("hooks", "shop", &["client_credentials"], &[]).await;
    let receiver = Receiver::start().await;
    let hook = json!({ "name": "Held", "url": receiver.url, "events": ["user_created"] });
    assert_eq!(app.post(SHOP_HOOKS, hook).await.status, StatusCode::CREATED);
    app.create_user("hooks", "ann", "analytical engine").await;

    receiver.hold();
    let (http, clock) = (app.http.clone(), format!("{}/_dev/clock", app.base));
    let step = tokio::spawn(async move { http.post(clock).json(&json!({ "advanceSeconds": 0 })).send().await });
    receiver.arrivals(1).await;
    // The caller gives up while the receiver holds its answer: its connection closes.
    step.abort();
    assert!(step.await.is_err_and(|error| error.is_cancelled()));
    receiver.release();

    // The next step waits for the one under way, then finds nothing left to send.
    app.settle().await;
    let attempts = app.get(&format!("{SHOP_HOOKS}/deliveries")).await;
    let states: Vec<&str> = attempts.items().iter().filter_map(|a| a["state"].as_str()).collect();
    assert_eq!(states, ["Succeeded"], "{:?}", attempts.body);
    assert_eq!(receiver.received().len(), 1, "sent once");
}
