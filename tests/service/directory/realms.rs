//! `/realms`: create, list, read, update, delete.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::spawn_app;

#[tokio::test]
async fn a_realm_is_created_read_updated_and_deleted() {
    let app = spawn_app().await;
    let created =
        app.post("/realms", json!({ "id": "acme", "displayName": "Acme Corp", "maxFailedAttempts": 7 })).await;
    assert_eq!(created.status, StatusCode::CREATED);
    assert_eq!(created.data()["maxFailedAttempts"], 7);
    assert_eq!(created.data()["status"], "Active");
    assert_eq!(app.get("/account").await.data()["id"], app.account_id.as_str(), "created in the caller's account");

    let updated = app.put("/realms/acme", json!({ "lockoutDurationMinutes": 60, "status": "Disabled" })).await;
    assert_eq!(updated.status, StatusCode::OK, "{:?}", updated.body);
    let read = app.get("/realms/acme").await;
    assert_eq!(read.data()["lockoutDurationMinutes"], 60);
    assert_eq!(read.data()["status"], "Disabled");
    assert_eq!(read.data()["displayName"], "Acme Corp", "omitted fields keep their value");
    assert_eq!(read.data()["maxFailedAttempts"], 7);

    assert_eq!(app.delete("/realms/acme").await.status, StatusCode::OK);
    assert_eq!(
        app.get("/realms/acme").await.status,
        StatusCode::FORBIDDEN,
        "gone, and told like any unreachable realm"
    );
}

#[tokio::test]
async fn a_taken_realm_id_is_409_already_exists() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let again = app.post("/realms", json!({ "id": "acme" })).await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert_eq!(again.body["statusCode"], "Conflict");
    assert_eq!(again.error_code(), "AlreadyExists");
    let platform = app.post("/realms", json!({ "id": "platform" })).await;
    assert_eq!(platform.error_code(), "AlreadyExists");
}

#[tokio::test]
async fn realm_settings_have_documented_defaults_and_ranges() {
    let app = spawn_app().await;
    let created = app.create_realm("defaults").await;
    let data = created.data();
    assert_eq!(data["maxFailedAttempts"], 5);
    assert_eq!(data["lockoutDurationMinutes"], 15);
    assert_eq!(data["lockoutEnabled"], true);
    assert_eq!(data["minimumPasswordLength"], 8);
    assert_eq!(data["blockBreachedPasswords"], false);

    let refused = app
        .put(
            "/realms/defaults",
            json!({ "maxFailedAttempts": 0, "lockoutDurationMinutes": 1441, "minimumPasswordLength": 65, "blockBreachedPasswords": "yes", "id": "renamed" }),
        )
        .await;
    let mut fields = refused.refused_fields();
    fields.sort();
    assert_eq!(
        fields,
        vec![
            ("blockBreachedPasswords".to_owned(), "Type".to_owned()),
            ("id".to_owned(), "Immutable".to_owned()),
            ("lockoutDurationMinutes".to_owned(), "Range".to_owned()),
            ("maxFailedAttempts".to_owned(), "Range".to_owned()),
            ("minimumPasswordLength".to_owned(), "Range".to_owned()),
        ]
    );
    let edges = app
        .put(
            "/realms/defaults",
            json!({ "maxFailedAttempts": 1, "lockoutDurationMinutes": 1440, "minimumPasswordLength": 64 }),
        )
        .await;
    assert_eq!(edges.status, StatusCode::OK, "range ends are inclusive");
}

#[tokio::test]
async fn the_platform_realm_cannot_be_deleted_or_disabled() {
    let app = spawn_app().await;
    let platform = app.get("/realms/platform").await;
    assert_eq!(platform.status, StatusCode::OK);
    let deleted = app.delete("/realms/platform").await;
    assert_eq!((deleted.status, deleted.error_code()), (StatusCode::CONFLICT, "Conflict"));
    let disabled = app.put("/realms/platform", json!({ "status": "Disabled" })).await;
    assert_eq!(disabled.status, StatusCode::CONFLICT);
    assert_eq!(app.get("/realms/platform/clients/platform").await.status, StatusCode::OK, "the platform client exists");
}
