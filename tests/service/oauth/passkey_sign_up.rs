//! Passkey-only accounts: where the realm allows it, a person signs up with a passkey their
//! browser makes (here soft-webauthn's) instead of a password; the account exists once the code
//! sent to the address comes back, with that passkey and no password, and signs in with it.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::oauth::browser::{Browser, Page, VERIFIER, challenge, exchange, request, web_client};
use crate::oauth::passkeys::{assertion, attribute, post_assertion, soft_webauthn};
use crate::support::smtp::MailServer;
use crate::support::{TestApp, TestDatabase, claims, spawn_with};

const REGISTER: &str = "/realms/acme/protocol/openid-connect/auth/register";
const CONFIRM: &str = "/realms/acme/protocol/openid-connect/auth/register/confirm";

async fn sign_up_form(browser: &mut Browser) -> Page {
    let pkce = challenge(VERIFIER);
    let mut asked = request("web", "new", "n-1", &pkce);
    asked.push(("prompt", "create"));
    let page = browser.authorize("acme", &asked).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    page
}

/// The passkey soft-webauthn makes for the sign-up form's options, named `username`: its
/// credential as JSON, and the device.
fn passkey_for(app: &TestApp, form: &Page, username: &str) -> (String, Value) {
    let mut options: Value = serde_json::from_str(&attribute(form, "data-options").replace("&quot;", "\"")).unwrap();
    options["publicKey"]["user"]["name"] = json!(username);
    options["publicKey"]["user"]["displayName"] = json!(username);
    let made = soft_webauthn(&json!({ "op": "create", "options": options, "origin": app.base }));
    (made["credential"].to_string(), made["device"].clone())
}

/// The code of the letter sent to `to`.
async fn code_sent(mail: &MailServer, app: &TestApp, to: &str) -> String {
    let letter = mail.letter(app, to).await;
    let text = letter.data.replace("=\r\n", "");
    let at = text.find("cstl_signup_").expect("a code");
    text[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect()
}

#[tokio::test]
async fn a_person_signs_up_with_a_passkey_and_no_password_where_the_realm_allows_it() {
    let mail = MailServer::start().await;
    let url = mail.url.clone();
    let app = spawn_with(TestDatabase::new().await, move |settings| settings.smtp_url = Some(url)).await;
    app.create_realm("acme").await;
    let web = web_client(&app, "web").await;
    assert_eq!(app.put("/realms/acme", json!({ "selfSignUp": true })).await.status, StatusCode::OK);

    // Until the realm allows it, the form asks for a password and offers no passkey.
    let mut browser = Browser::new(&app);
    let form = sign_up_form(&mut browser).await;
    assert!(!form.body.contains("passkey-sign-up"), "{}", form.body);
    assert!(form.body.contains(r#"autocomplete="new-password" required"#), "{}", form.body);

    let allowed = app.put("/realms/acme", json!({ "passkeySignUp": true })).await;
    assert_eq!(allowed.data()["passkeySignUp"], true);
    let form = sign_up_form(&mut browser).await;
    assert!(form.body.contains(r#"id="passkey-sign-up""#), "{}", form.body);
    assert!(!form.body.contains(r#"autocomplete="new-password" required"#), "the password may be left out");

    // The passkey is bound to the account id the page chose: another id is refused.
    let (credential, _) = passkey_for(&app, &form, "grace");
    let fields = [("username", "grace"), ("email", "grace@example.com"), ("credential", credential.as_str())];
    let swapped = [fields.as_slice(), &[("user_handle", "01a2f0c4-0000-7000-8000-000000000000")]].concat();
    let refused = browser.submit(REGISTER, &form, &swapped).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.body.contains("The passkey was not added"), "{}", refused.body);

    let form = sign_up_form(&mut browser).await;
    let (credential, device) = passkey_for(&app, &form, "grace");
    let fields = [("username", "grace"), ("email", "grace@example.com"), ("credential", credential.as_str())];
    let asked = browser.submit(REGISTER, &form, &fields).await;
    assert!(asked.body.contains("Confirm your email address"), "{}", asked.body);
    assert_eq!(app.get("/realms/acme/users?searchTerm=grace").await.items().len(), 0, "nobody before the code");

    let code = code_sent(&mail, &app, "grace@example.com").await;
    let confirmed = browser.submit(CONFIRM, &asked, &[("code", &code)]).await;
    assert_eq!(confirmed.status, StatusCode::SEE_OTHER, "{}", confirmed.body);
    let tokens = exchange(&app, &web, &confirmed.param("code").unwrap(), VERIFIER).await;
    let id_token = claims(tokens.body["id_token"].as_str().unwrap());
    assert_eq!((&id_token["preferred_username"], &id_token["acr"]), (&json!("grace"), &json!("phrh")));
    assert_eq!(id_token["amr"], json!(["hwk", "mfa"]));

    // The account has the passkey and no password.
    let grace = id_token["sub"].as_str().unwrap();
    let kept = app.get(&format!("/realms/acme/users/{grace}/authenticators")).await;
    let kinds: Vec<&str> = kept.data().as_array().unwrap().iter().map(|a| a["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["Passkey"]);
    let added = app.events("authenticator_added").await;
    assert_eq!(added.last().unwrap().2["user_id"], grace);
    let pkce = challenge(VERIFIER);
    let mut later = Browser::new(&app);
    let login = later.authorize("acme", &request("web", "s", "n", &pkce)).await;
    for password in ["", "a long passphrase"] {
        let refused = later.sign_in("acme", &login, "grace", password).await;
        assert_ne!(refused.status, StatusCode::SEE_OTHER, "no password signs in");
    }
    let login = later.authorize("acme", &request("web", "s", "n", &pkce)).await;
    let (credential, _) = assertion(&app, &login, &device, None, true);
    let signed_in = post_assertion(&mut later, &login, &credential).await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER, "{}", signed_in.body);
}
