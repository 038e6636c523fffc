//! Clients known by a metadata document: the `client_id` is the https address of a JSON document
//! describing the client, which the service reads (through the webhooks' address checks), checks,
//! keeps as its `Cache-Control` allows, and admits from the hosts the realm lists, for the scopes
//! and resource servers the realm opens to self-registered clients.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::oauth::browser::{Browser, Page, VERIFIER, challenge};
use crate::oauth::client_keys::{ASSERTION_TYPE, ClientKey};
use crate::support::receiver::{Receiver, authority_file};
use crate::support::{Answer, TestApp, TestDatabase, answer, claims, segment, spawn_with_policies};

const MCP: &str = "https://mcp.example/mcp";
/// A native app's private-use redirect: the consent page must name the document's host instead.
const NATIVE_REDIRECT: &str = "com.example.agent:/callback";

/// The service, trusting the test receivers' authority on loopback, with realm `acme`: the MCP
/// server's scopes open to self-registered clients, an MCP server accepting them, another that
/// does not, and ada.
async fn service() -> TestApp {
    service_with(castellan::authz::PolicyFiles::shipped()).await
}

async fn service_with(policies: castellan::authz::PolicyFiles) -> TestApp {
    let trusting = |settings: &mut castellan::kernel::config::Settings| {
        settings.webhook_allowed_networks = vec!["127.0.0.0/8".parse().unwrap()];
        settings.webhook_ca_file = Some(authority_file());
    };
    let app = spawn_with_policies(TestDatabase::new().await, trusting, &policies).await;
    app.create_realm("acme").await;
    app.create_scopes("acme", &["mcp:tools", "mcp:admin", "orders:read"]).await;
    assert_eq!(app.put("/realms/acme", json!({ "registrationScopes": ["mcp:tools"] })).await.status, StatusCode::OK);
    for (name, address, open) in [("Tools", MCP, true), ("Orders", "https://orders.example", false)] {
        let server = json!({
            "name": name, "address": address, "type": "McpServer", "scopes": ["mcp:tools", "mcp:admin"],
            "acceptsSelfRegisteredClients": open,
        });
        assert_eq!(app.post("/realms/acme/resource-servers", server).await.status, StatusCode::CREATED);
    }
    app.create_user("acme", "ada", "analytical engine").await;
    app
}

/// A receiver serving, at its address, a native agent's document naming that address.
async fn published(cache_control: &str) -> Receiver {
    let receiver = Receiver::start().await;
    receiver.serve(document(&receiver.url, &[NATIVE_REDIRECT]), cache_control);
    receiver
}

fn document(address: &str, redirect_uris: &[&str]) -> Value {
    json!({
        "client_id": address, "client_name": "Agent", "application_type": "native",
        "redirect_uris": redirect_uris, "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none", "software_id": "agent",
    })
}

fn authorization<'a>(client: &'a str, scope: &'a str, resource: &'a str, pkce: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client),
        ("redirect_uri", NATIVE_REDIRECT),
        ("scope", scope),
        ("state", "s"),
        ("code_challenge", pkce),
        ("code_challenge_method", "S256"),
        ("resource", resource),
    ]
}

async fn token(app: &TestApp, form: &[(&str, &str)]) -> Answer {
    let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    answer(app.http.post(url).form(form).send().await.unwrap()).await
}

/// The title of a problem page.
fn problem(page: &Page) -> &str {
    let start = page.body.find("<h1>").map_or(0, |at| at + 4);
    &page.body[start..start + page.body[start..].find("</h1>").unwrap_or(0)]
}

async fn take(app: &TestApp, settings: Value) {
    let updated = app.put("/realms/acme", settings).await;
    assert_eq!(updated.status, StatusCode::OK, "{:?}", updated.body);
}

#[tokio::test]
async fn a_realm_takes_metadata_documents_only_once_its_setting_says_so_and_from_the_hosts_it_lists() {
    let app = service().await;
    let agent = published("max-age=300").await;
    let discovery = || app.discovery("acme");
    assert!(discovery().await.get("client_id_metadata_document_supported").is_none(), "off by default");
    let pkce = challenge(VERIFIER);
    let asked = authorization(&agent.url, "mcp:tools", MCP, &pkce);
    let unknown = Browser::new(&app).authorize("acme", &asked).await;
    assert_eq!((unknown.status, problem(&unknown)), (StatusCode::BAD_REQUEST, "The application is not known"));

    take(&app, json!({ "clientIdMetadataDocuments": true, "metadataDocumentHosts": ["*.agents.example"] })).await;
    assert_eq!(discovery().await["client_id_metadata_document_supported"], true);
    let elsewhere = Browser::new(&app).authorize("acme", &asked).await;
    assert_eq!(problem(&elsewhere), "The application cannot be used");
    assert!(elsewhere.body.contains("this realm does not take clients from 127.0.0.1"), "{}", elsewhere.body);
    assert!(agent.received().is_empty(), "a host the realm does not list is never asked for its document");

    take(&app, json!({ "metadataDocumentHosts": ["*.agents.example", "127.0.0.1"] })).await;
    let login = Browser::new(&app).authorize("acme", &asked).await;
    assert!(login.shows_login_form(), "{}", login.body);
    assert_eq!(agent.received().len(), 1);
    assert_eq!(agent.received()[0].header("accept"), "application/json");

    let refused = app.put("/realms/acme", json!({ "metadataDocumentHosts": ["Agents.example", "a..b"] })).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{:?}", refused.body);
}

#[tokio::test]
async fn a_person_signs_in_to_the_client_a_document_describes_and_allows_it_naming_its_host() {
    let app = service().await;
    take(&app, json!({ "clientIdMetadataDocuments": true, "metadataDocumentHosts": ["127.0.0.1"] })).await;
    let agent = published("max-age=300").await;
    let client = agent.url.as_str();
    let pkce = challenge(VERIFIER);
    let mut browser = Browser::new(&app);

    let login = browser.authorize("acme", &authorization(client, "mcp:tools", MCP, &pkce)).await;
    let asked = browser.sign_in("acme", &login, "ada", "analytical engine").await;
    assert!(asked.body.contains("Agent asks for access to your account"), "{}", asked.body);
    assert!(
        asked.body.contains("This application is served from 127.0.0.1."),
        "the document's host, not the redirect's scheme: {}",
        asked.body
    );
    let path = "/realms/acme/protocol/openid-connect/auth/consent";
    let allowed = browser.submit(path, &asked, &[("decision", "allow")]).await;
    let code = allowed.param("code").expect("a code");
    assert!(allowed.location.as_ref().unwrap().as_str().starts_with(NATIVE_REDIRECT));
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", client),
        ("code", code.as_str()),
        ("redirect_uri", NATIVE_REDIRECT),
        ("code_verifier", VERIFIER),
        ("resource", MCP),
    ];
    let tokens = token(&app, &form).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    let access = claims(tokens.body["access_token"].as_str().unwrap());
    assert_eq!((access["client_id"].as_str(), access["aud"].as_str()), (Some(client), Some(MCP)));

    // Administrators see it, marked as known by its document, and what it said of itself.
    let listed = app.get("/realms/acme/clients?registration=MetadataDocument").await;
    assert_eq!(listed.items().len(), 1, "{:?}", listed.body);
    let seen = app.get(&format!("/realms/acme/clients/{}", segment(client))).await;
    assert_eq!(seen.status, StatusCode::OK, "{:?}", seen.body);
    assert_eq!(
        (seen.data()["registration"].as_str(), seen.data()["type"].as_str()),
        (Some("MetadataDocument"), Some("Public"))
    );
    assert_eq!(seen.data()["registeredMetadata"]["application_type"], "native");
    let trail = app.get("/audit-trail?realmId=acme&action=Create&resourceType=client").await;
    let entry = &trail.items()[0];
    assert_eq!((entry["actorType"].as_str(), entry["actorCredentialName"].as_str()), (Some("Client"), Some(client)));

    // Asked for a scope the realm keeps from such clients, or a server closed to them: refused
    // back at the client by the policies.
    let wider = browser.authorize("acme", &authorization(client, "mcp:tools mcp:admin", MCP, &pkce)).await;
    assert_eq!(wider.param("error").as_deref(), Some("invalid_scope"), "{}", wider.body);
    let closed = browser.authorize("acme", &authorization(client, "mcp:tools", "https://orders.example", &pkce)).await;
    assert_eq!(closed.param("error").as_deref(), Some("invalid_target"), "{}", closed.body);

    // Disabled by an administrator, or the realm no longer taking documents: the client is
    // unknown at the login page and its refresh token stops working.
    let refresh = tokens.body["refresh_token"].as_str().unwrap().to_owned();
    let refreshing = [("grant_type", "refresh_token"), ("client_id", client), ("refresh_token", refresh.as_str())];
    take(&app, json!({ "clientIdMetadataDocuments": false })).await;
    assert_eq!(token(&app, &refreshing).await.body["error"], "invalid_client");
    take(&app, json!({ "clientIdMetadataDocuments": true })).await;
    let refreshed = token(&app, &refreshing).await;
    assert_eq!(refreshed.status, StatusCode::OK, "{:?}", refreshed.body);
    let path = format!("/realms/acme/clients/{}", segment(client));
    assert_eq!(app.put(&path, json!({ "status": "Disabled" })).await.status, StatusCode::OK);
    let unknown = browser.authorize("acme", &authorization(client, "mcp:tools", MCP, &pkce)).await;
    assert_eq!(problem(&unknown), "The application is not known");
    let refresh = refreshed.body["refresh_token"].as_str().unwrap().to_owned();
    let refreshing = [("grant_type", "refresh_token"), ("client_id", client), ("refresh_token", refresh.as_str())];
    assert_eq!(token(&app, &refreshing).await.body["error"], "invalid_client");
    assert_eq!(agent.received().len(), 1, "a disabled client's document is not read again");
}

#[tokio::test]
async fn a_document_is_kept_as_long_as_its_cache_control_allows_and_a_change_is_in_the_trail() {
    let app = service().await;
    take(&app, json!({ "clientIdMetadataDocuments": true, "metadataDocumentHosts": ["127.0.0.1"] })).await;
    let agent = published("max-age=120").await;
    let pkce = challenge(VERIFIER);
    let asked = authorization(&agent.url, "mcp:tools", MCP, &pkce);
    for _ in 0..2 {
        assert!(Browser::new(&app).authorize("acme", &asked).await.shows_login_form());
    }
    assert_eq!(agent.received().len(), 1, "kept for its max-age");

    // Past its max-age, it is read again; the client changes as the document did.
    let moved = "com.example.agent:/moved";
    agent.serve(document(&agent.url, &[moved]), "no-store");
    app.advance(121).await;
    let gone = Browser::new(&app).authorize("acme", &asked).await;
    assert_eq!(problem(&gone), "The return address is not registered");
    assert_eq!(agent.received().len(), 2);
    let seen = app.get(&format!("/realms/acme/clients/{}", segment(&agent.url))).await;
    assert_eq!(seen.data()["clientConfiguration"]["redirectUris"], json!([moved]));
    let trail = app.get("/audit-trail?realmId=acme&action=Update&resourceType=client").await;
    assert_eq!(trail.items()[0]["actorCredentialName"].as_str(), Some(agent.url.as_str()), "{:?}", trail.body);
    // A document that may not be stored is read at every request.
    Browser::new(&app).authorize("acme", &asked).await;
    assert_eq!(agent.received().len(), 3);

    // A document that cannot be read any more leaves the client unusable: nothing is redirected.
    agent.answer_with(404);
    let unreadable = Browser::new(&app).authorize("acme", &asked).await;
    assert_eq!(problem(&unreadable), "The application cannot be used");
    assert!(unreadable.body.contains("answered 404"), "{}", unreadable.body);
}

#[tokio::test]
async fn documents_that_break_the_rules_are_refused_and_nothing_is_stored() {
    let app = service().await;
    take(&app, json!({ "clientIdMetadataDocuments": true, "metadataDocumentHosts": ["127.0.0.1"] })).await;
    let agent = Receiver::start().await;
    let pkce = challenge(VERIFIER);
    let address = agent.url.clone();
    let cases = [
        (
            json!({ "client_id": "https://elsewhere.example/agent.json", "redirect_uris": [NATIVE_REDIRECT] }),
            "its client_id is not the address",
        ),
        (
            {
                let mut d = document(&address, &[NATIVE_REDIRECT]);
                d["client_secret"] = json!("s");
                d
            },
            "client secret",
        ),
        (
            {
                let mut d = document(&address, &[NATIVE_REDIRECT]);
                d["token_endpoint_auth_method"] = json!("client_secret_basic");
                d
            },
            "none or private_key_jwt",
        ),
        (
            {
                let mut d = document(&address, &["http://127.0.0.1:9/cb"]);
                d["application_type"] = json!("web");
                d
            },
            "web application",
        ),
        (
            {
                let mut d = document(&address, &[NATIVE_REDIRECT]);
                d["scope"] = json!("mcp:admin");
                d
            },
            "does not let self-registered clients have these scopes: mcp:admin",
        ),
        (
            json!({ "client_id": address, "client_name": "x".repeat(6000), "redirect_uris": [NATIVE_REDIRECT] }),
            "more than 5 KiB",
        ),
        (json!(["not", "an", "object"]), "not a JSON object"),
        (json!({ "client_id": address, "client_name": "agent\u{0}", "redirect_uris": [NATIVE_REDIRECT] }), "U+0000"),
    ];
    for (served, why) in cases {
        agent.serve(served, "max-age=300");
        let page = Browser::new(&app).authorize("acme", &authorization(&address, "mcp:tools", MCP, &pkce)).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{why}");
        assert!(page.body.contains(why), "{why}: {}", page.body);
    }
    for malformed in ["http://127.0.0.1/agent.json", "https://127.0.0.1", "https://127.0.0.1/a/../agent.json"] {
        let page = Browser::new(&app).authorize("acme", &authorization(malformed, "mcp:tools", MCP, &pkce)).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{malformed}: {}", page.body);
    }
    assert!(app.get("/realms/acme/clients?registration=MetadataDocument").await.items().is_empty());
}

#[tokio::test]
async fn an_operators_own_policy_narrows_what_such_clients_get() {
    // The shipped policies, and one more: agents served from 127.0.0.1 never get mcp:admin.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("policies-{}", uuid::Uuid::new_v4()));
    castellan::authz::PolicyFiles::shipped().export(&dir).unwrap();
    let narrowing = r#"@id("no-admin-scope-for-loopback-agents")
@errorCode("invalid_scope")
@precedence("3")
forbid (principal, action == Castellan::Action::"admit", resource)
when { context.host == "127.0.0.1" && context.scopes.contains("mcp:admin") };
"#;
    std::fs::write(dir.join("narrowing.cedar"), narrowing).unwrap();
    let policies = castellan::authz::PolicyFiles::read(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let app = service_with(policies).await;
    let settings = json!({
        "clientIdMetadataDocuments": true, "metadataDocumentHosts": ["127.0.0.1"],
        "registrationScopes": ["mcp:tools", "mcp:admin"],
    });
    take(&app, settings).await;
    let agent = published("max-age=300").await;
    let pkce = challenge(VERIFIER);
    let admin =
        Browser::new(&app).authorize("acme", &authorization(&agent.url, "mcp:tools mcp:admin", MCP, &pkce)).await;
    assert_eq!(admin.param("error").as_deref(), Some("invalid_scope"), "{}", admin.body);
    let tools = Browser::new(&app).authorize("acme", &authorization(&agent.url, "mcp:tools", MCP, &pkce)).await;
    assert!(tools.shows_login_form(), "{}", tools.body);
}

#[tokio::test]
async fn a_document_may_name_keys_the_client_then_proves_itself_with() {
    let app = service().await;
    take(&app, json!({ "clientIdMetadataDocuments": true, "metadataDocumentHosts": ["127.0.0.1"] })).await;
    let agent = Receiver::start().await;
    let (key, jwk) = ClientKey::new("agent-key");
    let mut served = document(&agent.url, &[NATIVE_REDIRECT]);
    served["token_endpoint_auth_method"] = json!("private_key_jwt");
    served["jwks"] = json!({ "keys": [jwk] });
    agent.serve(served, "max-age=300");
    let client = agent.url.as_str();
    let pkce = challenge(VERIFIER);
    let mut browser = Browser::new(&app);
    let login = browser.authorize("acme", &authorization(client, "mcp:tools", MCP, &pkce)).await;
    let asked = browser.sign_in("acme", &login, "ada", "analytical engine").await;
    let path = "/realms/acme/protocol/openid-connect/auth/consent";
    let code = browser.submit(path, &asked, &[("decision", "allow")]).await.param("code").expect("a code");
    let seen = app.get(&format!("/realms/acme/clients/{}", segment(client))).await;
    assert_eq!(seen.data()["type"], "Confidential", "{:?}", seen.body);

    let exchange = |assertion: Option<String>| {
        let mut form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("client_id", client.to_owned()),
            ("code", code.clone()),
            ("redirect_uri", NATIVE_REDIRECT.to_owned()),
            ("code_verifier", VERIFIER.to_owned()),
        ];
        if let Some(assertion) = assertion {
            form.push(("client_assertion_type", ASSERTION_TYPE.to_owned()));
            form.push(("client_assertion", assertion));
        }
        let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
        let request = app.http.post(url).form(&form);
        async move { answer(request.send().await.unwrap()).await }
    };
    let unproven = exchange(None).await;
    assert_eq!(unproven.body["error"], "invalid_client", "a client holding keys proves itself: {:?}", unproven.body);
    let tokens = exchange(Some(key.assertion(&app, client, json!({})))).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    assert_eq!(claims(tokens.body["access_token"].as_str().unwrap())["client_id"], client);
}

/// Clients brought in by metadata documents count against the realm's bound on what anyone may add
/// in a minute, with those that register themselves.
#[tokio::test]
async fn documents_count_against_the_realms_bound_on_clients_anyone_adds() {
    let app = service().await;
    take(
        &app,
        json!({ "clientIdMetadataDocuments": true, "metadataDocumentHosts": ["127.0.0.1"],
                "selfRegisteredClientsPerMinute": 1 }),
    )
    .await;
    let (first, second) = (published("max-age=300").await, published("max-age=300").await);
    let pkce = challenge(VERIFIER);
    let page = Browser::new(&app).authorize("acme", &authorization(&first.url, "mcp:tools", MCP, &pkce)).await;
    assert_eq!(page.status, StatusCode::OK, "the first is taken: {}", page.body);
    let page = Browser::new(&app).authorize("acme", &authorization(&second.url, "mcp:tools", MCP, &pkce)).await;
    assert_eq!(page.status, StatusCode::TOO_MANY_REQUESTS, "{}", page.body);
    assert_eq!(problem(&page), "Try again later");
    assert!(second.received().is_empty(), "refused before its document is fetched");
    let again = Browser::new(&app).authorize("acme", &authorization(&first.url, "mcp:tools", MCP, &pkce)).await;
    assert_eq!(again.status, StatusCode::OK, "a client already known is not counted again");
    app.advance(60).await;
    let page = Browser::new(&app).authorize("acme", &authorization(&second.url, "mcp:tools", MCP, &pkce)).await;
    assert_eq!(page.status, StatusCode::OK, "the next minute: {}", page.body);
}

/// However many addresses ask, the host fetches a bounded number of documents at once: past it a
/// first use is told to come back, so a flood cannot hold every outgoing connection.
#[tokio::test]
async fn the_host_fetches_a_bounded_number_of_documents_at_once() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let app = service().await;
    take(&app, json!({ "clientIdMetadataDocuments": true, "metadataDocumentHosts": ["127.0.0.1"] })).await;
    // A document server that holds every request until it is let go.
    let held = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(tokio::sync::Notify::new());
    let (counting, waiting) = (held.clone(), release.clone());
    let router = axum::Router::new().fallback(move || {
        let (counting, waiting) = (counting.clone(), waiting.clone());
        async move {
            let released = waiting.notified();
            counting.fetch_add(1, Ordering::SeqCst);
            released.await;
            StatusCode::NOT_FOUND
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("https://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let server = crate::support::receiver::serve_tls(listener, router);
    let pkce = challenge(VERIFIER);
    let ask = |n: usize| {
        let (app_http, url) = (app.http.clone(), format!("{}/realms/acme/protocol/openid-connect/auth", app.base));
        let client = format!("{base}/agent-{n}.json");
        let pkce = pkce.clone();
        async move {
            let query = authorization(&client, "mcp:tools", MCP, &pkce);
            let request = app_http.get(url).query(&query).header("x-forwarded-for", format!("198.51.100.{n}"));
            request.send().await.unwrap().status()
        }
    };
    let fetches = castellan::oauth::metadata_documents::FETCHES_AT_ONCE;
    let waiting_ones: Vec<_> = (0..fetches).map(|n| tokio::spawn(ask(n))).collect();
    for _ in 0..100_000 {
        if held.load(Ordering::SeqCst) == fetches {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(held.load(Ordering::SeqCst), fetches, "every allowed fetch is under way");
    assert_eq!(ask(fetches + 1).await, StatusCode::TOO_MANY_REQUESTS, "one more is told to come back");
    release.notify_waiters();
    for waiting in waiting_ones {
        assert_eq!(waiting.await.unwrap(), StatusCode::BAD_REQUEST, "the held ones end with the document's 404");
    }
    server.abort();
}
