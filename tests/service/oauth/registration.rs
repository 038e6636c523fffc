//! Clients that register themselves (RFC 7591) and manage their registration (RFC 7592), and the
//! consent each person gives such a client: what an MCP client does on meeting a server it has
//! never seen.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::oauth::browser::{Browser, Page, REDIRECT, VERIFIER, challenge};
use crate::support::{Answer, TestApp, TestDatabase, answer, claims, spawn_app, spawn_with};

const MCP: &str = "https://mcp.example/mcp";

/// A POST of `body` to the realm's registration endpoint, with `token` as a bearer token.
async fn register(app: &TestApp, realm: &str, token: Option<&str>, body: Value) -> Answer {
    let url = format!("{}/realms/{realm}/protocol/openid-connect/register", app.base);
    let mut request = app.http.post(url).json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    answer(request.send().await.unwrap()).await
}

/// A call to a registered client's configuration endpoint with its registration access token.
async fn configuration(app: &TestApp, method: reqwest::Method, uri: &str, token: &str, body: Option<Value>) -> Answer {
    let mut request = app.http.request(method, uri).bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    answer(request.send().await.unwrap()).await
}

/// An MCP client's registration: public, PKCE, loopback redirect.
fn mcp_client(scope: &str) -> Value {
    json!({
        "client_name": "Claude Desktop",
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "scope": scope,
        "software_id": "claude-desktop",
        "software_version": "1.4.2",
    })
}

/// Realm `acme` taking registrations from anyone, with the MCP server's scopes open to them, the
/// MCP server accepting self-registered clients, and ada.
async fn open_realm(app: &TestApp) {
    app.create_realm("acme").await;
    app.create_scopes("acme", &["mcp:tools", "mcp:admin", "orders:read"]).await;
    let settings = json!({ "clientRegistration": "Open", "registrationScopes": ["mcp:tools", "mcp:admin"] });
    let updated = app.put("/realms/acme", settings).await;
    assert_eq!(updated.status, StatusCode::OK, "{:?}", updated.body);
    let server = json!({
        "name": "Tools", "address": MCP, "type": "McpServer", "scopes": ["mcp:tools", "mcp:admin"],
        "acceptsSelfRegisteredClients": true,
    });
    let created = app.post("/realms/acme/resource-servers", server).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert_eq!(created.data()["acceptsSelfRegisteredClients"], true);
    app.create_user("acme", "ada", "analytical engine").await;
}

#[tokio::test]
async fn a_realm_takes_registrations_only_once_its_setting_opens_them() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    assert_eq!(app.get("/realms/acme").await.data()["clientRegistration"], "Closed", "closed by default");
    assert!(app.discovery("acme").await.get("registration_endpoint").is_none(), "not announced while closed");
    let refused = register(&app, "acme", None, mcp_client("openid")).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{:?}", refused.body);
    assert_eq!(refused.body["error"], "access_denied");
    assert_eq!(refused.body["error_code"], "RegistrationClosed");
    assert!(app.get("/realms/acme/clients").await.items().is_empty(), "nothing was created");

    let scopes = app.put("/realms/acme", json!({ "registrationScopes": ["nowhere"] })).await;
    assert_eq!(scopes.status, StatusCode::BAD_REQUEST, "registration scopes must exist: {:?}", scopes.body);
    assert_eq!(app.put("/realms/acme", json!({ "clientRegistration": "Open" })).await.status, StatusCode::OK);
    let endpoint = app.discovery("acme").await["registration_endpoint"].clone();
    assert_eq!(endpoint, json!(format!("{}/realms/acme/protocol/openid-connect/register", app.base)));

    let registered = register(&app, "acme", None, mcp_client("openid profile")).await;
    assert_eq!(registered.status, StatusCode::CREATED, "{:?}", registered.body);
    assert_eq!(registered.headers["cache-control"], "no-store");
    let client = &registered.body;
    let id = client["client_id"].as_str().unwrap();
    assert!(client.get("client_secret").is_none(), "a public client has no secret");
    assert!(client["registration_access_token"].as_str().unwrap().starts_with("cstl_rat_"));
    assert_eq!(
        client["registration_client_uri"],
        json!(format!("{}/realms/acme/protocol/openid-connect/register/{id}", app.base))
    );
    assert_eq!(client["token_endpoint_auth_method"], "none");
    assert_eq!(client["grant_types"], json!(["authorization_code", "refresh_token"]));
    assert_eq!(client["software_id"], "claude-desktop");
    assert_eq!(client["client_name"], "Claude Desktop");

    // Administrators see it, marked as self-registered with what it said of itself.
    let seen = app.get(&format!("/realms/acme/clients/{id}")).await;
    assert_eq!(seen.data()["registration"], "Dynamic");
    assert_eq!(seen.data()["type"], "Public");
    assert_eq!(seen.data()["registeredMetadata"]["software_version"], "1.4.2");
    let own = app.post("/realms/acme/clients", json!({ "id": "web" })).await;
    assert_eq!(own.data()["registration"], "Admin");
    let listed = app.get("/realms/acme/clients?registration=Dynamic").await;
    let ids: Vec<&str> = listed.items().iter().map(|client| client["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![id], "administrators list self-registered clients apart");
    assert_eq!(app.get("/realms/acme/clients?registration=Admin").await.items()[0]["id"], "web");
    assert_eq!(app.get("/realms/acme/clients?registration=Other").await.status, StatusCode::BAD_REQUEST);
    let relabelled = app.put("/realms/acme/clients/web", json!({ "registration": "Dynamic" })).await;
    assert_eq!(relabelled.status, StatusCode::BAD_REQUEST, "{:?}", relabelled.body);

    // A confidential client gets a secret that never expires by itself.
    let body =
        json!({ "redirect_uris": ["https://agent.example/cb"], "token_endpoint_auth_method": "client_secret_post" });
    let confidential = register(&app, "acme", None, body).await;
    assert_eq!(confidential.status, StatusCode::CREATED, "{:?}", confidential.body);
    assert!(confidential.body["client_secret"].as_str().unwrap().starts_with("cstl_cs_"));
    assert_eq!(confidential.body["client_secret_expires_at"], 0);
    assert_eq!(confidential.body["grant_types"], json!(["authorization_code"]), "RFC 7591's default");
}

#[tokio::test]
async fn registrations_that_break_the_rules_are_refused_with_rfc_7591_errors() {
    // More refusals than the per-source limit lets through in a minute.
    let raise =
        |settings: &mut castellan::kernel::config::Settings| settings.admin_rate_limits.client_registrations = 100;
    let app = spawn_with(TestDatabase::new().await, raise).await;
    open_realm(&app).await;
    let refusals = [
        (json!({ "redirect_uris": ["http://agent.example/cb"] }), "invalid_redirect_uri"),
        (json!({ "redirect_uris": ["https://agent.example/cb#frag"] }), "invalid_redirect_uri"),
        (json!({ "grant_types": ["authorization_code"] }), "invalid_redirect_uri"),
        (json!({ "redirect_uris": [REDIRECT], "scope": "orders:read" }), "invalid_client_metadata"),
        (json!({ "redirect_uris": [REDIRECT], "grant_types": ["client_credentials"] }), "invalid_client_metadata"),
        (json!({ "redirect_uris": [REDIRECT], "grant_types": ["password"] }), "invalid_client_metadata"),
        (json!({ "redirect_uris": [REDIRECT], "response_types": ["token"] }), "invalid_client_metadata"),
        (
            json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt" }),
            "invalid_client_metadata",
        ),
        (
            json!({ "redirect_uris": [REDIRECT], "logo_uri": "http://agent.example/logo.png" }),
            "invalid_client_metadata",
        ),
        (json!({ "redirect_uris": [REDIRECT], "client_name": 7 }), "invalid_client_metadata"),
        (json!(["not", "an", "object"]), "invalid_client_metadata"),
    ];
    for (body, error) in refusals {
        let refused = register(&app, "acme", None, body.clone()).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{body}: {:?}", refused.body);
        assert_eq!(refused.body["error"], error, "{body}: {:?}", refused.body);
        assert!(refused.body["error_description"].as_str().is_some_and(|d| !d.is_empty()));
    }
    let url = format!("{}/realms/acme/protocol/openid-connect/register", app.base);
    let not_json = app.http.post(&url).header("content-type", "application/json").body("{").send().await.unwrap();
    assert_eq!(answer(not_json).await.body["error"], "invalid_client_metadata");
    let form = app.http.post(&url).form(&[("redirect_uris", REDIRECT)]).send().await.unwrap();
    let form = answer(form).await;
    assert_eq!((form.status, form.body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_request")));
    assert_eq!(app.get("/realms/acme/clients").await.items().len(), 0, "no refused registration left a client");
}

#[tokio::test]
async fn an_initial_access_token_registers_as_many_clients_as_it_allows_until_it_expires() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.put("/realms/acme", json!({ "clientRegistration": "InitialAccessToken" })).await;
    let refused = register(&app, "acme", None, mcp_client("openid")).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{:?}", refused.body);
    assert_eq!(refused.headers["www-authenticate"], "Bearer error=\"invalid_token\"");

    let created =
        app.post("/realms/acme/initial-access-tokens", json!({ "registrations": 2, "expiresInDays": 7 })).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let token = created.data()["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("cstl_iat_"));
    for _ in 0..2 {
        let registered = register(&app, "acme", Some(&token), mcp_client("openid")).await;
        assert_eq!(registered.status, StatusCode::CREATED, "{:?}", registered.body);
    }
    let spent = register(&app, "acme", Some(&token), mcp_client("openid")).await;
    assert_eq!(spent.status, StatusCode::UNAUTHORIZED, "used up: {:?}", spent.body);
    let listed = app.get("/realms/acme/initial-access-tokens").await;
    assert_eq!(listed.items()[0]["remainingRegistrations"], 0);
    assert!(listed.items()[0].get("token").is_none(), "shown once");
    let wrong = register(&app, "acme", Some("cstl_iat_guessed"), mcp_client("openid")).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);

    let later =
        app.post("/realms/acme/initial-access-tokens", json!({})).await.data()["token"].as_str().unwrap().to_owned();
    app.advance(7 * 86_400 + 1).await;
    let expired = register(&app, "acme", Some(&later), mcp_client("openid")).await;
    assert_eq!(expired.status, StatusCode::UNAUTHORIZED, "expired after its days: {:?}", expired.body);

    let fresh = app.post("/realms/acme/initial-access-tokens", json!({})).await;
    let (id, fresh) =
        (fresh.data()["id"].as_str().unwrap().to_owned(), fresh.data()["token"].as_str().unwrap().to_owned());
    assert_eq!(app.delete(&format!("/realms/acme/initial-access-tokens/{id}")).await.status, StatusCode::OK);
    let deleted = register(&app, "acme", Some(&fresh), mcp_client("openid")).await;
    assert_eq!(deleted.status, StatusCode::UNAUTHORIZED, "a deleted token registers nothing");
    let bounds =
        app.post("/realms/acme/initial-access-tokens", json!({ "registrations": 0, "expiresInDays": 366 })).await;
    assert_eq!(bounds.status, StatusCode::BAD_REQUEST);
    assert_eq!(bounds.refused_fields().len(), 2, "{:?}", bounds.body);
    assert_eq!(app.get("/realms/acme/clients").await.items().len(), 2);
}

#[tokio::test]
async fn a_registered_client_reads_replaces_and_deletes_its_own_registration() {
    let app = spawn_app().await;
    open_realm(&app).await;
    let registered = register(&app, "acme", None, mcp_client("mcp:tools")).await.body;
    let (id, token) =
        (registered["client_id"].as_str().unwrap(), registered["registration_access_token"].as_str().unwrap());
    let uri = registered["registration_client_uri"].as_str().unwrap();

    let read = configuration(&app, reqwest::Method::GET, uri, token, None).await;
    assert_eq!(read.status, StatusCode::OK, "{:?}", read.body);
    assert_eq!(read.body["scope"], "mcp:tools mcp:admin", "every scope the realm opens, each with consent");
    assert!(read.body.get("registration_access_token").is_none(), "shown once");
    let other = register(&app, "acme", None, mcp_client("openid")).await.body;
    let stolen =
        configuration(&app, reqwest::Method::GET, uri, other["registration_access_token"].as_str().unwrap(), None)
            .await;
    assert_eq!(stolen.status, StatusCode::UNAUTHORIZED, "another client's token manages nothing of this one");

    let mut changed = mcp_client("mcp:tools mcp:admin");
    changed["client_id"] = json!(id);
    changed["client_name"] = json!("Claude Code");
    let replaced = configuration(&app, reqwest::Method::PUT, uri, token, Some(changed.clone())).await;
    assert_eq!(replaced.status, StatusCode::OK, "{:?}", replaced.body);
    assert_eq!(replaced.body["client_name"], "Claude Code");
    assert_eq!(
        app.get(&format!("/realms/acme/clients/{id}")).await.data()["clientConfiguration"]["allowedScopes"],
        json!(["mcp:tools", "mcp:admin"])
    );
    let mut renamed = changed.clone();
    renamed["client_id"] = json!("someone-else");
    let mismatch = configuration(&app, reqwest::Method::PUT, uri, token, Some(renamed)).await;
    assert_eq!(mismatch.body["error"], "invalid_client_metadata");
    let mut confidential = changed.clone();
    confidential["token_endpoint_auth_method"] = json!("client_secret_basic");
    let switched = configuration(&app, reqwest::Method::PUT, uri, token, Some(confidential)).await;
    assert_eq!(switched.body["error"], "invalid_client_metadata", "{:?}", switched.body);

    // The trail names the client as the author of its own changes.
    let trail = app.get("/audit-trail?realmId=acme&action=Update").await;
    let entry = trail.items().iter().find(|e| e["resourceId"] == id).expect("the update is in the trail");
    assert_eq!((entry["actorType"].as_str(), entry["actorCredentialName"].as_str()), (Some("Client"), Some(id)));

    // Disabled by an administrator, it manages nothing and signs no one in.
    app.put(&format!("/realms/acme/clients/{id}"), json!({ "status": "Disabled" })).await;
    assert_eq!(configuration(&app, reqwest::Method::GET, uri, token, None).await.status, StatusCode::UNAUTHORIZED);
    app.put(&format!("/realms/acme/clients/{id}"), json!({ "status": "Active" })).await;

    let deleted = configuration(&app, reqwest::Method::DELETE, uri, token, None).await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{:?}", deleted.body);
    assert_eq!(configuration(&app, reqwest::Method::GET, uri, token, None).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(app.get(&format!("/realms/acme/clients/{id}")).await.status, StatusCode::FORBIDDEN, "gone");
}

#[tokio::test]
async fn registrations_from_one_address_are_limited_to_ten_a_minute() {
    let app = spawn_app().await;
    open_realm(&app).await;
    for _ in 0..10 {
        assert_eq!(register(&app, "acme", None, mcp_client("openid")).await.status, StatusCode::CREATED);
    }
    let limited = register(&app, "acme", None, mcp_client("openid")).await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS, "{:?}", limited.body);
    assert!(limited.headers.contains_key("retry-after"));
    app.advance(6).await;
    assert_eq!(register(&app, "acme", None, mcp_client("openid")).await.status, StatusCode::CREATED, "one a 6 s back");
}

/// Where a public client's authorization request goes: the MCP server as resource, PKCE.
fn authorization<'a>(client: &'a str, scope: &'a str, pkce: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client),
        ("redirect_uri", REDIRECT),
        ("scope", scope),
        ("state", "s"),
        ("code_challenge", pkce),
        ("code_challenge_method", "S256"),
        ("resource", MCP),
    ]
}

/// A public client's exchange of a code, naming the resource as the MCP SDK does.
async fn exchange(app: &TestApp, client: &str, code: &str) -> Answer {
    exchange_for(app, client, code, MCP).await
}

async fn exchange_for(app: &TestApp, client: &str, code: &str, resource: &str) -> Answer {
    let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", client),
        ("code", code),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
        ("resource", resource),
    ];
    answer(app.http.post(url).form(&form).send().await.unwrap()).await
}

fn consent_path() -> &'static str {
    "/realms/acme/protocol/openid-connect/auth/consent"
}

/// The items of the consent page's list introduced by `sentence`.
fn listed(page: &Page, sentence: &str) -> Vec<String> {
    let Some(at) = page.body.find(&format!("<p>{sentence}</p>")) else { return Vec::new() };
    let list = &page.body[at..];
    let list = &list[list.find("<ul>").unwrap()..list.find("</ul>").unwrap()];
    list.split("<li>").skip(1).map(|item| item.trim_end_matches("</li>").to_owned()).collect()
}

#[tokio::test]
async fn a_person_consents_to_a_self_registered_client_once_and_again_only_for_more_scopes() {
    let app = spawn_app().await;
    open_realm(&app).await;
    let client = register(&app, "acme", None, mcp_client("mcp:tools mcp:admin")).await.body["client_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let pkce = challenge(VERIFIER);
    let mut browser = Browser::new(&app);

    let login = browser.authorize("acme", &authorization(&client, "mcp:tools", &pkce)).await;
    assert!(login.shows_login_form(), "{}", login.body);
    let asked = browser.sign_in("acme", &login, "ada", "analytical engine").await;
    assert_eq!(asked.status, StatusCode::OK, "the consent page, not a code: {:?}", asked.location);
    assert!(asked.body.contains("Claude Desktop asks for access to your account"), "{}", asked.body);
    assert!(asked.body.contains("This application is served from 127.0.0.1."), "{}", asked.body);
    assert!(asked.body.contains(&format!("For use at {MCP}.")), "{}", asked.body);
    assert_eq!(listed(&asked, "It asks for:"), vec!["mcp:tools"]);
    let allowed = browser.submit(consent_path(), &asked, &[("decision", "allow")]).await;
    assert_eq!(allowed.status, StatusCode::SEE_OTHER, "{}", allowed.body);
    let tokens = exchange(&app, &client, &allowed.param("code").unwrap()).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    let access = claims(tokens.body["access_token"].as_str().unwrap());
    assert_eq!((access["aud"].as_str(), access["scope"].as_str()), (Some(MCP), Some("mcp:tools")));
    let refresh = tokens.body["refresh_token"].as_str().unwrap().to_owned();

    // Asked again for what was allowed: answered at once.
    let again = browser.authorize("acme", &authorization(&client, "mcp:tools", &pkce)).await;
    assert_eq!(again.status, StatusCode::SEE_OTHER, "{}", again.body);
    // A code is exchanged only for the resource it was asked for (RFC 8707 §2.2).
    let elsewhere = exchange_for(&app, &client, &again.param("code").unwrap(), "https://orders.example").await;
    assert_eq!(elsewhere.body["error"], "invalid_target", "{:?}", elsewhere.body);
    let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let form = [
        ("grant_type", "refresh_token"),
        ("client_id", client.as_str()),
        ("refresh_token", refresh.as_str()),
        ("resource", "https://orders.example"),
    ];
    let narrowed = answer(app.http.post(&url).form(&form).send().await.unwrap()).await;
    assert_eq!(narrowed.body["error"], "invalid_target", "a refresh keeps its resource: {:?}", narrowed.body);

    // A step-up asks only for what is missing; denied, the client hears access_denied.
    let none = browser
        .authorize("acme", &[authorization(&client, "mcp:tools mcp:admin", &pkce), vec![("prompt", "none")]].concat())
        .await;
    assert_eq!(none.param("error").as_deref(), Some("consent_required"));
    let step_up = browser.authorize("acme", &authorization(&client, "mcp:tools mcp:admin", &pkce)).await;
    assert_eq!(listed(&step_up, "It asks for:"), vec!["mcp:admin"]);
    assert_eq!(listed(&step_up, "You allowed it earlier:"), vec!["mcp:tools"]);
    let denied = browser.submit(consent_path(), &step_up, &[("decision", "deny")]).await;
    assert_eq!(denied.param("error").as_deref(), Some("access_denied"));
    assert_eq!(denied.param("state").as_deref(), Some("s"));
    let step_up = browser.authorize("acme", &authorization(&client, "mcp:tools mcp:admin", &pkce)).await;
    let allowed = browser.submit(consent_path(), &step_up, &[("decision", "allow")]).await;
    let tokens = exchange(&app, &client, &allowed.param("code").unwrap()).await;
    assert_eq!(claims(tokens.body["access_token"].as_str().unwrap())["scope"], "mcp:tools mcp:admin");

    // An answer without a decision, or from a browser no longer signed in, issues nothing.
    let step_up = browser
        .authorize("acme", &[authorization(&client, "mcp:tools", &pkce), vec![("prompt", "consent")]].concat())
        .await;
    assert_eq!(listed(&step_up, "You allowed it earlier:"), vec!["mcp:tools"], "prompt=consent asks again");
    let unread = browser.submit(consent_path(), &step_up, &[("decision", "maybe")]).await;
    assert_eq!(unread.status, StatusCode::BAD_REQUEST);
    let mut stranger = Browser::new(&app);
    stranger.cookies = browser.cookies.clone();
    stranger.cookies.remove("castellan_session");
    let signed_out = stranger.submit(consent_path(), &step_up, &[("decision", "allow")]).await;
    assert!(signed_out.shows_login_form() && signed_out.location.is_none(), "{}", signed_out.body);

    // Administrators see the consent and withdraw it: the client's refresh tokens stop working and
    // the next sign-in asks again.
    let ada = app.get("/realms/acme/users?searchTerm=ada").await.items()[0]["id"].as_str().unwrap().to_owned();
    let consents = app.get(&format!("/realms/acme/users/{ada}/consents")).await;
    assert_eq!(
        consents.data(),
        &json!([{
            "clientId": client, "resource": MCP, "scopes": ["mcp:tools", "mcp:admin"],
            "createdAt": consents.data()[0]["createdAt"], "updatedAt": consents.data()[0]["updatedAt"],
        }])
    );
    let withdrawn = app.delete(&format!("/realms/acme/users/{ada}/consents/{client}")).await;
    assert_eq!(withdrawn.status, StatusCode::OK, "{:?}", withdrawn.body);
    assert_eq!(app.delete(&format!("/realms/acme/users/{ada}/consents/{client}")).await.status, StatusCode::NOT_FOUND);
    let form = [("grant_type", "refresh_token"), ("client_id", client.as_str()), ("refresh_token", refresh.as_str())];
    let refreshed = answer(app.http.post(&url).form(&form).send().await.unwrap()).await;
    assert_eq!(refreshed.body["error"], "invalid_grant", "{:?}", refreshed.body);
    let asked_again = browser.authorize("acme", &authorization(&client, "mcp:tools", &pkce)).await;
    assert_eq!(listed(&asked_again, "It asks for:"), vec!["mcp:tools"]);
}

#[tokio::test]
async fn a_self_registered_client_reaches_only_servers_that_accept_such_clients() {
    let app = spawn_app().await;
    open_realm(&app).await;
    let server = json!({ "name": "Orders", "address": "https://orders.example", "scopes": ["mcp:tools"] });
    assert_eq!(app.post("/realms/acme/resource-servers", server).await.status, StatusCode::CREATED);
    let client =
        register(&app, "acme", None, mcp_client("mcp:tools")).await.body["client_id"].as_str().unwrap().to_owned();
    let pkce = challenge(VERIFIER);
    let mut asked = authorization(&client, "mcp:tools", &pkce);
    asked.retain(|(name, _)| *name != "resource");
    asked.push(("resource", "https://orders.example"));
    let refused = Browser::new(&app).authorize("acme", &asked).await;
    assert_eq!(refused.param("error").as_deref(), Some("invalid_target"), "{}", refused.body);
}

#[tokio::test]
async fn a_person_lists_and_withdraws_their_consents_with_a_token_of_the_realms_own_client() {
    let app = spawn_app().await;
    open_realm(&app).await;
    let client =
        register(&app, "acme", None, mcp_client("mcp:tools")).await.body["client_id"].as_str().unwrap().to_owned();
    let pkce = challenge(VERIFIER);
    let mut browser = Browser::new(&app);
    let login = browser.authorize("acme", &authorization(&client, "mcp:tools", &pkce)).await;
    let asked = browser.sign_in("acme", &login, "ada", "analytical engine").await;
    let allowed = browser.submit(consent_path(), &asked, &[("decision", "allow")]).await;
    let third_party = exchange(&app, &client, &allowed.param("code").unwrap()).await.body["access_token"]
        .as_str()
        .unwrap()
        .to_owned();

    let portal = app.create_client("acme", "portal", &["password"], &[]).await;
    let own =
        app.token(&portal, &[("grant_type", "password"), ("username", "ada"), ("password", "analytical engine")]).await;
    let own = own.body["access_token"].as_str().unwrap().to_owned();
    let consents = format!("{}/realms/acme/account/consents", app.base);
    let listed = answer(app.http.get(&consents).bearer_auth(&own).send().await.unwrap()).await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    assert_eq!(listed.body["consents"][0]["client_id"], client);
    assert_eq!(listed.body["consents"][0]["scopes"], json!(["mcp:tools"]));
    let by_agent = answer(app.http.get(&consents).bearer_auth(&third_party).send().await.unwrap()).await;
    assert_eq!(by_agent.status, StatusCode::UNAUTHORIZED, "a third party reads no consents");
    let anonymous = answer(app.http.get(&consents).send().await.unwrap()).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);

    let one = format!("{consents}/{client}");
    let withdrawn = app.http.delete(&one).bearer_auth(&own).send().await.unwrap();
    assert_eq!(withdrawn.status(), StatusCode::NO_CONTENT);
    let again = answer(app.http.delete(&one).bearer_auth(&own).send().await.unwrap()).await;
    assert_eq!((again.status, again.body["error_code"].as_str()), (StatusCode::NOT_FOUND, Some("ConsentNotFound")));
    let introspected = app.protocol(&portal, "token/introspect", &[("token", &third_party)]).await;
    assert_eq!(introspected.body["active"], false, "the client's session of the person ended: {:?}", introspected.body);
    let listed = answer(app.http.get(&consents).bearer_auth(&own).send().await.unwrap()).await;
    assert_eq!(listed.body["consents"], json!([]));

    // A client deleted takes the consents given to it along.
    let pkce = challenge(VERIFIER);
    let again = browser.authorize("acme", &authorization(&client, "mcp:tools", &pkce)).await;
    browser.submit(consent_path(), &again, &[("decision", "allow")]).await;
    let listed = answer(app.http.get(&consents).bearer_auth(&own).send().await.unwrap()).await;
    assert_eq!(listed.body["consents"].as_array().unwrap().len(), 1);
    assert_eq!(app.delete(&format!("/realms/acme/clients/{client}")).await.status, StatusCode::OK);
    let listed = answer(app.http.get(&consents).bearer_auth(&own).send().await.unwrap()).await;
    assert_eq!(listed.body["consents"], json!([]), "no consent outlives its client");
}

#[tokio::test]
async fn a_person_withdraws_an_application_on_the_page_of_what_they_allowed() {
    let app = spawn_app().await;
    open_realm(&app).await;
    let client =
        register(&app, "acme", None, mcp_client("mcp:tools")).await.body["client_id"].as_str().unwrap().to_owned();
    let pkce = challenge(VERIFIER);
    let page = "/realms/acme/account/applications";
    let mut stranger = Browser::new(&app);
    let refused = stranger.visit(page, &[]).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert!(refused.body.contains("You are not signed in"), "{}", refused.body);

    let mut browser = Browser::new(&app);
    let login = browser.authorize("acme", &authorization(&client, "mcp:tools", &pkce)).await;
    let asked = browser.sign_in("acme", &login, "ada", "analytical engine").await;
    let allowed = browser.submit(consent_path(), &asked, &[("decision", "allow")]).await;
    let refresh = exchange(&app, &client, &allowed.param("code").unwrap()).await.body["refresh_token"].clone();

    let listed = browser.visit(page, &[]).await;
    assert_eq!(listed.status, StatusCode::OK);
    assert!(listed.body.contains("<h2>Claude Desktop</h2>"), "{}", listed.body);
    assert!(listed.body.contains(&format!("mcp:tools (For use at {MCP})")), "{}", listed.body);
    let policy = listed.policy.clone().unwrap();
    assert!(policy.contains("frame-ancestors 'none'") && policy.contains("form-action 'self'"), "{policy}");

    // A withdrawal posted from elsewhere (no CSRF token of this browser) changes nothing.
    let mut forged = Browser::new(&app);
    forged.cookies.insert("castellan_session".into(), browser.cookies["castellan_session"].clone());
    let kept = forged.submit(page, &listed, &[]).await;
    assert!(kept.body.contains("This form has expired"), "{}", kept.body);
    let ada = app.get("/realms/acme/users?searchTerm=ada").await.items()[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(app.get(&format!("/realms/acme/users/{ada}/consents")).await.data().as_array().unwrap().len(), 1);

    let withdrawn = browser.submit(page, &listed, &[]).await;
    assert!(withdrawn.body.contains("Access withdrawn"), "{}", withdrawn.body);
    assert!(withdrawn.body.contains("You have allowed no application."), "{}", withdrawn.body);
    assert_eq!(app.get(&format!("/realms/acme/users/{ada}/consents")).await.data(), &json!([]));
    let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let form =
        [("grant_type", "refresh_token"), ("client_id", client.as_str()), ("refresh_token", refresh.as_str().unwrap())];
    let refreshed = answer(app.http.post(url).form(&form).send().await.unwrap()).await;
    assert_eq!(refreshed.body["error"], "invalid_grant", "the application is signed out: {:?}", refreshed.body);
}

/// Two applications of the same name are told apart on the page of what the person allowed: by
/// where each is served from, and since when it is allowed.
#[tokio::test]
async fn two_applications_of_the_same_name_are_told_apart_on_the_page_of_what_was_allowed() {
    let app = spawn_app().await;
    open_realm(&app).await;
    let first =
        register(&app, "acme", None, mcp_client("mcp:tools")).await.body["client_id"].as_str().unwrap().to_owned();
    let mut elsewhere = mcp_client("mcp:tools");
    elsewhere["redirect_uris"] = json!(["http://localhost:9/callback", REDIRECT]);
    let second = register(&app, "acme", None, elsewhere).await.body["client_id"].as_str().unwrap().to_owned();
    let pkce = challenge(VERIFIER);
    let mut browser = Browser::new(&app);
    let login = browser.authorize("acme", &authorization(&first, "mcp:tools", &pkce)).await;
    let asked = browser.sign_in("acme", &login, "ada", "analytical engine").await;
    browser.submit(consent_path(), &asked, &[("decision", "allow")]).await;
    app.advance(3600).await;
    let asked = browser.authorize("acme", &authorization(&second, "mcp:tools", &pkce)).await;
    browser.submit(consent_path(), &asked, &[("decision", "allow")]).await;

    let listed = browser.visit("/realms/acme/account/applications", &[]).await;
    let names: Vec<&str> = listed.body.split("<h2>").skip(1).filter_map(|rest| rest.split("</h2>").next()).collect();
    assert_eq!(names.len(), 2, "{}", listed.body);
    assert_ne!(names[0], names[1], "told apart: {names:?}");
    assert!(names.iter().any(|name| name.starts_with("Claude Desktop (127.0.0.1; allowed since ")), "{names:?}");
    assert!(names.iter().any(|name| name.starts_with("Claude Desktop (localhost; allowed since ")), "{names:?}");
}

/// A registration from another address (behind the trusted proxy the tests run behind).
async fn register_from(app: &TestApp, address: &str, body: Value) -> Answer {
    let url = format!("{}/realms/acme/protocol/openid-connect/register", app.base);
    answer(app.http.post(url).header("x-forwarded-for", address).json(&body).send().await.unwrap()).await
}

/// A flood of registrations from addresses that change each time: the realm bounds what anyone may
/// add in a minute and in all, and however many clients register, the realm's JWKS holds its own
/// key alone, which signs every one of their tokens.
#[tokio::test]
async fn registrations_are_bounded_per_realm_and_never_grow_its_jwks() {
    let app = spawn_app().await;
    open_realm(&app).await;
    let bounds = json!({ "selfRegisteredClientsPerMinute": 25, "maxSelfRegisteredClients": 40 });
    assert_eq!(app.put("/realms/acme", bounds).await.status, StatusCode::OK);
    let machine = mcp_client("openid");
    let mut registered = Vec::new();
    let mut next = 0;
    let mut flood = async |count: usize| {
        let mut answers = Vec::new();
        for _ in 0..count {
            next += 1;
            answers.push(register_from(&app, &format!("2001:db8:{next:x}::1"), machine.clone()).await);
        }
        answers
    };
    for answer in flood(25).await {
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
        registered.push(answer.body);
    }
    let minute = flood(1).await.remove(0);
    assert_eq!(minute.status, StatusCode::TOO_MANY_REQUESTS, "the realm's minute is spent: {:?}", minute.body);
    assert!(minute.headers.contains_key("retry-after"));
    app.advance(60).await;
    for answer in flood(15).await {
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.body);
    }
    let all = flood(1).await.remove(0);
    assert_eq!(all.status, StatusCode::TOO_MANY_REQUESTS, "forty in all: {:?}", all.body);

    // A token of the realm's own client, and the keys that would sign a registered client's.
    let web = app.create_client("acme", "web", &["client_credentials"], &[]).await;
    let token = app.token(&web, &[("grant_type", "client_credentials")]).await.body["access_token"].clone();
    let kid = jsonwebtoken::decode_header(token.as_str().unwrap()).unwrap().kid.unwrap();
    for client in registered.iter().take(5) {
        let path = format!("/realms/acme/clients/{}/signing-keys", client["client_id"].as_str().unwrap());
        let keys = app.get(&path).await;
        assert_eq!(keys.data()[0]["owner"], "Realm", "{:?}", keys.body);
        assert_eq!(keys.data()[0]["id"], kid.as_str(), "the realm's key signs for every registered client");
    }
    let jwks = app.jwks("acme").await;
    assert_eq!(jwks["keys"].as_array().unwrap().len(), 1, "forty clients, one key: {jwks}");
}

/// A native app registers its loopback redirect URI once and listens on whatever port the system
/// gives it at each sign-in (RFC 8252 §7.3): any port matches, nothing else does.
#[tokio::test]
async fn a_native_apps_loopback_redirect_matches_on_any_port() {
    let app = spawn_app().await;
    open_realm(&app).await;
    let mut body = mcp_client("mcp:tools");
    body["redirect_uris"] = json!(["http://127.0.0.1/callback"]);
    let registered = register(&app, "acme", None, body).await;
    assert_eq!(registered.status, StatusCode::CREATED, "{:?}", registered.body);
    let client = registered.body["client_id"].as_str().unwrap().to_owned();
    let pkce = challenge(VERIFIER);
    let ask = |redirect: &'static str| {
        let client = client.clone();
        let pkce = pkce.clone();
        let app = &app;
        async move {
            let params = [
                ("response_type", "code"),
                ("client_id", client.as_str()),
                ("redirect_uri", redirect),
                ("scope", "mcp:tools"),
                ("state", "s"),
                ("code_challenge", pkce.as_str()),
                ("code_challenge_method", "S256"),
            ];
            Browser::new(app).authorize("acme", &params).await
        }
    };
    for port in ["http://127.0.0.1:49152/callback", "http://127.0.0.1:8/callback", "http://127.0.0.1/callback"] {
        let page = ask(port).await;
        assert!(page.shows_login_form(), "{port}: {}", page.body);
    }
    for other in
        ["http://127.0.0.1:49152/elsewhere", "http://localhost:49152/callback", "https://127.0.0.1:49152/callback"]
    {
        let page = ask(other).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{other}");
        assert!(page.body.contains("The return address is not registered"), "{other}: {}", page.body);
    }
}
