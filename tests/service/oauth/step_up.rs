//! Step-up authentication: a client asks for a stronger sign-in than the browser's session
//! (`acr_values`, or an essential `acr` in the `claims` request), the person signs in again at that
//! level without losing single sign-on for the rest, and the tokens say how they signed in (`acr`,
//! `amr`, `auth_time` in the ID token, the access token and introspection). A stock relying party
//! (`openid-client`) does it the RFC 9470 way, when a resource server refuses its token.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::oauth::browser::{Browser, Page, REDIRECT, VERIFIER, challenge, exchange, request, web_client};
use crate::oauth::passkeys::{Realm, assertion, post_assertion, realm, register, token_of};
use crate::support::node::NodeScript;
use crate::support::{TestApp, claims, spawn_app};

const PASSWORD: &str = "analytical engine";

/// The authorization request of `client` with `extra` parameters, in `browser`.
async fn authorize(browser: &mut Browser, client: &str, extra: &[(&str, &str)]) -> Page {
    let pkce = challenge(VERIFIER);
    let mut asked = request(client, "xyz", "n-1", &pkce);
    asked.extend_from_slice(extra);
    browser.authorize("acme", &asked).await
}

/// The realm of `passkeys::realm`, where a password alone signs in whatever the person enrolled
/// (the rule Never): the sessions these tests step up from.
async fn password_realm(app: &TestApp) -> Realm {
    let realm = realm(app).await;
    let never = app.put("/realms/acme", json!({ "secondFactor": "Never" })).await;
    assert_eq!(never.status, StatusCode::OK, "{:?}", never.body);
    realm
}

/// The tokens of the code `page` redirects with.
async fn tokens(app: &TestApp, realm: &Realm, page: &Page) -> (Value, Value) {
    let code = page.param("code").unwrap_or_else(|| panic!("a code: {} {:?}", page.status, page.location));
    let answer = exchange(app, &realm.web, &code, VERIFIER).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    (claims(answer.body["id_token"].as_str().unwrap()), claims(answer.body["access_token"].as_str().unwrap()))
}

#[tokio::test]
async fn a_password_session_signs_in_again_with_a_passkey_when_a_client_asks_for_phishing_resistance() {
    let app = spawn_app().await;
    let realm = password_realm(&app).await;
    web_client(&app, "shop").await;
    let token = token_of(&app, &realm, "ada").await;
    let (_, device) = register(&app, &token, true).await;
    let discovery = app.http.get(format!("{}/realms/acme/.well-known/openid-configuration", app.base)).send().await;
    let discovery: Value = discovery.unwrap().json().await.unwrap();
    assert_eq!(discovery["acr_values_supported"], json!(["1", "2", "phr", "phrh"]));

    // A password: one factor.
    let mut browser = Browser::new(&app);
    let page = authorize(&mut browser, "web", &[]).await;
    let signed_in = browser.sign_in("acme", &page, "ada", PASSWORD).await;
    let (id_token, access) = tokens(&app, &realm, &signed_in).await;
    assert_eq!((&id_token["acr"], &id_token["amr"]), (&json!("1"), &json!(["pwd"])));
    assert_eq!((&access["acr"], &access["amr"]), (&json!("1"), &json!(["pwd"])));
    let first_sign_in = id_token["auth_time"].as_i64().unwrap();
    assert_eq!(access["auth_time"], first_sign_in);

    // Phishing resistance bound to hardware is asked: the session does not reach it, so the login
    // page comes again, saying why, and a passkey answers it.
    app.advance(60).await;
    let page = authorize(&mut browser, "web", &[("acr_values", "phrh")]).await;
    assert!(page.shows_login_form(), "{} {}", page.status, page.body);
    assert!(page.body.contains("asks for a stronger sign-in"), "{}", page.body);
    let (credential, _) = assertion(&app, &page, &device, None, true);
    let stepped_up = post_assertion(&mut browser, &page, &credential).await;
    let (id_token, access) = tokens(&app, &realm, &stepped_up).await;
    assert_eq!((&id_token["acr"], &id_token["amr"]), (&json!("phrh"), &json!(["hwk", "mfa"])));
    assert_eq!(access["acr"], "phrh");
    assert!(id_token["auth_time"].as_i64().unwrap() >= first_sign_in + 60, "{id_token}");
    let current = stepped_up_token(&app, &realm, &mut browser).await;
    let introspected = app.protocol(&realm.web, "token/introspect", &[("token", &current)]).await;
    assert_eq!((&introspected.body["acr"], &introspected.body["amr"]), (&json!("phrh"), &json!(["hwk", "mfa"])));

    // The stronger session answers weaker requests of other clients at once: single sign-on holds.
    let shop = authorize(&mut browser, "shop", &[("acr_values", "2")]).await;
    assert!(shop.param("code").is_some(), "{} {}", shop.status, shop.body);
    let essential = r#"{"id_token":{"acr":{"essential":true,"values":["phrh"]}}}"#;
    let again = authorize(&mut browser, "web", &[("claims", essential)]).await;
    assert!(again.param("code").is_some(), "{} {}", again.status, again.body);

    // A password cannot reach phishing resistance: the client is told so.
    let mut other = Browser::new(&app);
    let page = authorize(&mut other, "web", &[("acr_values", "phr")]).await;
    let answer = other.sign_in("acme", &page, "grace", PASSWORD).await;
    assert_eq!(answer.param("error").as_deref(), Some("unmet_authentication_requirements"), "{:?}", answer.location);
    // Her sign-in stands for what it reaches, and an `acr` this service does not know asks for
    // nothing.
    let answer = authorize(&mut other, "web", &[("acr_values", "urn:example:gold")]).await;
    assert!(answer.param("code").is_some(), "{:?}", answer.location);
}

/// An access token of the browser's current session, by single sign-on.
async fn stepped_up_token(app: &TestApp, realm: &Realm, browser: &mut Browser) -> String {
    let page = authorize(browser, "web", &[]).await;
    let code = page.param("code").expect("single sign-on");
    let answer = exchange(app, &realm.web, &code, VERIFIER).await;
    answer.body["access_token"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn openid_client_steps_up_when_a_resource_server_asks_for_phishing_resistance() {
    let app = spawn_app().await;
    let realm = password_realm(&app).await;
    let token = token_of(&app, &realm, "ada").await;
    let (_, device) = register(&app, &token, true).await;
    let issuer = format!("{}/realms/acme", app.base);
    let arguments = [issuer.as_str(), "web", &realm.web.secret, REDIRECT, "phrh"];
    let mut party = NodeScript::start("step_up.mjs", "openid-client", &arguments);

    // The first sign-in, by password.
    let started = party.next().await;
    let mut browser = Browser::new(&app);
    let page = browser.open(started["authorizationUrl"].as_str().unwrap()).await;
    let answer = browser.sign_in("acme", &page, "ada", PASSWORD).await;
    party.send(answer.location.unwrap().as_str()).await;

    // The resource server refused its token; the client asks again with the challenge's
    // `acr_values`, and the person answers with their passkey.
    let again = party.next().await;
    let url = url::Url::parse(again["authorizationUrl"].as_str().unwrap()).unwrap();
    assert!(url.query_pairs().any(|(n, v)| n == "acr_values" && v == "phrh"), "{url}");
    let page = browser.open(url.as_str()).await;
    assert!(page.shows_login_form(), "{} {}", page.status, page.body);
    let (credential, _) = assertion(&app, &page, &device, None, true);
    let answer = post_assertion(&mut browser, &page, &credential).await;
    party.send(answer.location.unwrap().as_str()).await;

    let calls = party.next().await;
    let calls = calls["calls"].as_array().unwrap();
    assert_eq!(calls[0]["status"], 401, "{calls:?}");
    assert_eq!(calls[0]["challenge"]["error"], "insufficient_user_authentication");
    assert_eq!(calls[0]["acr"], "1");
    assert_eq!((&calls[1]["status"], &calls[1]["acr"]), (&json!(200), &json!("phrh")), "{calls:?}");
    assert!(party.finished().await);
}

#[tokio::test]
async fn a_delegation_grant_asking_for_a_passkey_refuses_a_token_of_a_password_sign_in() {
    let app = spawn_app().await;
    let realm = password_realm(&app).await;
    let token = token_of(&app, &realm, "ada").await;
    let (_, device) = register(&app, &token, true).await;
    let ada = app.get("/realms/acme/users?searchTerm=ada").await.items()[0]["id"].as_str().unwrap().to_owned();
    let body = json!({
        "id": "agent",
        "clientConfiguration": { "grantTypes": ["client_credentials"], "allowedScopes": ["orders:read"], "tokenExchangeEnabled": true },
    });
    let created = app.post("/realms/acme/clients", body).await;
    let agent = crate::support::TestClient {
        realm: "acme".into(),
        id: "agent".into(),
        secret: created.data()["clientSecret"].as_str().unwrap().to_owned(),
    };
    let grant = |minimum: &str| json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read"], "minimumAcr": minimum });
    let refused = app.post("/realms/acme/delegation-grants", grant("gold")).await;
    assert_eq!(refused.refused_fields(), [("minimumAcr".to_owned(), "OneOf".to_owned())], "{:?}", refused.body);
    let written = app.post("/realms/acme/delegation-grants", grant("phr")).await;
    assert_eq!(written.status, StatusCode::CREATED, "{:?}", written.body);
    assert_eq!(written.data()["minimumAcr"], "phr");

    let exchange = async |subject: &str| {
        let form = [
            ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
            ("subject_token", subject),
            ("subject_token_type", "urn:ietf:params:oauth:token-type:access_token"),
            ("scope", "orders:read"),
        ];
        app.token(&agent, &form).await
    };
    // A password sign-in falls short of the grant.
    let mut browser = Browser::new(&app);
    let page = authorize(&mut browser, "web", &[]).await;
    let signed_in = browser.sign_in("acme", &page, "ada", PASSWORD).await;
    let code = signed_in.param("code").unwrap();
    let own = exchange_code(&app, &realm, &code).await;
    let answer = exchange(&own).await;
    assert_eq!(
        (answer.body["error"].as_str(), answer.body["error_code"].as_str()),
        (Some("invalid_grant"), Some("DelegationAssuranceTooLow")),
        "{:?}",
        answer.body
    );

    // Signed in with her passkey, the agent may act for her, and its token says how she signed in.
    let page = authorize(&mut browser, "web", &[("prompt", "login")]).await;
    let (credential, _) = assertion(&app, &page, &device, None, true);
    let with_passkey = post_assertion(&mut browser, &page, &credential).await;
    let own = exchange_code(&app, &realm, &with_passkey.param("code").unwrap()).await;
    let answer = exchange(&own).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let delegated = claims(answer.body["access_token"].as_str().unwrap());
    assert_eq!((&delegated["acr"], &delegated["amr"]), (&json!("phrh"), &json!(["hwk", "mfa"])));
}

/// The access token a code is exchanged for by the web client.
async fn exchange_code(app: &TestApp, realm: &Realm, code: &str) -> String {
    let answer = exchange(app, &realm.web, code, VERIFIER).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body["access_token"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_account_api_asks_for_a_recent_sign_in_before_a_change_of_how_a_person_signs_in() {
    let app = spawn_app().await;
    let realm = realm(&app).await;
    // A token refreshed from a sign-in of a quarter of an hour ago is live, its sign-in old.
    let keeper = app.create_client("acme", "keeper", &["password", "refresh_token"], &[]).await;
    let form = [("grant_type", "password"), ("username", "ada"), ("password", PASSWORD)];
    let signed_in = app.token(&keeper, &form).await;
    app.advance(16 * 60).await;
    let refresh = signed_in.body["refresh_token"].as_str().unwrap();
    let refreshed = app.token(&keeper, &[("grant_type", "refresh_token"), ("refresh_token", refresh)]).await;
    let token = refreshed.body["access_token"].as_str().unwrap().to_owned();
    let (refused, _) = register(&app, &token, true).await;
    assert_eq!(
        (refused.status, refused.body["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("insufficient_user_authentication"))
    );
    let challenge = refused.headers["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.starts_with(r#"Bearer error="insufficient_user_authentication""#)
            && challenge.contains("max_age=900"),
        "{challenge}"
    );
    // Signed in again, the change goes through.
    let token = token_of(&app, &realm, "ada").await;
    let (kept, _) = register(&app, &token, true).await;
    assert_eq!(kept.status, StatusCode::CREATED, "{:?}", kept.body);
}
