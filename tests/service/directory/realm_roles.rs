//! Realm roles, client roles, groups, and the role maps tokens carry.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{claims, created_id, spawn_app};

#[tokio::test]
async fn role_names_are_unique_per_realm_or_per_client_and_validated() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.create_client("acme", "orders", &["client_credentials"], &[]).await;
    created_id(&app, "/realms/acme/roles", json!({ "name": "reader" })).await;
    let again = app.post("/realms/acme/roles", json!({ "name": "reader" })).await;
    assert_eq!((again.status, again.error_code()), (StatusCode::CONFLICT, "AlreadyExists"));
    created_id(&app, "/realms/acme/clients/orders/roles", json!({ "name": "reader" })).await;
    let bad = app.post("/realms/acme/roles", json!({ "name": "has space" })).await;
    assert!(bad.refused_fields().contains(&("name".into(), "Pattern".into())));
    let realm_roles = app.get("/realms/acme/roles").await;
    assert_eq!(realm_roles.items().len(), 1, "client roles are not realm roles");
    assert_eq!(realm_roles.items()[0]["clientId"], Value::Null);
    let client_roles = app.get("/realms/acme/clients/orders/roles").await;
    assert_eq!(client_roles.items()[0]["clientId"], "orders");
    assert_eq!(app.get("/realms/acme/clients/nope/roles").await.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn effective_roles_join_direct_and_group_roles_and_tokens_carry_them() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let web = app.create_client("acme", "web", &["password"], &[]).await;
    app.create_client("acme", "orders", &["client_credentials"], &[]).await;
    let user = app.create_user("acme", "ada", "analytical engine").await;
    let admin = created_id(&app, "/realms/acme/roles", json!({ "name": "admin" })).await;
    let auditor = created_id(&app, "/realms/acme/roles", json!({ "name": "auditor" })).await;
    let reader = created_id(&app, "/realms/acme/clients/orders/roles", json!({ "name": "reader" })).await;
    let group = created_id(&app, "/realms/acme/groups", json!({ "name": "finance" })).await;

    let granted = app.post(&format!("/realms/acme/users/{user}/roles"), json!({ "roleId": admin })).await;
    assert_eq!(granted.status, StatusCode::CREATED, "{:?}", granted.body);
    let twice = app.post(&format!("/realms/acme/users/{user}/roles"), json!({ "roleId": admin })).await;
    assert_eq!(twice.status, StatusCode::CONFLICT);
    app.post(&format!("/realms/acme/groups/{group}/roles"), json!({ "roleId": auditor })).await;
    app.post(&format!("/realms/acme/groups/{group}/roles"), json!({ "roleId": reader })).await;
    let joined = app.post(&format!("/realms/acme/groups/{group}/members"), json!({ "userId": user })).await;
    assert_eq!(joined.status, StatusCode::CREATED, "{:?}", joined.body);

    let roles = app.get(&format!("/realms/acme/users/{user}/roles")).await;
    let names = |list: &Value| {
        list.as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    assert_eq!(names(&roles.data()["direct"]), ["admin"]);
    assert_eq!(names(&roles.data()["effective"]), ["admin", "auditor", "reader"]);

    let tokens =
        app.token(&web, &[("grant_type", "password"), ("username", "ada"), ("password", "analytical engine")]).await;
    let access = claims(tokens.body["access_token"].as_str().unwrap());
    assert_eq!(access["realm_resource_access"], json!({ "roles": ["admin", "auditor"] }));
    assert_eq!(access["resource_access"], json!({ "orders": { "roles": ["reader"] } }));
    assert!(access.get("client_resource_access").is_none(), "a person's token has no client map");

    app.delete(&format!("/realms/acme/groups/{group}/members/{user}")).await;
    let after = app.get(&format!("/realms/acme/users/{user}/roles")).await;
    assert_eq!(names(&after.data()["effective"]), ["admin"], "leaving the group takes its roles");
    let tokens =
        app.token(&web, &[("grant_type", "password"), ("username", "ada"), ("password", "analytical engine")]).await;
    let access = claims(tokens.body["access_token"].as_str().unwrap());
    assert_eq!(access["realm_resource_access"], json!({ "roles": ["admin"] }), "the next token knows at once");
    assert_eq!(access["resource_access"], json!({}));
    assert_eq!(app.get(&format!("/realms/acme/groups/{group}/members")).await.data(), &json!([]));
}

#[tokio::test]
async fn client_credentials_tokens_carry_the_roles_granted_to_the_client() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let agent = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    app.create_client("acme", "orders", &["client_credentials"], &[]).await;
    let robot = created_id(&app, "/realms/acme/roles", json!({ "name": "robot" })).await;
    let writer = created_id(&app, "/realms/acme/clients/orders/roles", json!({ "name": "writer" })).await;
    for role in [&robot, &writer] {
        let granted = app.post("/realms/acme/clients/agent/granted-roles", json!({ "roleId": role })).await;
        assert_eq!(granted.status, StatusCode::CREATED, "{:?}", granted.body);
    }
    let token = app.token(&agent, &[("grant_type", "client_credentials")]).await.body["access_token"].clone();
    let access = claims(token.as_str().unwrap());
    assert_eq!(
        access["client_resource_access"],
        json!({ "realm_roles": ["robot"], "client_roles": { "orders": { "roles": ["writer"] } } })
    );
    assert!(access.get("realm_resource_access").is_none());

    assert_eq!(app.delete(&format!("/realms/acme/clients/agent/granted-roles/{robot}")).await.status, StatusCode::OK);
    assert_eq!(app.delete(&format!("/realms/acme/roles/{robot}")).await.status, StatusCode::OK);
    let unknown = app.post("/realms/acme/clients/agent/granted-roles", json!({ "roleId": robot })).await;
    assert!(unknown.refused_fields().contains(&("roleId".into(), "NotFound".into())), "{:?}", unknown.body);
    let listed = app.get("/realms/acme/clients/agent/granted-roles").await;
    assert_eq!(listed.data().as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn roles_of_another_realm_cannot_be_granted_and_groups_are_realm_scoped() {
    let app = spawn_app().await;
    app.create_realm("one").await;
    app.create_realm("two").await;
    let foreign = created_id(&app, "/realms/two/roles", json!({ "name": "admin" })).await;
    let user = app.create_user("one", "ada", "analytical engine").await;
    let refused = app.post(&format!("/realms/one/users/{user}/roles"), json!({ "roleId": foreign })).await;
    assert!(refused.refused_fields().contains(&("roleId".into(), "NotFound".into())));
    let group = created_id(&app, "/realms/two/groups", json!({ "name": "ops" })).await;
    assert_eq!(app.get(&format!("/realms/one/groups/{group}")).await.status, StatusCode::NOT_FOUND);
    let stranger = app.post(&format!("/realms/two/groups/{group}/members"), json!({ "userId": user })).await;
    assert!(stranger.refused_fields().contains(&("userId".into(), "NotFound".into())), "a person of another realm");
    let taken = app.post("/realms/two/groups", json!({ "name": "ops" })).await;
    assert_eq!(taken.status, StatusCode::CONFLICT);
}
