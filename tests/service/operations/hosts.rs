//! Several hosts on one PostgreSQL database behave as one service: what one host changes, the
//! others have stopped serving from their caches when its answer returns.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::{TestApp, spawn_app, spawn_beside};

/// Waits, up to a bound, for a host to see what `seen` looks for (its listening connection up).
/// The host is looked at again each time its caches apply a notification.
async fn eventually(host: &TestApp, what: &str, mut seen: impl AsyncFnMut(&TestApp) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut applied = host.state.caches.applied();
    while !seen(host).await {
        let left = deadline.saturating_duration_since(Instant::now());
        let arrived = tokio::time::timeout(left, applied.changed()).await;
        assert!(matches!(arrived, Ok(Ok(()))), "the second host never saw: {what}");
    }
}

#[tokio::test]
async fn a_change_on_one_host_is_seen_by_the_other_despite_its_caches() {
    let one = spawn_app().await;
    if !one.state.store.is_shared() {
        // SQLite is embedded: one host owns the file. Its caches are always in use and follow its
        // own changes.
        assert!(one.state.caches.is_synced());
        one.create_realm("acme").await;
        one.get("/realms/acme").await;
        assert!(one.state.caches.realm("acme").is_some(), "the realm is served from the cache");
        one.put("/realms/acme", json!({ "displayName": "Acme Corp" })).await;
        assert_eq!(one.get("/realms/acme").await.data()["displayName"], "Acme Corp");
        return;
    }
    let two = spawn_beside(&one).await;
    one.create_realm("acme").await;
    let key = one.key_with(&["Developer"], None).await;

    // The second host caches the realm and the key by using them.
    eventually(&two, "its own change notifications", async |h: &TestApp| h.state.caches.is_synced()).await;
    assert_eq!(two.get("/realms/acme").await.data()["displayName"], "acme");
    assert_eq!(two.call_as(&key, Method::GET, "/realms/acme", None).await.status, StatusCode::OK);
    assert!(two.state.caches.realm("acme").is_some(), "the realm is served from the cache");

    // A change answers once every host has dropped what it made stale.
    eventually(&one, "its own change notifications", async |h: &TestApp| h.state.caches.is_synced()).await;
    one.put("/realms/acme", json!({ "displayName": "Acme Corp" })).await;
    assert_eq!(two.get("/realms/acme").await.data()["displayName"], "Acme Corp");

    let id = one.get("/secrets?searchTerm=Developer").await.items()[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(one.delete(&format!("/secrets/{id}")).await.status, StatusCode::OK);
    assert_eq!(two.call_as(&key, Method::GET, "/realms/acme", None).await.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_revocation_or_rotation_on_one_host_deactivates_tokens_on_the_other_when_it_answers() {
    let one = spawn_app().await;
    one.create_realm("acme").await;
    let client = one.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let token = |app: &TestApp| {
        let client = client.clone();
        let http = app.http.clone();
        let base = app.base.clone();
        async move {
            let response = http
                .post(format!("{base}/realms/acme/protocol/openid-connect/token"))
                .basic_auth(&client.id, Some(&client.secret))
                .form(&[("grant_type", "client_credentials")])
                .send()
                .await
                .unwrap();
            crate::support::answer(response).await.body["access_token"].as_str().unwrap().to_owned()
        }
    };
    let active = async |app: &TestApp, token: &str| {
        app.protocol(&client, "token/introspect", &[("token", token)]).await.body["active"] == true
    };
    let first = token(&one).await;
    if !one.state.store.is_shared() {
        // One host owns a SQLite file: its own revocation is known at once.
        assert!(active(&one, &first).await);
        one.protocol(&client, "revoke", &[("token", &first)]).await;
        assert!(!active(&one, &first).await);
        return;
    }
    let two = spawn_beside(&one).await;
    for host in [&one, &two] {
        eventually(host, "its own change notifications", async |h: &TestApp| h.state.caches.is_synced()).await;
    }
    // The second host learns the revocations and keys by introspecting.
    assert!(active(&two, &first).await);
    one.protocol(&client, "revoke", &[("token", &first)]).await;
    assert!(!active(&two, &first).await, "revoked on the other host when the answer returned");

    let second = token(&one).await;
    assert!(active(&two, &second).await);
    let rotated = one.post("/realms/acme/signing-keys/rotate", json!({ "revokeOldKeys": true })).await;
    assert_eq!(rotated.status, StatusCode::OK, "{:?}", rotated.body);
    assert!(!active(&two, &second).await, "the key is revoked on the other host when the answer returned");
}
