//! Secret rotation: rotating client secrets and account
//! secrets immediately, with an overlap, or as compromised.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::{TestApp, TestClient, spawn_app};

fn with_secret(client: &TestClient, secret: &str) -> TestClient {
    TestClient { secret: secret.to_owned(), ..client.clone() }
}

async fn client_credentials(app: &TestApp, client: &TestClient) -> reqwest::StatusCode {
    app.token(client, &[("grant_type", "client_credentials")]).await.status
}

/// Whether `token` is active at the realm's introspection endpoint, asked by `asker`.
async fn active(app: &TestApp, asker: &TestClient, token: &str) -> bool {
    let answer = app.protocol(asker, "token/introspect", &[("token", token)]).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body["active"].as_bool().expect("active is a boolean")
}

async fn rotate_client(app: &TestApp, client: &TestClient, body: serde_json::Value) -> crate::support::Answer {
    app.post(&format!("/realms/{}/clients/{}/client-secret/rotate", client.realm, client.id), body).await
}

#[tokio::test]
async fn an_immediate_rotation_refuses_the_old_client_secret_at_once() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let path = "/realms/acme/clients/agent/client-secret/rotate";
    let empty = app.call_as(&app.key, Method::POST, path, None).await;
    assert_eq!(empty.status, StatusCode::OK, "an empty body rotates: {:?}", empty.body);
    let data = empty.data();
    assert_eq!(data["rotation"], json!({ "mode": "Immediate" }));
    let secret = data["clientSecret"].as_str().unwrap();
    assert!(secret.starts_with("cstl_cs_"));
    assert_eq!(data["clientSecretLastFour"], secret[secret.len() - 4..]);
    assert_eq!(data["clientSecretRotatedAt"], castellan::kernel::clock::iso(app.state.clock.now()));

    assert_eq!(client_credentials(&app, &client).await, StatusCode::UNAUTHORIZED);
    assert_eq!(client_credentials(&app, &with_secret(&client, secret)).await, StatusCode::OK);
    let read = app.get(path.trim_end_matches("/client-secret/rotate")).await;
    assert_eq!(read.data()["clientSecretLastFour"], secret[secret.len() - 4..]);
    assert!(read.data().get("clientSecret").is_none(), "the value is shown once");
    assert!(read.data()["clientConfiguration"].get("previousClientSecretValidUntil").is_none());
}

#[tokio::test]
async fn an_overlap_keeps_the_old_client_secret_until_its_instant_and_not_after() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let issued = app.token(&client, &[("grant_type", "client_credentials")]).await;
    let token = issued.body["access_token"].as_str().unwrap().to_owned();
    let rotated = rotate_client(&app, &client, json!({ "previousValueValidForMinutes": 10 })).await;
    assert_eq!(rotated.status, StatusCode::OK, "{:?}", rotated.body);
    let until = castellan::kernel::clock::iso(app.state.clock.now() + chrono::TimeDelta::minutes(10));
    assert_eq!(rotated.data()["rotation"], json!({ "mode": "Overlap", "previousValueValidUntil": until }));
    let fresh = with_secret(&client, rotated.data()["clientSecret"].as_str().unwrap());

    let read = app.get("/realms/acme/clients/agent").await;
    assert_eq!(read.data()["clientConfiguration"]["previousClientSecretValidUntil"], until);
    assert_eq!(client_credentials(&app, &client).await, StatusCode::OK, "the old secret during the overlap");
    assert_eq!(client_credentials(&app, &fresh).await, StatusCode::OK);
    assert!(active(&app, &fresh, &token).await, "only a compromise revokes issued tokens");

    app.advance(10 * 60 - 1).await;
    assert_eq!(client_credentials(&app, &client).await, StatusCode::OK, "a second before the instant");
    app.advance(1).await;
    assert_eq!(client_credentials(&app, &client).await, StatusCode::UNAUTHORIZED, "at the instant");
    let answer = app.protocol(&client, "token/introspect", &[("token", &token)]).await;
    assert_eq!(answer.body["error"], "invalid_client", "nor at introspection");
    assert_eq!(client_credentials(&app, &fresh).await, StatusCode::OK);
    let read = app.get("/realms/acme/clients/agent").await;
    assert!(read.data()["clientConfiguration"].get("previousClientSecretValidUntil").is_none(), "{:?}", read.body);
}

#[tokio::test]
async fn a_compromise_revokes_every_token_issued_before_it_and_none_after() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "agent", &["client_credentials", "password", "refresh_token"], &[]).await;
    app.create_user("acme", "ada", "analytical engine").await;
    let machine = app.token(&client, &[("grant_type", "client_credentials")]).await.body.clone();
    let person = app
        .token(&client, &[("grant_type", "password"), ("username", "ada"), ("password", "analytical engine")])
        .await
        .body
        .clone();
    let before = ["access_token", "refresh_token"].map(|k| person[k].as_str().unwrap().to_owned());
    let machine_token = machine["access_token"].as_str().unwrap().to_owned();
    app.advance(1).await;

    let rotated = rotate_client(&app, &client, json!({ "revokeIssuedTokens": true })).await;
    assert_eq!(rotated.status, StatusCode::OK, "{:?}", rotated.body);
    let now = castellan::kernel::clock::iso(app.state.clock.now());
    assert_eq!(rotated.data()["rotation"], json!({ "mode": "Compromise", "issuedTokensRevokedBefore": now }));
    let fresh = with_secret(&client, rotated.data()["clientSecret"].as_str().unwrap());
    assert_eq!(client_credentials(&app, &client).await, StatusCode::UNAUTHORIZED, "the old secret at once");

    assert!(!active(&app, &fresh, &machine_token).await, "a client token issued a second before");
    assert!(!active(&app, &fresh, &before[0]).await, "a person's access token issued a second before");
    assert!(!active(&app, &fresh, &before[1]).await, "a refresh token issued a second before");
    let refreshed = app.token(&fresh, &[("grant_type", "refresh_token"), ("refresh_token", &before[1])]).await;
    assert_eq!(refreshed.body["error"], "invalid_grant", "{:?}", refreshed.body);

    let after = app.token(&fresh, &[("grant_type", "client_credentials")]).await;
    assert!(
        active(&app, &fresh, after.body["access_token"].as_str().unwrap()).await,
        "issued in the same instant, after"
    );
    let read = app.get("/realms/acme/clients/agent").await;
    assert_eq!(read.data()["clientConfiguration"]["issuedTokensRevokedBefore"], now);

    // A later rotation never moves the revocation instant back.
    app.advance(5).await;
    let again = rotate_client(&app, &fresh, json!({ "previousValueValidForMinutes": 5 })).await;
    assert_eq!(again.status, StatusCode::OK);
    let read = app.get("/realms/acme/clients/agent").await;
    assert_eq!(read.data()["clientConfiguration"]["issuedTokensRevokedBefore"], now);
}

#[tokio::test]
async fn rotation_bodies_are_validated_and_public_clients_have_nothing_to_rotate() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let refusals = [
        (json!({ "previousValueValidForMinutes": 5, "revokeIssuedTokens": true }), "revokeIssuedTokens", "Conflict"),
        (json!({ "previousValueValidForMinutes": 1441 }), "previousValueValidForMinutes", "Range"),
        (json!({ "previousValueValidForMinutes": -1 }), "previousValueValidForMinutes", "Range"),
        (json!({ "previousValueValidForMinutes": "5" }), "previousValueValidForMinutes", "Type"),
        (json!({ "revokeIssuedTokens": "yes" }), "revokeIssuedTokens", "Type"),
        (json!({ "mode": "Overlap" }), "mode", "Unknown"),
    ];
    for (body, field, code) in refusals {
        let refused = rotate_client(&app, &client, body.clone()).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(refused.error_code(), "ValidationFailed");
        assert_eq!(refused.refused_fields(), [(field.to_owned(), code.to_owned())], "{body}");
    }
    assert_eq!(client_credentials(&app, &client).await, StatusCode::OK, "a refused rotation changes nothing");
    let most =
        rotate_client(&app, &client, json!({ "previousValueValidForMinutes": 1440, "revokeIssuedTokens": false }))
            .await;
    assert_eq!(most.data()["rotation"]["mode"], "Overlap");

    let public = app.post("/realms/acme/clients", json!({ "id": "spa", "type": "Public" })).await;
    assert_eq!(public.status, StatusCode::CREATED);
    let refused = app.post("/realms/acme/clients/spa/client-secret/rotate", json!({})).await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{:?}", refused.body);
    let missing = app.post("/realms/acme/clients/nobody/client-secret/rotate", json!({})).await;
    assert_eq!(missing.status, StatusCode::FORBIDDEN);
    let auditor = app.key_with(&["Auditor"], None).await;
    let path = "/realms/acme/clients/agent/client-secret/rotate";
    let forbidden = app.call_as(&auditor, Method::POST, path, Some(json!({}))).await;
    assert_eq!(forbidden.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_client_secret_rotation_is_trailed_and_raises_its_event_with_the_details() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let rotated = rotate_client(&app, &client, json!({ "previousValueValidForMinutes": 30 })).await;
    let until = rotated.data()["rotation"]["previousValueValidUntil"].clone();
    let details =
        json!({ "mode": "Overlap", "previous_value_valid_until": until, "issued_tokens_revoked_before": null });

    let events = app.events("admin_resource_updated").await;
    let (realm, client_id, data) = events.last().expect("an event");
    assert_eq!((realm.as_deref(), client_id.as_deref()), (Some("acme"), Some("agent")));
    assert_eq!(data["details"], details, "{data}");
    let trail = app.get("/audit-trail?realmId=acme&resourceType=client&sortDirection=desc").await;
    let row = &trail.items()[0];
    assert_eq!(row["details"], details, "{row}");
    assert!(!row.to_string().contains(rotated.data()["clientSecret"].as_str().unwrap()), "no secret in the trail");

    let compromise = rotate_client(&app, &client, json!({ "revokeIssuedTokens": true })).await;
    let before = compromise.data()["rotation"]["issuedTokensRevokedBefore"].clone();
    let events = app.events("admin_resource_updated").await;
    assert_eq!(
        events.last().unwrap().2["details"],
        json!({ "mode": "Compromise", "previous_value_valid_until": null, "issued_tokens_revoked_before": before })
    );
}

#[tokio::test]
async fn an_api_key_overlaps_then_only_the_new_value_works() {
    let app = spawn_app().await;
    let created = app.post("/secrets", json!({ "name": "ci", "roles": ["Developer"] })).await;
    let (id, old) = (created.data()["id"].as_str().unwrap(), created.data()["value"].as_str().unwrap());
    let rotated = app.post(&format!("/secrets/{id}/rotate"), json!({ "previousValueValidForMinutes": 60 })).await;
    assert_eq!(rotated.status, StatusCode::OK, "{:?}", rotated.body);
    let data = rotated.data();
    let new = data["value"].as_str().unwrap();
    assert!(new.starts_with("cstl_key_") && new != old);
    assert_eq!((data["id"].as_str(), data["name"].as_str()), (Some(id), Some("ci")));
    assert_eq!(data["valueLastFour"], new[new.len() - 4..]);
    let until = castellan::kernel::clock::iso(app.state.clock.now() + chrono::TimeDelta::minutes(60));
    assert_eq!(data["previousValueValidUntil"], until);
    assert_eq!(data["rotation"], json!({ "mode": "Overlap", "previousValueValidUntil": until }));

    for key in [old, new] {
        assert_eq!(app.call_as(key, Method::GET, "/realms", None).await.status, StatusCode::OK);
    }
    app.advance(60 * 60 - 1).await;
    assert_eq!(app.call_as(old, Method::GET, "/realms", None).await.status, StatusCode::OK);
    app.advance(1).await;
    assert_eq!(app.call_as(old, Method::GET, "/realms", None).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(app.call_as(new, Method::GET, "/realms", None).await.status, StatusCode::OK);
    let read = app.get(&format!("/secrets/{id}")).await;
    assert!(read.data().get("previousValueValidUntil").is_none(), "{:?}", read.body);
    assert!(read.data().get("value").is_none());

    let logged = app.get(&format!("/access-logs?credentialId={id}&status=Refused")).await;
    assert_eq!(logged.items().len(), 1, "the refused old value is logged as the credential: {:?}", logged.body);
}

#[tokio::test]
async fn an_immediate_key_rotation_refuses_the_old_value_and_a_second_rotation_ends_any_overlap() {
    let app = spawn_app().await;
    let created = app.post("/secrets", json!({ "name": "ci", "roles": ["Developer"] })).await;
    let (id, first) = (created.data()["id"].as_str().unwrap(), created.data()["value"].as_str().unwrap());
    let overlap = app.post(&format!("/secrets/{id}/rotate"), json!({ "previousValueValidForMinutes": 60 })).await;
    let second = overlap.data()["value"].as_str().unwrap();
    let immediate = app.post(&format!("/secrets/{id}/rotate"), json!({})).await;
    assert_eq!(immediate.data()["rotation"], json!({ "mode": "Immediate" }));
    let third = immediate.data()["value"].as_str().unwrap();
    for (key, status) in
        [(first, StatusCode::UNAUTHORIZED), (second, StatusCode::UNAUTHORIZED), (third, StatusCode::OK)]
    {
        assert_eq!(app.call_as(key, Method::GET, "/realms", None).await.status, status);
    }
    let trail = app.get("/audit-trail?resourceType=secret&sortDirection=desc").await;
    assert_eq!(trail.items()[0]["details"]["mode"], "Immediate");
    assert_eq!(trail.items()[0]["resourceId"], id);
}

#[tokio::test]
async fn a_compromised_account_client_secret_takes_its_bearer_tokens_along() {
    let app = spawn_app().await;
    let created = app.post("/secrets", json!({ "name": "ci", "type": "ClientSecret", "roles": ["Developer"] })).await;
    let (id, value) = (created.data()["id"].as_str().unwrap(), created.data()["value"].as_str().unwrap());
    let platform = TestClient { realm: "platform".into(), id: "platform".into(), secret: value.to_owned() };
    let bearer = |token: String| {
        let app = &app;
        async move { app.http.get(format!("{}/realms", app.admin)).bearer_auth(token).send().await.unwrap().status() }
    };
    let token = app.token(&platform, &[("grant_type", "client_credentials")]).await.body["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(bearer(token.clone()).await, StatusCode::OK);
    app.advance(1).await;

    let rotated = app.post(&format!("/secrets/{id}/rotate"), json!({ "revokeIssuedTokens": true })).await;
    assert_eq!(rotated.status, StatusCode::OK, "{:?}", rotated.body);
    let data = rotated.data();
    assert!(data["value"].as_str().unwrap().starts_with("cstl_acs_"));
    let now = castellan::kernel::clock::iso(app.state.clock.now());
    assert_eq!(data["issuedTokensRevokedBefore"], now);
    assert_eq!(data["rotation"], json!({ "mode": "Compromise", "issuedTokensRevokedBefore": now }));

    assert_eq!(bearer(token).await, StatusCode::UNAUTHORIZED, "a token issued a second before");
    let old = app.token(&platform, &[("grant_type", "client_credentials")]).await;
    assert_eq!(old.body["error"], "invalid_client");
    let fresh = TestClient { secret: data["value"].as_str().unwrap().to_owned(), ..platform };
    let token = app.token(&fresh, &[("grant_type", "client_credentials")]).await.body["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(bearer(token).await, StatusCode::OK, "a token of the new value");
}

#[tokio::test]
async fn the_rotation_policy_is_open_to_secret_readers_and_writers_only() {
    let app = spawn_app().await;
    let policy = app.get("/secrets/rotation-policy").await;
    assert_eq!(policy.status, StatusCode::OK, "{:?}", policy.body);
    assert_eq!(policy.data(), &json!({ "maxPreviousValueValidForMinutes": 1440 }));

    let role = |name: &str, permissions: &[&str]| {
        let body = json!({ "name": name, "permissions": permissions });
        let app = &app;
        async move {
            let created = app.post("/roles", body).await;
            assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
        }
    };
    role("secret-readers", &["secret:read"]).await;
    role("secret-writers", &["secret:write"]).await;
    role("secret-updaters", &["secret:update"]).await;
    role("realm-readers", &["realm:read"]).await;
    for (role, status) in [
        ("secret-readers", StatusCode::OK),
        ("secret-writers", StatusCode::OK),
        ("secret-updaters", StatusCode::OK),
        ("realm-readers", StatusCode::FORBIDDEN),
    ] {
        let key = app.key_with(&[role], None).await;
        let answer = app.call_as(&key, Method::GET, "/secrets/rotation-policy", None).await;
        assert_eq!(answer.status, status, "{role}: {:?}", answer.body);
    }
}

#[tokio::test]
async fn secrets_are_rotated_only_by_holders_of_secret_update_in_their_own_account() {
    let app = spawn_app().await;
    let created = app.post("/secrets", json!({ "name": "ci", "roles": ["Auditor"] })).await;
    let id = created.data()["id"].as_str().unwrap().to_owned();
    let auditor = app.key_with(&["Auditor"], None).await;
    let refused = app.call_as(&auditor, Method::POST, &format!("/secrets/{id}/rotate"), Some(json!({}))).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let missing = app.post("/secrets/0190b6f4-0000-7000-8000-000000000000/rotate", json!({})).await;
    assert_eq!(missing.status, StatusCode::FORBIDDEN, "a secret no account owns: {:?}", missing.body);
    let refused = app.post(&format!("/secrets/{id}/rotate"), json!({ "previousValueValidForMinutes": 0.5 })).await;
    assert_eq!(refused.refused_fields(), [("previousValueValidForMinutes".to_owned(), "Type".to_owned())]);
}
