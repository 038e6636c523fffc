//! The official MCP SDKs against the service, as MCP clients and a server that no one here wrote: a
//! server built with the TypeScript SDK, protected by the service (tokens verified with the realm's
//! JWKS), and the TypeScript and Python SDKs' clients with their OAuth support finding their way
//! alone: protected resource metadata, the realm's metadata, registration (Dynamic Client
//! Registration, or a Client ID Metadata Document), sign-in with PKCE and `resource`, a tool call,
//! then a step-up for a tool that needs one more scope.

use serde_json::{Value, json};

use crate::support::node::NodeScript;
use crate::support::receiver::{Receiver, authority_file};
use crate::support::{TestApp, TestDatabase, created_id, python_tool, spawn_app, spawn_with};

/// A port nothing listens on now, for the MCP server to take.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Realm `acme` open to registrations, ada, and an MCP server built with the SDK listening on a
/// resource server of the realm that accepts self-registered clients.
struct Tools {
    app: TestApp,
    ada: String,
    resource: String,
    _server: NodeScript,
}

async fn tools(app: TestApp) -> Tools {
    app.create_realm("acme").await;
    app.create_scopes("acme", &["mcp:tools", "mcp:admin"]).await;
    let settings = json!({ "clientRegistration": "Open", "registrationScopes": ["mcp:tools", "mcp:admin"] });
    assert!(app.put("/realms/acme", settings).await.status.is_success());
    let ada = app.create_user("acme", "ada", "analytical engine").await;
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let server = json!({
        "name": "Tools", "address": resource, "type": "McpServer", "scopes": ["mcp:tools", "mcp:admin"],
        "acceptsSelfRegisteredClients": true,
    });
    let server_id = created_id(&app, "/realms/acme/resource-servers", server).await;
    let metadata = format!("{}/realms/acme/resource-servers/{server_id}/protected-resource-metadata", app.base);
    let issuer = format!("{}/realms/acme", app.base);
    let mut mcp_server = NodeScript::start("mcp_server.mjs", SDK, &[&port.to_string(), &issuer, &metadata]);
    assert_eq!(mcp_server.next().await["listening"], json!(resource));
    Tools { app, ada, resource, _server: mcp_server }
}

const SDK: &str = "@modelcontextprotocol/sdk";

/// Runs an agent to its end; the JSON lines it printed before `{"done": true}`.
async fn steps_of(mut agent: tokio::process::Command) -> Vec<Value> {
    let run = agent.kill_on_drop(true).stderr(std::process::Stdio::inherit()).output();
    // The timeout guards against a hung agent; it measures nothing.
    let output = tokio::time::timeout(std::time::Duration::from_secs(90), run).await.expect("the agent ends").unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "the agent failed after:\n{printed}");
    let lines: Vec<Value> = printed.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect();
    assert_eq!(lines.last(), Some(&json!({ "done": true })), "{printed}");
    lines[..lines.len() - 1].to_vec()
}

/// What every agent does against the tools, step by step; its client id, which came to be as
/// `registration` says.
async fn check_steps(tools: &Tools, steps: &[Value], registration: &str) -> String {
    let Tools { app, ada, resource, .. } = tools;
    // Registered (or named by its metadata document), then sent to sign in for the server's first scope.
    let client_id = steps[0]["registered"].as_str().expect("it registered first").to_owned();
    let first = &steps[1]["asked"];
    assert_eq!(
        (first["client_id"].as_str(), first["resource"].as_str()),
        (Some(client_id.as_str()), Some(resource.as_str()))
    );
    assert_eq!((first["scope"].as_str(), first["code_challenge_method"].as_str()), (Some("mcp:tools"), Some("S256")));
    assert_eq!(steps[2], json!({ "page": "login" }));
    assert_eq!(steps[3], json!({ "page": "consent", "asked": ["mcp:tools"], "earlier": [] }));
    let whoami: Value = serde_json::from_str(steps[4]["text"].as_str().unwrap()).unwrap();
    assert_eq!(whoami, json!({ "sub": ada, "scopes": ["mcp:tools"] }), "{steps:?}");
    // The tool needing mcp:admin is refused insufficient_scope; the SDK asks again, and the person,
    // still signed in, is asked only for what is missing.
    assert_eq!(steps[5]["asked"]["scope"], "mcp:tools mcp:admin");
    assert_eq!(steps[6], json!({ "page": "consent", "asked": ["mcp:admin"], "earlier": ["mcp:tools"] }));
    assert_eq!(steps[7], json!({ "tool": "report", "text": "report ready" }));
    assert_eq!(steps.len(), 8, "{steps:?}");

    // Administrators see the agent and what ada allowed it.
    let seen = app.get(&format!("/realms/acme/clients/{}", crate::support::segment(&client_id))).await;
    assert_eq!(seen.data()["registration"], registration, "{:?}", seen.body);
    let consents = app.get(&format!("/realms/acme/users/{ada}/consents")).await;
    let consent = consents.data().as_array().unwrap().iter().find(|c| c["clientId"] == client_id.as_str()).unwrap();
    assert_eq!((&consent["scopes"], &consent["resource"]), (&json!(["mcp:tools", "mcp:admin"]), &json!(resource)));
    client_id
}

#[tokio::test]
async fn the_mcp_typescript_sdk_registers_signs_a_person_in_and_steps_up_for_a_tool() {
    let tools = tools(spawn_app().await).await;
    let issuer = format!("{}/realms/acme", tools.app.base);
    let mut agent = tokio::process::Command::new("node");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("relying-party/mcp_client.mjs");
    agent.arg(script).args([tools.resource.as_str(), &issuer, "ada", "analytical engine"]);
    let steps = steps_of(agent).await;
    let client_id = check_steps(&tools, &steps, "Dynamic").await;
    let seen = tools.app.get(&format!("/realms/acme/clients/{client_id}")).await;
    assert_eq!(seen.data()["registeredMetadata"]["software_id"], "mcp-typescript-sdk");
}

#[tokio::test]
async fn the_mcp_typescript_sdk_signs_a_person_in_as_the_client_its_metadata_document_describes() {
    let trusting = |settings: &mut castellan::kernel::config::Settings| {
        settings.webhook_allowed_networks = vec!["127.0.0.0/8".parse().unwrap()];
        settings.webhook_ca_file = Some(authority_file());
    };
    let tools = tools(spawn_with(TestDatabase::new().await, trusting).await).await;
    let settings = json!({ "clientIdMetadataDocuments": true, "metadataDocumentHosts": ["127.0.0.1"] });
    assert!(tools.app.put("/realms/acme", settings).await.status.is_success());
    let document = Receiver::start().await;
    document.serve(
        json!({
            "client_id": document.url, "client_name": "SDK agent", "application_type": "native",
            "redirect_uris": ["http://127.0.0.1:9/callback"], "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none", "software_id": "mcp-typescript-sdk",
        }),
        "max-age=3600",
    );
    let issuer = format!("{}/realms/acme", tools.app.base);
    let mut agent = tokio::process::Command::new("node");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("relying-party/mcp_client.mjs");
    agent.arg(script).args([tools.resource.as_str(), &issuer, "ada", "analytical engine", &document.url]);
    let steps = steps_of(agent).await;
    let client_id = check_steps(&tools, &steps, "MetadataDocument").await;
    assert_eq!(client_id, document.url, "the document's address is the client id");
    assert_eq!(document.received().len(), 1, "read once, then kept as its max-age allows");
}

#[tokio::test]
async fn the_mcp_python_sdk_registers_signs_a_person_in_and_steps_up_for_a_tool() {
    let tools = tools(spawn_app().await).await;
    let mut agent = tokio::process::Command::new(python_tool("python"));
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/mcp_agent.py");
    agent.arg(script).args([tools.resource.as_str(), "ada", "analytical engine"]);
    let steps = steps_of(agent).await;
    let client_id = check_steps(&tools, &steps, "Dynamic").await;
    let seen = tools.app.get(&format!("/realms/acme/clients/{client_id}")).await;
    assert_eq!(seen.data()["registeredMetadata"]["software_id"], "mcp-python-sdk");
}
