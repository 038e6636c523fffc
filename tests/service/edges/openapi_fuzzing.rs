//! Schemathesis, a fuzzer that no one here wrote, generates admin requests from the OpenAPI
//! document (valid ones, and invalid ones of every shape) and sends them to the real service: none
//! may answer 5xx or take more than two seconds. `scripts/test` installs it, pinned in
//! `tests/attacks/requirements.txt`; the suite runs it on SQLite and again on PostgreSQL.

use castellan::kernel::config::AdminRateLimits;
use serde_json::{Value, json};

use crate::support::{TestDatabase, python_tool, spawn_with};

/// Fewest generated cases a run must send.
const LEAST_CASES: u64 = 2_000;

#[tokio::test]
async fn generated_admin_requests_never_fail_the_service_nor_take_over_two_seconds() {
    let tool = python_tool("schemathesis");
    // The fuzzer sends thousands of requests in a moment of the manual clock, many of them
    // without valid credentials: the limits would answer 429 to nearly all of them.
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
    app.create_realm("acme").await;
    app.create_client("acme", "web", &["password", "client_credentials"], &["orders:read"]).await;
    app.create_user("acme", "ada", "analytical engine").await;
    app.post("/realms/acme/roles", json!({ "name": "clerk" })).await;

    let report = app.db.dir.join("schemathesis.json");
    // One worker: with two, Hypothesis parses source in both threads at once, and CPython 3.11's
    // parser then now and then fails on its own ("AST constructor recursion depth mismatch",
    // CPython issue 106905), which would fail the run with no request to blame.
    let output = tokio::process::Command::new(&tool)
        .arg("run")
        .arg(format!("{}/openapi.json", app.admin))
        .args(["--url", &app.admin])
        .args(["--header", &format!("x-api-key: {}", app.key)])
        .args(["--checks", "not_a_server_error", "--max-response-time", "2"])
        .args(["--phases", "examples,coverage,fuzzing", "--max-examples", "10", "--seed", "20261124"])
        .args(["--workers", "1", "--no-shrink", "--suppress-health-check", "all", "--warnings", "off"])
        .args(["--report", "json", "--report-json-path"])
        .arg(&report)
        .env("NO_COLOR", "1")
        .current_dir(&app.db.dir)
        .output()
        .await
        .expect("schemathesis runs");
    let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "schemathesis found failures:\n{printed}");

    let report: Value = serde_json::from_slice(&std::fs::read(&report).expect("the run's report")).expect("JSON");
    let cases = cases_sent(&report);
    assert!(cases >= LEAST_CASES, "only {cases} cases were sent:\n{printed}");
}

/// The number of test cases the run's report counts.
fn cases_sent(report: &Value) -> u64 {
    report.pointer("/test_cases/generated").and_then(Value::as_u64).unwrap_or(0)
}
