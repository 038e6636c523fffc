//! The metadata around the token service: OpenID Provider metadata at both of its addresses (OIDC
//! Discovery and RFC 8414), the realm's scopes in it, and cross-origin reads of it and of the JWKS
//! by code in a browser.

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
