//! The official MCP TypeScript SDK against the service, as an MCP client and server that no one
//! here wrote: a server built with the SDK, protected by the service (tokens verified with the
//! realm's JWKS), and the SDK's client with its OAuth support finding its way alone: protected
//! resource metadata, the realm's metadata, registration, sign-in with PKCE and `resource`, a tool
//! call, then a step-up for a tool that needs one more scope.

use serde_json::{Value, json};

use crate::node::NodeScript;
use crate::support::{created_id, spawn_app};

/// A port nothing listens on now, for the MCP server to take.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[tokio::test]
async fn the_mcp_sdk_registers_signs_a_person_in_and_steps_up_for_a_tool() {
    let app = spawn_app().await;
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

    let sdk = "@modelcontextprotocol/sdk";
    let mut mcp_server = NodeScript::start("mcp_server.mjs", sdk, &[&port.to_string(), &issuer, &metadata]);
    assert_eq!(mcp_server.next().await["listening"], json!(resource));
    let mut agent = NodeScript::start("mcp_client.mjs", sdk, &[&resource, &issuer, "ada", "analytical engine"]);
    let mut steps: Vec<Value> = Vec::new();
    loop {
        let line = agent.next().await;
        if line["done"] == true {
            break;
        }
        steps.push(line);
    }
    assert!(agent.finished().await, "the agent ran to its end: {steps:?}");

    // Registered by Dynamic Client Registration, then sent to sign in for the server's first scope.
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
    let seen = app.get(&format!("/realms/acme/clients/{client_id}")).await;
    assert_eq!(seen.data()["registration"], "Dynamic");
    assert_eq!(seen.data()["registeredMetadata"]["software_id"], "mcp-typescript-sdk");
    let consents = app.get(&format!("/realms/acme/users/{ada}/consents")).await;
    assert_eq!(consents.data()[0]["scopes"], json!(["mcp:tools", "mcp:admin"]));
    assert_eq!(consents.data()[0]["resource"], json!(resource));
}
