//! Untrusted input is read in one pass and within documented bounds, and text no field accepts
//! (U+0000) is refused at the edge with the endpoint's own error format, the same on every backend.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::{Answer, TestApp, TestClient, answer, spawn_app};

async fn realm_with_client(app: &TestApp) -> TestClient {
    app.create_realm("acme").await;
    let client = app.create_client("acme", "web", &["password", "client_credentials"], &["orders:read"]).await;
    app.create_user("acme", "ada", "analytical engine").await;
    client
}

async fn post_raw(app: &TestApp, path: &str, content_type: &str, body: impl Into<reqwest::Body>) -> Answer {
    let response = app
        .http
        .post(format!("{}{path}", app.base))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .expect("the service answers");
    answer(response).await
}

fn assert_protocol_refusal(got: &Answer, status: StatusCode, error: &str, code: &str) {
    assert_eq!(got.status, status, "{:?}", got.body);
    assert_eq!(got.body["error"], error, "{:?}", got.body);
    assert_eq!(got.body["error_code"], code, "{:?}", got.body);
    assert_eq!(got.headers["cache-control"], "no-store");
}

/// 150,000 distinct parameter names took 13 s of CPU when every name was compared with every
/// other; the form is now refused at its 65th parameter, whatever follows. (110,000 names fit in
/// the default body limit of 1 MiB.)
#[tokio::test]
async fn a_form_of_more_parameters_than_allowed_is_refused_before_the_rest_is_read() {
    let app = spawn_app().await;
    let client = realm_with_client(&app).await;
    let token_path = "/realms/acme/protocol/openid-connect/token";
    let worst = (0..110_000).map(|i| format!("p{i}=")).collect::<Vec<_>>().join("&");
    assert!(worst.len() > 800_000);
    for path in [
        token_path,
        "/realms/acme/protocol/openid-connect/token/introspect",
        "/realms/acme/protocol/openid-connect/revoke",
    ] {
        let got = post_raw(&app, path, "application/x-www-form-urlencoded", worst.clone()).await;
        assert_protocol_refusal(&got, StatusCode::BAD_REQUEST, "invalid_request", "TooManyParameters");
    }
    // 64 parameters are read: the grant is judged on its merits.
    let mut form: Vec<(String, String)> = (0..61).map(|i| (format!("p{i}"), String::new())).collect();
    form.push(("grant_type".into(), "client_credentials".into()));
    form.push(("client_id".into(), client.id.clone()));
    form.push(("client_secret".into(), client.secret.clone()));
    let fits = app.http.post(format!("{}{token_path}", app.base)).form(&form).send().await.unwrap();
    assert_eq!(fits.status(), StatusCode::OK);
    form.push(("p61".into(), String::new()));
    let over = answer(app.http.post(format!("{}{token_path}", app.base)).form(&form).send().await.unwrap()).await;
    assert_protocol_refusal(&over, StatusCode::BAD_REQUEST, "invalid_request", "TooManyParameters");
    // A parameter twice is still refused, found in the same single pass.
    let twice = post_raw(&app, token_path, "application/x-www-form-urlencoded", "grant_type=a&b=1&grant_type=c").await;
    assert_protocol_refusal(&twice, StatusCode::BAD_REQUEST, "invalid_request", "RepeatedParameter");
    // The service kept answering throughout.
    assert_eq!(app.http.get(format!("{}/healthz", app.base)).send().await.unwrap().status(), StatusCode::OK);
}

#[tokio::test]
async fn a_request_names_at_most_128_scopes_and_repeats_count_once() {
    let app = spawn_app().await;
    let client = realm_with_client(&app).await;
    let many = (0..100_000).map(|i| format!("s{i}")).collect::<Vec<_>>().join(" ");
    let got = app.token(&client, &[("grant_type", "client_credentials"), ("scope", &many)]).await;
    assert_protocol_refusal(&got, StatusCode::BAD_REQUEST, "invalid_request", "TooManyScopes");
    // Thousands of repeats of one allowed scope are one scope.
    let repeated = vec!["orders:read"; 5_000].join(" ");
    let got = app.token(&client, &[("grant_type", "client_credentials"), ("scope", &repeated)]).await;
    assert_eq!(got.status, StatusCode::OK, "{:?}", got.body);
    assert_eq!(got.body["scope"], "orders:read");
    // 128 distinct scopes are judged: the excess is named, not refused for its count.
    let at_limit = (0..127).map(|i| format!("s{i}")).chain(["orders:read".into()]).collect::<Vec<_>>().join(" ");
    let got = app.token(&client, &[("grant_type", "client_credentials"), ("scope", &at_limit)]).await;
    assert_protocol_refusal(&got, StatusCode::BAD_REQUEST, "invalid_scope", "ScopeNotAllowed");
}

#[tokio::test]
async fn protocol_endpoints_answer_oversized_bodies_and_wrong_methods_in_rfc_6749_form() {
    let app = spawn_app().await;
    realm_with_client(&app).await;
    let big = vec![b'a'; 2 * 1024 * 1024];
    for endpoint in ["token", "token/introspect", "revoke"] {
        let path = format!("/realms/acme/protocol/openid-connect/{endpoint}");
        let got = post_raw(&app, &path, "application/x-www-form-urlencoded", big.clone()).await;
        assert_protocol_refusal(&got, StatusCode::PAYLOAD_TOO_LARGE, "invalid_request", "PayloadTooLarge");
        let response = app.http.delete(format!("{}{path}", app.base)).send().await.unwrap();
        assert!(response.headers()["allow"].to_str().unwrap().contains("POST"));
        let got = answer(response).await;
        assert_protocol_refusal(&got, StatusCode::METHOD_NOT_ALLOWED, "invalid_request", "MethodNotAllowed");
    }
    let recovery = post_raw(&app, "/realms/acme/account/recovery", "application/x-www-form-urlencoded", big).await;
    assert_protocol_refusal(&recovery, StatusCode::PAYLOAD_TOO_LARGE, "invalid_request", "PayloadTooLarge");
    // The admin API keeps its envelope for both.
    let admin = app.call_as(&app.key, Method::PATCH, "/realms", None).await;
    assert_eq!((admin.status, admin.error_code()), (StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed"));
}

#[tokio::test]
async fn admin_bodies_are_bounded_in_nesting_and_array_length() {
    let app = spawn_app().await;
    let deep = format!("{{\"id\":\"acme\",\"x\":{}1{}}}", "[".repeat(40), "]".repeat(40));
    let got = post_body(&app, "/realms", deep).await;
    assert_eq!(got.status, StatusCode::BAD_REQUEST);
    let innermost_allowed = format!("x{}", "[0]".repeat(15));
    assert_eq!(got.refused_fields(), vec![(innermost_allowed, "Depth".to_owned())]);
    let long = format!("{{\"id\":\"acme\",\"x\":[{}0]}}", "0,".repeat(100_000));
    let got = post_body(&app, "/realms", long).await;
    assert_eq!(got.refused_fields(), vec![("x".to_owned(), "MaxLength".to_owned())]);
    // Nothing was created by either.
    assert!(app.get("/realms").await.items().iter().all(|realm| realm["id"] != "acme"));
}

async fn post_body(app: &TestApp, path: &str, body: String) -> Answer {
    let response = app
        .http
        .post(format!("{}{path}", app.admin))
        .header("x-api-key", &app.key)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    answer(response).await
}

/// PostgreSQL refuses U+0000 in text and answered 500; SQLite stored it. Both now refuse it at the
/// edge, naming the field, before any statement runs.
#[tokio::test]
async fn text_holding_u0000_is_refused_at_the_edge_naming_its_field() {
    let app = spawn_app().await;
    let client = realm_with_client(&app).await;

    // Admin API: query parameters, path segments and body fields, in the envelope.
    let refused = |got: &Answer, field: &str| {
        assert_eq!(got.status, StatusCode::BAD_REQUEST, "{field}: {:?}", got.body);
        assert_eq!(got.error_code(), "ValidationFailed", "{field}");
        assert_eq!(got.refused_fields(), vec![(field.to_owned(), "Character".to_owned())], "{field}");
    };
    refused(&app.get("/realms?searchTerm=%00").await, "searchTerm");
    refused(&app.get("/realms/acme/users?searchTerm=ada%00").await, "searchTerm");
    refused(&app.get("/realms/%00").await, "realm");
    refused(&app.get("/realms/acme/clients/we%00b").await, "client");
    let before = app.get("/realms/acme").await.data().clone();
    refused(&app.put("/realms/acme", json!({ "displayName": "a\u{0}b" })).await, "displayName");
    refused(&app.post("/realms/acme/users", json!({ "username": "ada\u{0}" })).await, "username");
    refused(
        &app.put("/realms/acme/clients/web", json!({ "clientConfiguration": { "allowedScopes": ["a\u{0}"] } })).await,
        "clientConfiguration.allowedScopes[0]",
    );
    // Nothing changed.
    assert_eq!(app.get("/realms/acme").await.data(), &before);
    let users = app.get("/realms/acme/users").await;
    assert_eq!(users.items().len(), 1);

    // Protocol endpoints: RFC 6749 bodies.
    let nul =
        |got: &Answer| assert_protocol_refusal(got, StatusCode::BAD_REQUEST, "invalid_request", "ForbiddenCharacter");
    nul(&app.token(&client, &[("grant_type", "password"), ("username", "ada\u{0}"), ("password", "x")]).await);
    nul(&app.protocol(&client, "token/introspect", &[("token", "a\u{0}")]).await);
    let basic = app
        .http
        .post(format!("{}/realms/acme/protocol/openid-connect/token", app.base))
        .basic_auth("we\u{0}b", Some("secret"))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    nul(&answer(basic).await);
    let recovery = app
        .http
        .post(format!("{}/realms/acme/account/recovery", app.base))
        .form(&[("client_id", "web"), ("username", "ada\u{0}")])
        .send()
        .await
        .unwrap();
    nul(&answer(recovery).await);
    for path in ["/realms/%00/.well-known/openid-configuration", "/realms/%00/protocol/openid-connect/certs"] {
        let got = answer(app.http.get(format!("{}{path}", app.base)).send().await.unwrap()).await;
        nul(&got);
    }
}
