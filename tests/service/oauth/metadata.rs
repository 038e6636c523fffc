//! The metadata around the token service: OpenID Provider metadata at both of its addresses (OIDC
//! Discovery and RFC 8414), the realm's scopes in it, cross-origin reads of it and of the JWKS by
//! code in a browser, and of the token and revocation endpoints from the origins a client allows.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::spawn_app;

#[tokio::test]
async fn rfc_8414_metadata_is_the_discovery_document_at_its_own_address() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let oidc = app.discovery("acme").await;
    let url = format!("{}/.well-known/oauth-authorization-server/realms/acme", app.base);
    let answer = app.http.get(&url).send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let metadata: serde_json::Value = answer.json().await.unwrap();
    // RFC 8414 §3.3: the issuer is the one whose address the metadata was fetched under.
    assert_eq!(metadata["issuer"], format!("{}/realms/acme", app.base));
    assert_eq!(metadata, oidc);
    let unknown = app.http.get(format!("{}/.well-known/oauth-authorization-server/realms/nowhere", app.base));
    assert_eq!(unknown.send().await.unwrap().status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn discovery_lists_the_scopes_a_realm_has() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.create_realm("other").await;
    app.create_scopes("acme", &["orders:read"]).await;
    let scopes = app.discovery("acme").await["scopes_supported"].clone();
    for scope in ["openid", "profile", "email", "orders:read"] {
        assert!(scopes.as_array().unwrap().contains(&json!(scope)), "{scope}: {scopes}");
    }
    // A realm's own scope is not another realm's.
    let created = app.post("/realms/other/scopes", json!({ "name": "billing:write" })).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let acme = app.discovery("acme").await["scopes_supported"].clone();
    assert!(!acme.as_array().unwrap().contains(&json!("billing:write")), "{acme}");
}

#[tokio::test]
async fn code_in_a_browser_reads_discovery_and_the_jwks_from_any_origin() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    for path in [
        "/realms/acme/.well-known/openid-configuration",
        "/.well-known/oauth-authorization-server/realms/acme",
        "/realms/acme/protocol/openid-connect/certs",
    ] {
        let url = format!("{}{path}", app.base);
        let read = app.http.get(&url).header("origin", "https://app.example").send().await.unwrap();
        assert_eq!(read.status(), StatusCode::OK, "{path}");
        assert_eq!(read.headers()["access-control-allow-origin"], "*", "{path}");
        let preflight = app
            .http
            .request(Method::OPTIONS, &url)
            .header("origin", "https://app.example")
            .header("access-control-request-method", "GET")
            .send()
            .await
            .unwrap();
        assert_eq!(preflight.status(), StatusCode::NO_CONTENT, "{path}");
        assert_eq!(preflight.headers()["access-control-allow-origin"], "*");
        assert!(preflight.headers()["access-control-allow-methods"].to_str().unwrap().contains("GET"));
    }
    // The admin API is not opened to other origins.
    let admin = app.http.get(format!("{}/realms", app.admin)).header("origin", "https://app.example");
    let admin = admin.header("x-api-key", &app.key).send().await.unwrap();
    assert!(admin.headers().get("access-control-allow-origin").is_none());
}

/// A POST to a protocol endpoint of `acme` as the client `shop`, from a page at `origin`.
async fn post_from(
    app: &crate::support::TestApp,
    endpoint: &str,
    secret: &str,
    origin: &str,
    form: &[(&str, &str)],
) -> reqwest::Response {
    let url = format!("{}/realms/acme/protocol/openid-connect/{endpoint}", app.base);
    app.http.post(url).basic_auth("shop", Some(secret)).header("origin", origin).form(form).send().await.unwrap()
}

fn allowed_origin(response: &reqwest::Response) -> Option<&str> {
    response.headers().get("access-control-allow-origin").map(|value| value.to_str().unwrap())
}

#[tokio::test]
async fn the_token_and_revocation_endpoints_are_readable_only_from_the_clients_own_origins() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let shop = app.create_client("acme", "shop", &["client_credentials"], &[]).await;
    let origins = |list: serde_json::Value| json!({ "clientConfiguration": { "allowedOrigins": list } });

    let bad = ["https://app.example.com/", "http://app.example.com", "https://app.example.com/path", "*", "null"];
    let refused = app.put("/realms/acme/clients/shop", origins(json!(bad))).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let fields: Vec<String> = refused.refused_fields().into_iter().map(|(field, _)| field).collect();
    let expected: Vec<String> = (0..bad.len()).map(|i| format!("clientConfiguration.allowedOrigins[{i}]")).collect();
    assert_eq!(fields, expected);
    let set = app
        .put("/realms/acme/clients/shop", origins(json!(["https://app.example.com", "http://localhost:3000"])))
        .await;
    assert_eq!(set.status, StatusCode::OK, "{:?}", set.body);
    assert_eq!(set.data()["clientConfiguration"]["allowedOrigins"][1], "http://localhost:3000");

    // A preflight names no client: it is answered for any origin, for a POST with credentials.
    let token_url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let preflight = app
        .http
        .request(Method::OPTIONS, &token_url)
        .header("origin", "https://app.example.com")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "authorization, content-type")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), StatusCode::NO_CONTENT);
    assert_eq!(allowed_origin(&preflight), Some("https://app.example.com"));
    assert_eq!(preflight.headers()["access-control-allow-methods"], "POST");
    assert!(preflight.headers()["access-control-allow-headers"].to_str().unwrap().contains("authorization"));

    // The answer itself is readable from the client's origins only.
    let grant = [("grant_type", "client_credentials")];
    let allowed = post_from(&app, "token", &shop.secret, "https://app.example.com", &grant).await;
    assert_eq!(allowed.status(), StatusCode::OK);
    assert_eq!(allowed_origin(&allowed), Some("https://app.example.com"));
    assert!(allowed.headers().get_all("vary").iter().any(|value| value == "Origin"));
    let token: serde_json::Value = allowed.json().await.unwrap();
    let other = post_from(&app, "token", &shop.secret, "https://elsewhere.example", &grant).await;
    assert_eq!(other.status(), StatusCode::OK, "the service answers; the browser withholds it");
    assert_eq!(allowed_origin(&other), None);
    let wrong_secret = post_from(&app, "token", "cstl_cs_wrong", "http://localhost:3000", &grant).await;
    assert_eq!(wrong_secret.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(allowed_origin(&wrong_secret), Some("http://localhost:3000"), "its refusal is readable too");

    let access_token = token["access_token"].as_str().unwrap();
    let revoked = post_from(&app, "revoke", &shop.secret, "https://app.example.com", &[("token", access_token)]).await;
    assert_eq!(revoked.status(), StatusCode::OK);
    assert_eq!(allowed_origin(&revoked), Some("https://app.example.com"));
    let foreign =
        post_from(&app, "revoke", &shop.secret, "https://elsewhere.example", &[("token", access_token)]).await;
    assert_eq!(allowed_origin(&foreign), None);
}

#[tokio::test]
async fn each_resource_server_has_protected_resource_metadata_naming_the_realm_as_its_issuer() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.create_realm("other").await;
    app.create_scopes("acme", &["tools:run"]).await;
    let body = json!({ "name": "Tools", "address": "https://mcp.example.com/mcp", "type": "McpServer", "scopes": ["tools:run"] });
    let created = app.post("/realms/acme/resource-servers", body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let id = created.data()["id"].as_str().unwrap().to_owned();
    let url = |realm: &str, id: &str| {
        format!("{}/realms/{realm}/resource-servers/{id}/protected-resource-metadata", app.base)
    };

    let answer = app.http.get(url("acme", &id)).header("origin", "https://agent.example").send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(answer.headers()["access-control-allow-origin"], "*");
    let metadata: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(
        metadata,
        json!({
            "resource": "https://mcp.example.com/mcp",
            "resource_name": "Tools",
            "authorization_servers": [format!("{}/realms/acme", app.base)],
            "scopes_supported": ["tools:run"],
            "bearer_methods_supported": ["header"],
        })
    );
    // The issuer it names is the realm's, as its own metadata says.
    assert_eq!(app.discovery("acme").await["issuer"], metadata["authorization_servers"][0]);

    for (realm, server) in [("other", id.as_str()), ("acme", "no-such-server")] {
        let missing = app.http.get(url(realm, server)).send().await.unwrap();
        assert_eq!(missing.status(), StatusCode::NOT_FOUND, "{realm} {server}");
    }
    let disabled = app.put(&format!("/realms/acme/resource-servers/{id}"), json!({ "status": "Disabled" })).await;
    assert_eq!(disabled.status, StatusCode::OK, "{:?}", disabled.body);
    assert_eq!(app.http.get(url("acme", &id)).send().await.unwrap().status(), StatusCode::NOT_FOUND);
}
