//! A stock relying party that no one here wrote, node's `openid-client` (pinned in
//! `tests/relying-party`, installed by `scripts/test`), signs a person in: discovery, the
//! authorization URL with PKCE, the code's exchange, its checks of the ID token (signature, issuer,
//! audience, nonce, `at_hash`) and userinfo are all its own; the test only plays the browser.

use reqwest::StatusCode;

use crate::oauth::browser::{Browser, REDIRECT, realm_with_clients};
use crate::support::node::NodeScript;
use crate::support::spawn_app;

#[tokio::test]
async fn openid_client_completes_the_code_flow_after_a_sign_in_on_the_page() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let issuer = format!("{}/realms/acme", app.base);
    let mut party = NodeScript::start("code_flow.mjs", "openid-client", &[&issuer, "web", &web.secret, REDIRECT]);

    let started = party.next().await;
    let mut browser = Browser::new(&app);
    let page = browser.open(started["authorizationUrl"].as_str().unwrap()).await;
    assert!(page.shows_login_form(), "{} {}", page.status, page.body);
    let answer = browser.sign_in("acme", &page, "ada", "analytical engine").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    let callback = answer.location.unwrap();
    party.send(callback.as_str()).await;

    let received = party.next().await;
    let users = app.get("/realms/acme/users?searchTerm=ada").await;
    let ada = users.items()[0]["id"].clone();
    assert_eq!(received["claims"]["sub"], ada, "{received}");
    assert_eq!(received["claims"]["iss"], issuer.as_str());
    assert_eq!(received["userinfo"]["sub"], ada);
    assert_eq!(received["userinfo"]["preferred_username"], "ada");
    assert_eq!(received["userinfo"]["email"], "ada@example.com");
    assert_eq!(received["refreshToken"], true);
    assert!(party.finished().await);
}
