//! Bearer tokens for the admin API from account client secrets, at the platform realm.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{TestApp, TestClient, spawn_app};

async fn account_client_secret(app: &TestApp, body: Value) -> (String, String) {
    let created = app.post("/secrets", body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert_eq!(created.data()["type"], "ClientSecret");
    (created.data()["id"].as_str().unwrap().to_owned(), created.data()["value"].as_str().unwrap().to_owned())
}

fn platform(secret: &str) -> TestClient {
    TestClient { realm: "platform".into(), id: "platform".into(), secret: secret.to_owned() }
}

async fn admin_get(app: &TestApp, token: &str, path: &str) -> StatusCode {
    app.http.get(format!("{}{path}", app.admin)).bearer_auth(token).send().await.unwrap().status()
}

#[tokio::test]
async fn an_account_client_secret_buys_a_bearer_token_with_the_secrets_roles() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let (secret_id, value) =
        account_client_secret(&app, json!({ "name": "ci", "type": "ClientSecret", "roles": ["Auditor"] })).await;
    assert!(value.starts_with("cstl_acs_"));
    let answer = app.token(&platform(&value), &[("grant_type", "client_credentials")]).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let token = answer.body["access_token"].as_str().unwrap().to_owned();

    assert_eq!(admin_get(&app, &token, "/realms/acme").await, StatusCode::OK);
    let create = app
        .http
        .post(format!("{}/realms", app.admin))
        .bearer_auth(&token)
        .json(&json!({ "id": "new" }))
        .send()
        .await
        .unwrap();
    assert_eq!(create.status(), StatusCode::FORBIDDEN, "an Auditor's secret cannot act");

    let logged = app.get(&format!("/access-logs?credentialId={secret_id}")).await;
    assert!(
        logged.items().iter().any(|e| e["path"] == "/realms/platform/protocol/openid-connect/token"),
        "{:?}",
        logged.body
    );
    assert!(logged.items().iter().any(|e| e["path"] == "/api/v1/admin/realms/acme" && e["status"] == 200));

    assert_eq!(app.delete(&format!("/secrets/{secret_id}")).await.status, StatusCode::OK);
    assert_eq!(admin_get(&app, &token, "/realms/acme").await, StatusCode::UNAUTHORIZED, "a deleted secret's token");
}

#[tokio::test]
async fn a_bearer_token_never_outlives_its_secret() {
    let app = spawn_app().await;
    let expires = (app.state.clock.now() + chrono::TimeDelta::seconds(120)).to_rfc3339();
    let (_, value) = account_client_secret(
        &app,
        json!({ "name": "short", "type": "ClientSecret", "roles": ["Owner"], "expiresAt": expires }),
    )
    .await;
    let answer = app.token(&platform(&value), &[("grant_type", "client_credentials")]).await;
    let lifetime = answer.body["expires_in"].as_i64().unwrap();
    assert!((119..=120).contains(&lifetime), "capped by the secret's expiry: {lifetime}");
    let token = answer.body["access_token"].as_str().unwrap().to_owned();
    assert_eq!(admin_get(&app, &token, "/realms").await, StatusCode::OK);
    app.advance(121).await;
    assert_eq!(admin_get(&app, &token, "/realms").await, StatusCode::UNAUTHORIZED);
    let again = app.token(&platform(&value), &[("grant_type", "client_credentials")]).await;
    assert_eq!(again.body["error"], "invalid_client", "an expired secret buys nothing");
}

#[tokio::test]
async fn customer_realm_tokens_api_keys_and_wrong_client_ids_are_refused() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let customer = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let foreign = app.token(&customer, &[("grant_type", "client_credentials")]).await.body["access_token"].clone();
    assert_eq!(admin_get(&app, foreign.as_str().unwrap(), "/realms").await, StatusCode::UNAUTHORIZED);

    let (_, value) =
        account_client_secret(&app, json!({ "name": "ci", "type": "ClientSecret", "roles": ["Owner"] })).await;
    let as_key = app.call_as(&value, reqwest::Method::GET, "/realms", None).await;
    assert_eq!(as_key.status, StatusCode::UNAUTHORIZED, "a client secret is not an API key");
    let api_key = app.token(&platform(&app.key), &[("grant_type", "client_credentials")]).await;
    assert_eq!(api_key.body["error"], "invalid_client", "an API key is not a client secret");
    let wrong_id = TestClient { id: "acme".into(), ..platform(&value) };
    assert_eq!(app.token(&wrong_id, &[("grant_type", "client_credentials")]).await.body["error"], "invalid_client");
    let password =
        app.token(&platform(&value), &[("grant_type", "password"), ("username", "u"), ("password", "p")]).await;
    assert_eq!(password.body["error"], "unauthorized_client");
    let pat = app.post("/secrets", json!({ "name": "p", "type": "PersonalAccessToken", "roles": ["Owner"] })).await;
    let pat = pat.data()["value"].as_str().unwrap().to_owned();
    let as_secret = app.token(&platform(&pat), &[("grant_type", "client_credentials")]).await;
    assert_eq!(as_secret.body["error"], "invalid_client", "a personal access token is not a client secret");
    let console = app
        .http
        .post(format!("{}/realms/platform/protocol/openid-connect/token", app.base))
        .form(&[("grant_type", "password"), ("client_id", "acme"), ("username", "u"), ("password", "p")])
        .send()
        .await
        .unwrap();
    assert_eq!(console.status(), StatusCode::UNAUTHORIZED, "the console signs in only as the platform client");
}
