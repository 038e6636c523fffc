//! Passkeys with a software authenticator no one here wrote (python `soft-webauthn` over
//! `fido2`): a person registers one with their own token or on the page of their sign-in methods,
//! and signs in with it alone on the login page. The challenge is single use, bound to the browser
//! it was given to and short-lived; an authenticator whose counter goes back is refused and
//! reported; one that does not verify the person is refused; and a typed name gets its passkeys
//! while any other name gets an answer of the same kind.

use std::io::Write as _;
use std::process::{Command, Stdio};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::oauth::browser::{Browser, Page, VERIFIER, challenge, exchange, request, web_client};
use crate::support::{TestApp, TestClient, answer, claims, python_tool, spawn_app};

const PASSWORD: &str = "analytical engine";
pub const PASSKEY_STEP: &str = "/realms/acme/protocol/openid-connect/auth/passkey";

/// soft-webauthn's answer to `request` (see `tests/authenticators/passkey.py`).
pub fn soft_webauthn(request: &Value) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/authenticators/passkey.py");
    let mut child = Command::new(python_tool("python"))
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(request.to_string().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

pub struct Realm {
    pub web: TestClient,
    pub portal: TestClient,
}

pub async fn realm(app: &TestApp) -> Realm {
    app.create_realm("acme").await;
    let web = web_client(app, "web").await;
    let portal = app.create_client("acme", "portal", &["password"], &[]).await;
    app.create_user("acme", "ada", PASSWORD).await;
    app.create_user("acme", "grace", PASSWORD).await;
    Realm { web, portal }
}

pub async fn token_of(app: &TestApp, realm: &Realm, username: &str) -> String {
    let answer =
        app.token(&realm.portal, &[("grant_type", "password"), ("username", username), ("password", PASSWORD)]).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body["access_token"].as_str().unwrap().to_owned()
}

pub fn account(app: &TestApp, path: &str) -> String {
    format!("{}/realms/acme/account/authenticators{path}", app.base)
}

/// Registers a passkey of a new software authenticator with the person's token: the device.
pub async fn register(app: &TestApp, token: &str, verified: bool) -> (crate::support::Answer, Value) {
    let options = answer(app.http.post(account(app, "/passkey")).bearer_auth(token).send().await.unwrap()).await;
    assert_eq!(options.status, StatusCode::OK, "{:?}", options.body);
    let made =
        soft_webauthn(&json!({ "op": "create", "options": options.body, "origin": app.base, "verified": verified }));
    let credential = made["credential"].to_string();
    let form = [("credential", credential.as_str()), ("name", "Ada's laptop")];
    let kept =
        answer(app.http.post(account(app, "/passkey/confirm")).bearer_auth(token).form(&form).send().await.unwrap())
            .await;
    (kept, made["device"].clone())
}

/// The login page of the web client's request, in `browser` (signed in or not).
async fn login_page(browser: &mut Browser) -> Page {
    let pkce = challenge(VERIFIER);
    let mut asked = request("web", "xyz", "n-1", &pkce);
    asked.push(("prompt", "login"));
    let page = browser.authorize("acme", &asked).await;
    assert!(page.shows_login_form(), "{} {}", page.status, page.body);
    page
}

/// The value of the attribute `name` on the page.
pub fn attribute(page: &Page, name: &str) -> String {
    let marker = format!(r#"{name}=""#);
    let start = page.body.find(&marker).unwrap_or_else(|| panic!("no {name}: {}", page.body)) + marker.len();
    page.body[start..start + page.body[start..].find('"').unwrap()].to_owned()
}

/// The device's assertion for the page's challenge (counter as given, when given).
pub fn assertion(app: &TestApp, page: &Page, device: &Value, counter: Option<i64>, verified: bool) -> (String, Value) {
    let options =
        json!({ "publicKey": { "challenge": attribute(page, "data-challenge"), "rpId": attribute(page, "data-rp") } });
    let got = soft_webauthn(
        &json!({ "op": "get", "options": options, "origin": app.base, "device": device, "counter": counter, "verified": verified }),
    );
    (got["credential"].to_string(), got["device"].clone())
}

pub async fn post_assertion(browser: &mut Browser, page: &Page, credential: &str) -> Page {
    browser.submit_form(PASSKEY_STEP, page, "passkey-sign-in", &[("credential", credential)]).await
}

#[tokio::test]
async fn a_person_registers_a_passkey_of_a_software_authenticator_and_signs_in_with_it_alone() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    let token = token_of(&app, &realm, "ada").await;

    let options = answer(app.http.post(account(&app, "/passkey")).bearer_auth(&token).send().await.unwrap()).await;
    let public_key = &options.body["publicKey"];
    let host = url::Url::parse(&app.base).unwrap().host_str().unwrap().to_owned();
    assert_eq!(public_key["rp"]["id"], host.as_str(), "the relying party is the service's public host");
    assert_eq!(public_key["authenticatorSelection"]["residentKey"], "required");
    assert_eq!(public_key["authenticatorSelection"]["userVerification"], "required");
    assert_eq!(public_key["attestation"], "none");
    assert_eq!(public_key["pubKeyCredParams"][0]["alg"], -7, "ES256 first");

    let (kept, device) = register(&app, &token, true).await;
    assert_eq!(kept.status, StatusCode::CREATED, "{:?}", kept.body);
    assert_eq!(
        (kept.body["authenticator"]["kind"].as_str(), kept.body["authenticator"]["name"].as_str()),
        (Some("Passkey"), Some("Ada's laptop"))
    );
    let added = app.events("authenticator_added").await;
    assert_eq!(added.last().unwrap().2["kind"], "Passkey");

    // The login page offers it beside the password: autofill on the username field, the script
    // of the service under the page's nonce.
    let mut browser = Browser::new(&app);
    let page = login_page(&mut browser).await;
    assert!(page.body.contains(r#"autocomplete="username webauthn""#), "{}", page.body);
    let policy = page.policy.clone().unwrap();
    let nonce = attribute(&page, "script nonce");
    assert!(policy.contains(&format!("script-src 'nonce-{nonce}'")), "{policy}");
    assert!(page.body.contains(&format!(r#"src="{}/assets/passkeys.js""#, app.base)));
    let script = app.http.get(format!("{}/assets/passkeys.js", app.base)).send().await.unwrap();
    assert_eq!(script.headers()["content-type"], "text/javascript; charset=utf-8");
    assert!(script.text().await.unwrap().contains("navigator.credentials"));

    let (credential, _) = assertion(&app, &page, &device, None, true);
    let signed_in = post_assertion(&mut browser, &page, &credential).await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER, "{}", signed_in.body);
    let code = signed_in.param("code").expect("a code");
    let tokens = exchange(&app, &realm.web, &code, VERIFIER).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    let id_token = claims(tokens.body["id_token"].as_str().unwrap());
    assert_eq!(id_token["amr"], json!(["hwk", "mfa"]), "{id_token}");
    assert_eq!(id_token["preferred_username"], "ada");

    // The passkey's use is recorded.
    let listed = answer(app.http.get(account(&app, "")).bearer_auth(&token).send().await.unwrap()).await;
    let passkey = &listed.body["authenticators"][0];
    assert!(passkey["lastUsedAt"].is_string(), "{passkey}");
}

#[tokio::test]
async fn a_challenge_is_accepted_once_from_the_browser_it_was_given_to_and_for_five_minutes() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    let token = token_of(&app, &realm, "ada").await;
    let (_, device) = register(&app, &token, true).await;

    let mut browser = Browser::new(&app);
    let page = login_page(&mut browser).await;
    let (credential, device) = assertion(&app, &page, &device, None, true);
    assert_eq!(post_assertion(&mut browser, &page, &credential).await.status, StatusCode::SEE_OTHER);

    // Signed again over the same challenge, with a counter that went up: the challenge is used.
    let (again, device) = assertion(&app, &page, &device, None, true);
    let refused = post_assertion(&mut browser, &page, &again).await;
    assert_eq!(refused.status, StatusCode::OK);
    assert!(refused.body.contains("This passkey was not accepted"), "{}", refused.body);

    // Another browser cannot use a challenge given to this one.
    let mut other = Browser::new(&app);
    let theirs = login_page(&mut other).await;
    let page = login_page(&mut browser).await;
    let (credential, device) = assertion(&app, &page, &device, None, true);
    let refused = post_assertion(&mut other, &theirs, &credential).await;
    assert!(refused.body.contains("This passkey was not accepted"), "{}", refused.body);

    // Five minutes on, it has expired.
    let page = login_page(&mut browser).await;
    let (credential, _) = assertion(&app, &page, &device, None, true);
    app.advance(301).await;
    let refused = post_assertion(&mut browser, &page, &credential).await;
    assert!(refused.body.contains("This passkey was not accepted"), "{}", refused.body);
    let reasons: Vec<Value> =
        app.events("login_failed").await.into_iter().map(|(_, _, d)| d["failure_reason"].clone()).collect();
    assert_eq!(reasons, ["invalid_passkey", "invalid_passkey", "invalid_passkey"]);
}

#[tokio::test]
async fn an_authenticator_whose_counter_goes_back_is_refused_as_a_clone_and_reported() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    let token = token_of(&app, &realm, "ada").await;
    let (_, device) = register(&app, &token, true).await;
    let mut browser = Browser::new(&app);
    let page = login_page(&mut browser).await;
    // The device signs with counter 5.
    let (credential, device) = assertion(&app, &page, &device, Some(4), true);
    assert_eq!(post_assertion(&mut browser, &page, &credential).await.status, StatusCode::SEE_OTHER);

    // A copy of its key, whose counter is behind.
    let mut thief = Browser::new(&app);
    let page = login_page(&mut thief).await;
    let (copied, _) = assertion(&app, &page, &device, Some(1), true);
    let refused = post_assertion(&mut thief, &page, &copied).await;
    assert_eq!(refused.status, StatusCode::OK);
    assert!(refused.body.contains("This passkey was not accepted"), "{}", refused.body);
    assert!(!thief.cookies.contains_key("castellan_session"), "not signed in");
    let failed = app.events("login_failed").await;
    let (_, _, data) = failed.last().unwrap();
    assert_eq!(
        (data["failure_reason"].as_str(), data["username"].as_str()),
        (Some("cloned_authenticator"), Some("ada"))
    );

    // The real one goes on.
    let page = login_page(&mut browser).await;
    let (credential, _) = assertion(&app, &page, &device, None, true);
    assert_eq!(post_assertion(&mut browser, &page, &credential).await.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn an_authenticator_that_does_not_verify_the_person_is_refused() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    let token = token_of(&app, &realm, "ada").await;
    let (refused, _) = register(&app, &token, false).await;
    assert_eq!(
        (refused.status, refused.body["error_code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("InvalidEnrolment"))
    );
    assert!(
        refused.body["error_description"].as_str().unwrap().contains("did not verify the person"),
        "{:?}",
        refused.body
    );

    let (_, device) = register(&app, &token, true).await;
    let mut browser = Browser::new(&app);
    let page = login_page(&mut browser).await;
    let (credential, _) = assertion(&app, &page, &device, None, false);
    let answer = post_assertion(&mut browser, &page, &credential).await;
    assert!(answer.body.contains("This passkey was not accepted"), "{}", answer.body);
}

#[tokio::test]
async fn a_typed_name_gets_its_passkeys_and_a_name_without_any_gets_an_answer_of_the_same_kind() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    let token = token_of(&app, &realm, "ada").await;
    let (_, device) = register(&app, &token, true).await;
    let mut browser = Browser::new(&app);
    let page = login_page(&mut browser).await;
    let lookup = format!("{PASSKEY_STEP}/options");
    let offered = async |browser: &mut Browser, name: &str| {
        let answer = browser.submit_form(&lookup, &page, "passkey-sign-in", &[("username", name)]).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        let body: Value = serde_json::from_str(&answer.body).unwrap();
        let ids = body["allowCredentials"].as_array().unwrap().iter();
        ids.map(|c| c["id"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    assert_eq!(offered(&mut browser, "ada").await, [device["id"].as_str().unwrap()]);
    let nobody = offered(&mut browser, "nobody").await;
    let grace = offered(&mut browser, "grace").await;
    assert_eq!((nobody.len(), grace.len()), (1, 1));
    assert_eq!(nobody[0].len(), device["id"].as_str().unwrap().len(), "as long as a real one");
    assert_ne!(nobody, grace);
    assert_eq!(offered(&mut browser, "nobody").await, nobody, "the same each time");

    // Without the browser's form token, nothing is answered.
    let forged = app
        .http
        .post(format!("{}{lookup}", app.base))
        .form(&[("username", "ada"), ("client_id", "web")])
        .send()
        .await
        .unwrap();
    assert_ne!(forged.status(), StatusCode::OK);
}

#[tokio::test]
async fn on_the_page_of_sign_in_methods_a_recently_signed_in_person_adds_and_removes_a_passkey() {
    let app = spawn_app().await;
    realm(&app).await;
    let mut browser = Browser::new(&app);
    let page = login_page(&mut browser).await;
    assert_eq!(browser.sign_in("acme", &page, "ada", PASSWORD).await.status, StatusCode::SEE_OTHER);

    let methods = browser.visit("/realms/acme/account/security", &[]).await;
    assert_eq!(methods.status, StatusCode::OK, "{}", methods.body);
    assert!(methods.body.contains("You have no passkey or authenticator app yet."), "{}", methods.body);
    let options: Value = serde_json::from_str(&attribute(&methods, "data-options").replace("&quot;", "\"")).unwrap();
    let made = soft_webauthn(&json!({ "op": "create", "options": options, "origin": app.base }));
    let credential = made["credential"].to_string();
    let path = "/realms/acme/account/security";
    let extra = [("credential", credential.as_str()), ("name", "Work laptop")];
    let added = browser.submit_form(path, &methods, "passkey-register", &extra).await;
    assert!(added.body.contains("Passkey added"), "{}", added.body);
    assert!(added.body.contains("<h2>Work laptop</h2>"), "{}", added.body);

    // The same answer again: its challenge was used.
    let again = browser.submit_form(path, &methods, "passkey-register", &extra).await;
    assert!(again.body.contains("The passkey was not added"), "{}", again.body);

    // A quarter of an hour on, changes ask for a fresh sign-in.
    app.advance(16 * 60).await;
    let later = browser.visit(path, &[]).await;
    let removal = [("action", "remove")];
    let refused = browser.submit(path, &later, &removal).await;
    assert!(refused.body.contains("sign in again before you change"), "{}", refused.body);
    assert!(refused.body.contains("<h2>Work laptop</h2>"), "nothing was removed: {}", refused.body);

    let mut fresh = Browser::new(&app);
    let page = login_page(&mut fresh).await;
    let (credential, _) = assertion(&app, &page, &made["device"], None, true);
    assert_eq!(post_assertion(&mut fresh, &page, &credential).await.status, StatusCode::SEE_OTHER);
    let methods = fresh.visit(path, &[]).await;
    let removed = fresh.submit(path, &methods, &removal).await;
    assert!(removed.body.contains("Removed."), "{}", removed.body);
    assert!(removed.body.contains("You have no passkey or authenticator app yet."), "{}", removed.body);
}
