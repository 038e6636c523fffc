//! A real browser signs in: headless Chromium, driven through ChromeDriver's WebDriver protocol,
//! fills the login page, is sent to a relying party on loopback with a code, signs in to a second
//! client without the form (single sign-on), and is signed out of both. Chromium and ChromeDriver
//! are Debian's packages, which `scripts/test` installs.

use std::time::Duration;

use axum::Router;
use axum::extract::{RawQuery, State};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::oauth::browser::{VERIFIER, challenge};
use crate::support::webdriver::Driver;
use crate::support::{TestApp, TestClient, claims, spawn_app};

/// A relying party on loopback: every request to `/callback` or `/signed-out` is passed on with its
/// query string, and answered with a plain page.
async fn relying_party() -> (String, mpsc::UnboundedReceiver<(String, String)>) {
    let (sender, received) = mpsc::unbounded_channel();
    let record = |path: &'static str| {
        move |State(sender): State<mpsc::UnboundedSender<(String, String)>>, RawQuery(query): RawQuery| async move {
            let _ = sender.send((path.to_owned(), query.unwrap_or_default()));
            "received"
        }
    };
    let app = Router::new()
        .route("/callback", axum::routing::get(record("/callback")))
        .route("/signed-out", axum::routing::get(record("/signed-out")))
        .with_state(sender);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, received)
}

/// What the relying party received next; a guard against a browser that never arrives, not a
/// measure of speed.
async fn arrival(received: &mut mpsc::UnboundedReceiver<(String, String)>) -> (String, Vec<(String, String)>) {
    let (path, query) = tokio::time::timeout(Duration::from_secs(60), received.recv())
        .await
        .expect("the browser reaches the relying party")
        .expect("the relying party runs");
    let pairs = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    (path, pairs)
}

fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

async fn browser_client(app: &TestApp, id: &str, relying_party: &str) -> TestClient {
    let client = app.create_client("acme", id, &["authorization_code", "refresh_token"], &[]).await;
    let body = json!({ "clientConfiguration": {
        "redirectUris": [format!("{relying_party}/callback")],
        "postLogoutRedirectUris": [format!("{relying_party}/signed-out")],
    } });
    assert_eq!(app.put(&format!("/realms/acme/clients/{id}"), body).await.status, StatusCode::OK);
    client
}

fn authorization_url(app: &TestApp, client: &str, relying_party: &str, state: &str) -> String {
    authorization_url_at(&app.base, client, relying_party, state)
}

fn authorization_url_at(base: &str, client: &str, relying_party: &str, state: &str) -> String {
    let mut url = url::Url::parse(&format!("{base}/realms/acme/protocol/openid-connect/auth")).unwrap();
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", client)
        .append_pair("redirect_uri", &format!("{relying_party}/callback"))
        .append_pair("scope", "openid profile")
        .append_pair("state", state)
        .append_pair("nonce", "n")
        .append_pair("code_challenge", &challenge(VERIFIER))
        .append_pair("code_challenge_method", "S256");
    url.into()
}

async fn tokens_for(app: &TestApp, client: &TestClient, code: &str, relying_party: &str) -> Value {
    let callback = format!("{relying_party}/callback");
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", callback.as_str()),
        ("code_verifier", VERIFIER),
    ];
    let answer = app.token(client, &form).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body
}

async fn active(app: &TestApp, client: &TestClient, token: &str) -> bool {
    app.protocol(client, "token/introspect", &[("token", token)]).await.body["active"] == true
}

#[tokio::test]
async fn chromium_signs_in_on_the_page_signs_in_to_a_second_client_without_it_and_signs_out_of_both() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.create_user("acme", "ada", "analytical engine").await;
    let (party, mut received) = relying_party().await;
    let web = browser_client(&app, "web", &party).await;
    let shop = browser_client(&app, "shop", &party).await;
    let driver = Driver::start().await;

    driver.go(&authorization_url(&app, "web", &party, "first")).await;
    assert!(driver.page_source().await.contains("Sign in to web"));
    driver.type_into("#username", "ada").await;
    driver.type_into("#password", "analytical engine").await;
    driver.click("button[type=submit]").await;
    let (path, query) = arrival(&mut received).await;
    assert_eq!(path, "/callback");
    assert_eq!(param(&query, "state"), Some("first"));
    let web_tokens = tokens_for(&app, &web, param(&query, "code").unwrap(), &party).await;
    assert_eq!(claims(web_tokens["id_token"].as_str().unwrap())["preferred_username"], "ada");

    // Single sign-on: the second client's request comes straight back with a code.
    driver.go(&authorization_url(&app, "shop", &party, "second")).await;
    let (path, query) = arrival(&mut received).await;
    assert_eq!(path, "/callback");
    assert_eq!(param(&query, "state"), Some("second"));
    let shop_tokens = tokens_for(&app, &shop, param(&query, "code").unwrap(), &party).await;
    let (web_access, shop_access) =
        (web_tokens["access_token"].as_str().unwrap(), shop_tokens["access_token"].as_str().unwrap());
    assert!(active(&app, &web, web_access).await && active(&app, &shop, shop_access).await);

    // Logout ends both.
    let mut logout = url::Url::parse(&format!("{}/realms/acme/protocol/openid-connect/logout", app.base)).unwrap();
    logout
        .query_pairs_mut()
        .append_pair("id_token_hint", web_tokens["id_token"].as_str().unwrap())
        .append_pair("post_logout_redirect_uri", &format!("{party}/signed-out"))
        .append_pair("state", "bye");
    driver.go(logout.as_str()).await;
    let (path, query) = arrival(&mut received).await;
    assert_eq!(path, "/signed-out");
    assert_eq!(param(&query, "state"), Some("bye"));
    assert!(!active(&app, &web, web_access).await && !active(&app, &shop, shop_access).await);

    // Signed out: the next request shows the form again.
    driver.go(&authorization_url(&app, "shop", &party, "third")).await;
    assert!(driver.page_source().await.contains("Sign in to shop"));
    assert!(received.try_recv().is_err(), "no code without the form");
    driver.quit().await;
}

#[tokio::test]
async fn chromium_signs_in_through_an_upstream_provider_with_its_button() {
    let (app, front) = crate::support::upstreams::spawn_at_https().await;
    app.create_realm("acme").await;
    app.create_realm("people").await;
    app.create_user("people", "grace", "compiler pioneer").await;
    let callback = format!("{}/realms/acme/broker/people/callback", front.url);
    let broker = json!({ "id": "acme-broker", "clientConfiguration": { "redirectUris": [callback] } });
    let secret = app.post("/realms/people/clients", broker).await.data()["clientSecret"].as_str().unwrap().to_owned();
    let provider = json!({
        "id": "people", "displayName": "People", "protocol": "OpenIdConnect", "clientId": "acme-broker",
        "clientSecret": secret, "discoveryUrl": format!("{}/realms/people/.well-known/openid-configuration", front.url),
    });
    assert_eq!(app.post("/realms/acme/identity-providers", provider).await.status, StatusCode::CREATED);
    let (party, mut received) = relying_party().await;
    let web = browser_client(&app, "web", &party).await;
    let offer = json!({ "identityProviders": ["people"] });
    assert_eq!(app.put("/realms/acme/clients/web/identity-providers", offer).await.status, StatusCode::OK);
    let driver = Driver::start().await;

    driver.go(&authorization_url_at(&front.url, "web", &party, "through")).await;
    assert!(driver.page_source().await.contains("Sign in with People"));
    driver.click("a.button").await;
    assert!(driver.page_source().await.contains("Sign in to acme-broker"), "the upstream's own page");
    driver.type_into("#username", "grace").await;
    driver.type_into("#password", "compiler pioneer").await;
    driver.click("button[type=submit]").await;
    let (path, query) = arrival(&mut received).await;
    assert_eq!((path.as_str(), param(&query, "state")), ("/callback", Some("through")));
    let tokens = tokens_for(&app, &web, param(&query, "code").unwrap(), &party).await;
    let person = claims(tokens["id_token"].as_str().unwrap());
    assert_eq!((&person["preferred_username"], &person["amr"]), (&json!("grace"), &json!(["federated"])));
    driver.quit().await;
}
