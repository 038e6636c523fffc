//! The change trail and the administrative events it commits with.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{TestApp, spawn_app};

async fn events(app: &TestApp) -> Vec<(String, Option<String>, Value)> {
    // Every event in the outbox, whether or not an endpoint heard it: no answer shows them all.
    let store = app.database().await;
    let rows: Vec<(String, Option<String>, String)> =
        sqlx::query_as("SELECT event_type, realm_id, data FROM event_outbox ORDER BY created_at, id")
            .fetch_all(store.pool())
            .await
            .unwrap();
    rows.into_iter().map(|(kind, realm, data)| (kind, realm, serde_json::from_str(&data).unwrap())).collect()
}

#[tokio::test]
async fn each_change_writes_its_trail_row_and_its_event() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.post("/realms/acme/clients", json!({ "id": "web" })).await;
    app.put("/realms/acme/clients/web", json!({ "name": "Web shop" })).await;
    app.delete("/realms/acme/clients/web").await;

    let trail = app.get("/audit-trail?realmId=acme&sortDirection=asc").await;
    let rows = trail.items();
    let actions: Vec<(&str, &str)> =
        rows.iter().map(|r| (r["action"].as_str().unwrap(), r["resourceType"].as_str().unwrap())).collect();
    assert_eq!(actions, vec![("Create", "realm"), ("Create", "client"), ("Update", "client"), ("Delete", "client")]);
    let update = &rows[2];
    assert_eq!(update["before"]["name"], "web");
    assert_eq!(update["after"]["name"], "Web shop");
    assert_eq!(update["actorType"], "Credential");
    assert_eq!(update["actorCredentialName"], "Bootstrap key");
    assert_eq!(update["actorUsername"], "owner");
    assert_eq!(update["outcome"], "Succeeded");
    assert!(update["after"].get("clientSecret").is_none(), "no secret in the trail");

    let published = events(&app).await;
    let kinds: Vec<&str> = published.iter().map(|(kind, _, _)| kind.as_str()).collect();
    assert_eq!(
        kinds,
        vec!["admin_resource_created", "admin_resource_created", "admin_resource_updated", "admin_resource_deleted"]
    );
    let (_, realm, data) = &published[2];
    assert_eq!(realm.as_deref(), Some("acme"));
    for field in [
        "action",
        "resource_type",
        "resource_id",
        "parent_id",
        "realm_id",
        "client_id",
        "actor_type",
        "actor_user_id",
        "actor_username",
        "actor_email",
        "actor_credential_id",
        "actor_credential_name",
        "ip_address",
        "method",
        "path",
    ] {
        assert!(data.get(field).is_some(), "event data has {field}");
    }
    assert_eq!(data["resource_type"], "client");
    assert_eq!(data["resource_id"], "web");
    assert_eq!(data["parent_id"], "acme");
    assert_eq!(data["actor_type"], "Credential");
    assert_eq!(data["actor_email"], Value::Null, "null for a credential");
    assert_eq!(data["method"], "PUT");
    assert_eq!(data["path"], "/api/v1/admin/realms/acme/clients/web");
}

#[tokio::test]
async fn a_refused_change_is_in_the_trail_but_raises_no_event() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let auditor = app.key_with(&["Auditor"], None).await;
    let before = events(&app).await.len();

    let forbidden = app.call_as(&auditor, Method::PUT, "/realms/acme", Some(json!({ "displayName": "x" }))).await;
    assert_eq!(forbidden.status, StatusCode::FORBIDDEN);
    let invalid = app.put("/realms/acme", json!({ "maxFailedAttempts": -1 })).await;
    assert_eq!(invalid.status, StatusCode::BAD_REQUEST);

    assert_eq!(events(&app).await.len(), before, "refused changes publish nothing");
    let refused = app.get("/audit-trail?status=Refused&sortDirection=asc").await;
    let rows = refused.items();
    assert_eq!(rows.len(), 2, "{rows:#?}");
    assert_eq!(rows[0]["errorCode"], "Forbidden");
    assert_eq!(rows[0]["status"], 403);
    assert_eq!(rows[0]["resourceType"], "realm");
    assert_eq!(rows[0]["resourceId"], "acme");
    assert_eq!(rows[1]["errorCode"], "ValidationFailed");
}

#[tokio::test]
async fn changes_outside_a_realm_are_trailed_without_an_event() {
    let app = spawn_app().await;
    let before = events(&app).await.len();
    assert_eq!(
        app.post("/roles", json!({ "name": "reader", "permissions": ["realm:read"] })).await.status,
        StatusCode::CREATED
    );
    app.key_with(&["Auditor"], None).await;
    assert_eq!(events(&app).await.len(), before);
    let trail = app.get("/audit-trail?sortDirection=asc").await;
    let types: Vec<&str> = trail.items().iter().map(|r| r["resourceType"].as_str().unwrap()).collect();
    assert_eq!(types, vec!["role", "secret"]);
    let by_type = app.get("/audit-trail?resourceType=secret").await;
    assert_eq!(by_type.items().len(), 1);
}
