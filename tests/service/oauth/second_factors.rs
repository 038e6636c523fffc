//! Authenticators beyond the password: a person enrols an authenticator app whose codes a stock
//! library (python `pyotp`) computes from the `otpauth://` URI, gets ten recovery codes once, and
//! manages their authenticators with their own token; an administrator lists them (never a
//! secret) and removes one or all, each change announced and trailed. A browser's sign-in then
//! asks for a code after the password (each accepted once, wrong ones counted by the lockout),
//! and the password grant, which cannot ask, refuses the person.

use std::process::Command;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::oauth::browser::{Browser, Page, VERIFIER, challenge, exchange, request, web_client};
use crate::support::{Answer, TestApp, TestClient, answer, claims, python_tool, spawn_app};

const PASSWORD: &str = "analytical engine";

struct Realm {
    portal: TestClient,
    /// A machine client, whose tokens tell the service's time.
    machine: TestClient,
    ada: String,
}

async fn realm(app: &TestApp) -> Realm {
    app.create_realm("acme").await;
    let portal = app.create_client("acme", "portal", &["password"], &[]).await;
    let machine = app.create_client("acme", "machine", &["client_credentials"], &[]).await;
    let ada = app.create_user("acme", "ada", PASSWORD).await;
    app.create_user("acme", "grace", PASSWORD).await;
    Realm { portal, machine, ada }
}

/// A person's access token at the realm's own client.
async fn token_of(app: &TestApp, realm: &Realm, username: &str) -> String {
    let form = [("grant_type", "password"), ("username", username), ("password", PASSWORD)];
    let answer = app.token(&realm.portal, &form).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body["access_token"].as_str().unwrap().to_owned()
}

/// The service's clock now, in Unix seconds: the `iat` of a token issued now.
async fn service_now(app: &TestApp, realm: &Realm) -> i64 {
    let answer = app.token(&realm.machine, &[("grant_type", "client_credentials")]).await;
    claims(answer.body["access_token"].as_str().unwrap())["iat"].as_i64().unwrap()
}

/// Enrols an authenticator app for the person of `token`: its URI and the recovery codes.
async fn enrol(app: &TestApp, realm: &Realm, token: &str) -> (String, Vec<String>) {
    let begun = begin(app, token).await;
    let uri = begun["uri"].as_str().unwrap().to_owned();
    let code = pyotp_code(&uri, service_now(app, realm).await);
    let kept = confirm(app, token, &[("enrolment", begun["enrolment"].as_str().unwrap()), ("code", &code)]).await;
    assert_eq!(kept.status, StatusCode::CREATED, "{:?}", kept.body);
    let codes = kept.body["recovery_codes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_owned());
    (uri, codes.collect())
}

/// The code pyotp computes from `uri` at `unix_seconds`.
pub fn pyotp_code(uri: &str, unix_seconds: i64) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/authenticators/totp_code.py");
    let output =
        Command::new(python_tool("python")).arg(script).arg(uri).arg(unix_seconds.to_string()).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

fn account(app: &TestApp, path: &str) -> String {
    format!("{}/realms/acme/account/authenticators{path}", app.base)
}

async fn begin(app: &TestApp, token: &str) -> Value {
    let begun = answer(app.http.post(account(app, "/totp")).bearer_auth(token).send().await.unwrap()).await;
    assert_eq!(begun.status, StatusCode::OK, "{:?}", begun.body);
    begun.body
}

async fn confirm(app: &TestApp, token: &str, form: &[(&str, &str)]) -> Answer {
    answer(app.http.post(account(app, "/totp/confirm")).bearer_auth(token).form(form).send().await.unwrap()).await
}

async fn listed(app: &TestApp, token: &str) -> Vec<Value> {
    let list = answer(app.http.get(account(app, "")).bearer_auth(token).send().await.unwrap()).await;
    assert_eq!(list.status, StatusCode::OK, "{:?}", list.body);
    list.body["authenticators"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_person_enrols_an_app_whose_codes_pyotp_computes_and_gets_ten_recovery_codes_once() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    let token = token_of(&app, &realm, "ada").await;
    let begun = begin(&app, &token).await;
    let uri = begun["uri"].as_str().unwrap();
    assert!(uri.starts_with("otpauth://totp/acme:ada?secret="), "{uri}");
    assert!(uri.contains(&format!("secret={}", begun["secret"].as_str().unwrap())));
    assert_eq!(
        (begun["algorithm"].as_str(), begun["digits"].as_i64(), begun["period"].as_i64()),
        (Some("SHA1"), Some(6), Some(30))
    );
    let qr = begun["qr_code"].as_str().unwrap();
    assert!(qr.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"") && qr.contains("<path d=\"M"), "{qr}");
    assert!(listed(&app, &token).await.is_empty(), "nothing is kept before the code comes back");

    let enrolment = begun["enrolment"].as_str().unwrap();
    let now = service_now(&app, &realm).await;
    let right = pyotp_code(uri, now);
    let wrong = format!("{:06}", (right.parse::<u32>().unwrap() + 1) % 1_000_000);
    let refused = confirm(&app, &token, &[("enrolment", enrolment), ("code", &wrong)]).await;
    assert_eq!(
        (refused.status, refused.body["error_code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("InvalidOneTimeCode"))
    );
    assert!(listed(&app, &token).await.is_empty());

    let kept = confirm(&app, &token, &[("enrolment", enrolment), ("code", &right), ("name", "Ada's phone")]).await;
    assert_eq!(kept.status, StatusCode::CREATED, "{:?}", kept.body);
    assert_eq!(kept.body["authenticator"]["kind"], "Totp");
    assert_eq!(kept.body["authenticator"]["name"], "Ada's phone");
    let codes: Vec<&str> =
        kept.body["recovery_codes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(codes.len(), 10);
    assert!(codes.iter().all(|c| c.len() == 14 && c.split('-').count() == 3), "{codes:?}");
    assert_eq!(codes.iter().collect::<std::collections::HashSet<_>>().len(), 10, "ten different codes");

    let all = listed(&app, &token).await;
    let kinds: Vec<_> = all.iter().map(|a| (a["kind"].as_str().unwrap(), a["codesLeft"].as_i64())).collect();
    assert_eq!(kinds, [("Totp", None), ("RecoveryCodes", Some(10))]);
    let text = serde_json::to_string(&all).unwrap();
    assert!(
        !text.contains(begun["secret"].as_str().unwrap()) && !text.contains(codes[0]),
        "no secret is listed: {text}"
    );

    // A second app comes without new recovery codes: the first set stands.
    let second = begin(&app, &token).await;
    let code = pyotp_code(second["uri"].as_str().unwrap(), now);
    let kept = confirm(&app, &token, &[("enrolment", second["enrolment"].as_str().unwrap()), ("code", &code)]).await;
    assert_eq!(kept.status, StatusCode::CREATED, "{:?}", kept.body);
    assert_eq!(kept.body["authenticator"]["name"], "Authenticator app");
    assert_eq!(kept.body["recovery_codes"], Value::Null);

    let added = app.events("authenticator_added").await;
    let mut kinds: Vec<_> = added.iter().map(|(_, _, data)| data["kind"].as_str().unwrap()).collect();
    kinds.sort_unstable();
    assert_eq!(kinds, ["RecoveryCodes", "Totp", "Totp"]);
    let (realm_id, client_id, data) = added.iter().find(|(_, _, data)| data["name"] == "Ada's phone").unwrap();
    assert_eq!((realm_id.as_deref(), client_id.as_deref()), (Some("acme"), None));
    assert_eq!(data["user_id"], realm.ada);
    assert_eq!(data["username"], "ada");
    assert_eq!(data["name"], "Ada's phone");
    assert_eq!(data["by"], "user");
}

#[tokio::test]
async fn an_enrolment_is_its_persons_for_ten_minutes_and_kept_once() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    let ada = token_of(&app, &realm, "ada").await;
    let grace = token_of(&app, &realm, "grace").await;
    let begun = begin(&app, &ada).await;
    let (enrolment, uri) = (begun["enrolment"].as_str().unwrap(), begun["uri"].as_str().unwrap());
    let now = service_now(&app, &realm).await;

    let by_grace = confirm(&app, &grace, &[("enrolment", enrolment), ("code", &pyotp_code(uri, now))]).await;
    assert_eq!(by_grace.body["error_code"], "InvalidEnrolment", "another person's enrolment: {:?}", by_grace.body);
    let middle = enrolment.len() / 2;
    let other = if &enrolment[middle..=middle] == "A" { "B" } else { "A" };
    let altered = format!("{}{other}{}", &enrolment[..middle], &enrolment[middle + 1..]);
    let altered = confirm(&app, &ada, &[("enrolment", &altered), ("code", &pyotp_code(uri, now))]).await;
    assert_eq!(altered.body["error_code"], "InvalidEnrolment", "{:?}", altered.body);
    let missing = confirm(&app, &ada, &[("enrolment", enrolment)]).await;
    assert_eq!(
        (missing.status, missing.body["error_code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("MissingParameter"))
    );
    let long_name = "n".repeat(101);
    let named =
        confirm(&app, &ada, &[("enrolment", enrolment), ("code", &pyotp_code(uri, now)), ("name", &long_name)]).await;
    assert_eq!(named.body["error_code"], "InvalidName", "{:?}", named.body);

    let kept = confirm(&app, &ada, &[("enrolment", enrolment), ("code", &pyotp_code(uri, now))]).await;
    assert_eq!(kept.status, StatusCode::CREATED, "{:?}", kept.body);
    app.advance(30).await;
    let twice = confirm(&app, &ada, &[("enrolment", enrolment), ("code", &pyotp_code(uri, now + 30))]).await;
    assert_eq!(twice.body["error_code"], "InvalidEnrolment", "confirmed once only: {:?}", twice.body);
    assert_eq!(listed(&app, &ada).await.len(), 2, "one app and its recovery codes");

    // Grace's enrolment, confirmed eleven minutes on (with a token of hers from then).
    let late = begin(&app, &grace).await;
    app.advance(601).await;
    let grace = token_of(&app, &realm, "grace").await;
    let now = service_now(&app, &realm).await;
    let code = pyotp_code(late["uri"].as_str().unwrap(), now);
    let lapsed = confirm(&app, &grace, &[("enrolment", late["enrolment"].as_str().unwrap()), ("code", &code)]).await;
    assert_eq!(lapsed.body["error_code"], "InvalidEnrolment", "ten minutes passed: {:?}", lapsed.body);
}

#[tokio::test]
async fn a_code_one_step_either_side_of_the_clock_is_accepted_and_no_further() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    let ada = token_of(&app, &realm, "ada").await;
    let now = service_now(&app, &realm).await;
    for (offset, accepted) in [(-60, false), (60, false), (-30, true), (30, true)] {
        let begun = begin(&app, &ada).await;
        let code = pyotp_code(begun["uri"].as_str().unwrap(), now + offset);
        let answer = confirm(&app, &ada, &[("enrolment", begun["enrolment"].as_str().unwrap()), ("code", &code)]).await;
        assert_eq!(answer.status == StatusCode::CREATED, accepted, "{offset} s: {:?}", answer.body);
    }
}

#[tokio::test]
async fn a_person_renews_their_recovery_codes_and_removes_an_app_with_their_own_token() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    let ada = token_of(&app, &realm, "ada").await;
    let renew = || async {
        answer(app.http.post(account(&app, "/recovery-codes")).bearer_auth(&ada).send().await.unwrap()).await
    };
    let early = renew().await;
    assert_eq!(
        (early.status, early.body["error_code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("AuthenticatorRefused"))
    );

    let begun = begin(&app, &ada).await;
    let code = pyotp_code(begun["uri"].as_str().unwrap(), service_now(&app, &realm).await);
    let kept = confirm(&app, &ada, &[("enrolment", begun["enrolment"].as_str().unwrap()), ("code", &code)]).await;
    let first: Vec<Value> = kept.body["recovery_codes"].as_array().unwrap().clone();
    let renewed = renew().await;
    assert_eq!(renewed.status, StatusCode::OK, "{:?}", renewed.body);
    let second = renewed.body["recovery_codes"].as_array().unwrap();
    assert_eq!(second.len(), 10);
    assert!(second.iter().all(|code| !first.contains(code)), "a new set");
    let sets: Vec<_> = listed(&app, &ada).await.into_iter().filter(|a| a["kind"] == "RecoveryCodes").collect();
    assert_eq!(sets.len(), 1, "the old set is gone");

    // Grace's token removes nothing of Ada's; Ada's own removes her app, and with her last second
    // factor her recovery codes.
    let app_id = kept.body["authenticator"]["id"].as_str().unwrap();
    let grace = token_of(&app, &realm, "grace").await;
    let by_grace =
        answer(app.http.delete(account(&app, &format!("/{app_id}"))).bearer_auth(&grace).send().await.unwrap()).await;
    assert_eq!(
        (by_grace.status, by_grace.body["error_code"].as_str()),
        (StatusCode::NOT_FOUND, Some("AuthenticatorNotFound"))
    );
    let removed = app.http.delete(account(&app, &format!("/{app_id}"))).bearer_auth(&ada).send().await.unwrap();
    assert_eq!(removed.status(), StatusCode::NO_CONTENT);
    assert!(listed(&app, &ada).await.is_empty());
    let mut removals: Vec<_> = app
        .events("authenticator_removed")
        .await
        .into_iter()
        .map(|(_, _, d)| (d["kind"].as_str().unwrap().to_owned(), d["by"].as_str().unwrap().to_owned()))
        .collect();
    removals.sort_unstable();
    let by_user = |kind: &str| (kind.to_owned(), "user".to_owned());
    assert_eq!(removals, [by_user("RecoveryCodes"), by_user("RecoveryCodes"), by_user("Totp")]);
    let anonymous = answer(app.http.get(account(&app, "")).send().await.unwrap()).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn an_administrator_lists_a_persons_authenticators_and_resets_them_with_a_trail() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    let ada = token_of(&app, &realm, "ada").await;
    let now = service_now(&app, &realm).await;
    for _ in 0..2 {
        let begun = begin(&app, &ada).await;
        let code = pyotp_code(begun["uri"].as_str().unwrap(), now);
        confirm(&app, &ada, &[("enrolment", begun["enrolment"].as_str().unwrap()), ("code", &code)]).await;
    }
    let path = format!("/realms/acme/users/{}/authenticators", realm.ada);
    let listed = app.get(&path).await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    let items = listed.data().as_array().unwrap().clone();
    assert_eq!(items.len(), 3);
    let mut fields: Vec<_> = items[0].as_object().unwrap().keys().cloned().collect();
    fields.sort_unstable();
    assert_eq!(fields, ["createdAt", "id", "kind", "lastUsedAt", "name"], "never a secret");

    let reader = app.key_with(&["Auditor"], None).await;
    let refused = app.call_as(&reader, reqwest::Method::DELETE, &path, None).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "removing needs user:update");
    assert_eq!(app.call_as(&reader, reqwest::Method::GET, &path, None).await.status, StatusCode::OK);

    let one = items[0]["id"].as_str().unwrap();
    assert_eq!(app.delete(&format!("{path}/{one}")).await.status, StatusCode::OK);
    assert_eq!(app.delete(&format!("{path}/{one}")).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.get(&path).await.data().as_array().unwrap().len(), 2, "the other app keeps the recovery codes");
    let reset = app.delete(&path).await;
    assert_eq!((reset.status, reset.data()["removed"].as_i64()), (StatusCode::OK, Some(2)), "{:?}", reset.body);
    assert_eq!(app.get(&path).await.data(), &json!([]));
    let removed = app.events("authenticator_removed").await;
    assert_eq!(removed.len(), 3);
    assert!(removed.iter().all(|(_, _, data)| data["by"] == "administrator"));

    // The trail holds the three removals, and the refusals (the auditor's, the second removal).
    let refusals = app.get("/audit-trail?realmId=acme&resourceType=authenticator&status=Refused").await;
    assert_eq!(refusals.items().len(), 2, "{:?}", refusals.body);
    let trail = app.get("/audit-trail?realmId=acme&resourceType=authenticator&status=Succeeded").await;
    assert_eq!(trail.status, StatusCode::OK, "{:?}", trail.body);
    let actions: Vec<_> = trail.items().iter().map(|e| (e["action"].clone(), e["parentId"].clone())).collect();
    assert_eq!(actions.len(), 3, "{:?}", trail.body);
    assert!(actions.iter().all(|(action, parent)| action == "Delete" && parent == &json!(realm.ada)), "{actions:?}");

    let unknown = app.get("/realms/acme/users/nobody/authenticators").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

const STEP: &str = "/realms/acme/protocol/openid-connect/auth/second-factor";

/// A browser signing Ada in at `web` with her password: the page asking for her code.
async fn code_asked(app: &TestApp) -> (Browser, Page) {
    let mut browser = Browser::new(app);
    let pkce = challenge(VERIFIER);
    let login = browser.authorize("acme", &request("web", "s", "n-0S6_WzA2Mj", &pkce)).await;
    let asked = browser.sign_in("acme", &login, "ada", PASSWORD).await;
    assert_eq!(asked.status, StatusCode::OK, "{}", asked.body);
    assert!(
        asked.body.contains(r#"name="code""#) && asked.body.contains(r#"autocomplete="one-time-code""#),
        "{}",
        asked.body
    );
    assert!(asked.input("ticket").is_some());
    (browser, asked)
}

/// The methods the ID token of a code names.
async fn methods_of(app: &TestApp, web: &TestClient, signed_in: &Page) -> Value {
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER, "{}", signed_in.body);
    let tokens = exchange(app, web, &signed_in.param("code").unwrap(), VERIFIER).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    let id_token = claims(tokens.body["id_token"].as_str().unwrap());
    // More than one factor: the level of assurance says so.
    assert_eq!(id_token["acr"], "2", "{id_token}");
    id_token["amr"].clone()
}

#[tokio::test]
async fn a_browser_sign_in_asks_for_a_code_after_the_password_and_takes_each_code_once() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    let web = web_client(&app, "web").await;
    let ada = token_of(&app, &realm, "ada").await;
    let (uri, recovery) = enrol(&app, &realm, &ada).await;
    // The code of the enrolment's step was used by it.
    app.advance(30).await;

    let (mut browser, asked) = code_asked(&app).await;
    let now = service_now(&app, &realm).await;
    let right = pyotp_code(&uri, now);
    let wrong = format!("{:06}", (right.parse::<u32>().unwrap() + 500_000) % 1_000_000);
    let refused = browser.submit(STEP, &asked, &[("code", &wrong)]).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.body.contains("That code is not right"), "{}", refused.body);
    assert!(!browser.cookies.contains_key("castellan_session"), "not signed in yet");
    let signed_in = browser.submit(STEP, &refused, &[("code", &right)]).await;
    assert_eq!(methods_of(&app, &web, &signed_in).await, json!(["pwd", "otp"]));

    // The same code once more, from another browser: used already. A recovery code instead.
    let (mut other, asked) = code_asked(&app).await;
    let again = other.submit(STEP, &asked, &[("code", &right)]).await;
    assert_eq!(again.status, StatusCode::BAD_REQUEST, "a code is accepted once");
    let typed = recovery[0].to_uppercase().replace('-', "");
    let by_recovery = other.submit(STEP, &again, &[("code", &typed)]).await;
    assert_eq!(methods_of(&app, &web, &by_recovery).await, json!(["pwd", "mfa"]));
    let (mut third, asked) = code_asked(&app).await;
    let reused = third.submit(STEP, &asked, &[("code", &recovery[0])]).await;
    assert_eq!(reused.status, StatusCode::BAD_REQUEST, "a recovery code is accepted once");
    let left = listed(&app, &ada).await.into_iter().find(|a| a["kind"] == "RecoveryCodes").unwrap();
    assert_eq!(left["codesLeft"], 9);

    let failed: Vec<_> =
        app.events("login_failed").await.into_iter().map(|(_, _, d)| d["failure_reason"].clone()).collect();
    assert_eq!(failed, vec![json!("invalid_second_factor"); 3]);

    // The password grant cannot ask for the code: it refuses her, and still takes Grace.
    let form = [("grant_type", "password"), ("username", "ada"), ("password", PASSWORD)];
    let grant = app.token(&realm.portal, &form).await;
    assert_eq!((grant.status, grant.body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")));
    assert_eq!(grant.body["error_code"], "SecondFactorRequired");
    token_of(&app, &realm, "grace").await;
}

#[tokio::test]
async fn wrong_codes_lock_the_account_as_wrong_passwords_do_and_the_step_lapses() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    web_client(&app, "web").await;
    let ada = token_of(&app, &realm, "ada").await;
    let (uri, _) = enrol(&app, &realm, &ada).await;
    app.advance(30).await;

    // The realm's default lockout: five failures in a row.
    let (mut browser, page) = code_asked(&app).await;
    let page = five_wrong_codes(&app, &realm, &mut browser, page, &uri).await;
    let right = pyotp_code(&uri, service_now(&app, &realm).await);
    let locked = browser.submit(STEP, &page, &[("code", &right)]).await;
    assert!(locked.body.contains("Too many failed sign-ins"), "{}", locked.body);
    assert!(locked.location.is_none());
    let lockouts = app.events("user_locked_out").await;
    assert_eq!(lockouts.len(), 1);
    assert_eq!(lockouts[0].2["user_id"], realm.ada);

    // After the lockout, a step left waiting five minutes is not taken.
    app.advance(15 * 60).await;
    let (mut browser, asked) = code_asked(&app).await;
    app.advance(301).await;
    let code = pyotp_code(&uri, service_now(&app, &realm).await);
    let lapsed = browser.submit(STEP, &asked, &[("code", &code)]).await;
    assert!(lapsed.body.contains("waited too long") && lapsed.shows_login_form(), "{}", lapsed.body);
}

/// Five codes the app of `uri` does not show, typed on the second step `page`: the page after them.
async fn five_wrong_codes(app: &TestApp, realm: &Realm, browser: &mut Browser, mut page: Page, uri: &str) -> Page {
    let right = pyotp_code(uri, service_now(app, realm).await);
    let wrong = format!("{:06}", (right.parse::<u32>().unwrap() + 500_000) % 1_000_000);
    for _ in 0..5 {
        page = browser.submit(STEP, &page, &[("code", &wrong)]).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.body);
    }
    page
}

#[tokio::test]
async fn codes_guessed_after_the_right_password_from_a_stranger_expose_it_in_an_incident() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    web_client(&app, "web").await;
    let ada = token_of(&app, &realm, "ada").await;
    let (uri, _) = enrol(&app, &realm, &ada).await;
    app.advance(30).await;

    // From an address Ada never signed in from, her right password and five wrong codes.
    let mut stranger = Browser::new(&app);
    stranger.address = Some("203.0.113.7");
    let pkce = challenge(VERIFIER);
    let login = stranger.authorize("acme", &request("web", "s", "n", &pkce)).await;
    let page = stranger.sign_in("acme", &login, "ada", PASSWORD).await;
    five_wrong_codes(&app, &realm, &mut stranger, page, &uri).await;
    let incidents = app.get("/threat-incidents?realmId=acme").await;
    let incident = &incidents.items()[0];
    assert_eq!((&incident["kind"], &incident["severity"]), (&json!("SecondFactorGuessing"), &json!("Critical")));
    let read = app.get(&format!("/threat-incidents/{}", incident["id"].as_str().unwrap())).await;
    let kinds: Vec<_> = read.data()["measures"].as_array().unwrap().iter().map(|m| m["type"].clone()).collect();
    assert_eq!(kinds, [json!("PasswordExposed"), json!("SourceBlocked")], "{:?}", read.body);

    // Her password is refused as if wrong anywhere she never signed in from; where she did, she
    // chooses a new one.
    let mut elsewhere = Browser::new(&app);
    elsewhere.address = Some("198.51.100.9");
    let login = elsewhere.authorize("acme", &request("web", "s", "n", &pkce)).await;
    let refused = elsewhere.sign_in("acme", &login, "ada", PASSWORD).await;
    assert!(refused.body.contains("The username or password is not correct."), "{}", refused.body);
    let mut own = Browser::new(&app);
    let login = own.authorize("acme", &request("web", "s", "n", &pkce)).await;
    let change = own.sign_in("acme", &login, "ada", PASSWORD).await;
    assert!(change.body.contains("Choose a new password"), "{}", change.body);

    // Wrong codes from her own address are hers: no incident.
    let grace = token_of(&app, &realm, "grace").await;
    let (uri, _) = enrol(&app, &realm, &grace).await;
    app.advance(30).await;
    let mut hers = Browser::new(&app);
    let login = hers.authorize("acme", &request("web", "s", "n", &pkce)).await;
    let page = hers.sign_in("acme", &login, "grace", PASSWORD).await;
    five_wrong_codes(&app, &realm, &mut hers, page, &uri).await;
    assert_eq!(app.get("/threat-incidents?realmId=acme").await.items().len(), 1);
}

#[tokio::test]
async fn a_person_with_an_app_and_a_passkey_chooses_the_passkey_on_the_second_step() {
    use crate::oauth::passkeys::{assertion, post_assertion, register};
    let app = spawn_app().await;
    let realm = realm(&app).await;
    let web = web_client(&app, "web").await;
    let ada = token_of(&app, &realm, "ada").await;
    enrol(&app, &realm, &ada).await;
    let (kept, device) = register(&app, &ada, true).await;
    assert_eq!(kept.status, StatusCode::CREATED, "{:?}", kept.body);

    let (mut browser, asked) = code_asked(&app).await;
    assert!(asked.body.contains(r#"id="passkey-sign-in""#), "the passkey is offered: {}", asked.body);
    let (credential, _) = assertion(&app, &asked, &device, None, true);
    let signed_in = post_assertion(&mut browser, &asked, &credential).await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER, "{}", signed_in.body);
    let tokens = exchange(&app, &web, &signed_in.param("code").unwrap(), VERIFIER).await;
    let id_token = claims(tokens.body["id_token"].as_str().unwrap());
    assert_eq!((&id_token["acr"], &id_token["amr"]), (&json!("phrh"), &json!(["hwk", "mfa"])));
}

#[tokio::test]
async fn on_the_page_of_sign_in_methods_a_person_adds_an_app_whose_codes_pyotp_computes() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    web_client(&app, "web").await;
    let mut browser = Browser::new(&app);
    let pkce = challenge(VERIFIER);
    let login = browser.authorize("acme", &request("web", "s", "n", &pkce)).await;
    assert_eq!(browser.sign_in("acme", &login, "ada", PASSWORD).await.status, StatusCode::SEE_OTHER);

    let path = "/realms/acme/account/security";
    let methods = browser.visit(path, &[]).await;
    let begun = browser.submit_form(path, &methods, "app-add", &[("action", "add-app")]).await;
    assert!(begun.body.contains("<svg") && begun.body.contains(r#"id="app-confirm""#), "{}", begun.body);
    let marker = "<code>";
    let at = begun.body.find(marker).expect("the key as text") + marker.len();
    let secret = &begun.body[at..at + begun.body[at..].find('<').unwrap()];
    assert!(!secret.is_empty());
    let wrong = browser.submit_form(path, &begun, "app-confirm", &[("code", "000000")]).await;
    assert!(wrong.body.contains("That code is not the one the app shows now"), "{}", wrong.body);
    assert!(listed_kinds(&app, &realm).await.is_empty(), "nothing kept before the right code");
    // The person starts again: a new key.
    let begun = browser.submit_form(path, &wrong, "app-add", &[("action", "add-app")]).await;
    let at = begun.body.find(marker).expect("the key as text") + marker.len();
    let secret = &begun.body[at..at + begun.body[at..].find('<').unwrap()];
    let uri = format!("otpauth://totp/acme:ada?secret={secret}");
    let code = pyotp_code(&uri, service_now(&app, &realm).await);
    let fields = [("code", code.as_str()), ("name", "Ada's phone")];
    let kept = browser.submit_form(path, &begun, "app-confirm", &fields).await;
    assert!(kept.body.contains("Authenticator app added"), "{}", kept.body);
    assert!(
        kept.body.contains("<h2>Ada&#39;s phone</h2>") || kept.body.contains("<h2>Ada's phone</h2>"),
        "{}",
        kept.body
    );
    assert_eq!(kept.body.matches("<li><code>").count(), 10, "ten recovery codes, shown once: {}", kept.body);
    let again = browser.visit(path, &[]).await;
    assert_eq!(again.body.matches("<li><code>").count(), 0, "never shown again");
    assert!(again.body.contains("Recovery codes"), "{}", again.body);
    assert_eq!(listed_kinds(&app, &realm).await, ["Totp", "RecoveryCodes"]);
}

/// The kinds of Ada's authenticators, as administrators list them.
async fn listed_kinds(app: &TestApp, realm: &Realm) -> Vec<String> {
    let listed = app.get(&format!("/realms/acme/users/{}/authenticators", realm.ada)).await;
    listed.data().as_array().unwrap().iter().map(|a| a["kind"].as_str().unwrap().to_owned()).collect()
}
