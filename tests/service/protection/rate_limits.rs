//! Admin rate limits: 300 requests a minute per caller, 50 on sensitive endpoints; counted once
//! across hosts sharing Redis, and by each host alone while Redis cannot be read.

use castellan::kernel::config::{AdminRateLimits, Settings};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::proxy::Proxy;
use crate::support::{TestApp, TestDatabase, spawn_app, spawn_beside_with, spawn_with};

#[tokio::test]
async fn the_301st_request_in_a_minute_gets_429_with_retry_after() {
    let app = spawn_app().await;
    for n in 0..300 {
        let got = app.get("/account").await;
        assert_eq!(got.status, StatusCode::OK, "request {n}");
    }
    let limited = app.get("/account").await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(limited.error_code(), "TooManyRequests");
    let retry_after: u64 = limited.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry_after));

    // Another caller has its own allowance.
    let other = app.key_with(&["Auditor"], None).await;
    assert_eq!(app.call_as(&other, Method::GET, "/account", None).await.status, StatusCode::OK);

    app.advance(retry_after as i64).await;
    assert_eq!(app.get("/account").await.status, StatusCode::OK);
}

#[tokio::test]
async fn sensitive_endpoints_allow_fifty_a_minute() {
    let app = spawn_app().await;
    for n in 0..50 {
        let got = app.post("/secrets", json!({ "name": format!("k{n}"), "roles": ["Auditor"] })).await;
        assert_eq!(got.status, StatusCode::CREATED, "secret {n}");
    }
    let limited = app.post("/secrets", json!({ "name": "one more", "roles": ["Auditor"] })).await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(limited.headers.contains_key("retry-after"));
    // Ordinary endpoints still answer.
    assert_eq!(app.get("/realms").await.status, StatusCode::OK);
}

/// Unauthenticated requests were never limited and each wrote an access-log row: anyone could fill
/// the access log. Failed authentications are now limited per source address, and the refusals
/// past the limit leave one row a minute.
#[tokio::test]
async fn failed_authentication_is_limited_per_source_and_its_trail_is_bounded() {
    let app = spawn_app().await;
    let from = |address: &'static str, key: &'static str| {
        let request =
            app.http.get(format!("{}/realms", app.admin)).header("x-api-key", key).header("x-forwarded-for", address);
        async move { crate::support::answer(request.send().await.unwrap()).await }
    };
    for n in 0..30 {
        assert_eq!(from("198.51.100.7", "cstl_key_guess").await.status, StatusCode::UNAUTHORIZED, "failure {n}");
    }
    for _ in 0..500 {
        let limited = from("198.51.100.7", "cstl_key_guess").await;
        assert_eq!((limited.status, limited.error_code()), (StatusCode::TOO_MANY_REQUESTS, "TooManyRequests"));
        assert!(limited.headers.contains_key("retry-after"));
    }
    // Once spent, the source is refused before any credential is read, valid or not.
    let valid = app
        .http
        .get(format!("{}/realms", app.admin))
        .header("x-api-key", &app.key)
        .header("x-forwarded-for", "198.51.100.7");
    assert_eq!(valid.send().await.unwrap().status(), StatusCode::TOO_MANY_REQUESTS);
    // Another address, and the same caller from another address, are not held up.
    assert_eq!(from("198.51.100.8", "cstl_key_guess").await.status, StatusCode::UNAUTHORIZED);
    let elsewhere = app
        .http
        .get(format!("{}/realms", app.admin))
        .header("x-api-key", &app.key)
        .header("x-forwarded-for", "198.51.100.9");
    assert_eq!(elsewhere.send().await.unwrap().status(), StatusCode::OK);

    // Refusals of an unknown key name no account, so no account's access log lists them: the rows
    // are counted in the database.
    let rows = |address: &'static str| {
        let app = &app;
        async move {
            app.state.access_log.flush().await;
            // Counted by source address across accounts (refusals before a credential is read
            // name none), which no account's access log shows: read from the table.
            let store = app.database().await;
            sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM access_log WHERE ip_address = $1")
                .bind(address)
                .fetch_one(store.pool())
                .await
                .unwrap()
        }
    };
    // 30 refusals of the credential, one entry for the 501 refusals of the source that minute.
    assert_eq!(rows("198.51.100.7").await, 31);
    app.advance(60).await;
    for _ in 0..30 {
        from("198.51.100.7", "cstl_key_guess").await;
    }
    assert_eq!(from("198.51.100.7", "cstl_key_guess").await.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(rows("198.51.100.7").await, 62, "a minute later: 30 more failures and one more entry");
}

const FORGED: &str = "cstl_key_forged";

fn rand_word() -> u16 {
    u16::from_be_bytes(uuid::Uuid::new_v4().as_bytes()[..2].try_into().unwrap())
}

#[tokio::test]
async fn hosts_sharing_redis_share_each_allowance_and_limit_alone_while_it_is_lost() {
    let redis = std::env::var("TEST_REDIS_URL").ok().filter(|u| !u.is_empty());
    let redis = url::Url::parse(redis.as_deref().unwrap_or("redis://127.0.0.1:6379")).unwrap();
    let proxy = Proxy::to(format!("{}:{}", redis.host_str().unwrap(), redis.port().unwrap_or(6379))).await;
    let through = format!("redis://{}/", proxy.address);
    let limits = AdminRateLimits { requests: 10, failed_authentications: 4, ..AdminRateLimits::default() };
    let adjust = |settings: &mut Settings| {
        settings.redis_url = Some(through.clone());
        settings.admin_rate_limits = limits;
    };
    let one = spawn_with(TestDatabase::new().await, adjust).await;
    let two = spawn_beside_with(&one, adjust).await;
    let hosts = [&one, &two];
    // Addresses of this test alone (Redis is shared by every test): one for the caller, one for a
    // source trying forged keys.
    let network = |n: u16| format!("2001:db8:{:x}:{n}::1", rand_word());
    let (caller, forger) = (network(1), network(2));
    let status = |app: &TestApp, key: &str| {
        let from = if key == FORGED { &forger } else { &caller };
        let request = app
            .http
            .get(format!("{}/account", app.admin))
            .header("x-api-key", key.to_owned())
            .header("x-forwarded-for", from.clone());
        async move { request.send().await.unwrap().status() }
    };

    // Ten a minute for the caller, wherever its requests land.
    for n in 0..10 {
        assert_eq!(status(hosts[n % 2], &one.key).await, StatusCode::OK, "request {n}");
    }
    assert_eq!(status(&one, &one.key).await, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(status(&two, &one.key).await, StatusCode::TOO_MANY_REQUESTS);
    // Four refused credentials a minute from one address, wherever they land.
    for n in 0..4 {
        assert_eq!(status(hosts[n % 2], FORGED).await, StatusCode::UNAUTHORIZED, "attempt {n}");
    }
    assert_eq!(status(&two, FORGED).await, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(status(&two, FORGED).await, StatusCode::TOO_MANY_REQUESTS, "refused before any lookup now");

    // Redis lost: each host limits on its own meanwhile, with a full allowance of its own.
    proxy.cut();
    assert_eq!(status(&one, &one.key).await, StatusCode::OK, "failing open to the host's own count");
    assert_eq!(status(&two, &one.key).await, StatusCode::OK);
    for _ in 1..10 {
        status(&one, &one.key).await;
    }
    assert_eq!(status(&one, &one.key).await, StatusCode::TOO_MANY_REQUESTS, "still limited, by the host");
}

#[tokio::test]
async fn a_caller_kept_near_its_limit_for_five_minutes_is_reported_once_an_hour() {
    let limits = AdminRateLimits { requests: 10, ..AdminRateLimits::default() };
    let app = spawn_with(TestDatabase::new().await, |settings| settings.admin_rate_limits = limits).await;
    let busy = app.key_with(&["Auditor"], None).await;
    let near = |app: &TestApp| {
        let listed = app.http.get(format!("{}/account/notifications", app.admin)).header("x-api-key", app.key.clone());
        async move {
            let listed = crate::support::answer(listed.send().await.unwrap()).await;
            listed.items().iter().filter(|n| n["type"] == "rate_limit_near").cloned().collect::<Vec<_>>()
        }
    };
    // The whole allowance at once, then one request each time a token comes back (every 6 s).
    for _ in 0..10 {
        assert_eq!(app.call_as(&busy, Method::GET, "/realms", None).await.status, StatusCode::OK);
    }
    for step in 0..49 {
        app.advance(6).await;
        assert_eq!(app.call_as(&busy, Method::GET, "/realms", None).await.status, StatusCode::OK, "step {step}");
    }
    assert!(near(&app).await.is_empty(), "near for 4 m 54 s");
    app.advance(6).await;
    app.call_as(&busy, Method::GET, "/realms", None).await;
    let told = near(&app).await;
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0]["severity"], "Warning");
    for _ in 0..20 {
        app.advance(6).await;
        app.call_as(&busy, Method::GET, "/realms", None).await;
    }
    assert_eq!(near(&app).await.len(), 1, "once an hour");
}
