//! Admin API credentials: a client's consumers hold API keys that the customer's own
//! API validates at the realm's introspection endpoint, and that the admin API never accepts.

use openidconnect::TokenIntrospectionResponse;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::{TestApp, TestClient, spawn_app};

const CONSUMERS: &str = "/realms/acme/clients/orders-api/consumers";

/// A realm with the customer's API as a client allowed `orders:read` and `orders:write`.
async fn customer_api(app: &TestApp) -> TestClient {
    app.create_realm("acme").await;
    app.create_client("acme", "orders-api", &["client_credentials"], &["orders:read", "orders:write"]).await
}

async fn introspect(app: &TestApp, asker: &TestClient, key: &str, hint: Option<&str>) -> serde_json::Value {
    let mut form = vec![("token", key)];
    if let Some(hint) = hint {
        form.push(("token_type_hint", hint));
    }
    let answer = app.protocol(asker, "token/introspect", &form).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body
}

#[tokio::test]
async fn a_consumer_key_is_shown_once_and_validated_at_introspection() {
    let app = spawn_app().await;
    let api = customer_api(&app).await;
    let created = app.post(CONSUMERS, json!({ "name": "Partner Ltd", "scopes": ["orders:read"] })).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let data = created.data();
    assert_eq!(data["type"], "ApiKey");
    assert_eq!(data["status"], "Active");
    let (id, key) = (data["id"].as_str().unwrap(), data["value"].as_str().unwrap());
    assert!(key.starts_with("cstl_ck_"));
    assert_eq!(data["valueLastFour"], key[key.len() - 4..]);

    let read = app.get(&format!("{CONSUMERS}/{id}")).await;
    assert_eq!(read.status, StatusCode::OK);
    assert!(read.data().get("value").is_none(), "the key is shown once");
    assert!(!app.get(CONSUMERS).await.body.to_string().contains(key), "never in a list");

    for hint in [Some("api_key"), None] {
        let answer = introspect(&app, &api, key, hint).await;
        assert_eq!(answer["active"], true, "{answer}");
        assert_eq!(answer["token_type"], "api_key");
        assert_eq!(answer["client_id"], "orders-api");
        assert_eq!(answer["consumer_id"], id);
        assert_eq!(answer["consumer_name"], "Partner Ltd");
        assert_eq!(answer["scope"], "orders:read");
        let stock = crate::oauth::introspection::introspected(&app, &api, key, hint).await;
        assert!(stock.active());
        assert_eq!(stock.token_type().map(|t| t.as_ref().to_owned()).as_deref(), Some("api_key"));
        assert_eq!(stock.sub(), Some(id));
        let created_at = chrono::DateTime::parse_from_rfc3339(data["createdAt"].as_str().unwrap()).unwrap();
        assert_eq!(stock.iat().map(|at| at.timestamp()), Some(created_at.timestamp()));
    }
    let unknown = introspect(&app, &api, "cstl_ck_not-a-key", Some("api_key")).await;
    assert_eq!(unknown, json!({ "active": false }));
}

#[tokio::test]
async fn the_admin_api_never_accepts_a_consumer_key() {
    let app = spawn_app().await;
    customer_api(&app).await;
    let created = app.post(CONSUMERS, json!({ "name": "Partner" })).await;
    let key = created.data()["value"].as_str().unwrap().to_owned();
    for path in ["/realms", "/realms/acme", "/realms/acme/clients/orders-api/consumers"] {
        let answer = app.call_as(&key, Method::GET, path, None).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{path}");
    }
    // A consumer key names no account of the admin API: the refusals are stored without one, so no
    // account's access log shows them and they are counted in the table.
    app.state.access_log.flush().await;
    let store = app.database().await;
    let (refused,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM access_log WHERE account_id IS NULL AND status = 401 AND reason LIKE 'a consumer API key%'",
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!(refused, 3, "each refused attempt is in the access log");
}

#[tokio::test]
async fn disabled_expired_deleted_and_other_clients_keys_are_inactive() {
    let app = spawn_app().await;
    let api = customer_api(&app).await;
    let other = app.create_client("acme", "billing-api", &["client_credentials"], &[]).await;
    let expires = (app.state.clock.now() + chrono::TimeDelta::seconds(60)).to_rfc3339();
    let created = app.post(CONSUMERS, json!({ "name": "Partner", "expiresAt": expires })).await;
    let (id, key) = (created.data()["id"].as_str().unwrap(), created.data()["value"].as_str().unwrap());
    assert_eq!(introspect(&app, &api, key, Some("api_key")).await["active"], true);
    assert_eq!(introspect(&app, &other, key, Some("api_key")).await, json!({ "active": false }), "another client");

    let disabled = app.put(&format!("{CONSUMERS}/{id}"), json!({ "status": "Disabled" })).await;
    assert_eq!(disabled.status, StatusCode::OK, "{:?}", disabled.body);
    assert_eq!(introspect(&app, &api, key, None).await["active"], false, "disabled");
    app.put(&format!("{CONSUMERS}/{id}"), json!({ "status": "Active" })).await;
    assert_eq!(introspect(&app, &api, key, None).await["active"], true, "enabled again");

    app.advance(60).await;
    assert_eq!(introspect(&app, &api, key, None).await["active"], false, "expired");
    let cleared = app.put(&format!("{CONSUMERS}/{id}"), json!({ "expiresAt": null })).await;
    assert!(cleared.data().get("expiresAt").is_none());
    assert_eq!(introspect(&app, &api, key, None).await["active"], true, "no expiry any more");

    assert_eq!(app.delete(&format!("{CONSUMERS}/{id}")).await.status, StatusCode::OK);
    assert_eq!(introspect(&app, &api, key, None).await["active"], false, "deleted");
    assert_eq!(app.get(&format!("{CONSUMERS}/{id}")).await.status, StatusCode::NOT_FOUND);

    let again = app.post(CONSUMERS, json!({ "name": "Partner" })).await;
    let key = again.data()["value"].as_str().unwrap().to_owned();
    assert_eq!(app.delete("/realms/acme/clients/orders-api").await.status, StatusCode::OK);
    // The client is gone, so no answer lists its consumers: the table tells whether they went with it.
    let store = app.database().await;
    let (left,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM consumers").fetch_one(store.pool()).await.unwrap();
    assert_eq!(left, 0, "a deleted client takes its consumers along");
    assert_eq!(introspect(&app, &other, &key, Some("api_key")).await["active"], false);
}

#[tokio::test]
async fn a_put_keeps_the_type_and_refuses_another() {
    let app = spawn_app().await;
    customer_api(&app).await;
    let created = app.post(CONSUMERS, json!({ "name": "Partner", "type": "ApiKey" })).await;
    let id = created.data()["id"].as_str().unwrap().to_owned();
    let path = format!("{CONSUMERS}/{id}");

    let omitted = app.put(&path, json!({ "name": "Partner Ltd" })).await;
    assert_eq!(omitted.status, StatusCode::OK, "{:?}", omitted.body);
    assert_eq!(
        (omitted.data()["type"].as_str(), omitted.data()["name"].as_str()),
        (Some("ApiKey"), Some("Partner Ltd"))
    );
    let same = app.put(&path, json!({ "type": "ApiKey", "description": "EU partner" })).await;
    assert_eq!(same.status, StatusCode::OK);
    for other in ["ClientCertificate", "apikey", ""] {
        let refused = app.put(&path, json!({ "type": other, "name": "changed" })).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{other}");
        assert_eq!(refused.error_code(), "ValidationFailed");
        assert_eq!(refused.refused_fields(), [("type".to_owned(), "Immutable".to_owned())], "{other}");
    }
    let read = app.get(&path).await;
    assert_eq!(read.data()["name"], "Partner Ltd", "a refused PUT changes nothing");
    assert_eq!(read.data()["description"], "EU partner");
}

#[tokio::test]
async fn consumer_fields_are_validated_and_scopes_bounded_by_the_client() {
    let app = spawn_app().await;
    customer_api(&app).await;
    let past = (app.state.clock.now() - chrono::TimeDelta::seconds(1)).to_rfc3339();
    let refused = app
        .post(
            CONSUMERS,
            json!({ "scopes": ["orders:read", "admin:all"], "expiresAt": past, "type": "Other", "colour": 1 }),
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let mut fields = refused.refused_fields();
    fields.sort();
    assert_eq!(
        fields,
        [
            ("colour", "Unknown"),
            ("expiresAt", "Range"),
            ("name", "Required"),
            ("scopes[1]", "NotFound"),
            ("type", "OneOf")
        ]
        .map(|(f, c)| (f.to_owned(), c.to_owned()))
    );
    assert_eq!(app.get(CONSUMERS).await.items().len(), 0, "nothing stored");
    let missing = app.post("/realms/acme/clients/nobody/consumers", json!({ "name": "x" })).await;
    assert_eq!((missing.status, missing.error_code()), (StatusCode::FORBIDDEN, "Forbidden"));
    let auditor = app.key_with(&["Auditor"], None).await;
    let forbidden = app.call_as(&auditor, Method::POST, CONSUMERS, Some(json!({ "name": "x" }))).await;
    assert_eq!(forbidden.status, StatusCode::FORBIDDEN);
    let listed = app.call_as(&auditor, Method::GET, CONSUMERS, None).await;
    assert_eq!(listed.status, StatusCode::OK, "auditors read consumers");
}

#[tokio::test]
async fn each_validation_is_a_sign_in_of_the_consumer_raised_at_most_once_a_minute() {
    let app = spawn_app().await;
    let api = customer_api(&app).await;
    let created = app.post(CONSUMERS, json!({ "name": "Partner" })).await;
    let (id, key) = (created.data()["id"].as_str().unwrap(), created.data()["value"].as_str().unwrap());
    let named = |events: &[(Option<String>, Option<String>, serde_json::Value)]| {
        events.iter().filter(|(_, _, data)| data["consumer_id"] == id).count()
    };
    for _ in 0..5 {
        assert_eq!(introspect(&app, &api, key, Some("api_key")).await["active"], true);
    }
    let succeeded = app.events("login_succeeded").await;
    assert_eq!(named(&succeeded), 1, "a busy API raises one success a minute: {succeeded:?}");
    let (realm, client, data) = succeeded.iter().find(|(_, _, d)| d["consumer_id"] == id).unwrap();
    assert_eq!((realm.as_deref(), client.as_deref()), (Some("acme"), Some("orders-api")));
    assert_eq!((data["consumer_name"].as_str(), data["grant_type"].as_str()), (Some("Partner"), Some("api_key")));
    app.advance(61).await;
    introspect(&app, &api, key, None).await;
    assert_eq!(named(&app.events("login_succeeded").await), 2, "and another the next minute");

    app.put(&format!("{CONSUMERS}/{id}"), json!({ "status": "Disabled" })).await;
    introspect(&app, &api, key, None).await;
    introspect(&app, &api, key, None).await;
    let failed = app.events("login_failed").await;
    assert_eq!(named(&failed), 1, "{failed:?}");
    let data = &failed.iter().find(|(_, _, d)| d["consumer_id"] == id).unwrap().2;
    assert_eq!(
        (data["failure_reason"].as_str(), data["consumer_name"].as_str()),
        (Some("consumer_disabled"), Some("Partner"))
    );

    // A key naming no consumer of this client: one failure a minute per address it comes from.
    for _ in 0..3 {
        introspect(&app, &api, "cstl_ck_made-up", Some("api_key")).await;
    }
    let unknown = app.events("login_failed").await;
    let unknown: Vec<_> = unknown.iter().filter(|(_, _, d)| d["failure_reason"] == "unknown_api_key").collect();
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert!(unknown[0].2["consumer_id"].is_null());
}
