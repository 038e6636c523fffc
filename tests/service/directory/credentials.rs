//! Admin API credentials: who gets 401, who gets 403, and the access log.

use castellan::kernel::crypto::{generate_secret, last_four};
use castellan::kernel::ids::{AccountId, CredentialId, RealmId};
use castellan::store::Status;
use castellan::store::accounts::{self, Account};
use castellan::store::realms::{self, Realm, RealmSettings};
use castellan::store::secrets::{self, Secret, SecretType};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::{TestApp, spawn_app};

/// Another account with a realm and an Owner key of its own, written straight to the database.
pub async fn other_account(app: &TestApp, realm_id: &str) -> String {
    let store = app.database().await;
    let now = app.state.clock.now();
    let account = Account { id: AccountId::fresh(), name: "Other".into(), created_at: now };
    accounts::insert(store.pool(), &account).await.unwrap();
    let realm = Realm {
        id: RealmId::parse(realm_id).expect("a valid realm id"),
        account_id: account.id.clone(),
        display_name: realm_id.into(),
        status: Status::Active,
        settings: RealmSettings::default(),
        created_at: now,
        updated_at: now,
    };
    assert!(realms::insert(store.pool(), &realm).await.unwrap());
    let value = generate_secret("cstl_key_");
    let secret = Secret {
        id: CredentialId::fresh(),
        account_id: account.id,
        secret_type: SecretType::ApiKey,
        name: "other owner".into(),
        value_hash: app.state.hasher.hash(&value),
        value_last_four: last_four(&value),
        roles: vec!["Owner".to_owned()],
        scopes: None,
        expires_at: None,
        acts_for_user_id: None,
        created_at: now,
        updated_at: now,
        rotated_at: None,
        previous_value_hash: None,
        previous_value_valid_until: None,
        issued_tokens_revoked_before: None,
    };
    secrets::insert(store.pool(), &secret).await.unwrap();
    value
}

#[tokio::test]
async fn missing_unknown_and_malformed_credentials_get_401() {
    let app = spawn_app().await;
    let none = app.http.get(format!("{}/realms", app.admin)).send().await.unwrap();
    assert_eq!(none.status(), StatusCode::UNAUTHORIZED);
    let unknown = app.call_as("cstl_key_not-a-real-key", Method::GET, "/realms", None).await;
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
    assert_eq!(unknown.body["statusCode"], "Unauthorized");
    let bearer =
        app.http.get(format!("{}/realms", app.admin)).bearer_auth("eyJhbGciOiJub25lIn0.e30.").send().await.unwrap();
    assert_eq!(bearer.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_deleted_key_gets_401_on_the_next_call() {
    let app = spawn_app().await;
    let created = app.post("/secrets", json!({ "name": "ci", "roles": ["Developer"] })).await;
    let id = created.data()["id"].as_str().unwrap().to_owned();
    let value = created.data()["value"].as_str().unwrap().to_owned();
    assert_eq!(app.call_as(&value, Method::GET, "/realms", None).await.status, StatusCode::OK);
    assert_eq!(app.delete(&format!("/secrets/{id}")).await.status, StatusCode::OK);
    assert_eq!(app.call_as(&value, Method::GET, "/realms", None).await.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn an_expired_key_gets_401_once_its_expiry_passes() {
    let app = spawn_app().await;
    let expires = app.state.clock.now() + chrono::TimeDelta::hours(1);
    let created = app
        .post(
            "/secrets",
            json!({ "name": "short", "roles": ["Auditor"], "expiresAt": castellan::kernel::clock::iso(expires) }),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let value = created.data()["value"].as_str().unwrap().to_owned();
    assert_eq!(app.call_as(&value, Method::GET, "/realms", None).await.status, StatusCode::OK);
    app.advance(3599).await;
    assert_eq!(app.call_as(&value, Method::GET, "/realms", None).await.status, StatusCode::OK);
    app.advance(1).await;
    assert_eq!(app.call_as(&value, Method::GET, "/realms", None).await.status, StatusCode::UNAUTHORIZED);

    let past = app
        .post("/secrets", json!({ "name": "past", "roles": ["Auditor"], "expiresAt": "2000-01-01T00:00:00Z" }))
        .await;
    assert_eq!(past.refused_fields(), vec![("expiresAt".to_owned(), "Range".to_owned())]);
}

#[tokio::test]
async fn another_accounts_realm_and_a_missing_realm_get_the_same_403() {
    let app = spawn_app().await;
    app.create_realm("mine").await;
    let other_key = other_account(&app, "theirs").await;

    let theirs = app.get("/realms/theirs").await;
    let missing = app.get("/realms/nothing-here").await;
    for refused in [&theirs, &missing] {
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
        assert_eq!(refused.error_code(), "Forbidden");
        assert_eq!(refused.body["notifications"], theirs.body["notifications"], "no existence leak");
    }
    assert_eq!(app.get("/realms/theirs/clients").await.status, StatusCode::FORBIDDEN);
    assert_eq!(app.put("/realms/theirs", json!({ "displayName": "mine now" })).await.status, StatusCode::FORBIDDEN);
    assert_eq!(app.delete("/realms/theirs").await.status, StatusCode::FORBIDDEN);
    assert_eq!(app.post("/realms/theirs/clients", json!({ "id": "x" })).await.status, StatusCode::FORBIDDEN);

    // Each account sees only its own realms.
    let listed: Vec<String> =
        app.get("/realms").await.items().iter().map(|r| r["id"].as_str().unwrap().to_owned()).collect();
    assert!(listed.contains(&"mine".to_owned()) && !listed.contains(&"theirs".to_owned()));
    assert_eq!(app.call_as(&other_key, Method::GET, "/realms/theirs", None).await.status, StatusCode::OK);
    assert_eq!(app.call_as(&other_key, Method::GET, "/realms/mine", None).await.status, StatusCode::FORBIDDEN);
}

/// A client, a role or a scope the path names that does not exist, in a realm the caller reaches,
/// is answered as another account's: 403 `Forbidden`, the same answer, so no name is confirmed.
#[tokio::test]
async fn a_missing_client_role_or_scope_gets_the_same_403_as_another_accounts() {
    let app = spawn_app().await;
    app.create_realm("mine").await;
    other_account(&app, "theirs").await;
    let ghost = "01900000-0000-7000-8000-000000000000";
    let missing = [
        (Method::GET, "/realms/mine/clients/nobody".to_owned()),
        (Method::GET, "/realms/mine/clients/nobody/roles".to_owned()),
        (Method::GET, "/realms/mine/clients/nobody/consumers".to_owned()),
        (Method::GET, format!("/realms/mine/roles/{ghost}")),
        (Method::DELETE, format!("/realms/mine/scopes/{ghost}")),
        (Method::GET, format!("/roles/{ghost}")),
    ];
    let theirs = app.get("/realms/theirs/clients/anything").await;
    assert_eq!((theirs.status, theirs.error_code()), (StatusCode::FORBIDDEN, "Forbidden"));
    for (method, path) in missing {
        let refused = app.call_as(&app.key, method, &path, None).await;
        assert_eq!((refused.status, refused.error_code()), (StatusCode::FORBIDDEN, "Forbidden"), "{path}");
        assert_eq!(refused.body["notifications"], theirs.body["notifications"], "{path}: no existence leak");
    }
}

#[tokio::test]
async fn valid_credentials_without_the_permission_get_403() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let auditor = app.key_with(&["Auditor"], None).await;
    assert_eq!(app.call_as(&auditor, Method::GET, "/realms/acme", None).await.status, StatusCode::OK);
    let refused = app.call_as(&auditor, Method::PUT, "/realms/acme", Some(json!({ "displayName": "x" }))).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(refused.error_code(), "Forbidden");
    assert_eq!(app.get("/realms/acme").await.data()["displayName"], "acme", "nothing changed");
}

#[tokio::test]
async fn every_attempt_accepted_or_refused_is_in_the_access_log() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let auditor = app.key_with(&["Auditor"], None).await;
    let _ = app.call_as(&auditor, Method::DELETE, "/realms/acme", None).await;
    let _ = app.call_as("cstl_key_unknown", Method::GET, "/realms", None).await;
    let response = app
        .http
        .get(format!("{}/realms/acme", app.admin))
        .header("x-api-key", &app.key)
        .header("x-forwarded-for", "198.51.100.23")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);

    let log = app.get("/access-logs?pageSize=50").await;
    let entries = log.items();
    let refused_delete = entries.iter().find(|e| e["method"] == "DELETE").expect("the refused delete is logged");
    assert_eq!(refused_delete["outcome"], "Refused");
    assert_eq!(refused_delete["status"], 403);
    assert_eq!(refused_delete["reason"], "Forbidden");
    assert_eq!(refused_delete["path"], "/api/v1/admin/realms/acme");
    assert!(refused_delete["credentialName"].as_str().unwrap().starts_with("key Auditor"));
    let forwarded =
        entries.iter().find(|e| e["ipAddress"] == "198.51.100.23").expect("client address behind a trusted proxy");
    assert_eq!(forwarded["outcome"], "Accepted");
    assert!(entries.iter().any(|e| e["method"] == "POST" && e["status"] == 201));

    // An unknown key names no account, so no account's log shows it, but it is stored.
    let store = app.database().await;
    let (unknown,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM access_log WHERE account_id IS NULL AND outcome = 'Refused' AND reason = 'unknown credential'",
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!(unknown, 1);
}

#[tokio::test]
async fn keys_are_stored_hashed_never_in_the_clear() {
    let app = spawn_app().await;
    let value = app.key_with(&["Developer"], None).await;
    // What is stored for a key is shown by no answer: the table is the only witness that it is hashed.
    let store = app.database().await;
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT value_hash, value_last_four FROM secrets").fetch_all(store.pool()).await.unwrap();
    assert!(rows.iter().all(|(hash, _)| !hash.contains(&value) && !hash.contains(&app.key)));
    assert!(rows.iter().any(|(hash, last)| *hash == app.state.hasher.hash(&value) && value.ends_with(last.as_str())));
    let listed = app.get("/secrets").await;
    assert!(listed.items().iter().all(|s| s.get("value").is_none()));
}

#[tokio::test]
async fn a_secret_about_to_expire_is_warned_of_once_at_a_week_and_once_at_a_day() {
    let app = spawn_app().await;
    const HOUR: i64 = 3600;
    let expires = app.state.clock.now() + chrono::TimeDelta::days(8);
    let created = app
        .post(
            "/secrets",
            json!({ "name": "deploy", "roles": ["Auditor"], "expiresAt": castellan::kernel::clock::iso(expires) }),
        )
        .await;
    let id = created.data()["id"].as_str().unwrap().to_owned();
    app.advance(22 * HOUR).await;
    assert!(warnings(&app).await.is_empty(), "more than a week left");
    app.advance(4 * HOUR).await;
    let warned = warnings(&app).await;
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert_eq!(
        (warned[0]["severity"].as_str(), warned[0]["resourceId"].as_str()),
        (Some("Warning"), Some(id.as_str()))
    );
    assert_eq!(warned[0]["title"], "API key deploy expires in 7 days");
    app.advance(5 * 24 * HOUR).await;
    assert_eq!(warnings(&app).await.len(), 1, "once for the week");
    app.advance(24 * HOUR).await;
    let warned = warnings(&app).await;
    assert_eq!(warned.len(), 2, "{warned:?}");
    assert_eq!(
        (warned[0]["severity"].as_str(), warned[0]["title"].as_str()),
        (Some("Critical"), Some("API key deploy expires in 1 day"))
    );
    app.advance(2 * 24 * HOUR).await;
    assert_eq!(warnings(&app).await.len(), 2, "once for the day, nothing once expired");

    // A secret made with hours left is warned of at the day only.
    let soon = app.state.clock.now() + chrono::TimeDelta::hours(5);
    app.post(
        "/secrets",
        json!({ "name": "soon", "roles": ["Auditor"], "expiresAt": castellan::kernel::clock::iso(soon) }),
    )
    .await;
    app.advance(HOUR).await;
    let warned = warnings(&app).await;
    assert_eq!(warned.len(), 3, "{warned:?}");
    assert_eq!(
        (warned[0]["severity"].as_str(), warned[0]["title"].as_str()),
        (Some("Critical"), Some("API key soon expires in 1 day"))
    );
}

/// The account's warnings of expiring secrets, newest first.
async fn warnings(app: &TestApp) -> Vec<serde_json::Value> {
    let listed = app.get("/account/notifications").await;
    listed.items().iter().filter(|n| n["type"] == "secret_expiring").cloned().collect()
}
