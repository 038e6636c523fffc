//! The console in a real browser: headless Chromium signs in on the platform realm's login page,
//! reads attack protection and dismisses an incident that a real credential-stuffing run opened,
//! applies and reverts the analyst's recommendation, registers a webhook, sends a test, replays a
//! delivery and checks its signature in the page, and creates and withdraws a delegation grant; an
//! Auditor finds no action to take, and a forged form is refused. Every page the tests look at
//! passes axe-core's check with no serious violation; a failure leaves a screenshot of the page in
//! `target/tmp/browser-tests/<test>/`.

use reqwest::StatusCode;
use reqwest::header::{CONTENT_SECURITY_POLICY, LOCATION, SET_COOKIE, X_FRAME_OPTIONS};
use serde_json::json;

use crate::directory::team::{self, join, spawn_mailing};
use crate::operations::webhooks::receiving;
use crate::protection::analyst::realm_with;
use crate::protection::measures::{self as protection, Protected, protecting};
use crate::support::receiver::Receiver;
use crate::support::smtp::MailServer;
use crate::support::webdriver::Driver;
use crate::support::{TestApp, TestClient, TestDatabase, spawn_app, spawn_with};

const OWNER_PASSWORD: &str = "the owner's passphrase";
const SOURCE: &str = "198.51.100.7";

/// A credential-stuffing run: eight names the realm never had, tried from one source, which opens
/// an incident and blocks the source. The incident's id.
async fn stuffing(p: &Protected) -> String {
    p.fail_unknown("list", 8, SOURCE).await;
    let incidents = p.incidents().await;
    assert_eq!(incidents.len(), 1, "{incidents:?}");
    assert_eq!(incidents[0]["kind"], "CredentialStuffing");
    incidents[0]["id"].as_str().unwrap().to_owned()
}

/// The Owner chooses a password on the first start's link, in the browser.
async fn choose_owner_password(driver: &Driver, app: &TestApp) {
    driver.go(app.owner_link.as_deref().expect("the first start gives the Owner a link")).await;
    driver.type_into("#new-password", OWNER_PASSWORD).await;
    driver.submit("button[type=submit]").await;
    assert!(driver.page_source().await.contains("Your password is set."));
}

/// Opens `address` of the console: sent to the platform realm's login page, signs in as `username`
/// and comes back to `address`.
async fn sign_in_to(driver: &Driver, app: &TestApp, address: &str, username: &str, password: &str) {
    driver.go(&format!("{}{address}", app.base)).await;
    assert!(driver.page_source().await.contains("Sign in to Platform"), "the login page first");
    driver.type_into("#username", username).await;
    driver.type_into("#password", password).await;
    driver.submit("button[type=submit]").await;
    assert_eq!(driver.url().await, format!("{}{address}", app.base), "back where the person was going");
}

async fn accessible(driver: &Driver) {
    let violations = driver.serious_accessibility_violations().await;
    assert!(violations.is_empty(), "{}: {violations:#?}", driver.url().await);
}

#[tokio::test]
async fn a_person_signs_in_reads_attack_protection_and_dismisses_an_incident_of_a_credential_stuffing_run() {
    let p = protecting(spawn_app().await).await;
    let id = stuffing(&p).await;
    let driver = Driver::start().await;
    let incident_page = format!("/console/attack-protection/incidents/{id}");
    driver
        .steps("console-dismiss", async {
            choose_owner_password(&driver, &p.app).await;
            let list = format!("/console/attack-protection/incidents?realmId={}", p.realm);
            sign_in_to(&driver, &p.app, &list, "owner", OWNER_PASSWORD).await;
            let page = driver.page_source().await;
            assert!(page.contains("Credential stuffing") && page.contains("1 incidents"), "{page}");
            assert_eq!(driver.count("#pageSize option").await, 3, "24, 48 or 96 to a page");
            accessible(&driver).await;

            driver.submit(&format!("a[href=\"{incident_page}\"]")).await;
            let page = driver.page_source().await;
            assert!(page.contains("SourceBlocked") && page.contains(SOURCE) && page.contains("InForce"), "{page}");
            assert_eq!(driver.count("form[action$=\"/lift\"]").await, 1, "the block may be lifted");
            accessible(&driver).await;

            driver.submit("form[action$=\"/dismiss\"] button").await;
            assert_eq!(driver.url().await, format!("{}{incident_page}", p.app.base));
            let page = driver.page_source().await;
            assert!(page.contains("Dismissed") && page.contains("Lifted"), "{page}");
            assert_eq!(driver.count("form[action$=\"/dismiss\"]").await, 0, "nothing more to dismiss");

            driver.go(&format!("{}/console/attack-protection?days=7", p.app.base)).await;
            let page = driver.page_source().await;
            assert!(page.contains("Refused attempts by day") && page.contains("Blocked sources by country"), "{page}");
            assert_eq!(driver.count("a[aria-current=page][href=\"?days=7\"]").await, 1, "the period shown");
            accessible(&driver).await;

            driver.submit("form[action=\"/console/sign-out\"] button").await;
            assert!(driver.page_source().await.contains("You are signed out of the console."));
            driver.go(&format!("{}/console", p.app.base)).await;
            assert!(driver.page_source().await.contains("Sign in to Platform"), "signed out of the platform too");
        })
        .await;
    driver.quit().await;

    assert_eq!(p.incident(&id).await["status"], "Dismissed");
    let trail = p.app.get("/audit-trail?resourceType=threat_incident&status=Succeeded").await;
    let dismissal = trail.items().iter().find(|change| change["resourceId"] == id.as_str()).expect("in the trail");
    assert_eq!(dismissal["actorUsername"], "owner", "the console acts as the person: {dismissal}");
}

#[tokio::test]
async fn an_auditor_finds_no_action_and_a_forged_form_is_refused() {
    let (app, mail) = spawn_mailing().await;
    let p = protecting(app).await;
    let id = stuffing(&p).await;
    join(&p.app, &mail, "carol@example.com", "carol", &["Auditor"]).await;
    let driver = Driver::start().await;
    let incident_page = format!("/console/attack-protection/incidents/{id}");
    driver
        .steps("console-auditor", async {
            sign_in_to(&driver, &p.app, &incident_page, "carol", team::PASSWORD).await;
            let page = driver.page_source().await;
            assert!(page.contains("Credential stuffing") && page.contains("SourceBlocked"), "an Auditor reads");
            assert_eq!(driver.count("form[action$=\"/dismiss\"]").await, 0, "no dismiss button");
            assert_eq!(driver.count("form[action$=\"/lift\"]").await, 0, "no lift button");
            accessible(&driver).await;

            // A form the page never offered, with the session's own CSRF token: the policies refuse.
            let forge = "const [action, token] = arguments; const form = document.createElement('form'); \
                         form.method = 'post'; form.action = action; \
                         if (token) { const field = document.createElement('input'); field.type = 'hidden'; \
                         field.name = 'csrf'; field.value = token; form.appendChild(field); } \
                         document.body.appendChild(form); form.submit();";
            let token = driver.execute("return document.querySelector('input[name=csrf]').value", json!([])).await;
            driver.submit_by_script(forge, json!([format!("{incident_page}/dismiss"), token])).await;
            let page = driver.page_source().await;
            assert!(page.contains("Not permitted"), "{page}");
            // The refusal is kept in the trail, as the admin API keeps its own.
            let refused = p.app.get("/audit-trail?status=Refused&pageSize=100").await;
            let by_carol = refused.items().iter().any(|change| {
                change["actorUsername"] == "carol" && change["errorCode"] == "Forbidden" && change["method"] == "POST"
            });
            assert!(by_carol, "{:?}", refused.items());

            // Without the token, the console refuses the form before the API sees it.
            driver.go(&format!("{}{incident_page}", p.app.base)).await;
            driver.submit_by_script(forge, json!([format!("{incident_page}/dismiss"), null])).await;
            assert!(driver.page_source().await.contains("This form did not come from your console session."));
        })
        .await;
    driver.quit().await;
    assert_eq!(p.incident(&id).await["status"], "Active", "nothing was dismissed");
}

#[tokio::test]
async fn the_console_sends_a_stranger_to_the_login_page_with_pkce_and_back_to_the_console_only() {
    let app = spawn_app().await;
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let get = |address: String| http.get(address).send();

    let page = get(format!("{}/console/attack-protection/incidents?pageSize=48", app.base)).await.unwrap();
    assert_eq!(page.status(), StatusCode::SEE_OTHER);
    let location = page.headers()[LOCATION].to_str().unwrap().to_owned();
    assert_eq!(location, "/console/sign-in?next=%2Fconsole%2Fattack-protection%2Fincidents%3FpageSize%3D48");

    let started = get(format!("{}{location}", app.base)).await.unwrap();
    assert_eq!(started.status(), StatusCode::SEE_OTHER);
    let login = url::Url::parse(started.headers()[LOCATION].to_str().unwrap()).unwrap();
    assert_eq!(login.path(), "/realms/platform/protocol/openid-connect/auth");
    let param = |name: &str| login.query_pairs().find(|(n, _)| n == name).map(|(_, v)| v.into_owned());
    assert_eq!(param("client_id").as_deref(), Some("platform"));
    assert_eq!(param("redirect_uri"), Some(format!("{}/console/callback", app.base)));
    assert_eq!(param("code_challenge_method").as_deref(), Some("S256"));
    assert_eq!(param("code_challenge").map(|c| c.len()), Some(43));
    // The sign-in under way: its state, the PKCE verifier and where to come back to.
    let attributes = "; Path=/console; HttpOnly; SameSite=Lax; Max-Age=600";
    let cookie = started.headers()[SET_COOKIE].to_str().unwrap();
    let pending = format!(".%2Fconsole%2Fattack-protection%2Fincidents%3FpageSize%3D48{attributes}");
    assert!(cookie.starts_with("castellan_console_sign_in=") && cookie.ends_with(&pending), "{cookie}");

    // Elsewhere is never a place to come back to.
    let elsewhere = get(format!("{}/console/sign-in?next=https://attacker.example/", app.base)).await.unwrap();
    let cookie = elsewhere.headers()[SET_COOKIE].to_str().unwrap();
    assert!(cookie.ends_with(&format!(".%2Fconsole{attributes}")), "only the console: {cookie}");

    // A callback that no sign-in of this browser started, and a session value no one was given.
    let stray = get(format!("{}/console/callback?code=x&state=y", app.base)).await.unwrap();
    assert_eq!(stray.status(), StatusCode::BAD_REQUEST);
    let headers = stray.headers();
    assert!(headers[CONTENT_SECURITY_POLICY].to_str().unwrap().contains("frame-ancestors 'none'"));
    assert_eq!(headers[X_FRAME_OPTIONS], "DENY");
    let guessed = http
        .get(format!("{}/console/attack-protection", app.base))
        .header("cookie", "castellan_console=guessed")
        .send()
        .await
        .unwrap();
    assert_eq!(guessed.status(), StatusCode::SEE_OTHER, "a guessed session is none");
}

/// A service that delivers to loopback receivers, its Owner able to sign in, a realm `hooks` with a
/// client `shop` and a person.
async fn spawn_receiving() -> TestApp {
    let app = spawn_with(TestDatabase::new().await, receiving).await;
    app.create_realm("hooks").await;
    app.create_client("hooks", "shop", &["client_credentials"], &[]).await;
    app
}

/// Every request the service answered, but those of `/metrics`.
async fn served(app: &TestApp) -> u64 {
    let text = app.http.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
    text.lines()
        .filter(|line| line.starts_with("castellan_http_requests_total{") && !line.contains("route=\"/metrics\""))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[tokio::test]
async fn a_person_registers_a_webhook_sends_a_test_replays_a_delivery_and_checks_its_signature_in_the_browser() {
    let app = spawn_receiving().await;
    let receiver = Receiver::start().await;
    let driver = Driver::start().await;
    let endpoints = "/console/realms/hooks/clients/shop/webhooks";
    driver
        .steps("console-webhooks", async {
            choose_owner_password(&driver, &app).await;
            sign_in_to(&driver, &app, "/console/realms/hooks", "owner", OWNER_PASSWORD).await;
            accessible(&driver).await;
            driver.submit(&format!("a[href=\"{endpoints}\"]")).await;
            assert!(driver.page_source().await.contains("No endpoint yet."));
            accessible(&driver).await;
            driver.type_into("#name", "Orders").await;
            driver.type_into("#url", &receiver.url).await;
            driver.click("#event-user_created").await;
            driver.submit("form[action$=\"/webhooks\"] button[type=submit]").await;
            let secret =
                driver.execute("return document.getElementById('signing-secret').textContent", json!([])).await;
            let secret = secret.as_str().expect("the signing secret, shown once").to_owned();
            assert!(secret.starts_with("whsec_"), "{secret}");
            driver.submit(&format!("a[href^=\"{endpoints}/\"]")).await;
            let endpoint_page = driver.url().await;

            // Send test: a ping, at once.
            driver.submit("form[action$=\"/test\"] button").await;
            let pinged = receiver.delivered(&app, 1).await;
            assert_eq!(pinged[0].header("x-service-event"), "ping");

            // An event, its delivery in the history, and a replay of it.
            app.create_user("hooks", "cy", "a long passphrase").await;
            let delivered = receiver.delivered(&app, 2).await;
            let event = delivered.iter().find(|d| d.header("x-service-event") == "user_created").unwrap().clone();
            driver.go(&format!("{endpoint_page}?view=deliveries")).await;
            let page = driver.page_source().await;
            assert!(page.contains("user_created") && page.contains("ping"), "{page}");
            accessible(&driver).await;
            let history = app.get("/realms/hooks/clients/shop/webhooks/deliveries").await;
            let attempt = history.items().iter().find(|a| a["eventType"] == "user_created").unwrap()["id"].clone();
            let attempt = attempt.as_str().unwrap();
            driver.click(&format!("#attempt-{attempt} summary")).await;
            assert!(driver.page_source().await.contains("Request body"));
            driver.submit(&format!("form[action$=\"/deliveries/{attempt}/replay\"] button")).await;
            let replayed = receiver.delivered(&app, 3).await;
            assert_eq!(replayed.len(), 3);
            assert_eq!(replayed[2].header("x-service-event"), replayed[1].header("x-service-event"));
            assert_eq!(replayed[2].body, replayed[1].body, "the stored payload, sent again");
            driver.go(&format!("{endpoint_page}?view=overview")).await;
            assert!(driver.page_source().await.contains("Acceptance rate"));
            accessible(&driver).await;

            // The events, once each with their fan-out, a page at a time.
            driver.go(&format!("{endpoint_page}?view=events")).await;
            let page = driver.page_source().await;
            assert!(page.contains("Events of the client, newest first (1)") && page.contains("Delivered"), "{page}");
            assert!(page.contains("Page 1 of 1"), "{page}");
            accessible(&driver).await;

            // The signature check: the browser alone decides.
            driver.go(&format!("{}/console/webhooks/signature-check", app.base)).await;
            accessible(&driver).await;
            let body = String::from_utf8(event.body.to_vec()).unwrap();
            let before = served(&app).await;
            driver.type_into("#secret", &secret).await;
            driver.type_into("#signature", event.header("x-service-signature")).await;
            driver.type_into("#body", &body).await;
            driver.click("#check").await;
            let valid = driver.text_once_changed("#verdict", "").await;
            assert_eq!(valid, "Valid: the signature matches this secret and body.");
            driver.execute("document.getElementById('body').value += ' '", json!([])).await;
            driver.click("#check").await;
            let changed = driver.text_once_changed("#verdict", &valid).await;
            assert_eq!(changed, "Not valid: the signature does not match this secret and body.");
            assert_eq!(served(&app).await, before, "the check sent nothing to the service");
            let fetched = driver.execute("return performance.getEntriesByType('resource').length", json!([])).await;
            assert_eq!(fetched, 0, "nor anywhere else");
        })
        .await;
    driver.quit().await;
}

#[tokio::test]
async fn a_person_creates_and_withdraws_a_delegation_grant() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.create_scopes("acme", &["orders:read"]).await;
    let agent = json!({ "id": "agent", "clientConfiguration": {
        "grantTypes": ["client_credentials"], "allowedScopes": ["orders:read"], "tokenExchangeEnabled": true } });
    assert_eq!(app.post("/realms/acme/clients", agent).await.status, StatusCode::CREATED);
    let ada = app.create_user("acme", "ada", "analytical engine").await;
    let driver = Driver::start().await;
    let grants = "/console/realms/acme/delegation-grants";
    driver
        .steps("console-delegation", async {
            choose_owner_password(&driver, &app).await;
            sign_in_to(&driver, &app, grants, "owner", OWNER_PASSWORD).await;
            assert!(driver.page_source().await.contains("No grant yet."));
            assert_eq!(driver.count("#allowedResources, #organizationId").await, 0, "not offered here");
            accessible(&driver).await;
            driver.type_into("#clientId", "agent").await;
            driver.type_into("#person", "ada").await;
            driver.type_into("#scopes", "orders:read").await;
            driver.submit("form[action$=\"/delegation-grants\"] button[type=submit]").await;
            let page = driver.page_source().await;
            assert!(page.contains(&ada) && page.contains("Live"), "{page}");
            accessible(&driver).await;

            driver.type_into("input[name=reason]", "the agent is retired").await;
            driver.submit("form[action$=\"/withdraw\"] button").await;
            let page = driver.page_source().await;
            assert!(page.contains("Withdrawn") && page.contains("the agent is retired"), "{page}");
        })
        .await;
    driver.quit().await;
    let listed = app.get("/realms/acme/delegation-grants").await;
    let grant = &listed.items()[0];
    assert_eq!((grant["subjectUserId"].as_str(), grant["state"].as_str()), (Some(ada.as_str()), Some("Withdrawn")));
    assert_eq!(grant["withdrawal"]["reason"], "the agent is retired");
}

#[tokio::test]
async fn a_person_applies_and_reverts_a_recommendation_of_the_analyst() {
    let r = realm_with(true, |_| {}).await;
    r.stuff("198.51.100.7").await;
    let incident = r.incident().await["id"].as_str().unwrap().to_owned();
    r.app.advance(5 * 60).await;
    let (readings, _) = r.readings(&incident, None).await;
    let title = readings[0]["recommendations"][0]["title"].as_str().unwrap().to_owned();
    let setting = readings[0]["recommendations"][0]["setting"].as_str().unwrap().to_owned();
    let driver = Driver::start().await;
    driver
        .steps("console-analyst", async {
            choose_owner_password(&driver, &r.app).await;
            let page = format!("/console/attack-protection/incidents/{incident}");
            sign_in_to(&driver, &r.app, &page, "owner", OWNER_PASSWORD).await;
            let shown = driver.page_source().await;
            assert!(shown.contains("The analyst's readings") && shown.contains(&format!("Apply: {title}")), "{shown}");
            accessible(&driver).await;
            let before = r.settings().await[&setting].clone();
            driver.submit("form[action$=\"/recommendations/0/apply\"] button").await;
            assert!(driver.page_source().await.contains(&format!("Revert: {title}")));
            assert_ne!(r.settings().await[&setting], before, "applied to the realm");
            driver.submit("form[action$=\"/revert\"] button").await;
            let shown = driver.page_source().await;
            assert!(shown.contains(&format!("Apply: {title}")), "{}", &shown[shown.find("<main").unwrap()..]);
            assert_eq!(r.settings().await[&setting], before, "reverted");
        })
        .await;
    driver.quit().await;
}

#[tokio::test]
async fn a_person_reads_an_exposed_password_and_watches_a_capture_endpoint_receive() {
    let mail = MailServer::start().await;
    let url = mail.url.clone();
    let p =
        protecting(spawn_with(TestDatabase::new().await, move |settings| settings.smtp_url = Some(url)).await).await;
    let ada = p.user("ada").await;
    p.fail_unknown("list", 5, SOURCE).await;
    let exposed = p.sign_in("ada", protection::PASSWORD, SOURCE).await;
    assert_eq!(exposed.body["error_code"], "InvalidCredentials", "{:?}", exposed.body);
    let driver = Driver::start().await;
    driver
        .steps("console-exposures-and-captures", async {
            choose_owner_password(&driver, &p.app).await;
            sign_in_to(
                &driver,
                &p.app,
                "/console/attack-protection/exposures?unresolvedOnly=true",
                "owner",
                OWNER_PASSWORD,
            )
            .await;
            let page = driver.page_source().await;
            assert!(page.contains("1 accounts") && page.contains("not changed"), "{page}");
            accessible(&driver).await;
            driver.submit(&format!("a[href$=\"/users/{ada}/threat-standing\"]")).await;
            let page = driver.page_source().await;
            assert!(page.contains("The password is exposed") && page.contains("ChangeRequired"), "{page}");
            accessible(&driver).await;

            driver.go(&format!("{}/console/webhooks/captures", p.app.base)).await;
            accessible(&driver).await;
            driver.submit("form[action=\"/console/webhooks/captures\"] button").await;
            let address = driver.execute("return document.getElementById('capture-url').textContent", json!([])).await;
            assert_eq!(driver.text_once_changed("#captured-status", "").await, "0 requests received");
            accessible(&driver).await;
            let sent = p.app.http.post(address.as_str().unwrap()).body(r#"{"hello":"capture"}"#).send().await.unwrap();
            assert_eq!(sent.status(), StatusCode::OK);
            let status = driver.text_once_changed("#captured-status", "0 requests received").await;
            assert_eq!(status, "1 requests received", "the page kept itself current");
            assert!(driver.page_source().await.contains(r#"{"hello":"capture"}"#), "the body, as received");
        })
        .await;
    driver.quit().await;
}

#[tokio::test]
async fn a_person_rotates_an_api_secret_changes_a_realm_s_settings_and_reads_the_trail_and_the_access_log() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let driver = Driver::start().await;
    let realms = |key: String| {
        let request = app.http.get(format!("{}/realms", app.admin)).header("x-api-key", key);
        async move { request.send().await.unwrap().status() }
    };
    let shown = "return document.getElementById('secret-value').textContent";
    driver
        .steps("console-administration", async {
            choose_owner_password(&driver, &app).await;
            sign_in_to(&driver, &app, "/console/secrets", "owner", OWNER_PASSWORD).await;
            accessible(&driver).await;
            driver.type_into("#name", "ci").await;
            driver.click("#role-Auditor").await;
            driver.submit("form[action=\"/console/secrets\"] button[type=submit]").await;
            let first = driver.execute(shown, json!([])).await.as_str().unwrap().to_owned();
            assert!(first.starts_with("cstl_key_"), "{first}");
            assert_eq!(realms(first.clone()).await, StatusCode::OK);

            // Kept for a while: both values work.
            driver.go(&format!("{}/console/secrets", app.base)).await;
            driver.click("input[id^=overlap-]").await;
            driver.submit("form[action$=\"/rotate\"] button").await;
            let second = driver.execute(shown, json!([])).await.as_str().unwrap().to_owned();
            assert_ne!(second, first);
            assert_eq!((realms(first.clone()).await, realms(second.clone()).await), (StatusCode::OK, StatusCode::OK));

            // Compromised: only the new value works.
            driver.go(&format!("{}/console/secrets", app.base)).await;
            driver.click("input[id^=compromised-]").await;
            driver.submit("form[action$=\"/rotate\"] button").await;
            let third = driver.execute(shown, json!([])).await.as_str().unwrap().to_owned();
            assert_eq!(realms(second).await, StatusCode::UNAUTHORIZED);
            assert_eq!(realms(third).await, StatusCode::OK);

            driver.go(&format!("{}/console/realms/acme", app.base)).await;
            accessible(&driver).await;
            driver.execute("document.getElementById('minimumPasswordLength').value = '12'", json!([])).await;
            driver.click("#aiAdvisor").await;
            driver.submit("form[action=\"/console/realms/acme\"] button[type=submit]").await;
            let settings = app.get("/realms/acme").await;
            assert_eq!(
                (&settings.data()["minimumPasswordLength"], &settings.data()["aiAdvisor"]),
                (&json!(12), &json!(true))
            );

            driver.go(&format!("{}/console/audit-trail?resourceType=realm&realmId=acme", app.base)).await;
            let page = driver.page_source().await;
            assert!(page.contains("Update realm") && page.contains("owner"), "{page}");
            assert_eq!(
                driver.execute("return document.getElementById('resourceType').value", json!([])).await,
                "realm"
            );
            accessible(&driver).await;
            app.state.access_log.flush().await;
            driver.go(&format!("{}/console/access-logs", app.base)).await;
            let page = driver.page_source().await;
            assert!(page.contains("GET /api/v1/admin/realms") && page.contains("ci"), "{page}");
            // The console's own requests are admitted and logged as the API's are.
            assert!(page.contains("POST /console/realms/acme"), "{page}");
            accessible(&driver).await;

            // The team: its one member, with the roles the Owner may change.
            driver.go(&format!("{}/console/team", app.base)).await;
            let page = driver.page_source().await;
            assert!(page.contains("1 member<") && page.contains("owner"), "{page}");
            assert!(page.contains("Save the roles of owner"), "{page}");
            accessible(&driver).await;
        })
        .await;
    driver.quit().await;
}

#[tokio::test]
async fn a_person_manages_a_realm_s_people_rotates_a_client_secret_and_chooses_where_notifications_go() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let web = app.create_client("acme", "web", &["password"], &[]).await;
    app.create_user("acme", "ada", "analytical engine").await;
    let driver = Driver::start().await;
    let sign_in = |client: TestClient, username: &'static str, password: &'static str| {
        let form = [("grant_type", "password"), ("username", username), ("password", password)];
        let request = app.http.post(format!("{}/realms/acme/protocol/openid-connect/token", app.base));
        async move { request.basic_auth(&client.id, Some(&client.secret)).form(&form).send().await.unwrap().status() }
    };
    driver
        .steps("console-people", async {
            choose_owner_password(&driver, &app).await;
            sign_in_to(&driver, &app, "/console/realms/acme", "owner", OWNER_PASSWORD).await;
            driver.submit("a[href=\"/console/realms/acme/users\"]").await;
            assert!(driver.page_source().await.contains("ada"));
            accessible(&driver).await;
            driver.type_into("#username", "grace").await;
            driver.type_into("#email", "grace@example.com").await;
            driver.type_into("#password", "compiler pioneer").await;
            driver.submit("form[method=post][action=\"/console/realms/acme/users\"] button[type=submit]").await;
            let person_page = driver.url().await;
            assert!(driver.page_source().await.contains("No live session."));
            accessible(&driver).await;

            assert_eq!(sign_in(web.clone(), "grace", "compiler pioneer").await, StatusCode::OK);
            driver.go(&person_page).await;
            assert!(driver.page_source().await.contains("1 live sessions"));
            driver.submit("form[action$=\"/end-sessions\"] button").await;
            assert!(driver.page_source().await.contains("No live session."), "every session ended");

            driver.type_into("#client", "web").await;
            driver.type_into("#reason", "chargeback under review").await;
            driver.submit("form[action$=\"/suspend\"] button").await;
            let grace = person_page.rsplit('/').next().unwrap();
            let suspensions = app.get(&format!("/realms/acme/clients/web/users/{grace}/suspensions")).await;
            let suspension = &suspensions.items()[0];
            assert_eq!((&suspension["level"], &suspension["status"]), (&json!("Full"), &json!("Active")));
            assert_eq!(suspension["reason"], "chargeback under review");
            let refused = sign_in(web.clone(), "grace", "compiler pioneer").await;
            assert_eq!(refused, StatusCode::BAD_REQUEST, "suspended at web");

            driver.go(&person_page).await;
            driver.execute("document.getElementById('status').value = 'Disabled'", json!([])).await;
            let person_path = person_page.trim_start_matches(&app.base);
            driver.submit(&format!("form[action=\"{person_path}\"] button[type=submit]")).await;

            driver.go(&format!("{}/console/realms/acme/clients/web", app.base)).await;
            accessible(&driver).await;
            driver.submit("form[action$=\"/rotate-secret\"] button").await;
            let secret = driver.execute("return document.getElementById('secret-value').textContent", json!([])).await;
            let rotated =
                TestClient { realm: "acme".into(), id: "web".into(), secret: secret.as_str().unwrap().to_owned() };
            assert_eq!(
                sign_in(web.clone(), "ada", "analytical engine").await,
                StatusCode::UNAUTHORIZED,
                "the old secret stopped"
            );
            assert_eq!(sign_in(rotated, "ada", "analytical engine").await, StatusCode::OK);

            driver.go(&format!("{}/console/notifications", app.base)).await;
            accessible(&driver).await;
            driver.click("#attacks-Off").await;
            driver.submit("form[action=\"/console/notifications\"] button[type=submit]").await;
            assert_eq!(app.get("/account/notification-preferences").await.data()["attacksDetected"], "Off");
        })
        .await;
    driver.quit().await;
    let grace = app.get("/realms/acme/users?searchTerm=grace").await.items()[0].clone();
    assert_eq!(grace["status"], "Disabled");
}

#[tokio::test]
async fn a_person_keeps_the_account_s_roles_and_a_realm_s_organizations_and_identity_providers() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let driver = Driver::start().await;
    driver
        .steps("console-directory", async {
            choose_owner_password(&driver, &app).await;
            sign_in_to(&driver, &app, "/console/roles", "owner", OWNER_PASSWORD).await;
            assert!(driver.page_source().await.contains("The account has no role of its own."));
            accessible(&driver).await;
            driver.type_into("#name", "support").await;
            driver.click("input[id=\"new-user:read\"]").await;
            driver.submit("form[action=\"/console/roles\"] button[type=submit]").await;
            let role = app.get("/roles").await.items()[0].clone();
            assert_eq!((&role["name"], &role["permissions"]), (&json!("support"), &json!(["user:read"])));
            let id = role["id"].as_str().unwrap();
            driver.click(&format!("input[id=\"role-{id}-user:update\"]")).await;
            driver.submit(&format!("form[action=\"/console/roles/{id}\"] button[type=submit]")).await;
            let permissions = app.get(&format!("/roles/{id}")).await.data()["permissions"].clone();
            assert_eq!(permissions, json!(["user:read", "user:update"]));

            driver.go(&format!("{}/console/realms/acme", app.base)).await;
            driver.submit("a[href=\"/console/realms/acme/organizations\"]").await;
            accessible(&driver).await;
            driver.type_into("#name", "Acme Corp").await;
            driver.type_into("#domains", "acme.example").await;
            driver.submit("form[action=\"/console/realms/acme/organizations\"] button[type=submit]").await;
            let organization = app.get("/realms/acme/organizations").await.items()[0].clone();
            assert_eq!(organization["domains"], json!(["acme.example"]));
            driver.submit("form.inline input[value=Disabled] ~ button").await;
            let organization = app.get("/realms/acme/organizations").await.items()[0].clone();
            assert_eq!(organization["status"], "Disabled");

            driver.go(&format!("{}/console/realms/acme/identity-providers", app.base)).await;
            accessible(&driver).await;
            driver.type_into("#id", "github").await;
            driver.type_into("#displayName", "GitHub").await;
            driver.execute("document.getElementById('protocol').value = 'OAuth2'", json!([])).await;
            driver.type_into("#clientId", "castellan-acme").await;
            driver.type_into("#clientSecret", "an upstream secret").await;
            driver.type_into("#authorizationUrl", "https://github.example/login/oauth/authorize").await;
            driver.type_into("#tokenUrl", "https://github.example/login/oauth/access_token").await;
            driver.type_into("#userinfoUrl", "https://api.github.example/user").await;
            driver.submit("form[action=\"/console/realms/acme/identity-providers\"] button[type=submit]").await;
            let page = driver.page_source().await;
            assert!(page.contains("GitHub") && page.contains("OAuth2"), "{page}");
            let provider = app.get("/realms/acme/identity-providers/github").await;
            assert_eq!(
                (&provider.data()["protocol"], &provider.data()["status"]),
                (&json!("OAuth2"), &json!("Active"))
            );
        })
        .await;
    driver.quit().await;
}

/// Signs in to the console without a browser engine: the console's redirect to the platform
/// realm's login page, its form, and the way back; the console session's cookie.
async fn console_cookie(app: &TestApp, username: &str, password: &str) -> String {
    let mut browser = crate::oauth::browser::Browser::new(app);
    let started = browser.visit("/console/sign-in", &[("next", "/console/realms")]).await;
    let login = browser.open(started.location.expect("to the login page").as_str()).await;
    assert!(login.shows_login_form(), "{}", login.body);
    let signed_in = browser.sign_in("platform", &login, username, password).await;
    let back = browser.open(signed_in.next().expect("back to the console").as_str()).await;
    assert_eq!(back.location.map(|l| l.path().to_owned()).as_deref(), Some("/console/realms"));
    browser.cookies.get("castellan_console").expect("a console session").clone()
}

#[tokio::test]
async fn the_console_is_admitted_as_the_admin_api_is_from_the_account_s_networks_only() {
    let (app, mail) = spawn_mailing().await;
    join(&app, &mail, "dora@example.com", "dora", &["Owner"]).await;
    let cookie = format!("castellan_console={}", console_cookie(&app, "dora", team::PASSWORD).await);
    let (inside, outside) = ("203.0.113.40", "198.51.100.9");
    let page = async |from: &str| {
        let request = app.http.get(format!("{}/console/realms", app.base)).header("cookie", &cookie);
        request.header("x-forwarded-for", from).send().await.expect("the service answers")
    };
    assert_eq!(page(outside).await.status(), StatusCode::OK, "no networks named: anywhere");

    let networks = json!({ "adminNetworks": ["203.0.113.0/24"] });
    let instance = format!("{}/api/v1/dedicated/instance", app.base);
    let set = app.http.put(instance).header("x-api-key", &app.key).header("x-forwarded-for", inside).json(&networks);
    assert_eq!(set.send().await.unwrap().status(), StatusCode::OK);
    let away = page(outside).await;
    assert_eq!(away.status(), StatusCode::FORBIDDEN);
    assert!(away.text().await.unwrap().contains("Not permitted from this network"));
    assert_eq!(page(inside).await.status(), StatusCode::OK);

    // The access log keeps the console's requests, the refusal with its reason.
    app.state.access_log.flush().await;
    let logs = format!("{}/access-logs?pageSize=100", app.admin);
    let logs = crate::support::answer(
        app.http.get(logs).header("x-api-key", &app.key).header("x-forwarded-for", inside).send().await.unwrap(),
    )
    .await;
    let console = |entry: &&serde_json::Value| entry["path"] == "/console/realms";
    let entries: Vec<&serde_json::Value> = logs.items().iter().filter(console).collect();
    assert_eq!(entries.len(), 3, "{:?}", logs.body);
    let refused: Vec<&&serde_json::Value> = entries.iter().filter(|e| e["outcome"] == "Refused").collect();
    assert_eq!(refused.len(), 1, "{entries:?}");
    assert_eq!((&refused[0]["reason"], &refused[0]["ipAddress"]), (&json!("AdminNetworkNotAllowed"), &json!(outside)));
}
