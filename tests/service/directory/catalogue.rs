//! Scopes, resource servers and organizations.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{claims, spawn_app};

#[tokio::test]
async fn clients_may_only_allow_scopes_of_the_catalogue_the_realm_or_openid() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.create_realm("other").await;
    let catalogue = app.post("/scopes", json!({ "name": "invoices:read", "description": "Read invoices" })).await;
    assert_eq!(catalogue.status, StatusCode::CREATED, "{:?}", catalogue.body);
    assert_eq!(catalogue.data()["realmId"], Value::Null);
    app.create_scopes("other", &["orders:read"]).await;
    let standard = app.post("/realms/acme/scopes", json!({ "name": "openid" })).await;
    assert!(standard.refused_fields().contains(&("name".into(), "Duplicate".into())));

    let refused = app
        .post("/realms/acme/clients", json!({ "id": "web", "clientConfiguration": { "allowedScopes": ["openid", "invoices:read", "orders:read"] } }))
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "orders:read belongs to another realm");
    assert_eq!(
        refused.refused_fields(),
        vec![("clientConfiguration.allowedScopes[2]".to_owned(), "NotFound".to_owned())]
    );
    let created = app
        .post(
            "/realms/acme/clients",
            json!({ "id": "web", "clientConfiguration": { "allowedScopes": ["openid", "invoices:read"] } }),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);

    app.create_scopes("acme", &["orders:read"]).await;
    let replaced = app.put("/realms/acme/clients/web/scopes", json!({ "scopes": ["orders:read"] })).await;
    assert_eq!(replaced.status, StatusCode::OK, "{:?}", replaced.body);
    assert_eq!(app.get("/realms/acme/clients/web/scopes").await.data(), &json!(["orders:read"]));
    assert_eq!(
        app.get("/realms/acme/clients/web").await.data()["clientConfiguration"]["allowedScopes"],
        json!(["orders:read"])
    );
    let listed = app.get("/realms/acme/scopes").await;
    assert_eq!(listed.items().len(), 1, "realm scopes only: {:?}", listed.body);
    assert_eq!(app.get("/scopes").await.items().len(), 1, "the catalogue only");
    let renamed =
        app.put(&format!("/scopes/{}", catalogue.data()["id"].as_str().unwrap()), json!({ "name": "x" })).await;
    assert!(renamed.refused_fields().contains(&("name".into(), "Immutable".into())));
}

#[tokio::test]
async fn tokens_for_a_resource_server_are_addressed_to_it_and_limited_to_its_scopes() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let agent = app
        .create_client("acme", "agent", &["client_credentials"], &["orders:read", "orders:write", "mail:send"])
        .await;
    app.create_client("acme", "other", &["client_credentials"], &["orders:read"]).await;
    let server = app
        .post(
            "/realms/acme/resource-servers",
            json!({ "name": "Orders API", "address": "https://orders.example.com", "scopes": ["orders:read", "orders:write"], "allowedClients": ["agent"] }),
        )
        .await;
    assert_eq!(server.status, StatusCode::CREATED, "{:?}", server.body);
    assert_eq!(server.data()["type"], "Api");
    let mcp = app
        .post(
            "/realms/acme/resource-servers",
            json!({ "name": "Tools", "address": "https://mcp.example.com/mcp", "type": "McpServer" }),
        )
        .await;
    assert_eq!(mcp.data()["type"], "McpServer");

    let token =
        app.token(&agent, &[("grant_type", "client_credentials"), ("resource", "https://orders.example.com")]).await;
    assert_eq!(token.status, StatusCode::OK, "{:?}", token.body);
    let access = claims(token.body["access_token"].as_str().unwrap());
    assert_eq!(access["aud"], "https://orders.example.com");
    assert_eq!(access["scope"], "orders:read orders:write", "the client's scopes the server accepts");
    let too_much = app
        .token(
            &agent,
            &[("grant_type", "client_credentials"), ("resource", "https://orders.example.com"), ("scope", "mail:send")],
        )
        .await;
    assert_eq!(too_much.body["error"], "invalid_scope");
    let not_listed =
        app.token(&agent, &[("grant_type", "client_credentials"), ("resource", "https://mcp.example.com/mcp")]).await;
    assert_eq!(not_listed.body["error"], "invalid_target", "the client is not among the server's allowed clients");
    let login = app.events("login_succeeded").await;
    assert_eq!(login[0].2["resource"], "https://orders.example.com");

    let id = server.data()["id"].as_str().unwrap();
    app.put(&format!("/realms/acme/resource-servers/{id}"), json!({ "status": "Disabled" })).await;
    let disabled =
        app.token(&agent, &[("grant_type", "client_credentials"), ("resource", "https://orders.example.com")]).await;
    assert_eq!(disabled.body["error"], "invalid_target");

    let bad = app
        .post("/realms/acme/resource-servers", json!({ "name": "x", "address": "http://api.example.com", "allowedClients": ["ghost"], "scopes": ["nope"] }))
        .await;
    let fields = bad.refused_fields();
    assert!(fields.contains(&("address".into(), "Format".into())), "{fields:?}");
    let duplicate = app
        .post("/realms/acme/resource-servers", json!({ "name": "again", "address": "https://orders.example.com" }))
        .await;
    assert_eq!(duplicate.status, StatusCode::CONFLICT);
    let references = app
        .post(
            "/realms/acme/resource-servers",
            json!({ "name": "x", "address": "https://x.example.com", "allowedClients": ["ghost"] }),
        )
        .await;
    assert!(references.refused_fields().contains(&("allowedClients[0]".into(), "NotFound".into())));
}

#[tokio::test]
async fn organizations_hold_unique_domains_and_realm_members() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let user = app.create_user("acme", "ada", "analytical engine").await;
    let created = app
        .post("/realms/acme/organizations", json!({ "name": "Initech", "domains": ["Initech.com", "initech.io"] }))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert_eq!(created.data()["domains"], json!(["initech.com", "initech.io"]));
    let id = created.data()["id"].as_str().unwrap().to_owned();
    let clash = app.post("/realms/acme/organizations", json!({ "name": "Other", "domains": ["initech.io"] })).await;
    assert!(clash.refused_fields().contains(&("domains".into(), "Duplicate".into())), "{:?}", clash.body);
    assert_eq!(app.get("/realms/acme/organizations").await.items().len(), 1, "the refused one stored nothing");
    let bad = app.post("/realms/acme/organizations", json!({ "name": "Bad", "domains": ["not a domain"] })).await;
    assert!(bad.refused_fields().contains(&("domains[0]".into(), "Format".into())));

    let joined = app.post(&format!("/realms/acme/organizations/{id}/members"), json!({ "userId": user })).await;
    assert_eq!(joined.status, StatusCode::CREATED, "{:?}", joined.body);
    assert_eq!(app.get(&format!("/realms/acme/organizations/{id}/members")).await.data(), &json!([user]));
    let moved = app.put(&format!("/realms/acme/organizations/{id}"), json!({ "domains": ["initech.net"] })).await;
    assert_eq!(moved.data()["domains"], json!(["initech.net"]));
    let freed = app.post("/realms/acme/organizations", json!({ "name": "Other", "domains": ["initech.io"] })).await;
    assert_eq!(freed.status, StatusCode::CREATED, "a domain given up is free again");
    assert_eq!(app.delete(&format!("/realms/acme/organizations/{id}/members/{user}")).await.status, StatusCode::OK);
    assert_eq!(
        app.delete(&format!("/realms/acme/organizations/{id}/members/{user}")).await.status,
        StatusCode::NOT_FOUND
    );
}
