//! Migration from Keycloak and Auth0: the sample exports in `tests/fixtures/migration` (written
//! after each provider's documented export format) translated item by item, migrated in a dry run
//! that writes and publishes nothing, then for real: the people sign in with their old passwords.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{TestApp, TestClient, spawn_app};

fn sample(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/migration").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).expect("the sample export")).expect("JSON")
}

async fn call(app: &TestApp, path: &str, export: &Value) -> Value {
    let answer = app.post(path, export.clone()).await;
    assert_eq!(answer.status, StatusCode::OK, "{path}: {:?}", answer.body);
    answer.data().clone()
}

/// The note of the export item `source`: (mapping, note).
fn note(translation: &Value, source: &str) -> (String, String) {
    let items = translation["items"].as_array().expect("items");
    let found = items.iter().find(|i| i["source"] == source).unwrap_or_else(|| panic!("no {source} in {items:#?}"));
    (found["mapping"].as_str().unwrap().to_owned(), found["note"].as_str().unwrap_or("").to_owned())
}

/// The secret the configuration import gave a client.
fn secret_of(report: &Value, client: &str) -> String {
    let items = report["configuration"]["items"].as_array().expect("items");
    let item = items.iter().find(|i| i["collection"] == "Client" && i["key"] == client).expect("the client");
    item["secret"].as_str().expect("a secret").to_owned()
}

async fn published(app: &TestApp) -> usize {
    let store = app.database().await;
    let (count,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM event_outbox").fetch_one(store.pool()).await.expect("outbox");
    usize::try_from(count).expect("a count")
}

async fn sign_in(app: &TestApp, client: &TestClient, username: &str, password: &str) -> StatusCode {
    app.token(client, &[("grant_type", "password"), ("username", username), ("password", password)]).await.status
}

#[tokio::test]
async fn a_keycloak_realm_migrates_in_a_dry_run_and_then_for_real() {
    let app = spawn_app().await;
    let export = sample("keycloak-realm-export.json");

    let translation = call(&app, "/import/translate?from=keycloak", &export).await;
    assert_eq!(translation["realmId"], "acme-corp");
    assert_eq!(note(&translation, "realm Acme Corp").0, "Changed");
    let (mapping, why) = note(&translation, "client web-shop");
    assert_eq!(mapping, "Changed");
    assert!(why.contains("wildcard") && why.contains("new secret"), "{why}");
    assert_eq!(note(&translation, "client account").0, "LeftBehind");
    assert!(note(&translation, "client orders-api").1.contains("resource server"));
    assert_eq!(note(&translation, "client https://sp.example.com/saml").0, "LeftBehind");
    assert_eq!(note(&translation, "realm role support staff").0, "Changed", "a composite role");
    assert_eq!(note(&translation, "group /staff/night shift").0, "Changed");
    assert_eq!(note(&translation, "password policy length(12)").0, "Mapped");
    assert_eq!(note(&translation, "password policy notUsername(undefined)").0, "LeftBehind");
    assert_eq!(note(&translation, "identityProviders (1)").0, "LeftBehind");
    // Hedy's authenticator app goes with her: Keycloak keys its codes with the secret's text.
    let items = translation["items"].as_array().unwrap();
    assert!(!items.iter().any(|i| i["source"].as_str().unwrap_or("").starts_with("other credentials")), "{items:#?}");
    let hedy = translation["users"].as_array().unwrap().iter().find(|u| u["username"] == "hedy").unwrap();
    // base32 of the text "JBSWY3DPEHPK3PXP".
    let secret = "JJBFGV2ZGNCFARKIKBFTGUCYKA";
    assert_eq!(hedy["totp"], json!([{ "secret": secret, "algorithm": "SHA1", "digits": 6, "period": 30 }]));
    let realm = &translation["document"]["realms"][0];
    assert_eq!(realm["minimumPasswordLength"], 12);
    let web = &realm["clients"][0];
    assert_eq!(web["clientConfiguration"]["redirectUris"], json!(["https://shop.example.com/callback"]));
    assert_eq!(web["clientConfiguration"]["allowedOrigins"], json!(["https://shop.example.com"]));
    assert_eq!(web["grantedRoles"], json!([{ "name": "admin" }, { "name": "clerk", "clientId": "web-shop" }]));
    assert_eq!(translation["users"].as_array().map(Vec::len), Some(4), "the service account is its client");
    assert_eq!(note(&translation, "users without a password hash (1)").0, "Changed");
    assert_eq!(note(&translation, "people with required actions (1)").0, "LeftBehind");

    let before = published(&app).await;
    let dry = call(&app, "/import/migrate?from=keycloak", &export).await;
    assert_eq!(dry["dryRun"], true, "a migration is a dry run unless told otherwise");
    let counts = &dry["configuration"]["counts"];
    assert_eq!((counts["created"].as_i64(), counts["refused"].as_i64()), (Some(13), Some(0)), "{dry:#}");
    let users = &dry["users"];
    assert_eq!((users["created"].as_i64(), users["refused"].as_i64()), (Some(4), Some(0)), "{users:#}");
    assert_eq!(app.get("/realms/acme-corp").await.status, StatusCode::FORBIDDEN, "nothing was written");
    assert_eq!(published(&app).await, before, "nothing was published");

    let done = call(&app, "/import/migrate?from=keycloak&dryRun=false", &export).await;
    assert_eq!(done["configuration"]["counts"], dry["configuration"]["counts"], "{done:#}");
    assert_eq!((done["users"]["created"].as_i64(), done["users"]["status"].as_str()), (Some(4), Some("Completed")));
    assert_eq!(app.events("user_created").await.len(), 4);
    let web = TestClient { realm: "acme-corp".into(), id: "web-shop".into(), secret: secret_of(&done, "web-shop") };
    assert_eq!(sign_in(&app, &web, "katherine", "katherine johnson orbit").await, StatusCode::OK, "PBKDF2-SHA256");
    let hedy = app
        .token(&web, &[("grant_type", "password"), ("username", "hedy"), ("password", "hedy lamarr frequency hopping")])
        .await;
    assert_eq!(hedy.body["error_code"], "SecondFactorRequired", "PBKDF2-SHA512, then her app: {:?}", hedy.body);
    hedy_signs_in_with_her_app(&app, secret).await;
    assert_eq!(sign_in(&app, &web, "grace", "grace hopper cobol").await, StatusCode::OK, "Argon2, from its parts");
    let ada = app.get("/realms/acme-corp/users?searchTerm=ada").await;
    assert_eq!(ada.items()[0]["status"], "Disabled", "a disabled person stays so");
    let people = app.get("/realms/acme-corp/users?searchTerm=katherine").await;
    let katherine = people.items()[0]["id"].as_str().unwrap().to_owned();
    let roles = app.get(&format!("/realms/acme-corp/users/{katherine}/roles")).await;
    let mut direct: Vec<&str> =
        roles.data()["direct"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    direct.sort_unstable();
    assert_eq!(direct, ["admin", "clerk"], "her realm role and her client role");
    let granted = app.get("/realms/acme-corp/clients/web-shop/granted-roles").await;
    assert_eq!(granted.data().as_array().map(Vec::len), Some(2), "the service account's roles");

    let again = call(&app, "/import/migrate?from=keycloak&dryRun=true", &export).await;
    assert_eq!(again["configuration"]["counts"]["created"], 0, "{again:#}");
    assert_eq!(again["users"]["skipped"], 4);
}

#[tokio::test]
async fn an_auth0_tenant_migrates_in_a_dry_run_and_then_for_real() {
    let app = spawn_app().await;
    let export = sample("auth0-tenant.json");

    let translation = call(&app, "/import/translate?from=auth0&realm=initech", &export).await;
    assert_eq!(translation["realmId"], "initech");
    let (mapping, why) = note(&translation, "client Storefront");
    assert_eq!(mapping, "Changed");
    assert!(why.contains("implicit") && why.contains("wildcard"), "{why}");
    assert!(note(&translation, "client Back Office").1.contains("password-realm"));
    assert_eq!(note(&translation, "client All Applications").0, "LeftBehind");
    assert_eq!(note(&translation, "API TPS Reports API").0, "Mapped");
    assert!(note(&translation, "API Legacy").1.contains("https"));
    assert_eq!(note(&translation, "API Auth0 Management API").0, "LeftBehind");
    assert!(note(&translation, "role manager").1.contains("permissions"));
    assert_eq!(note(&translation, "connection google-oauth2").0, "LeftBehind");
    assert_eq!(note(&translation, "rules (1)").0, "LeftBehind");
    assert_eq!(note(&translation, "users without a username (2)").0, "Changed");
    let realm = &translation["document"]["realms"][0];
    assert_eq!(realm["minimumPasswordLength"], 10);
    assert_eq!(realm["resourceServers"][0]["allowedClients"], json!(["back-office"]));

    let before = published(&app).await;
    let dry = call(&app, "/import/migrate?from=auth0&realm=initech&dryRun=true", &export).await;
    let users = &dry["users"];
    assert_eq!((users["created"].as_i64(), users["refused"].as_i64()), (Some(2), Some(1)), "{users:#}");
    let refusal = &users["refusals"][0];
    assert_eq!((refusal["line"].as_i64(), refusal["username"].as_str()), (Some(2), Some("milton")));
    assert_eq!(refusal["reasons"][0]["field"], "roles[1]", "no role stapler: {refusal}");
    assert_eq!(app.get("/realms/initech").await.status, StatusCode::FORBIDDEN);
    assert_eq!(published(&app).await, before);

    let done = call(&app, "/import/migrate?from=auth0&realm=initech&dryRun=false", &export).await;
    assert_eq!(done["configuration"]["counts"]["refused"], 0, "{done:#}");
    assert_eq!((done["users"]["created"].as_i64(), done["users"]["refused"].as_i64()), (Some(2), Some(1)));
    assert_eq!(done["users"]["clientId"], "storefront", "people come in through the first client");
    let office =
        TestClient { realm: "initech".into(), id: "back-office".into(), secret: secret_of(&done, "back-office") };
    assert_eq!(sign_in(&app, &office, "peter@initech.example", "alan turing enigma").await, StatusCode::OK, "bcrypt");
    let server = app.get("/realms/initech/resource-servers").await;
    assert_eq!(server.items()[0]["scopes"], json!(["reports:read", "reports:write"]));

    let unknown = app.post("/import/translate?from=okta", export.clone()).await;
    assert_eq!(unknown.refused_fields(), [("from".to_owned(), "OneOf".to_owned())]);
    let empty = app.post("/import/translate?from=keycloak", json!({ "clients": [] })).await;
    assert_eq!(empty.refused_fields(), [("realm".to_owned(), "Required".to_owned())]);
}

/// Hedy signs in on the login page with her password and the code her authenticator app shows
/// now, as pyotp computes it from the secret Keycloak kept.
async fn hedy_signs_in_with_her_app(app: &TestApp, secret: &str) {
    use crate::oauth::browser::{Browser, VERIFIER, challenge};
    let pkce = challenge(VERIFIER);
    let params = [
        ("response_type", "code"),
        ("client_id", "web-shop"),
        ("redirect_uri", "https://shop.example.com/callback"),
        ("scope", "openid"),
        ("code_challenge", pkce.as_str()),
        ("code_challenge_method", "S256"),
    ];
    let mut browser = Browser::new(app);
    let page = browser.authorize("acme-corp", &params).await;
    let asked = browser.sign_in("acme-corp", &page, "hedy", "hedy lamarr frequency hopping").await;
    assert!(asked.body.contains(r#"name="ticket""#), "her app's code is asked: {}", asked.body);
    let uri = format!("otpauth://totp/acme-corp:hedy?secret={secret}");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/authenticators/totp_code.py");
    let now = app.state.clock.now().timestamp().to_string();
    let output =
        std::process::Command::new(crate::support::python_tool("python")).args([script, &uri, &now]).output().unwrap();
    let code = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    let step = "/realms/acme-corp/protocol/openid-connect/auth/second-factor";
    let signed_in = browser.submit(step, &asked, &[("code", &code)]).await;
    assert!(signed_in.param("code").is_some(), "{} {}", signed_in.status, signed_in.body);
}
