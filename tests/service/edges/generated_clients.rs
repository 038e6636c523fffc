//! The OpenAPI document is the contract: it validates (`openapi-spec-validator`), a client
//! generated from it by `openapi-python-client` runs a scenario against the real service, and the
//! document and the router never drift apart: every documented operation is routed, and every
//! route of the admin API is documented.

use std::collections::BTreeSet;
use std::path::Path;

use castellan::kernel::config::AdminRateLimits;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{TestApp, TestDatabase, python_tool, spawn_app, spawn_with};

const METHODS: &[&str] = &["get", "post", "put", "delete", "patch"];

/// The served document.
async fn document(app: &TestApp) -> Value {
    app.get_json(&format!("{}/openapi.json", app.admin)).await
}

/// Every `(method, path)` the document describes.
fn operations(document: &Value) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys().filter(|m| METHODS.contains(&m.as_str())) {
            found.insert((method.clone(), path.clone()));
        }
    }
    found
}

#[tokio::test]
async fn the_document_validates_and_declares_every_answer_in_its_envelope() {
    let app = spawn_app().await;
    let document = document(&app).await;
    let file = app.db.dir.join("openapi.json");
    std::fs::write(&file, document.to_string()).unwrap();
    let validated = std::process::Command::new(python_tool("openapi-spec-validator")).arg(&file).output().unwrap();
    assert!(validated.status.success(), "{}", String::from_utf8_lossy(&validated.stdout));

    let mut ids = BTreeSet::new();
    for (method, path) in operations(&document) {
        let operation = &document["paths"][&path][&method];
        let id = operation["operationId"].as_str().unwrap();
        assert!(ids.insert(id.to_owned()), "{id} is the id of two operations");
        assert!(operation["tags"].as_array().is_some_and(|tags| !tags.is_empty()), "{method} {path} has a tag");
        let responses = operation["responses"].as_object().unwrap();
        let success = responses.iter().find(|(status, _)| status.starts_with('2')).map(|(_, r)| r);
        let success = success.unwrap_or_else(|| panic!("{method} {path}: no success"));
        // A document to print or send on (the post-incident report) is answered as itself.
        let document = ["text/html", "application/pdf"].iter().all(|kind| success["content"][kind].is_object());
        let schema = &success["content"]["application/json"]["schema"];
        let enveloped = document
            || schema["$ref"] == "#/components/schemas/DoneEnvelope"
            || schema["properties"]["data"].is_object()
            || schema["properties"]["pagination"]["properties"]["items"].is_object();
        assert!(enveloped, "{method} {path}: the success is declared in its envelope: {schema}");
        let untyped = schema["properties"]["data"]["additionalProperties"] == json!(true);
        assert!(!untyped, "{method} {path}: the handler declares no schema of what it answers");
        for (status, response) in responses.iter().filter(|(status, _)| !status.starts_with('2')) {
            assert_eq!(
                response["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/ErrorEnvelope",
                "{method} {path} {status}"
            );
        }
        for status in ["400", "429", "500", "503"] {
            assert!(responses.contains_key(status), "{method} {path} declares {status}");
        }
    }
    assert!(ids.contains("listRealmClients") && ids.contains("rotateRealmClientSigningKeys"), "{ids:?}");
    let codes = &document["components"]["schemas"]["ErrorCode"]["enum"];
    assert!(codes.as_array().unwrap().contains(&json!("ValidationFailed")));
}

#[tokio::test]
async fn a_client_generated_by_openapi_python_client_runs_a_scenario_against_the_service() {
    let app = spawn_app().await;
    let file = app.db.dir.join("openapi.json");
    std::fs::write(&file, document(&app).await.to_string()).unwrap();
    let generated = app.db.dir.join("generated");
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/python_client.yaml");
    let output = tokio::process::Command::new(python_tool("openapi-python-client"))
        .args(["generate", "--meta", "none", "--path"])
        .arg(&file)
        .arg("--output-path")
        .arg(generated.join("castellan_admin"))
        .arg("--config")
        .arg(&config)
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );

    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/python_scenario.py");
    let run = tokio::process::Command::new(python_tool("python"))
        .arg(&scenario)
        .arg(&generated)
        .arg(&app.admin)
        .arg(&app.key)
        .output()
        .await
        .unwrap();
    let printed = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{printed}{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(printed.lines().filter(|line| line.starts_with("ok: ")).count(), 9, "{printed}");
}

/// The admin routes the router registers, read from its source: `(method, path)`.
fn routed() -> BTreeSet<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/src/http");
    let admin = std::fs::read_to_string(src.join("admin/mod.rs")).unwrap();
    let webhooks = std::fs::read_to_string(src.join("admin/webhooks/routes.rs")).unwrap();
    let mut found = BTreeSet::new();
    for (text, prefixes) in [
        (admin.as_str(), vec![String::new()]),
        (
            webhooks.as_str(),
            vec!["/realms/{realm}/webhooks".to_owned(), "/realms/{realm}/clients/{client}/webhooks".to_owned()],
        ),
    ] {
        for call in text.split(".route(").skip(1) {
            // The call's text up to its closing parenthesis.
            let mut depth = 1;
            let end = call
                .char_indices()
                .find(|(_, c)| {
                    depth += match c {
                        '(' => 1,
                        ')' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(call.len(), |(i, _)| i);
            let call = &call[..end];
            let path = match call.split('"').nth(1) {
                Some(literal) if call.trim_start().starts_with('"') => literal.to_owned(),
                Some(literal) => literal.replace("{prefix}", "").replace("{{", "{").replace("}}", "}"),
                None => String::new(),
            };
            let methods: Vec<&str> = METHODS
                .iter()
                .copied()
                .filter(|m| call.contains(&format!("{m}(")) || call.contains(&format!(".{m}(")))
                .collect();
            for prefix in &prefixes {
                for method in &methods {
                    found.insert(((*method).to_owned(), format!("{prefix}{path}")));
                }
            }
        }
    }
    // Registered beside the authenticated routes: the invitation token is its credential.
    found.insert(("post".to_owned(), "/account/invitations/accept".to_owned()));
    found
}

#[tokio::test]
async fn every_route_is_documented_and_every_documented_operation_is_routed() {
    let raised = AdminRateLimits {
        requests: 1_000_000,
        sensitive_requests: 1_000_000,
        failed_authentications: 1_000_000,
        client_registrations: 1_000_000,
        wrong_user_codes: 1_000_000,
        device_authorizations: 1_000_000,
        sign_ups: 1_000_000,
    };
    let app = spawn_with(TestDatabase::new().await, |settings| settings.admin_rate_limits = raised).await;
    let documented = operations(&document(&app).await);
    let routed = routed();
    assert!(routed.len() > 100, "the routes were read: {routed:?}");
    let undocumented: Vec<_> = routed.difference(&documented).collect();
    assert!(undocumented.is_empty(), "routed but not documented: {undocumented:?}");

    for (method, path) in &documented {
        let concrete: String =
            path.split('/').map(|s| if s.starts_with('{') { "absent" } else { s }).collect::<Vec<_>>().join("/");
        let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let body = (method == Method::POST || method == Method::PUT).then(|| json!({}));
        let answer = app.call_as(&app.key, method.clone(), &concrete, body).await;
        let unrouted = answer.status == StatusCode::METHOD_NOT_ALLOWED
            || (answer.status == StatusCode::NOT_FOUND && answer.body.to_string().contains("no such route"));
        assert!(!unrouted, "{method} {path} is documented but not routed: {:?}", answer.body);
    }
}

/// Runs a command of `tests/typescript-client/node_modules/.bin` in `dir`, asserting it succeeds;
/// its output.
async fn node_tool(dir: &Path, tool: &str, args: &[&str]) -> String {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("typescript-client/node_modules/.bin").join(tool);
    assert!(bin.exists(), "{tool} is not installed: run `npm ci --prefix tests/typescript-client` (scripts/test does)");
    let output = tokio::process::Command::new(bin).args(args).current_dir(dir).output().await.unwrap();
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{tool} {args:?}:\n{printed}{}", String::from_utf8_lossy(&output.stderr));
    printed
}

#[tokio::test]
async fn types_generated_by_openapi_typescript_type_check_a_scenario_that_runs_against_the_service() {
    let app = spawn_app().await;
    let dir = app.db.dir.join("typescript");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("openapi.json"), document(&app).await.to_string()).unwrap();
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("typescript-client");
    for file in ["scenario.ts", "tsconfig.json", "package.json"] {
        std::fs::copy(client.join(file), dir.join(file)).unwrap();
    }
    std::os::unix::fs::symlink(client.join("node_modules"), dir.join("node_modules")).unwrap();

    node_tool(&dir, "openapi-typescript", &["openapi.json", "-o", "schema.d.ts"]).await;
    // Strict, library types included: no error at all.
    node_tool(&dir, "tsc", &["--noEmit", "-p", "tsconfig.json"]).await;
    node_tool(&dir, "tsc", &["-p", "tsconfig.json"]).await;
    let run = tokio::process::Command::new("node")
        .arg(dir.join("out/scenario.js"))
        .args([app.admin.as_str(), app.key.as_str()])
        .output()
        .await
        .unwrap();
    let printed = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{printed}{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(printed.lines().filter(|line| line.starts_with("ok: ")).count(), 8, "{printed}");
}
