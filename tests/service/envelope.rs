//! The admin API response envelope and the request id rule.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::{answer, spawn_app};

#[tokio::test]
async fn success_responses_use_the_envelope_and_omit_empty_fields() {
    let app = spawn_app().await;
    let created = app.create_realm("acme").await;
    assert_eq!(created.body["success"], true);
    assert_eq!(created.body["statusCode"], "Created");
    assert_eq!(created.data()["displayName"], "acme");
    assert!(created.body.get("errorCode").is_none());
    assert!(created.body.get("requestId").is_none());
    assert!(created.body.get("notifications").is_none());
    let read = app.get("/realms/acme").await;
    assert_eq!(read.body["statusCode"], "OK");
    assert!(read.headers.contains_key("x-request-id"));
}

#[tokio::test]
async fn unknown_routes_answer_in_the_envelope_with_the_request_id() {
    let app = spawn_app().await;
    let response = app.http.get(format!("{}/no/such/thing", app.admin)).send().await.unwrap();
    let got = answer(response).await;
    assert_eq!(got.status, StatusCode::NOT_FOUND);
    assert_eq!(got.body["success"], false);
    assert_eq!(got.body["statusCode"], "NotFound");
    assert_eq!(got.error_code(), "NotFound");
    let header = got.headers["x-request-id"].to_str().unwrap();
    assert_eq!(got.body["requestId"], header);

    let response = app.http.get(format!("{}/nowhere", app.base)).send().await.unwrap();
    assert_eq!(answer(response).await.error_code(), "NotFound");

    let wrong_method = app.call_as(&app.key, Method::PATCH, "/realms", None).await;
    assert_eq!(wrong_method.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(wrong_method.error_code(), "MethodNotAllowed");
}

#[tokio::test]
async fn a_callers_request_id_is_kept_when_it_fits_and_replaced_otherwise() {
    let app = spawn_app().await;
    let fitting = "trace-1:a_b.c";
    let response = app.http.get(format!("{}/healthz", app.base)).header("x-request-id", fitting).send().await.unwrap();
    assert_eq!(response.headers()["x-request-id"], fitting);

    for unfit in ["has space", &"x".repeat(129), "semi;colon"] {
        let response =
            app.http.get(format!("{}/realms", app.admin)).header("x-request-id", unfit).send().await.unwrap();
        let issued = response.headers()["x-request-id"].to_str().unwrap().to_owned();
        assert_ne!(issued, unfit);
        assert!(!issued.is_empty() && issued.len() <= 128);
        let body = answer(response).await.body;
        assert_eq!(body["requestId"], issued.as_str(), "the error names the issued id");
    }
}

#[tokio::test]
async fn malformed_json_is_a_validation_failure_not_a_500() {
    let app = spawn_app().await;
    let response = app
        .http
        .post(format!("{}/realms", app.admin))
        .header("x-api-key", &app.key)
        .header("content-type", "application/json")
        .body("{\"id\": \"acme\",")
        .send()
        .await
        .unwrap();
    let got = answer(response).await;
    assert_eq!(got.status, StatusCode::BAD_REQUEST);
    assert_eq!(got.error_code(), "ValidationFailed");
    assert_eq!(got.refused_fields(), vec![(String::new(), "Json".to_owned())]);

    let not_an_object = app.post("/realms", json!(["acme"])).await;
    assert_eq!(not_an_object.status, StatusCode::BAD_REQUEST);
    assert_eq!(not_an_object.refused_fields()[0].1, "Type");
}

#[tokio::test]
async fn each_refused_field_gets_its_own_notification_named_by_its_path() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let got = app
        .post(
            "/realms/acme/clients",
            json!({
                "id": "Bad Id!",
                "name": 7,
                "type": "Secretive",
                "colour": "blue",
                "clientConfiguration": {
                    "tokenExchangeEnabled": "yes",
                    "allowedScopes": ["read", "has space", "read"],
                    "grantTypes": ["implicit"],
                    "redirectUris": ["http://example.com/cb"]
                }
            }),
        )
        .await;
    assert_eq!(got.status, StatusCode::BAD_REQUEST);
    assert_eq!(got.body["statusCode"], "BadRequest");
    let refused = got.refused_fields();
    for expected in [
        ("id", "Pattern"),
        ("name", "Type"),
        ("type", "OneOf"),
        ("colour", "Unknown"),
        ("clientConfiguration.tokenExchangeEnabled", "Type"),
        ("clientConfiguration.allowedScopes[1]", "Pattern"),
        ("clientConfiguration.allowedScopes[2]", "Duplicate"),
        ("clientConfiguration.grantTypes[0]", "OneOf"),
        ("clientConfiguration.redirectUris[0]", "Format"),
    ] {
        assert!(
            refused.contains(&(expected.0.to_owned(), expected.1.to_owned())),
            "{expected:?} missing from {refused:?}"
        );
    }
    assert_eq!(refused.len(), 9, "{refused:?}");
    // Nothing was created.
    assert_eq!(app.get("/realms/acme/clients").await.items().len(), 0);

    let missing = app.post("/realms", json!({ "displayName": "No id" })).await;
    assert_eq!(missing.refused_fields(), vec![("id".to_owned(), "Required".to_owned())]);
}

#[tokio::test]
async fn a_body_over_the_limit_gets_413_in_the_envelope() {
    let app = spawn_app().await;
    let limit = app.state.settings.max_body_bytes;
    let big = json!({ "id": "acme", "displayName": "x".repeat(limit) });
    let got = app.post("/realms", big).await;
    assert_eq!(got.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(got.body["statusCode"], "PayloadTooLarge");
    assert_eq!(got.error_code(), "PayloadTooLarge");
    assert!(got.body["requestId"].is_string());
}

#[tokio::test]
async fn a_body_that_is_not_json_gets_415() {
    let app = spawn_app().await;
    let response = app
        .http
        .post(format!("{}/realms", app.admin))
        .header("x-api-key", &app.key)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("id=acme")
        .send()
        .await
        .unwrap();
    let got = answer(response).await;
    assert_eq!(got.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(got.error_code(), "UnsupportedMediaType");
}
