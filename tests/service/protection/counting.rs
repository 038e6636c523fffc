//! Attack protection's counters in a real Redis: several hosts count together, in the same sliding
//! windows as the in-process store.

use castellan::runtime::counting::{Counters, Window};
use chrono::{DateTime, TimeDelta, Utc};

use crate::protection::measures::protecting;
use crate::support::{TestApp, TestDatabase, spawn_beside_with, spawn_with};

fn redis_url() -> String {
    std::env::var("TEST_REDIS_URL").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| "redis://127.0.0.1:6379".into())
}

/// An instant of the tests' own, far from any other test's.
fn start() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(2_000_000_000_000).unwrap()
}

#[tokio::test]
async fn hosts_sharing_redis_count_together_in_sliding_windows() {
    let one = Counters::redis(&redis_url()).await.expect("Redis reachable");
    let two = Counters::redis(&redis_url()).await.expect("Redis reachable");
    // A series of its own, so tests running at once never meet.
    let key = format!("test:{}", uuid::Uuid::new_v4());
    let start = start();
    for n in 0..6 {
        let host = if n % 2 == 0 { &one } else { &two };
        host.record(&key, &format!("attempt-{n}"), start + TimeDelta::minutes(n)).await.unwrap();
    }
    let at = start + TimeDelta::minutes(5);
    assert_eq!(one.count(&key, Window::TenMinutes, at).await.unwrap(), 6, "both hosts' attempts");
    assert_eq!(two.count(&key, Window::TenMinutes, at).await.unwrap(), 6);
    assert_eq!(
        two.count(&key, Window::TenMinutes, start + TimeDelta::minutes(13)).await.unwrap(),
        2,
        "the window slides"
    );
    assert_eq!(
        one.count(&key, Window::FifteenMinutes, start + TimeDelta::minutes(15)).await.unwrap(),
        5,
        "exclusive start"
    );

    let spray = format!("{key}:accounts");
    for (host, account) in [(&one, "ada"), (&two, "ada"), (&two, "bob"), (&one, "cy")] {
        host.record(&spray, account, at).await.unwrap();
    }
    assert_eq!(one.count(&spray, Window::Hour, at).await.unwrap(), 3, "distinct accounts");

    // A host whose clock reads a second behind counts what the other recorded "in its future".
    let skewed = format!("{key}:skewed");
    two.record(&skewed, "ahead", at + TimeDelta::seconds(1)).await.unwrap();
    assert_eq!(one.count(&skewed, Window::TenMinutes, at).await.unwrap(), 1, "a second of skew drops nothing");

    // A day later the series has aged out of every window; the next record trims it.
    let later = at + TimeDelta::days(1);
    two.record(&key, "late", later).await.unwrap();
    assert_eq!(one.count(&key, Window::Day, later).await.unwrap(), 1);
}

#[tokio::test]
async fn hosts_sharing_redis_place_a_hold_once_while_it_is_in_force() {
    let one = Counters::redis(&redis_url()).await.expect("Redis reachable");
    let two = Counters::redis(&redis_url()).await.expect("Redis reachable");
    let key = format!("test:{}", uuid::Uuid::new_v4());
    // The service's clock, not Redis's, decides whether a hold is in force.
    let start = start();
    let (first, second) = tokio::join!(
        one.hold_unless_held(&key, "first", start + TimeDelta::minutes(15), start),
        two.hold_unless_held(&key, "second", start + TimeDelta::minutes(15), start),
    );
    assert!(first.unwrap() ^ second.unwrap(), "exactly one host places it");
    let held = one.held(&key, start).await.unwrap().expect("held");
    assert_eq!(held.1, start + TimeDelta::minutes(15));
    assert!(
        !two.hold_unless_held(
            &key,
            "later",
            start + TimeDelta::minutes(75),
            start + TimeDelta::minutes(15) - TimeDelta::milliseconds(1)
        )
        .await
        .unwrap()
    );
    let ended = start + TimeDelta::minutes(15);
    assert!(
        two.hold_unless_held(&key, "next", ended + TimeDelta::minutes(60), ended).await.unwrap(),
        "the first ended"
    );
    assert_eq!(one.held(&key, ended).await.unwrap(), Some(("next".to_owned(), ended + TimeDelta::minutes(60))));
    one.release(&key).await.unwrap();
}

#[tokio::test]
async fn the_service_counts_in_redis_when_configured_and_refuses_to_start_without_it() {
    let url = redis_url();
    let app = spawn_with(TestDatabase::new().await, |settings| settings.redis_url = Some(url)).await;
    assert!(app.state.protection.counters.is_shared());

    let db = TestDatabase::new().await;
    let mut settings = db.settings();
    settings.redis_url = Some("redis://127.0.0.1:1/".into());
    let refused = castellan::Application::build(settings, &crate::support::policies()).await;
    let error = format!("{:#}", refused.err().expect("no Redis, no start"));
    assert!(error.contains("cannot reach Redis"), "{error}");
}

/// The instant `app`'s manual clock reads.
async fn clock(app: &TestApp) -> DateTime<Utc> {
    let read = app.http.get(format!("{}/_dev/clock", app.base)).send().await.unwrap();
    let now = read.json::<serde_json::Value>().await.unwrap()["data"]["now"].as_str().unwrap().to_owned();
    DateTime::parse_from_rfc3339(&now).unwrap().with_timezone(&Utc)
}

/// Two hosts on one Redis whose clocks differ by a second: a source failing against eight
/// accounts across both is blocked, on the host whose clock is behind as on the other.
#[tokio::test]
async fn hosts_whose_clocks_differ_by_a_second_block_a_source_together() {
    let url = redis_url();
    let first = spawn_with(TestDatabase::new().await, |settings| settings.redis_url = Some(url.clone())).await;
    let behind = protecting(first).await;
    let ahead = spawn_beside_with(&behind.app, |settings| settings.redis_url = Some(url)).await;
    let set = (clock(&behind.app).await.max(clock(&ahead).await) + TimeDelta::seconds(1)).to_rfc3339();
    for (app, at) in [(&behind.app, set.clone()), (&ahead, set)] {
        let moved = app.http.post(format!("{}/_dev/clock", app.base)).json(&serde_json::json!({ "set": at }));
        assert!(moved.send().await.unwrap().status().is_success());
    }
    ahead.advance(1).await;
    assert_eq!(clock(&ahead).await - clock(&behind.app).await, TimeDelta::seconds(1));

    // A source of its own (Redis counts for every test); the eighth account is tried on the host
    // behind, which decides with what the other recorded a second "later".
    let bytes = uuid::Uuid::new_v4().into_bytes();
    let source = format!("198.{}.{}.{}", 18 + (bytes[0] & 1), bytes[1], bytes[2].max(1));
    let on_ahead = crate::protection::measures::Protected {
        app: ahead,
        realm: behind.realm.clone(),
        client: behind.client.clone(),
    };
    for n in 0..8 {
        let host = if n % 2 == 0 { &on_ahead } else { &behind };
        let refused = host.sign_in(&format!("list-{n}"), "guess", &source).await;
        assert_eq!(refused.body["error_code"], "InvalidCredentials", "#{n}: {:?}", refused.body);
    }
    for host in [&behind, &on_ahead] {
        let answer = host.sign_in("list-0", "guess", &source).await;
        assert_eq!(answer.body["error_code"], "TooManyRequests", "blocked on {}: {:?}", host.app.base, answer.body);
    }
}
