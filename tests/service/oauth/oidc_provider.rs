//! Federation against an implementation no one here wrote: panva's `oidc-provider` (node), started
//! on loopback over HTTPS by the test with the configuration in `tests/upstream-provider`. It is
//! the upstream OpenID provider of a sign-in (its discovery, keys, RFC 9207 `iss`, ID tokens whose
//! profile claims come from its user-info), and the connection provider of an account whose
//! refresh tokens it issues and rotates.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::oauth::browser::{Browser, Page, REDIRECT, VERIFIER, challenge, exchange, realm_with_clients, request};
use crate::support::node::NodeScript;
use crate::support::receiver::certified_files;
use crate::support::upstreams::trust_loopback;
use crate::support::{TestApp, created_id, spawn_with};

const SECRET: &str = "acme-secret-at-the-provider";

/// `oidc-provider` listening at its issuer, knowing the realm `acme` as its client `acme`.
async fn provider(app: &TestApp) -> (NodeScript, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let issuer = format!("https://127.0.0.1:{port}");
    let (cert, key) = certified_files();
    let realm = format!("{}/realms/acme", app.state.public_url);
    let configuration = json!({
        "issuer": issuer, "port": port, "cert": cert, "key": key,
        "clients": [{
            "client_id": "acme", "client_secret": SECRET, "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "redirect_uris": [format!("{realm}/broker/op/callback"), format!("{realm}/connections/op-calendar/callback")],
        }],
    });
    let mut script =
        NodeScript::start_in("upstream-provider", "provider.mjs", "oidc-provider", &[&configuration.to_string()]);
    assert_eq!(script.next().await, json!({ "listening": true }));
    (script, issuer)
}

/// Signs in at the provider's own pages (any name passes there; its forms carry their step in a
/// hidden `prompt`) and follows its redirects until the browser is sent back to the service.
async fn sign_in_upstream(browser: &mut Browser, issuer: &str, sent: &Page, name: &str) -> Page {
    let mut page = browser.open(sent.location.as_ref().expect("sent upstream").as_str()).await;
    for _ in 0..10 {
        if page.status == StatusCode::SEE_OTHER {
            let next = page.location.clone().unwrap();
            if !next.as_str().starts_with(issuer) {
                return browser.open(next.as_str()).await;
            }
            page = browser.open(next.as_str()).await;
            continue;
        }
        let at = page.body.find("action=\"").unwrap_or_else(|| panic!("a form: {} {}", page.status, page.body));
        let action = &page.body[at + 8..at + 8 + page.body[at + 8..].find('"').unwrap()];
        let action = page.url.join(&action.replace("&amp;", "&")).unwrap();
        let step = page.input("prompt").unwrap_or_default();
        let mut form = vec![("prompt", step.as_str())];
        if step == "login" {
            form.extend([("login", name), ("password", "any")]);
        }
        page = browser.post_to(action.as_str(), &form).await;
    }
    panic!("the provider never sent the browser back: {}", page.body)
}

fn code_of(answer: &Page) -> String {
    let next = answer.next().unwrap_or_else(|| panic!("{} {}", answer.status, answer.body));
    assert!(next.as_str().starts_with(REDIRECT), "{next}");
    answer.param("code").expect("a code")
}

#[tokio::test]
async fn oidc_provider_as_an_upstream_signs_a_person_in_and_as_a_connection_provider_renews_their_token() {
    let app = spawn_with(crate::support::TestDatabase::new().await, trust_loopback).await;
    let (web, _) = realm_with_clients(&app).await;
    let (_provider, issuer) = provider(&app).await;
    let upstream = json!({ "id": "op", "protocol": "OpenIdConnect", "clientId": "acme", "clientSecret": SECRET,
                           "discoveryUrl": format!("{issuer}/.well-known/openid-configuration"),
                           "trustVerifiedEmail": true });
    assert_eq!(app.post("/realms/acme/identity-providers", upstream).await.status, StatusCode::CREATED);
    app.put("/realms/acme/clients/web/identity-providers", json!({ "identityProviders": ["op"] })).await;

    let mut browser = Browser::new(&app);
    let pkce = challenge(VERIFIER);
    let mut params = request("web", "s-1", "n-1", &pkce);
    params.push(("idp_hint", "op"));
    let sent = browser.authorize("acme", &params).await;
    let back = sign_in_upstream(&mut browser, &issuer, &sent, "grace").await;
    let tokens = exchange(&app, &web, &code_of(&back), VERIFIER).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    let person = crate::support::claims(tokens.body["access_token"].as_str().unwrap());
    let user = app.get(&format!("/realms/acme/users/{}", person["sub"].as_str().unwrap())).await;
    assert_eq!((&user.data()["username"], &user.data()["email"]), (&json!("grace"), &json!("grace@upstream.example")));
    assert_eq!(user.data()["emailConfirmed"], true, "read from its user-info, of the same subject");

    // The same provider keeps grace's calendar: she connects it, and the calendar API exchanges
    // her token for its token, renewed through the provider once it has expired.
    let api = app.create_client("acme", "calendar-api", &["client_credentials"], &[]).await;
    let server = json!({ "name": "Calendar API", "address": "https://calendar-api.example", "scopes": ["orders:read"],
                         "allowedClients": ["web"], "clientId": "calendar-api" });
    let server_id = created_id(&app, "/realms/acme/resource-servers", server).await;
    let calendar = json!({ "id": "op-calendar", "clientId": "acme", "clientSecret": SECRET, "scopes": ["calendar.read"],
                           "discoveryUrl": format!("{issuer}/.well-known/openid-configuration"), "resourceServers": [server_id] });
    assert_eq!(app.post("/realms/acme/connection-providers", calendar).await.status, StatusCode::CREATED);
    let mut params = request("web", "s-2", "n-2", &pkce);
    params.extend([("resource", "https://calendar-api.example"), ("connect", "op-calendar")]);
    let sent = browser.authorize("acme", &params).await;
    let back = sign_in_upstream(&mut browser, &issuer, &sent, "grace").await;
    let tokens = exchange(&app, &web, &code_of(&back), VERIFIER).await;
    let subject = tokens.body["access_token"].as_str().unwrap().to_owned();
    let vault = |subject: String| {
        let (app, api) = (&app, &api);
        async move {
            let form = [
                ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
                ("subject_token", subject.as_str()),
                ("subject_token_type", "urn:ietf:params:oauth:token-type:access_token"),
                ("requested_token_type", "urn:castellan:params:oauth:token-type:connection-access-token"),
                ("connection", "op-calendar"),
            ];
            app.token(api, &form).await
        }
    };
    let first = vault(subject.clone()).await;
    assert_eq!(first.status, StatusCode::OK, "{:?}", first.body);
    let token: Value = first.body["access_token"].clone();
    assert!(first.body.get("refresh_token").is_none());
    let introspected = reqwest_introspect(&issuer, token.as_str().unwrap()).await;
    assert_eq!(introspected["active"], true, "the provider's own token: {introspected}");

    app.advance(61).await;
    let renewed = vault(subject).await;
    assert_eq!(renewed.status, StatusCode::OK, "{:?}", renewed.body);
    assert_ne!(renewed.body["access_token"], token, "renewed with the refresh token the provider issued");
    assert_eq!(reqwest_introspect(&issuer, renewed.body["access_token"].as_str().unwrap()).await["active"], true);
}

/// The provider's own introspection of one of its tokens, as the realm's client there.
async fn reqwest_introspect(issuer: &str, token: &str) -> Value {
    let authority = std::fs::read(crate::support::receiver::authority_file()).unwrap();
    let http = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&authority).unwrap())
        .build()
        .unwrap();
    let answer = http
        .post(format!("{issuer}/token/introspection"))
        .basic_auth("acme", Some(SECRET))
        .form(&[("token", token)])
        .send()
        .await
        .unwrap();
    answer.json().await.unwrap()
}
