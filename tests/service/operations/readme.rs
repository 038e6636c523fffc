//! The README's first steps run as written, with curl and bash, against the real service: the
//! first start's key and the service's address stand in for the placeholders, and any refused
//! request fails the run.

use reqwest::StatusCode;

use crate::support::spawn_app;

/// The first `sh` block after `heading` in the README.
fn shell_block(readme: &str, heading: &str) -> String {
    let section = readme.split(heading).nth(1).unwrap_or_else(|| panic!("the README has {heading}"));
    let block = section.split("```sh\n").nth(1).expect("a shell block");
    block.split("\n```").next().expect("a closed block").to_owned()
}

/// Runs the first `sh` block after `heading` against `app`, failing on any refused request; what
/// it printed.
async fn run_block(app: &crate::support::TestApp, heading: &str) -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let block = shell_block(&readme, heading);
    assert!(block.contains("http://127.0.0.1:8080"), "the block uses the documented address");
    let script: Vec<String> = block
        .replace("http://127.0.0.1:8080", &app.base)
        .lines()
        .map(|line| if line.starts_with("KEY=") { format!("KEY={}", app.key) } else { line.to_owned() })
        .collect();
    // Every curl fails the run on a refusal, and each answer ends its line.
    let prelude = "set -euo pipefail\ncurl() { command curl --fail-with-body --show-error \"$@\"; echo; }\n";
    let output = tokio::process::Command::new("bash")
        .arg("-c")
        .arg(format!("{prelude}{}", script.join("\n")))
        .output()
        .await
        .expect("bash runs");
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the README's block under {heading} failed:\n{printed}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    printed.into_owned()
}

#[tokio::test]
async fn the_readme_first_steps_run_as_written() {
    let app = spawn_app().await;
    let printed = run_block(&app, "## First steps with curl").await;

    // They did what they say: the clients and the person exist, and she got a token.
    let clients = app.get("/realms/acme/clients").await;
    assert_eq!(clients.status, StatusCode::OK);
    let mut ids: Vec<&str> = clients.items().iter().map(|client| client["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["orders-agent", "web"]);
    assert!(printed.contains("\"access_token\""), "{printed}");
    assert!(printed.contains("\"id_token\""), "the openid scope gave an ID token: {printed}");
}

#[tokio::test]
async fn the_readme_steps_that_open_a_realm_to_mcp_clients_run_as_written() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let printed = run_block(&app, "## Agents and MCP servers").await;
    assert!(printed.contains("/realms/acme/protocol/openid-connect/register\""), "discovery names it: {printed}");
    assert!(printed.contains("\"registration_access_token\""), "the agent registered: {printed}");
    let clients = app.get("/realms/acme/clients").await;
    let registered = &clients.items()[0];
    assert_eq!((registered["registration"].as_str(), registered["name"].as_str()), (Some("Dynamic"), Some("An agent")));
}

#[test]
fn the_readme_shows_the_haproxy_configuration_the_deployment_test_runs() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let shipped = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/haproxy.cfg")).unwrap();
    let section = readme.split("## Running several hosts").nth(1).expect("the README has the section");
    let block = section.split("```\n").nth(1).expect("a block");
    assert_eq!(block, shipped, "the README shows deploy/haproxy.cfg as it is");
}
