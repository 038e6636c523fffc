//! Signing a browser out: RP-Initiated Logout 1.0 at the end-session endpoint, and every other way
//! a browser's sign-in ends (an ended session, a password change, a reused code), or does not (a
//! revoked refresh token).

use reqwest::StatusCode;
use serde_json::json;

use crate::oauth::browser::{Browser, REDIRECT, VERIFIER, challenge, exchange, realm_with_clients, request, signed_in};
use crate::support::{TestApp, TestClient, claims, spawn_app};

const AFTER_LOGOUT: &str = "http://127.0.0.1:9/signed-out";
const LOGOUT: &str = "/realms/acme/protocol/openid-connect/logout";

async fn allow_logout_redirect(app: &TestApp, client: &str) {
    let body = json!({ "clientConfiguration": { "postLogoutRedirectUris": [AFTER_LOGOUT] } });
    let updated = app.put(&format!("/realms/acme/clients/{client}"), body).await;
    assert_eq!(updated.status, StatusCode::OK, "{:?}", updated.body);
    assert_eq!(updated.data()["clientConfiguration"]["postLogoutRedirectUris"], json!([AFTER_LOGOUT]));
}

/// Whether the browser is still signed in to the realm: `prompt=none` answers a code.
async fn still_signed_in(browser: &mut Browser) -> bool {
    let pkce = challenge(VERIFIER);
    let mut params = request("web", "s", "n", &pkce);
    params.push(("prompt", "none"));
    let answer = browser.authorize("acme", &params).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
    answer.param("code").is_some()
}

/// The browser signed in to `web`, then to `shop` by single sign-on: the token answers of both.
async fn signed_in_to_both(
    app: &TestApp,
    browser: &mut Browser,
    web: &TestClient,
    shop: &TestClient,
) -> (crate::support::Answer, crate::support::Answer) {
    let code = signed_in(browser, "web", "s").await.param("code").unwrap();
    let web_tokens = exchange(app, web, &code, VERIFIER).await;
    let pkce = challenge(VERIFIER);
    let code = browser.authorize("acme", &request("shop", "s", "n", &pkce)).await.param("code").unwrap();
    (web_tokens, exchange(app, shop, &code, VERIFIER).await)
}

async fn active(app: &TestApp, client: &TestClient, token: &str) -> bool {
    app.protocol(client, "token/introspect", &[("token", token)]).await.body["active"] == true
}

#[tokio::test]
async fn rp_initiated_logout_with_an_id_token_hint_ends_every_session_of_the_browser() {
    let app = spawn_app().await;
    let (web, shop) = realm_with_clients(&app).await;
    allow_logout_redirect(&app, "web").await;
    let mut browser = Browser::new(&app);
    let (web_tokens, shop_tokens) = signed_in_to_both(&app, &mut browser, &web, &shop).await;
    let web_access = web_tokens.body["access_token"].as_str().unwrap();
    let shop_access = shop_tokens.body["access_token"].as_str().unwrap();
    assert!(active(&app, &web, web_access).await && active(&app, &shop, shop_access).await);

    let hint = web_tokens.body["id_token"].as_str().unwrap();
    let params = [("id_token_hint", hint), ("post_logout_redirect_uri", AFTER_LOGOUT), ("state", "bye")];
    let answer = browser.visit(LOGOUT, &params).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    let location = answer.location.clone().unwrap();
    assert!(location.as_str().starts_with(AFTER_LOGOUT), "{location}");
    assert_eq!(answer.param("state").as_deref(), Some("bye"));
    assert!(!browser.cookies.contains_key("castellan_session"), "the cookie is cleared");

    assert!(!active(&app, &web, web_access).await, "the hinted client's session ended");
    assert!(!active(&app, &shop, shop_access).await, "every session of the browser ended");
    assert!(!still_signed_in(&mut browser).await);
}

#[tokio::test]
async fn without_a_hint_the_person_is_asked_before_the_browser_is_signed_out() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    signed_in(&mut browser, "web", "s").await;
    let question = browser.visit(LOGOUT, &[]).await;
    assert_eq!(question.status, StatusCode::OK);
    assert!(question.body.contains("Sign out?"));
    assert!(question.policy.as_deref().unwrap().contains("frame-ancestors 'none'"));
    assert!(still_signed_in(&mut browser).await, "a visit alone signs no one out");

    // A post from elsewhere, without the page's token, only asks again.
    let mut other = Browser::new(&app);
    other.cookies = browser.cookies.clone();
    other.cookies.remove("castellan_form");
    let forged = other.submit(LOGOUT, &question, &[]).await;
    assert_eq!(forged.status, StatusCode::OK);
    assert!(forged.body.contains("Sign out?"));
    assert!(still_signed_in(&mut browser).await);

    let confirmed = browser.submit(LOGOUT, &question, &[]).await;
    assert_eq!(confirmed.status, StatusCode::OK);
    assert!(confirmed.body.contains("You are signed out"));
    assert!(!still_signed_in(&mut browser).await);
}

#[tokio::test]
async fn an_unregistered_post_logout_address_is_never_redirected_to_and_signs_no_one_out() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    allow_logout_redirect(&app, "web").await;
    let mut browser = Browser::new(&app);
    let code = signed_in(&mut browser, "web", "s").await.param("code").unwrap();
    let tokens = exchange(&app, &web, &code, VERIFIER).await;
    let hint = tokens.body["id_token"].as_str().unwrap();
    for uri in [REDIRECT, "https://attacker.example/", "http://127.0.0.1:9/signed-out/"] {
        let answer = browser.visit(LOGOUT, &[("id_token_hint", hint), ("post_logout_redirect_uri", uri)]).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{uri}");
        assert!(answer.location.is_none(), "{uri}");
    }
    // Nor is a hint this realm did not sign taken.
    let forged = format!("{hint}x");
    let answer = browser.visit(LOGOUT, &[("id_token_hint", forged.as_str())]).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(still_signed_in(&mut browser).await);
}

#[tokio::test]
async fn a_session_ended_through_the_admin_api_ends_the_browsers_sign_in() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let code = signed_in(&mut browser, "web", "s").await.param("code").unwrap();
    let tokens = exchange(&app, &web, &code, VERIFIER).await;
    let sid = claims(tokens.body["access_token"].as_str().unwrap())["sid"].as_str().unwrap().to_owned();
    let ended = app.delete(&format!("/realms/acme/sessions/{sid}")).await;
    assert!(ended.status.is_success(), "{:?}", ended.body);
    assert!(!still_signed_in(&mut browser).await);
}

/// RFC 7009 revokes the tokens of one grant: the client's session ends, while the browser stays
/// signed in and the person's session at the realm's other application goes on.
#[tokio::test]
async fn revoking_one_applications_refresh_token_leaves_the_browser_and_the_other_applications_signed_in() {
    let app = spawn_app().await;
    let (web, shop) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let (web_tokens, shop_tokens) = signed_in_to_both(&app, &mut browser, &web, &shop).await;
    let web_access = web_tokens.body["access_token"].as_str().unwrap();
    let shop_access = shop_tokens.body["access_token"].as_str().unwrap();

    let refresh = web_tokens.body["refresh_token"].as_str().unwrap();
    assert_eq!(app.protocol(&web, "revoke", &[("token", refresh)]).await.status, StatusCode::OK);
    assert!(!active(&app, &web, web_access).await, "the revoked grant's access token");
    let refreshed = app.token(&web, &[("grant_type", "refresh_token"), ("refresh_token", refresh)]).await;
    assert_eq!(refreshed.body["error"], "invalid_grant", "{:?}", refreshed.body);
    assert!(active(&app, &shop, shop_access).await, "the other application's session goes on");
    let shop_refresh = shop_tokens.body["refresh_token"].as_str().unwrap();
    let refreshed = app.token(&shop, &[("grant_type", "refresh_token"), ("refresh_token", shop_refresh)]).await;
    assert_eq!(refreshed.status, StatusCode::OK, "{:?}", refreshed.body);
    assert!(still_signed_in(&mut browser).await, "the browser is still signed in to the realm");
}

#[tokio::test]
async fn a_password_change_ends_the_browsers_sign_in() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    signed_in(&mut browser, "web", "s").await;
    let users = app.get("/realms/acme/users?searchTerm=ada").await;
    let id = users.items()[0]["id"].as_str().unwrap().to_owned();
    let changed = app.put(&format!("/realms/acme/users/{id}"), json!({ "password": "a brand new passphrase" })).await;
    assert_eq!(changed.status, StatusCode::OK, "{:?}", changed.body);
    assert!(!still_signed_in(&mut browser).await);
}

#[tokio::test]
async fn a_reused_code_ends_the_browsers_sign_in() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let code = signed_in(&mut browser, "web", "s").await.param("code").unwrap();
    exchange(&app, &web, &code, VERIFIER).await;
    let pkce = challenge(VERIFIER);
    let waiting = browser.authorize("acme", &request("web", "s", "n", &pkce)).await.param("code").unwrap();
    assert!(still_signed_in(&mut browser).await);
    exchange(&app, &web, &code, VERIFIER).await;
    assert!(!still_signed_in(&mut browser).await);
    // A code the browser was given before is refused with it: its sign-in is over.
    let refused = exchange(&app, &web, &waiting, VERIFIER).await;
    assert_eq!(refused.body["error_code"], "InvalidAuthorizationCode", "{:?}", refused.body);
}

/// A code is good only while the browser's sign-in it came from lasts: signed out before the
/// exchange, the client gets no session and no tokens.
#[tokio::test]
async fn a_code_of_a_browser_signed_out_since_is_refused() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let code = signed_in(&mut browser, "web", "s").await.param("code").unwrap();
    let asked = browser.visit(LOGOUT, &[]).await;
    let confirmed = browser.submit(LOGOUT, &asked, &[]).await;
    assert!(confirmed.body.contains("You are signed out"), "{}", confirmed.body);
    let refused = exchange(&app, &web, &code, VERIFIER).await;
    assert_eq!(refused.body["error"], "invalid_grant", "{:?}", refused.body);
    assert_eq!(refused.body["error_code"], "InvalidAuthorizationCode");
    assert!(app.get("/realms/acme/sessions?clientId=web").await.items().is_empty());
}

/// Logout CSRF: an ID token hint signs out without asking only when it comes from this browser's
/// own sign-in. Another person's ID token, or one of another browser (even the same person's, or an
/// expired one), gets the question, and the session it names is left alone.
#[tokio::test]
async fn a_hint_of_another_person_or_another_browser_asks_and_ends_nothing_it_names() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    app.create_user("acme", "grace", "grace hopper cobol").await;
    let pkce = challenge(VERIFIER);
    let sign_in = async |browser: &mut Browser, username: &str, password: &str| {
        let login = browser.authorize("acme", &request("web", "s", "n", &pkce)).await;
        let answer = browser.sign_in("acme", &login, username, password).await;
        exchange(&app, &web, &answer.param("code").unwrap(), VERIFIER).await
    };
    let mut victim = Browser::new(&app);
    let victims = sign_in(&mut victim, "ada", "analytical engine").await;
    let mut attacker = Browser::new(&app);
    let attackers = sign_in(&mut attacker, "grace", "grace hopper cobol").await;
    let mut elsewhere = Browser::new(&app);
    let own_elsewhere = sign_in(&mut elsewhere, "ada", "analytical engine").await;
    // The ID tokens have expired: an old hint is no less a hint, and no more a proof.
    app.advance(3600).await;

    for (what, tokens) in [("another person's", &attackers), ("the same person's from another browser", &own_elsewhere)]
    {
        let hint = tokens.body["id_token"].as_str().unwrap();
        let answer = victim.visit(LOGOUT, &[("id_token_hint", hint)]).await;
        assert_eq!(answer.status, StatusCode::OK, "{what}");
        assert!(answer.body.contains("Sign out?"), "{what}: the person is asked: {}", answer.body);
        assert!(still_signed_in(&mut victim).await, "{what}: the browser stays signed in");
    }
    // Without the browser's cookie, a hint ends nothing either.
    let mut stranger = Browser::new(&app);
    let hint = attackers.body["id_token"].as_str().unwrap();
    let asked = stranger.visit(LOGOUT, &[("id_token_hint", hint)]).await;
    assert!(asked.body.contains("Sign out?"));
    let confirmed = stranger.submit(LOGOUT, &asked, &[]).await;
    assert!(confirmed.body.contains("You are signed out"), "{}", confirmed.body);
    assert!(still_signed_in(&mut attacker).await, "the hinted person's sign-in is theirs to end");

    // The browser's own hint still signs it out at once.
    let own = victims.body["id_token"].as_str().unwrap();
    let answer = victim.visit(LOGOUT, &[("id_token_hint", own)]).await;
    assert!(answer.body.contains("You are signed out"), "{}", answer.body);
    assert!(!still_signed_in(&mut victim).await);
}
