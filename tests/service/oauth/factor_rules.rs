//! When a sign-in asks for a second factor: the realm's rule and a client's stricter one (Never,
//! WhenEnrolled, Always, PhishingResistant). Under Always a person with no factor adds an
//! authenticator app (codes computed by python `pyotp`) or a passkey (python `soft-webauthn`)
//! before the sign-in ends; under PhishingResistant only a passkey will do; a person with several
//! factors chooses among them, a phone being one of them; single sign-on answers a client only
//! from a sign-in as strong as its rule; the password grant is refused where a page would ask; and
//! the platform realm's rule holds for console sign-in.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::oauth::browser::{Browser, Page, REDIRECT, VERIFIER, challenge, exchange, request, web_client};
use crate::oauth::passkeys::{attribute, soft_webauthn};
use crate::oauth::second_factors::pyotp_code;
use crate::support::{TestApp, TestClient, answer, claims, spawn_app};

const PASSWORD: &str = "analytical engine";
const ENROL: &str = "/realms/acme/protocol/openid-connect/auth/enrol";
const STEP: &str = "/realms/acme/protocol/openid-connect/auth/second-factor";

struct Realm {
    web: TestClient,
    portal: TestClient,
    /// A machine client, whose tokens tell the service's time.
    machine: TestClient,
}

async fn realm(app: &TestApp) -> Realm {
    app.create_realm("acme").await;
    let web = web_client(app, "web").await;
    let portal = app.create_client("acme", "portal", &["password"], &[]).await;
    let machine = app.create_client("acme", "machine", &["client_credentials"], &[]).await;
    app.create_user("acme", "ada", PASSWORD).await;
    app.create_user("acme", "grace", PASSWORD).await;
    Realm { web, portal, machine }
}

async fn set_rule(app: &TestApp, rule: &str) {
    let updated = app.put("/realms/acme", json!({ "secondFactor": rule })).await;
    assert_eq!(updated.status, StatusCode::OK, "{:?}", updated.body);
    assert_eq!(updated.body["data"]["secondFactor"], rule, "{:?}", updated.body);
}

/// The password grant's answer for `username`.
async fn password_grant(app: &TestApp, realm: &Realm, username: &str) -> crate::support::Answer {
    app.token(&realm.portal, &[("grant_type", "password"), ("username", username), ("password", PASSWORD)]).await
}

/// What the right password of `username` leads to, in a new browser, at `client`.
async fn after_password(app: &TestApp, client: &str, username: &str) -> (Browser, Page) {
    let mut browser = Browser::new(app);
    let pkce = challenge(VERIFIER);
    let login = browser.authorize("acme", &request(client, "s", "n", &pkce)).await;
    assert!(login.shows_login_form(), "{}", login.body);
    let next = browser.sign_in("acme", &login, username, PASSWORD).await;
    (browser, next)
}

/// The `acr` and `amr` of the ID token a code redirect carries.
async fn assurance_of(app: &TestApp, web: &TestClient, redirect: &Page) -> (Value, Value) {
    assert_eq!(redirect.status, StatusCode::SEE_OTHER, "{}", redirect.body);
    let tokens = exchange(app, web, &redirect.param("code").unwrap(), VERIFIER).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    let id_token = claims(tokens.body["id_token"].as_str().unwrap());
    (id_token["acr"].clone(), id_token["amr"].clone())
}

/// The service's clock in Unix seconds, from the `iat` of a fresh token.
async fn service_now(app: &TestApp, realm: &Realm) -> i64 {
    let answer = app.token(&realm.machine, &[("grant_type", "client_credentials")]).await;
    claims(answer.body["access_token"].as_str().unwrap())["iat"].as_i64().unwrap()
}

/// The key an enrolment page shows, as the `otpauth://` URI an app would scan.
fn shown_uri(page: &Page) -> String {
    let start = page.body.find("<code>").unwrap_or_else(|| panic!("a key: {}", page.body)) + "<code>".len();
    let key = &page.body[start..start + page.body[start..].find('<').unwrap()];
    format!("otpauth://totp/acme:ada?secret={key}&issuer=acme")
}

#[tokio::test]
async fn under_always_a_person_without_a_factor_adds_an_app_before_the_sign_in_ends() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    set_rule(&app, "Always").await;

    let (mut browser, asked) = after_password(&app, "web", "ada").await;
    assert_eq!(asked.status, StatusCode::OK, "{}", asked.body);
    assert!(asked.body.contains("Add a second factor"), "{}", asked.body);
    assert!(asked.body.contains(r#"id="passkey-register""#) && asked.body.contains(r#"value="add-app""#));
    assert!(!browser.cookies.contains_key("castellan_session"), "not signed in before a factor is added");

    let app_step = browser.submit_form(ENROL, &asked, "app-add", &[("action", "add-app")]).await;
    assert_eq!(app_step.status, StatusCode::OK, "{}", app_step.body);
    assert!(app_step.body.contains("<svg xmlns="), "a QR code: {}", app_step.body);
    let uri = shown_uri(&app_step);
    let now = service_now(&app, &realm).await;
    let right = pyotp_code(&uri, now);
    let wrong = format!("{:06}", (right.parse::<u32>().unwrap() + 500_000) % 1_000_000);
    let refused = browser.submit(ENROL, &app_step, &[("code", &wrong)]).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(shown_uri(&refused), uri, "the same key is shown again");
    assert!(!browser.cookies.contains_key("castellan_session"));

    let codes = browser.submit(ENROL, &refused, &[("code", &right)]).await;
    assert_eq!(codes.status, StatusCode::OK, "{}", codes.body);
    assert!(codes.body.contains("Keep your recovery codes"), "{}", codes.body);
    assert_eq!(codes.body.matches("<li><code>").count(), 10, "ten recovery codes, shown once: {}", codes.body);
    assert!(browser.cookies.contains_key("castellan_session"), "signed in with the password and the app");
    let onward = browser.submit(ENROL, &codes, &[("action", "continue")]).await;
    assert_eq!(assurance_of(&app, &realm.web, &onward).await, (json!("2"), json!(["pwd", "otp"])));
    let added = app.events("authenticator_added").await;
    let kinds: Vec<_> = added.iter().map(|(_, _, d)| d["kind"].clone()).collect();
    assert_eq!(kinds, [json!("Totp"), json!("RecoveryCodes")]);

    // The next sign-in asks for the app's code; its ticket does not open the enrolment step.
    app.advance(30).await;
    let (mut second, step) = after_password(&app, "web", "ada").await;
    assert!(step.body.contains(r#"name="code""#) && !step.body.contains("Add a second factor"), "{}", step.body);
    let mut copy = Browser::new(&app);
    copy.cookies = second.cookies.clone();
    let skipped = copy.submit(ENROL, &step, &[("action", "add-app")]).await;
    assert!(skipped.shows_login_form() && skipped.body.contains("That took too long."), "{}", skipped.body);
    let code = pyotp_code(&uri, service_now(&app, &realm).await);
    let signed_in = second.submit(STEP, &step, &[("code", &code)]).await;
    assert_eq!(assurance_of(&app, &realm.web, &signed_in).await, (json!("2"), json!(["pwd", "otp"])));

    // The password grant cannot ask, nor have anyone enrol: it refuses both people.
    for username in ["ada", "grace"] {
        let refused = password_grant(&app, &realm, username).await;
        assert_eq!(refused.body["error_code"], "SecondFactorRequired", "{username}: {:?}", refused.body);
    }
}

#[tokio::test]
async fn under_always_a_person_adds_a_passkey_and_an_enrolment_ticket_lapses() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    set_rule(&app, "Always").await;
    let (mut browser, asked) = after_password(&app, "web", "grace").await;

    // A forged credential is refused on the same page; one the authenticator made signs her in.
    let forged = browser.submit_form(ENROL, &asked, "passkey-register", &[("credential", "{}")]).await;
    assert_eq!(forged.status, StatusCode::BAD_REQUEST);
    assert!(forged.body.contains("The passkey was not added"), "{}", forged.body);
    let options: Value = serde_json::from_str(&attribute(&forged, "data-options").replace("&quot;", "\"")).unwrap();
    assert_eq!(options["publicKey"]["user"]["name"], "grace");
    let made = soft_webauthn(&json!({ "op": "create", "options": options, "origin": app.base }));
    let credential = made["credential"].to_string();
    let extra = [("credential", credential.as_str())];
    let signed_in = browser.submit_form(ENROL, &forged, "passkey-register", &extra).await;
    let (acr, amr) = assurance_of(&app, &realm.web, &signed_in).await;
    assert_eq!((acr, amr), (json!("phrh"), json!(["pwd", "hwk", "mfa"])));

    // A ticket left five minutes is not taken.
    let (mut late, asked) = after_password(&app, "web", "ada").await;
    app.advance(301).await;
    let lapsed = late.submit_form(ENROL, &asked, "app-add", &[("action", "add-app")]).await;
    assert!(lapsed.shows_login_form() && lapsed.body.contains("That took too long."), "{}", lapsed.body);
}

#[tokio::test]
async fn under_phishing_resistant_only_a_passkey_will_do() {
    use crate::oauth::passkeys::{assertion, post_assertion};
    let app = spawn_app().await;
    let realm = realm(&app).await;
    set_rule(&app, "PhishingResistant").await;
    let refused = password_grant(&app, &realm, "grace").await;
    assert_eq!(refused.body["error_code"], "SecondFactorRequired", "{:?}", refused.body);

    let (mut browser, asked) = after_password(&app, "web", "ada").await;
    assert!(asked.body.contains("Every sign-in here asks for a passkey"), "{}", asked.body);
    assert!(!asked.body.contains(r#"value="add-app""#), "no app is offered: {}", asked.body);
    let app_asked = browser.submit_form(ENROL, &asked, "passkey-register", &[("action", "add-app")]).await;
    assert!(!app_asked.body.contains("<svg xmlns="), "nor shown when asked: {}", app_asked.body);
    let options: Value = serde_json::from_str(&attribute(&app_asked, "data-options").replace("&quot;", "\"")).unwrap();
    let made = soft_webauthn(&json!({ "op": "create", "options": options, "origin": app.base }));
    let credential = made["credential"].to_string();
    let signed_in = browser.submit_form(ENROL, &app_asked, "passkey-register", &[("credential", &credential)]).await;
    assert_eq!(assurance_of(&app, &realm.web, &signed_in).await.0, json!("phrh"));

    // The next sign-in's second step is the passkey alone: no code is taken.
    let (mut next, step) = after_password(&app, "web", "ada").await;
    assert!(step.body.contains("Use your passkey to finish signing in."), "{}", step.body);
    assert!(!step.body.contains(r#"name="code""#) && step.body.contains(r#"id="passkey-sign-in""#));
    let typed = next.submit(STEP, &step, &[("code", "123456")]).await;
    assert!(typed.shows_login_form() && !next.cookies.contains_key("castellan_session"), "{}", typed.body);
    let (mut again, step) = after_password(&app, "web", "ada").await;
    let (credential, _) = assertion(&app, &step, &made["device"], None, true);
    let by_passkey = post_assertion(&mut again, &step, &credential).await;
    assert_eq!(assurance_of(&app, &realm.web, &by_passkey).await.1, json!(["hwk", "mfa"]));
}

#[tokio::test]
async fn a_clients_stricter_rule_holds_against_single_sign_on_and_never_lets_a_password_alone_in() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    let strict = json!({
        "id": "payroll",
        "name": "Payroll",
        "clientConfiguration": {
            "redirectUris": [REDIRECT], "allowedScopes": ["orders:read"], "secondFactor": "Always",
        },
    });
    let created = app.post("/realms/acme/clients", strict).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert_eq!(created.body["data"]["clientConfiguration"]["secondFactor"], "Always");
    let secret = created.body["data"]["clientSecret"].as_str().unwrap().to_owned();
    let payroll = TestClient { realm: "acme".into(), id: "payroll".into(), secret };

    // Signed in at web with a password alone, Grace is asked again at payroll, and enrols.
    let (mut browser, signed_in) = after_password(&app, "web", "grace").await;
    assert_eq!(assurance_of(&app, &realm.web, &signed_in).await, (json!("1"), json!(["pwd"])));
    let pkce = challenge(VERIFIER);
    let again = browser.authorize("acme", &request("payroll", "p", "n", &pkce)).await;
    assert!(again.shows_login_form(), "no single sign-on below the client's rule: {}", again.body);
    let asked = browser.sign_in("acme", &again, "grace", PASSWORD).await;
    assert!(asked.body.contains("Add a second factor"), "{}", asked.body);

    // A realm that never asks does not ask, whatever the person has; the client's rule still does.
    set_rule(&app, "Never").await;
    let unset =
        app.put("/realms/acme/clients/payroll", json!({ "clientConfiguration": { "secondFactor": null } })).await;
    assert_eq!(unset.status, StatusCode::OK, "{:?}", unset.body);
    assert!(unset.body["data"]["clientConfiguration"].get("secondFactor").is_none(), "{:?}", unset.body);
    let bad = app.put("/realms/acme", json!({ "secondFactor": "Sometimes" })).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{:?}", bad.body);
    let (_, signed_in) = after_password(&app, "payroll", "grace").await;
    assert_eq!(assurance_of(&app, &payroll, &signed_in).await, (json!("1"), json!(["pwd"])));
}

#[tokio::test]
async fn a_person_with_an_app_and_a_phone_chooses_the_phone_on_the_second_step() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    let token = password_grant(&app, &realm, "ada").await.body["access_token"].as_str().unwrap().to_owned();
    let base = format!("{}/realms/acme/account", app.base);
    let phone = answer(
        app.http
            .post(format!("{base}/push-devices"))
            .bearer_auth(&token)
            .form(&[("name", "phone")])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(phone.status, StatusCode::CREATED, "{:?}", phone.body);
    let begun =
        answer(app.http.post(format!("{base}/authenticators/totp")).bearer_auth(&token).send().await.unwrap()).await;
    let code = pyotp_code(begun.body["uri"].as_str().unwrap(), service_now(&app, &realm).await);
    let form = [("enrolment", begun.body["enrolment"].as_str().unwrap()), ("code", code.as_str())];
    let kept = answer(
        app.http
            .post(format!("{base}/authenticators/totp/confirm"))
            .bearer_auth(&token)
            .form(&form)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(kept.status, StatusCode::CREATED, "{:?}", kept.body);

    let (mut browser, step) = after_password(&app, "web", "ada").await;
    assert!(step.body.contains(r#"name="code""#), "{}", step.body);
    assert!(step.body.contains(r#"value="phone""#) && step.body.contains("Confirm on my phone"), "{}", step.body);
    let waiting = browser.submit(STEP, &step, &[("action", "phone")]).await;
    assert!(waiting.body.contains("Confirm on your phone"), "{}", waiting.body);
    assert!(browser.cookies.contains_key("castellan_push"));

    let (id, secret) = (phone.body["device_id"].as_str().unwrap(), phone.body["device_secret"].as_str().unwrap());
    let listed =
        answer(app.http.get(format!("{base}/push-requests")).basic_auth(id, Some(secret)).send().await.unwrap()).await;
    let request_id = listed.body["requests"][0]["push_request_id"].as_str().unwrap().to_owned();
    let approve = format!("{base}/push-requests/{request_id}/answer");
    let approved = answer(
        app.http.post(approve).basic_auth(id, Some(secret)).form(&[("decision", "approve")]).send().await.unwrap(),
    )
    .await;
    assert_eq!(approved.status, StatusCode::OK, "{:?}", approved.body);
    let push = "/realms/acme/protocol/openid-connect/auth/push";
    let signed_in = browser.submit(push, &waiting, &[]).await;
    assert_eq!(assurance_of(&app, &realm.web, &signed_in).await, (json!("2"), json!(["pwd", "push"])));
}

#[tokio::test]
async fn the_platform_realms_rule_holds_for_console_sign_in_passkeys_included() {
    use crate::oauth::passkeys::assertion;
    let app = spawn_app().await;
    let rule = app.put("/realms/platform", json!({ "secondFactor": "PhishingResistant" })).await;
    assert_eq!(rule.status, StatusCode::OK, "{:?}", rule.body);

    let owner_link = app.owner_link.clone().expect("the first start gives the Owner a link");
    let mut browser = Browser::new(&app);
    let choose = browser.open(&owner_link).await;
    let set = "/realms/platform/account/password";
    let done = browser.submit(set, &choose, &[("new_password", "the owner's passphrase")]).await;
    assert!(done.body.contains("Your password is set."), "{}", done.body);
    let console = format!("{}/console/callback", app.base);
    let pkce = challenge(VERIFIER);
    let asked = [
        ("response_type", "code"),
        ("client_id", "platform"),
        ("redirect_uri", console.as_str()),
        ("state", "console"),
        ("code_challenge", pkce.as_str()),
        ("code_challenge_method", "S256"),
    ];
    let page = browser.authorize("platform", &asked).await;
    assert!(page.body.contains(r#"id="passkey-sign-in""#), "the console's page offers passkeys: {}", page.body);
    let enrol = browser.sign_in("platform", &page, "owner", "the owner's passphrase").await;
    assert!(enrol.body.contains("Every sign-in here asks for a passkey"), "{}", enrol.body);
    assert!(!browser.cookies.contains_key("castellan_session"));
    let options: Value = serde_json::from_str(&attribute(&enrol, "data-options").replace("&quot;", "\"")).unwrap();
    let made = soft_webauthn(&json!({ "op": "create", "options": options, "origin": app.base }));
    let credential = made["credential"].to_string();
    let enrol_path = "/realms/platform/protocol/openid-connect/auth/enrol";
    let signed_in = browser.submit_form(enrol_path, &enrol, "passkey-register", &[("credential", &credential)]).await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER, "{}", signed_in.body);
    assert!(signed_in.location.as_ref().unwrap().as_str().starts_with(&console), "{:?}", signed_in.location);

    // The next console sign-in takes the passkey after the password, in the account's access log.
    let mut next = Browser::new(&app);
    let page = next.authorize("platform", &asked).await;
    let step = next.sign_in("platform", &page, "owner", "the owner's passphrase").await;
    assert!(step.body.contains("Use your passkey to finish signing in."), "{}", step.body);
    let (credential, _) = assertion(&app, &step, &made["device"], None, true);
    let path = "/realms/platform/protocol/openid-connect/auth/passkey";
    let by_passkey = next.submit_form(path, &step, "passkey-sign-in", &[("credential", &credential)]).await;
    assert_eq!(by_passkey.status, StatusCode::SEE_OTHER, "{}", by_passkey.body);
    let logged = app.get("/access-logs?pageSize=200").await;
    let passkey_entries = logged.items().iter().filter(|e| e["path"] == path && e["outcome"] == "Accepted").count();
    assert_eq!(passkey_entries, 1, "{:?}", logged.body);
}
