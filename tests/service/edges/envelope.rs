//! The admin API response envelope and the request id rule.

use std::collections::HashMap;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{TestApp, answer, spawn_app};

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

/// Fields that carry a document as it was given (a captured request, a claim preview, a
/// recommended setting, a key): their insides are the document's, not the view's.
const DOCUMENTS: &[&str] = &[
    "value",
    "currentValue",
    "appliedValue",
    "previousValue",
    "headers",
    "body",
    "accessTokenClaims",
    "idTokenClaims",
    "publicKey",
    "reasons",
];

/// Where `value` holds `null` or an empty list, by JSON path.
fn empty_fields(value: &Value, path: &str, found: &mut Vec<String>) {
    match value {
        Value::Null => found.push(format!("{path}: null")),
        Value::Array(items) if items.is_empty() => found.push(format!("{path}: []")),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                empty_fields(item, &format!("{path}[{i}]"), found);
            }
        }
        Value::Object(fields) => {
            for (name, inner) in fields.iter().filter(|(name, _)| !DOCUMENTS.contains(&name.as_str())) {
                empty_fields(inner, &format!("{path}.{name}"), found);
            }
        }
        _ => {}
    }
}

/// A realm holding one of most things, each with its optional fields left out: a client with no
/// redirect address, a person with no name or address, a group, role and organization with no
/// description, a grant with no expiry, a suspension with no end, a secret with no expiry.
async fn sparse_realm(app: &TestApp) -> HashMap<&'static str, String> {
    app.create_realm("acme").await;
    app.create_client("acme", "web", &["password"], &["orders:read"]).await;
    let body = json!({
        "id": "agent",
        "clientConfiguration": { "grantTypes": ["client_credentials"], "allowedScopes": ["orders:read"], "tokenExchangeEnabled": true },
    });
    assert_eq!(app.post("/realms/acme/clients", body).await.status, StatusCode::CREATED);
    let ada = app.create_user("acme", "ada", "analytical engine").await;
    let created = |path: &'static str, body: Value| async move {
        let answer = app.post(path, body).await;
        assert!(answer.status.is_success(), "{path}: {:?}", answer.body);
        answer.data()["id"].as_str().expect("an id").to_owned()
    };
    let group = created("/realms/acme/groups", json!({ "name": "staff" })).await;
    let role = created("/realms/acme/roles", json!({ "name": "reader" })).await;
    let client_role = created("/realms/acme/clients/web/roles", json!({ "name": "clerk" })).await;
    let account_role = created("/roles", json!({ "name": "reporting", "permissions": ["realm:read"] })).await;
    let organization = created("/realms/acme/organizations", json!({ "name": "Acme" })).await;
    let grant_body = json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read"] });
    let grant = created("/realms/acme/delegation-grants", grant_body).await;
    let suspensions = format!("/realms/acme/clients/web/users/{ada}/suspensions");
    let suspension = app.post(&suspensions, json!({ "level": "Full" })).await;
    assert_eq!(suspension.status, StatusCode::CREATED, "{:?}", suspension.body);
    let secret = created("/secrets", json!({ "name": "reporting", "roles": ["Auditor"] })).await;
    let capture = created("/webhook-captures", json!({})).await;
    HashMap::from([
        ("realm", "acme".to_owned()),
        ("client", "web".to_owned()),
        ("userId", ada),
        ("groupId", group),
        ("roleId", role),
        ("clientRoleId", client_role),
        ("accountRoleId", account_role),
        ("organizationId", organization),
        ("grantId", grant),
        ("suspensionId", suspension.data()["id"].as_str().expect("an id").to_owned()),
        ("id", secret),
        ("captureId", capture),
    ])
}

#[tokio::test]
async fn no_answer_sends_an_empty_field_and_the_document_calls_none_nullable() {
    let app = spawn_app().await;
    let values = sparse_realm(&app).await;
    let document = app.get_json(&format!("{}/openapi.json", app.admin)).await;

    let mut read = Vec::new();
    let mut found = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        if item.get("get").is_none() || path == "/dedicated/instance" || path.ends_with("/report") {
            continue;
        }
        // `{roleId}` names an account role, a client's role or a realm's, by where it stands.
        let value = |name: &str| {
            let name = match name {
                "roleId" if path.starts_with("/roles") => "accountRoleId",
                "roleId" if path.contains("/clients/") => "clientRoleId",
                other => other,
            };
            values.get(name).cloned()
        };
        let filled: Option<Vec<String>> = path
            .split('/')
            .map(|segment| match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) => value(name),
                None => Some(segment.to_owned()),
            })
            .collect();
        let Some(filled) = filled else { continue };
        let required_queries = item["get"]["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["in"] == "query" && p["required"] == true);
        let query: Option<Vec<String>> = required_queries
            .map(|p| {
                p["name"]
                    .as_str()
                    .and_then(|name| values.get(name))
                    .map(|v| format!("{}={v}", p["name"].as_str().unwrap_or_default()))
            })
            .collect();
        let Some(query) = query else { continue };
        let answer = app.get(&format!("{}?{}", filled.join("/"), query.join("&"))).await;
        if answer.status != StatusCode::OK {
            found.push(format!("GET {path}: {} {:?}", answer.status, answer.body));
            continue;
        }
        let inside = answer.body.get("data").or_else(|| answer.body.pointer("/pagination/items"));
        match inside {
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    empty_fields(item, &format!("GET {path} [{i}]"), &mut found);
                }
            }
            Some(data) => empty_fields(data, &format!("GET {path} "), &mut found),
            None => {}
        }
        read.push(path.clone());
    }
    assert!(read.len() >= 60, "only {} reads were walked: {read:?}", read.len());
    assert!(found.is_empty(), "{found:#?}");

    // The document says the same: no schema only answers use allows `null` (one a request body
    // uses too may, where a request's `null` reads as absent).
    let mut requested = Vec::new();
    for item in document["paths"].as_object().expect("paths").values() {
        for operation in item.as_object().expect("an item").values() {
            nullable_in(&operation["requestBody"], &document, "", &mut requested, &mut Vec::new());
        }
    }
    assert!(!requested.is_empty(), "request bodies refer to schemas");
    let mut nullable = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("an item") {
            let place = format!("{method} {path}");
            nullable_in(&operation["responses"], &document, &place, &mut requested.clone(), &mut nullable);
        }
    }
    assert!(nullable.is_empty(), "{nullable:#?}");
}

/// Where a schema reachable from `value` allows `null`, past the components in `seen` (which
/// gathers those it reaches).
fn nullable_in(value: &Value, document: &Value, place: &str, seen: &mut Vec<String>, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let null_type = match map.get("type") {
                Some(Value::String(t)) => t == "null",
                Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
                _ => false,
            };
            if null_type {
                found.push(format!("{place}: {value}"));
            }
            if let Some(name) =
                map.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/schemas/"))
                && !seen.iter().any(|s| s == name)
            {
                seen.push(name.to_owned());
                let schema = &document["components"]["schemas"][name];
                nullable_in(schema, document, &format!("{place} > {name}"), seen, found);
            }
            for (key, inner) in map {
                if key != "example" && key != "examples" && key != "default" {
                    nullable_in(inner, document, place, seen, found);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|inner| nullable_in(inner, document, place, seen, found)),
        _ => {}
    }
}
