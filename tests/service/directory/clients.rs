//! `/realms/{realm}/clients`.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::spawn_app;

#[tokio::test]
async fn a_confidential_client_gets_its_secret_once_stored_hashed() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.create_scopes("acme", &["orders:read"]).await;
    let created = app
        .post(
            "/realms/acme/clients",
            json!({ "id": "agent", "clientConfiguration": { "tokenExchangeEnabled": true, "allowedScopes": ["orders:read"], "grantTypes": ["client_credentials"] } }),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let secret = created.data()["clientSecret"].as_str().expect("the secret, once").to_owned();
    assert!(secret.len() >= 40);
    assert_eq!(created.data()["clientSecretLastFour"], &secret[secret.len() - 4..]);
    let config = &created.data()["clientConfiguration"];
    assert_eq!(config["tokenExchangeEnabled"], true);
    assert_eq!(config["allowedScopes"], json!(["orders:read"]));
    assert!(config.get("previousClientSecretValidUntil").is_none(), "filled only while an old secret works");

    let read = app.get("/realms/acme/clients/agent").await;
    assert!(read.data().get("clientSecret").is_none(), "never shown again");
    assert_eq!(read.data()["clientSecretLastFour"], &secret[secret.len() - 4..]);

    // The stored hash is shown by no answer (only the last four characters are): read it from the table.
    let store = app.database().await;
    let (hash,): (String,) =
        sqlx::query_as("SELECT secret_hash FROM clients WHERE id = 'agent'").fetch_one(store.pool()).await.unwrap();
    assert_eq!(hash, app.state.hasher.hash(&secret));
}

#[tokio::test]
async fn a_taken_client_id_is_409_but_the_same_id_may_live_in_another_realm() {
    let app = spawn_app().await;
    app.create_realm("one").await;
    app.create_realm("two").await;
    assert_eq!(app.post("/realms/one/clients", json!({ "id": "web" })).await.status, StatusCode::CREATED);
    let again = app.post("/realms/one/clients", json!({ "id": "web" })).await;
    assert_eq!((again.status, again.error_code()), (StatusCode::CONFLICT, "AlreadyExists"));
    assert_eq!(app.post("/realms/two/clients", json!({ "id": "web" })).await.status, StatusCode::CREATED);
}

#[tokio::test]
async fn a_public_client_has_no_secret_and_no_client_credentials() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let created = app
        .post("/realms/acme/clients", json!({ "id": "spa", "type": "Public", "clientConfiguration": { "redirectUris": ["http://localhost:3000/cb", "com.example.app:/cb"] } }))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert!(created.data().get("clientSecret").is_none());
    assert!(created.data().get("clientSecretLastFour").is_none());
    let refused = app
        .post(
            "/realms/acme/clients",
            json!({ "id": "spa2", "type": "Public", "clientConfiguration": { "grantTypes": ["client_credentials"] } }),
        )
        .await;
    assert_eq!(refused.refused_fields(), vec![("clientConfiguration.grantTypes".to_owned(), "OneOf".to_owned())]);
}

#[tokio::test]
async fn a_client_is_updated_but_its_id_and_type_never_change() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.post("/realms/acme/clients", json!({ "id": "web", "description": "Shop" })).await;
    let refused = app.put("/realms/acme/clients/web", json!({ "type": "Public", "id": "web2" })).await;
    let mut fields = refused.refused_fields();
    fields.sort();
    assert_eq!(fields, vec![("id".to_owned(), "Immutable".to_owned()), ("type".to_owned(), "Immutable".to_owned())]);
    let updated = app
        .put(
            "/realms/acme/clients/web",
            json!({ "type": "Confidential", "clientConfiguration": { "tokenExchangeEnabled": true } }),
        )
        .await;
    assert_eq!(updated.status, StatusCode::OK);
    assert_eq!(updated.data()["clientConfiguration"]["tokenExchangeEnabled"], true);
    assert_eq!(updated.data()["description"], "Shop", "omitted fields keep their value");
    assert_eq!(app.delete("/realms/acme/clients/web").await.status, StatusCode::OK);
    let gone = app.get("/realms/acme/clients/web").await;
    assert_eq!((gone.status, gone.error_code()), (StatusCode::FORBIDDEN, "Forbidden"), "as one never made");
}

#[tokio::test]
async fn deleting_a_realm_deletes_its_clients() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.post("/realms/acme/clients", json!({ "id": "web" })).await;
    assert_eq!(app.delete("/realms/acme").await.status, StatusCode::OK);
    // The realm is gone, so no answer lists its clients: the table tells whether they went with it.
    let store = app.database().await;
    let (left,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM clients WHERE realm_id = 'acme'").fetch_one(store.pool()).await.unwrap();
    assert_eq!(left, 0);
}
