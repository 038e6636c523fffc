//! A client's allowed IPs: the token endpoint refuses the client from any other address
//! (`unauthorized_client`, `ClientAddressNotAllowed`) and records the refusal; an empty list
//! allows every address.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::{Answer, TestApp, TestClient, answer, spawn_app};

async fn token_from(app: &TestApp, client: &TestClient, from: &str) -> Answer {
    let response = app
        .http
        .post(format!("{}/realms/{}/protocol/openid-connect/token", app.base, client.realm))
        .basic_auth(&client.id, Some(&client.secret))
        .header("x-forwarded-for", from)
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    answer(response).await
}

#[tokio::test]
async fn a_client_is_refused_from_addresses_it_does_not_allow_and_the_refusal_is_recorded() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "batch", &["client_credentials"], &[]).await;
    let path = "/realms/acme/clients/batch/allowed-ips";
    assert!(app.get(path).await.data().get("allowedIps").is_none(), "no addresses set");
    assert_eq!(token_from(&app, &client, "203.0.113.9").await.status, StatusCode::OK, "an empty list allows all");

    let refused = app.put(path, json!({ "allowedIps": ["198.51.100.7", "not an address"] })).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{:?}", refused.body);
    assert_eq!(refused.refused_fields()[0].0, "allowedIps[1]");
    assert!(app.get(path).await.data().get("allowedIps").is_none(), "nothing was written");

    let set = app.put(path, json!({ "allowedIps": ["198.51.100.77/24", "2001:DB8::1"] })).await;
    assert_eq!(set.status, StatusCode::OK, "{:?}", set.body);
    assert_eq!(set.data()["allowedIps"], json!(["198.51.100.0/24", "2001:db8::1"]), "canonical forms");

    let elsewhere = token_from(&app, &client, "203.0.113.9").await;
    assert_eq!(elsewhere.status, StatusCode::BAD_REQUEST, "{:?}", elsewhere.body);
    assert_eq!(elsewhere.body["error"], "unauthorized_client");
    assert_eq!(elsewhere.body["error_code"], "ClientAddressNotAllowed");
    let failed = app.events("login_failed").await;
    let recorded = &failed.last().expect("the refusal is recorded").2;
    assert_eq!(recorded["failure_reason"], "client_address_not_allowed");
    assert_eq!(recorded["ip_address"], "203.0.113.9");
    assert_eq!(recorded["grant_type"], "client_credentials");

    assert_eq!(token_from(&app, &client, "198.51.100.200").await.status, StatusCode::OK, "inside the network");
    assert_eq!(token_from(&app, &client, "2001:db8::1").await.status, StatusCode::OK);
    assert_eq!(token_from(&app, &client, "2001:db8::2").await.status, StatusCode::BAD_REQUEST);

    let trail = app.get("/audit-trail?realmId=acme&resourceType=client_allowed_ips").await;
    assert_eq!(trail.items().len(), 1, "{:?}", trail.body);
    assert_eq!(trail.items()[0]["after"]["allowedIps"], set.data()["allowedIps"]);

    let auditor = app.key_with(&["Auditor"], None).await;
    let forbidden = app.call_as(&auditor, reqwest::Method::PUT, path, Some(json!({ "allowedIps": [] }))).await;
    assert_eq!(forbidden.status, StatusCode::FORBIDDEN, "{:?}", forbidden.body);

    assert_eq!(app.put(path, json!({ "allowedIps": [] })).await.status, StatusCode::OK);
    assert_eq!(token_from(&app, &client, "203.0.113.9").await.status, StatusCode::OK, "every address again");
}
