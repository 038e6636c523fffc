//! SPEC "Limits": 300 requests a minute per caller, 50 on sensitive endpoints.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::spawn_app;

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
