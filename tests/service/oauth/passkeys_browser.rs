//! Passkeys in a real browser: headless Chromium with ChromeDriver's WebAuthn virtual
//! authenticator (CTAP2, internal transport, resident keys, user verification) registers a passkey
//! on the page of sign-in methods, then signs in with it by autofill on the username field, by
//! the button and after a typed name, and steps up to it from a password when a client asks for
//! a passkey (`acr_values`); a copy of its key whose counter is behind is refused.
//! The service is reached as `localhost`, a relying party id a browser accepts.

use std::time::Duration;

use axum::Router;
use axum::extract::{RawQuery, State};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::oauth::browser::{VERIFIER, challenge};
use crate::support::smtp::MailServer;
use crate::support::webdriver::Driver;
use crate::support::{TestApp, TestClient, TestDatabase, claims, spawn_with};

/// A relying party on loopback: each `/callback` is passed on with its query string.
async fn relying_party() -> (String, mpsc::UnboundedReceiver<String>) {
    let (sender, received) = mpsc::unbounded_channel();
    let app = Router::new()
        .route(
            "/callback",
            axum::routing::get(
                |State(sender): State<mpsc::UnboundedSender<String>>, RawQuery(query): RawQuery| async move {
                    let _ = sender.send(query.unwrap_or_default());
                    "received"
                },
            ),
        )
        .with_state(sender);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, received)
}

/// The code the relying party received next; a guard against a browser that never arrives.
async fn code(received: &mut mpsc::UnboundedReceiver<String>) -> String {
    let query =
        tokio::time::timeout(Duration::from_secs(60), received.recv()).await.expect("the browser arrives").unwrap();
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    pairs.into_iter().find(|(n, _)| n == "code").map(|(_, v)| v).unwrap_or_else(|| panic!("no code: {query}"))
}

/// The service at `http://localhost:{port}`, sending e-mail to `smtp_url` when given.
async fn spawn_at_localhost(smtp_url: Option<String>) -> (TestApp, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let public = format!("http://localhost:{port}");
    let at = public.clone();
    let app = spawn_with(TestDatabase::new().await, move |settings| {
        settings.listen = format!("127.0.0.1:{port}").parse().unwrap();
        settings.public_url = Some(at);
        settings.smtp_url = smtp_url;
    })
    .await;
    (app, public)
}

fn authorization_url(public: &str, party: &str) -> String {
    let mut url = url::Url::parse(&format!("{public}/realms/acme/protocol/openid-connect/auth")).unwrap();
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", "web")
        .append_pair("redirect_uri", &format!("{party}/callback"))
        .append_pair("scope", "openid profile")
        .append_pair("state", "s")
        .append_pair("code_challenge", &challenge(VERIFIER))
        .append_pair("code_challenge_method", "S256");
    url.into()
}

async fn amr_of(app: &TestApp, web: &TestClient, code: &str, party: &str) -> Value {
    assurance_of(app, web, code, party).await.1
}

/// The `acr` and `amr` of the ID token the code is exchanged for.
async fn assurance_of(app: &TestApp, web: &TestClient, code: &str, party: &str) -> (Value, Value) {
    let callback = format!("{party}/callback");
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", &callback),
        ("code_verifier", VERIFIER),
    ];
    let answer = app.token(web, &form).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let id_token = claims(answer.body["id_token"].as_str().unwrap());
    (id_token["acr"].clone(), id_token["amr"].clone())
}

/// Signs the browser out by forgetting its cookies: those of the realm's pages, which WebDriver
/// deletes from a page of theirs.
async fn forget(driver: &Driver, public: &str) {
    driver.go(&format!("{public}/realms/acme/account/security")).await;
    driver.remove("/cookie").await;
}

/// A fresh virtual authenticator: its id.
async fn authenticator(driver: &Driver) -> String {
    let options = json!({
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": true, "hasUserVerification": true,
        "isUserConsenting": true, "isUserVerified": true,
    });
    driver.command("/webauthn/authenticator", options).await.as_str().unwrap().to_owned()
}

#[tokio::test]
async fn chromium_registers_a_passkey_signs_in_with_it_three_ways_steps_up_to_it_and_refuses_a_copy() {
    let (app, public) = spawn_at_localhost(None).await;
    app.create_realm("acme").await;
    app.create_user("acme", "ada", "analytical engine").await;
    let (party, mut received) = relying_party().await;
    let web = app.create_client("acme", "web", &["authorization_code"], &[]).await;
    let body = json!({ "clientConfiguration": { "redirectUris": [format!("{party}/callback")] } });
    assert_eq!(app.put("/realms/acme/clients/web", body).await.status, StatusCode::OK);
    let driver = Driver::start().await;
    let device = authenticator(&driver).await;

    // Signed in by password, Ada adds a passkey on the page of her sign-in methods.
    driver.go(&authorization_url(&public, &party)).await;
    driver.type_into("#username", "ada").await;
    driver.type_into("#password", "analytical engine").await;
    driver.click("button[type=submit]").await;
    let first = code(&mut received).await;
    assert_eq!(amr_of(&app, &web, &first, &party).await, json!(["pwd"]));
    driver.go(&format!("{public}/realms/acme/account/security")).await;
    let violations = driver.serious_accessibility_violations().await;
    assert!(violations.is_empty(), "{violations:?}");
    driver.type_into("#passkey-name", "Chromium").await;
    driver.submit("#passkey-register button").await;
    let page = driver.page_source().await;
    assert!(page.contains("Passkey added") && page.contains("<h2>Chromium</h2>"), "{page}");
    let credentials = driver.read(&format!("/webauthn/authenticator/{device}/credentials")).await;
    assert_eq!(credentials.as_array().unwrap().len(), 1, "{credentials}");
    assert_eq!(credentials[0]["isResidentCredential"], true);

    // Step-up: the client asks for a passkey bound to its hardware (`acr_values=phrh`), which the
    // password session does not reach; the login page comes again, and its passkey answers.
    let mut stronger = url::Url::parse(&authorization_url(&public, &party)).unwrap();
    stronger.query_pairs_mut().append_pair("acr_values", "phrh");
    driver.go(stronger.as_str()).await;
    let stepped_up = code(&mut received).await;
    let (acr, amr) = assurance_of(&app, &web, &stepped_up, &party).await;
    assert_eq!((acr, amr), (json!("phrh"), json!(["hwk", "mfa"])));

    // By autofill: the page asks with conditional mediation as it loads, and the virtual
    // authenticator answers as a person picking the passkey the username field offers would.
    forget(&driver, &public).await;
    driver.go(&authorization_url(&public, &party)).await;
    let by_autofill = code(&mut received).await;
    assert_eq!(amr_of(&app, &web, &by_autofill, &party).await, json!(["hwk", "mfa"]));

    // A browser without autofill of passkeys: the button, without a name, then after one.
    let without = "PublicKeyCredential.isConditionalMediationAvailable = async () => false;";
    let command = json!({ "cmd": "Page.addScriptToEvaluateOnNewDocument", "params": { "source": without } });
    driver.command("/goog/cdp/execute", command).await;
    forget(&driver, &public).await;
    driver.go(&authorization_url(&public, &party)).await;
    let asked = "PublicKeyCredential.isConditionalMediationAvailable().then(arguments[0]);";
    assert_eq!(driver.execute_async(asked, json!([])).await, false, "no autofill of passkeys here");
    let violations = driver.serious_accessibility_violations().await;
    assert!(violations.is_empty(), "{violations:?}");
    driver.click("#passkey-sign-in button").await;
    let by_button = code(&mut received).await;
    assert_eq!(amr_of(&app, &web, &by_button, &party).await, json!(["hwk", "mfa"]));

    forget(&driver, &public).await;
    driver.go(&authorization_url(&public, &party)).await;
    driver.type_into("#username", "ada").await;
    driver.click("#passkey-sign-in button").await;
    let after_name = code(&mut received).await;
    assert_eq!(amr_of(&app, &web, &after_name, &party).await, json!(["hwk", "mfa"]));

    // A copy of the key on another authenticator, its counter behind.
    let held = &driver.read(&format!("/webauthn/authenticator/{device}/credentials")).await[0];
    assert!(held["signCount"].as_u64().unwrap() >= 3, "{held}");
    driver.remove(&format!("/webauthn/authenticator/{device}")).await;
    let copy = authenticator(&driver).await;
    let copied = json!({
        "credentialId": held["credentialId"], "isResidentCredential": true, "rpId": held["rpId"],
        "privateKey": held["privateKey"], "userHandle": held["userHandle"], "signCount": 0,
    });
    driver.command(&format!("/webauthn/authenticator/{copy}/credential"), copied).await;
    forget(&driver, &public).await;
    driver.go(&authorization_url(&public, &party)).await;
    driver.submit("#passkey-sign-in button").await;
    let page = driver.page_source().await;
    assert!(page.contains("This passkey was not accepted"), "{page}");
    let failed = app.events("login_failed").await;
    assert_eq!(failed.last().unwrap().2["failure_reason"], "cloned_authenticator");
    assert!(received.try_recv().is_err(), "no code for the copy");
    driver.quit().await;
}

#[tokio::test]
async fn chromium_signs_up_with_a_passkey_and_no_password() {
    let mail = MailServer::start().await;
    let (app, public) = spawn_at_localhost(Some(mail.url.clone())).await;
    app.create_realm("acme").await;
    let allowed = app.put("/realms/acme", json!({ "selfSignUp": true, "passkeySignUp": true })).await;
    assert_eq!(allowed.status, StatusCode::OK, "{:?}", allowed.body);
    let (party, mut received) = relying_party().await;
    let web = app.create_client("acme", "web", &["authorization_code"], &[]).await;
    let body = json!({ "clientConfiguration": { "redirectUris": [format!("{party}/callback")] } });
    assert_eq!(app.put("/realms/acme/clients/web", body).await.status, StatusCode::OK);
    let driver = Driver::start().await;
    let device = authenticator(&driver).await;

    let mut sign_up = url::Url::parse(&authorization_url(&public, &party)).unwrap();
    sign_up.query_pairs_mut().append_pair("prompt", "create");
    driver.go(sign_up.as_str()).await;
    let violations = driver.serious_accessibility_violations().await;
    assert!(violations.is_empty(), "{violations:?}");
    driver.type_into("#username", "grace").await;
    driver.type_into("#email", "grace@example.com").await;
    driver.submit("#passkey-sign-up").await;
    let page = driver.page_source().await;
    assert!(page.contains("Confirm your email address"), "{page}");
    let held = driver.read(&format!("/webauthn/authenticator/{device}/credentials")).await;
    assert_eq!(held.as_array().unwrap().len(), 1, "{held}");

    let letter = mail.letter(&app, "grace@example.com").await;
    let text = letter.data.replace("=\r\n", "");
    let at = text.find("cstl_signup_").expect("a code");
    let sent: String = text[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect();
    driver.type_into("#code", &sent).await;
    driver.click("button[type=submit]").await;
    let signed_up = code(&mut received).await;
    let (acr, amr) = assurance_of(&app, &web, &signed_up, &party).await;
    assert_eq!((acr, amr), (json!("phrh"), json!(["hwk", "mfa"])));
    driver.quit().await;
}
