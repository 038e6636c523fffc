//! Federated sign-in through a browser: the login page's buttons, `idp_hint` and home-realm
//! discovery choosing the provider; the authorization request sent upstream (code, PKCE, state,
//! nonce); the answer read back with every check (RFC 9207 issuer, the ID token's signature, `iss`,
//! `aud`, `nonce`); the person created and linked, found again, or refused; and the client answered
//! as after a password. The upstreams are real servers on loopback: another realm of the service
//! itself, and a scripted provider for answers no honest provider gives.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::oauth::browser::{Browser, Page, REDIRECT, VERIFIER, challenge, exchange, realm_with_clients, request};
use crate::support::upstreams::{ScriptedProvider, spawn_at_https};
use crate::support::{TestApp, TestClient, claims, created_id};

/// The address of the login page's button for a provider.
fn button(page: &Page, provider: &str) -> String {
    let marker = format!("/auth/upstream/{provider}?");
    let at = page.body.find(&marker).unwrap_or_else(|| panic!("no button for {provider}: {}", page.body));
    let start = page.body[..at].rfind('"').unwrap() + 1;
    let end = at + page.body[at..].find('"').unwrap();
    page.body[start..end].replace("&amp;", "&")
}

/// Follows the redirect of `page` (an absolute address) in the browser.
async fn follow(browser: &mut Browser, page: &Page) -> Page {
    assert_eq!(page.status, StatusCode::SEE_OTHER, "a redirect: {}", page.body);
    browser.open(page.location.as_ref().unwrap().as_str()).await
}

/// Starts a sign-in at the web client of `acme` with these extra parameters.
async fn authorize(browser: &mut Browser, extra: &[(&str, &str)]) -> Page {
    let pkce = challenge(VERIFIER);
    let mut params = request("web", "s-1", "n-1", &pkce);
    params.extend_from_slice(extra);
    browser.authorize("acme", &params).await
}

/// The claims of the ID token the code of `answer` is exchanged for.
async fn id_token_of(app: &TestApp, web: &TestClient, answer: &Page) -> Value {
    let next = answer.next().unwrap_or_else(|| panic!("{} {}", answer.status, answer.body));
    assert!(next.as_str().starts_with(REDIRECT), "on to the client: {next}");
    let tokens = exchange(app, web, &answer.param("code").expect("a code"), VERIFIER).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    claims(tokens.body["id_token"].as_str().unwrap())
}

#[tokio::test]
async fn a_first_sign_in_through_another_castellan_realm_creates_and_links_the_person_and_later_ones_find_them() {
    let (app, front) = spawn_at_https().await;
    let (web, _) = realm_with_clients(&app).await;
    // The upstream: realm `people`, where grace has her account, and the client acme holds there.
    app.create_realm("people").await;
    let grace = app.create_user("people", "grace", "compiler pioneer").await;
    let callback = format!("{}/realms/acme/broker/people/callback", front.url);
    let broker = json!({ "id": "acme-broker", "name": "Acme", "clientConfiguration": { "redirectUris": [callback] } });
    let created = app.post("/realms/people/clients", broker).await;
    let secret = created.data()["clientSecret"].as_str().expect("a confidential client").to_owned();
    created_id(&app, "/realms/acme/roles", json!({ "name": "pioneer" })).await;
    let provider = json!({
        "id": "people", "displayName": "People", "protocol": "OpenIdConnect", "clientId": "acme-broker",
        "clientSecret": secret, "discoveryUrl": format!("{}/realms/people/.well-known/openid-configuration", front.url),
        "roleMappings": [{ "claim": "preferred_username", "value": "grace", "roles": ["pioneer"] }],
    });
    let created = app.post("/realms/acme/identity-providers", provider).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert_eq!(created.data()["redirectUri"], callback.as_str(), "the address to register upstream");
    let offer = json!({ "identityProviders": ["people"] });
    assert_eq!(app.put("/realms/acme/clients/web/identity-providers", offer).await.status, StatusCode::OK);

    let mut browser = Browser::new(&app);
    let page = authorize(&mut browser, &[]).await;
    assert!(page.body.contains("Sign in with People"), "a button per provider: {}", page.body);
    let sent = browser.open(&button(&page, "people")).await;
    let upstream = sent.location.clone().expect("sent upstream");
    assert!(upstream.as_str().starts_with(&format!("{}/realms/people/protocol/openid-connect/auth?", front.url)));
    let asked: std::collections::HashMap<_, _> = upstream.query_pairs().into_owned().collect();
    assert_eq!((asked["client_id"].as_str(), asked["redirect_uri"].as_str()), ("acme-broker", callback.as_str()));
    assert_eq!((asked["code_challenge_method"].as_str(), asked["response_type"].as_str()), ("S256", "code"));
    assert!(asked.contains_key("state") && asked.contains_key("nonce") && asked["scope"].contains("openid"));

    let login = browser.open(upstream.as_str()).await;
    assert!(login.shows_login_form(), "the upstream's own login page: {}", login.body);
    let back = browser.sign_in("people", &login, "grace", "compiler pioneer").await;
    assert!(back.location.as_ref().unwrap().as_str().starts_with(&callback), "{:?}", back.location);
    assert_eq!(back.param("iss").as_deref(), Some(format!("{}/realms/people", front.url).as_str()));
    let answer = follow(&mut browser, &back).await;
    // A page that goes on to the client: a redirect would continue the provider's login form,
    // which that page's `form-action` may not allow (Chromium below shows it).
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert!(answer.body.contains("Signing you in"), "{}", answer.body);
    let person = id_token_of(&app, &web, &answer).await;
    assert_eq!(person["amr"], json!(["federated"]), "{person}");
    let id = person["sub"].as_str().unwrap().to_owned();
    assert_ne!(id, grace, "a person of acme, not of people");

    let user = app.get(&format!("/realms/acme/users/{id}")).await;
    assert_eq!((&user.data()["username"], &user.data()["email"]), (&json!("grace"), &json!("grace@example.com")));
    let created = app.events("user_created").await;
    let (_, client, data) = created.last().unwrap();
    assert_eq!((client.as_deref(), &data["identity_provider"]), (Some("web"), &json!("people")));
    let roles = app.get(&format!("/realms/acme/users/{id}/roles")).await;
    assert_eq!(roles.data()["direct"][0]["name"], "pioneer", "the role mapping applied: {:?}", roles.body);
    let logins = app.events("login_succeeded").await;
    let (_, _, login) = logins.iter().rev().find(|(realm, _, _)| realm.as_deref() == Some("acme")).unwrap();
    assert_eq!((&login["identity_provider"], &login["user_id"]), (&json!("people"), &json!(id)));
    assert_eq!(login["authentication_methods"], json!(["federated"]));

    // Later, `idp_hint` skips the login page, and the link finds the same person.
    let mut later = Browser::new(&app);
    let sent = authorize(&mut later, &[("idp_hint", "people")]).await;
    assert!(sent.location.as_ref().unwrap().as_str().starts_with(&front.url), "straight upstream: {}", sent.body);
    let login = follow(&mut later, &sent).await;
    let back = later.sign_in("people", &login, "grace", "compiler pioneer").await;
    let again = id_token_of(&app, &web, &follow(&mut later, &back).await).await;
    assert_eq!(again["sub"], json!(id), "found by the link");
    let acme_created = |events: Vec<(Option<String>, Option<String>, Value)>| {
        events.iter().filter(|(realm, _, _)| realm.as_deref() == Some("acme")).count()
    };
    assert_eq!(acme_created(app.events("user_created").await), 2, "ada, and grace once");

    // The answer is good once, and only in the browser that started the sign-in.
    let replayed = later.open(back.location.as_ref().unwrap().as_str()).await;
    assert_eq!(replayed.status, StatusCode::BAD_REQUEST);
    assert!(replayed.body.contains("This sign-in has expired"), "{}", replayed.body);
}

/// The realm `acme` with its web client offering the scripted provider `corp`.
async fn scripted(app: &TestApp, trust_verified_email: bool) -> (TestClient, ScriptedProvider) {
    let (web, _) = realm_with_clients(app).await;
    let upstream = ScriptedProvider::start(app, json!({ "sub": "c-7", "preferred_username": "carol" })).await;
    let provider = json!({
        "id": "corp", "protocol": "OpenIdConnect", "clientId": "acme-at-corp", "clientSecret": "corp-secret-1234",
        "discoveryUrl": upstream.discovery_url(), "trustVerifiedEmail": trust_verified_email,
    });
    let created = app.post("/realms/acme/identity-providers", provider).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let offer = json!({ "identityProviders": ["corp"] });
    assert_eq!(app.put("/realms/acme/clients/web/identity-providers", offer).await.status, StatusCode::OK);
    (web, upstream)
}

/// A sign-in through `corp`, chosen by `idp_hint`: the scripted provider answers at once.
async fn through_corp(app: &TestApp) -> Page {
    let mut browser = Browser::new(app);
    let sent = authorize(&mut browser, &[("idp_hint", "corp")]).await;
    let back = follow(&mut browser, &sent).await;
    follow(&mut browser, &back).await
}

async fn spawn_trusting() -> TestApp {
    crate::support::spawn_with(crate::support::TestDatabase::new().await, crate::support::upstreams::trust_loopback)
        .await
}

fn refused_upstream(page: &Page) -> bool {
    page.status == StatusCode::OK && page.body.contains("Signing in through that provider did not succeed")
}

#[tokio::test]
async fn a_tampered_upstream_id_token_or_a_mixed_up_answer_is_refused() {
    let app = spawn_trusting().await;
    let (web, upstream) = scripted(&app, false).await;
    let tamperings = [
        ("iss", json!({ "iss": "https://evil.example" })),
        ("aud", json!({ "aud": "someone-else" })),
        ("nonce", json!({ "nonce": "replayed" })),
        ("exp", json!({ "exp": 1_000_000_000 })),
    ];
    for (what, tampering) in tamperings {
        upstream.tamper(tampering);
        let page = through_corp(&app).await;
        assert!(refused_upstream(&page), "a wrong {what} is refused: {} {}", page.status, page.body);
    }
    upstream.tamper(json!({}));
    upstream.forge_signatures(true);
    assert!(refused_upstream(&through_corp(&app).await), "a signature by another key is refused");
    upstream.forge_signatures(false);
    upstream.answer_as("https://another-provider.example");
    assert!(refused_upstream(&through_corp(&app).await), "an answer naming another issuer is refused (RFC 9207)");

    let failed = app.events("login_failed").await;
    assert_eq!(failed.len(), 6, "each refusal told");
    assert!(failed.iter().all(
        |(_, _, data)| data["identity_provider"] == "corp" && data["failure_reason"] == "identity_provider_refused"
    ));
    assert_eq!(app.events("user_created").await.len(), 1, "ada only: nobody was created");

    upstream.answer_as(&upstream.base.clone());
    let answer = through_corp(&app).await;
    let person = id_token_of(&app, &web, &answer).await;
    let user = app.get(&format!("/realms/acme/users/{}", person["sub"].as_str().unwrap())).await;
    assert_eq!(user.data()["username"], "carol", "the honest answer signs carol in");
    let sent = upstream.last_request();
    assert_eq!(sent["code_challenge_method"], "S256", "PKCE towards the provider, checked by it at its token endpoint");
}

#[tokio::test]
async fn an_unverified_upstream_email_never_links_to_an_existing_account() {
    let app = spawn_trusting().await;
    let (web, upstream) = scripted(&app, true).await;
    let ada = app.get("/realms/acme/users?searchTerm=ada").await.items()[0]["id"].as_str().unwrap().to_owned();
    let claiming = |verified: Value| json!({ "sub": "c-ada", "email": "ada@example.com", "email_verified": verified });

    upstream.vouch_for(claiming(json!(false)));
    let page = through_corp(&app).await;
    assert!(page.body.contains("An account with this e-mail address exists already"), "{}", page.body);
    upstream.vouch_for(claiming(Value::Null));
    assert!(through_corp(&app).await.body.contains("exists already"), "saying nothing is not saying verified");
    let failed = app.events("login_failed").await;
    assert!(failed.iter().all(|(_, _, data)| data["failure_reason"] == "account_not_linked"), "{failed:?}");

    // Verified upstream, but never confirmed here: whoever typed ada's address when her account was
    // made may not have been ada, so the account is not handed to the upstream identity.
    upstream.vouch_for(claiming(json!(true)));
    assert!(through_corp(&app).await.body.contains("exists already"), "an address this service never confirmed");
    let confirmed = app.put(&format!("/realms/acme/users/{ada}"), json!({ "emailConfirmed": true })).await;
    assert_eq!(confirmed.status, StatusCode::OK, "{:?}", confirmed.body);
    let person = id_token_of(&app, &web, &through_corp(&app).await).await;
    assert_eq!(person["sub"], json!(ada), "both sides proved the address: it links to ada");
    assert_eq!(app.events("user_created").await.len(), 1, "ada was never doubled");
}

/// Pre-account hijacking: an attacker opens an account with the victim's address before the victim
/// ever comes, through sign-up or through a provider that does not verify addresses, and waits for
/// the victim to sign in through a trusted provider. The victim's upstream identity must never be
/// linked to the account whose password the attacker holds.
#[tokio::test]
async fn an_account_opened_with_someone_elses_address_never_captures_their_upstream_identity() {
    let mail = crate::support::smtp::MailServer::start().await;
    let smtp = mail.url.clone();
    let (app, front) =
        crate::support::upstreams::spawn_at_https_with(move |settings| settings.smtp_url = Some(smtp)).await;
    let (web, _) = realm_with_clients(&app).await;
    assert_eq!(app.put("/realms/acme", json!({ "selfSignUp": true })).await.status, StatusCode::OK);
    // The victim's home: realm `people` behind TLS, where grace's address is confirmed, trusted by acme.
    app.create_realm("people").await;
    let grace = app.create_user("people", "grace", "compiler pioneer").await;
    app.put(&format!("/realms/people/users/{grace}"), json!({ "emailConfirmed": true })).await;
    let callback = format!("{}/realms/acme/broker/people/callback", front.url);
    let broker = json!({ "id": "acme-broker", "name": "Acme", "clientConfiguration": { "redirectUris": [callback] } });
    let secret = app.post("/realms/people/clients", broker).await.data()["clientSecret"].as_str().unwrap().to_owned();
    let provider = json!({
        "id": "people", "displayName": "People", "protocol": "OpenIdConnect", "clientId": "acme-broker",
        "clientSecret": secret, "discoveryUrl": format!("{}/realms/people/.well-known/openid-configuration", front.url),
        "trustVerifiedEmail": true,
    });
    assert_eq!(app.post("/realms/acme/identity-providers", provider).await.status, StatusCode::CREATED);
    // The attacker's way in: a provider acme does not trust for addresses, which says what it likes.
    let corp = ScriptedProvider::start(&app, json!({})).await;
    let untrusted = json!({
        "id": "corp", "protocol": "OpenIdConnect", "clientId": "acme-at-corp", "clientSecret": "corp-secret-1234",
        "discoveryUrl": corp.discovery_url(), "trustVerifiedEmail": false,
    });
    assert_eq!(app.post("/realms/acme/identity-providers", untrusted).await.status, StatusCode::CREATED);
    let offer = json!({ "identityProviders": ["people", "corp"] });
    assert_eq!(app.put("/realms/acme/clients/web/identity-providers", offer).await.status, StatusCode::OK);

    // 1. Sign-up with grace's address: nothing exists until the code sent to her comes back.
    let mut attacker = Browser::new(&app);
    let form = authorize(&mut attacker, &[("prompt", "create")]).await;
    let register = "/realms/acme/protocol/openid-connect/auth/register";
    let fields = [("username", "mallory"), ("email", "grace@example.com"), ("password", "mallory's passphrase")];
    let asked = attacker.submit(register, &form, &fields).await;
    assert!(asked.body.contains("Confirm your email address"), "{}", asked.body);
    assert_eq!(app.get("/realms/acme/users?searchTerm=grace%40example.com").await.items().len(), 0);
    let letter = mail.letter(&app, "grace@example.com").await;
    assert!(letter.data.contains("cstl_signup_"), "the code went to grace, not to the attacker");
    let guessed = attacker.submit(&format!("{register}/confirm"), &asked, &[("code", "cstl_signup_guess")]).await;
    assert!(guessed.body.contains("This code is not valid or has expired."), "{}", guessed.body);
    let mallory = attacker.authorize("acme", &request("web", "s", "n", &challenge(VERIFIER))).await;
    let tried = attacker.sign_in("acme", &mallory, "mallory", "mallory's passphrase").await;
    assert!(tried.body.contains("The username or password is not correct."), "no account without the code");

    // 2. Through the untrusted provider, claiming grace's address as verified: a person is made,
    //    her address not confirmed.
    corp.vouch_for(
        json!({ "sub": "m-1", "preferred_username": "m", "email": "grace@example.com", "email_verified": true }),
    );
    let planted = id_token_of(&app, &web, &through_corp(&app).await).await;
    let planted = app.get(&format!("/realms/acme/users/{}", planted["sub"].as_str().unwrap())).await;
    assert_eq!(
        (&planted.data()["email"], &planted.data()["emailConfirmed"]),
        (&json!("grace@example.com"), &json!(false))
    );

    // 3. Grace signs in through her trusted provider: not into the attacker's account.
    let mut victim = Browser::new(&app);
    let sent = authorize(&mut victim, &[("idp_hint", "people")]).await;
    let login = follow(&mut victim, &sent).await;
    let back = victim.sign_in("people", &login, "grace", "compiler pioneer").await;
    let answer = follow(&mut victim, &back).await;
    assert!(answer.body.contains("An account with this e-mail address exists already"), "{}", answer.body);
    let failed = app.events("login_failed").await;
    let (_, _, refused) = failed.last().unwrap();
    assert_eq!(
        (&refused["identity_provider"], &refused["failure_reason"]),
        (&json!("people"), &json!("account_not_linked"))
    );
    let logins = app.events("login_succeeded").await;
    assert!(
        logins.iter().all(|(_, _, data)| data["identity_provider"] != "people"),
        "nobody signed in through grace's provider: {logins:?}"
    );
}

#[tokio::test]
async fn an_upstream_answer_holding_u0000_is_refused_like_any_unusable_answer() {
    let app = spawn_trusting().await;
    let (_, upstream) = scripted(&app, false).await;
    upstream.vouch_for(json!({ "sub": "c-9", "preferred_username": "nul\u{0}", "email": "nul@example.com" }));
    let page = through_corp(&app).await;
    assert!(refused_upstream(&page), "{} {}", page.status, page.body);
    let failed = app.events("login_failed").await;
    assert_eq!(failed.last().unwrap().2["failure_reason"], "identity_provider_refused");
}

#[tokio::test]
async fn an_untrusted_providers_verified_email_does_not_link_either() {
    let app = spawn_trusting().await;
    let (_, upstream) = scripted(&app, false).await;
    upstream.vouch_for(json!({ "sub": "c-ada", "email": "ada@example.com", "email_verified": true }));
    assert!(through_corp(&app).await.body.contains("exists already"));
}

#[tokio::test]
async fn home_realm_discovery_sends_an_organizations_address_to_its_provider() {
    let app = spawn_trusting().await;
    let (web, upstream) = scripted(&app, false).await;
    app.put("/realms/acme/clients/web/identity-providers", json!({ "identityProviders": [] })).await;
    let initech =
        created_id(&app, "/realms/acme/organizations", json!({ "name": "Initech", "domains": ["initech.example"] }))
            .await;
    let path = format!("/realms/acme/organizations/{initech}/identity-providers");
    assert_eq!(app.put(&path, json!({ "identityProviders": ["corp"] })).await.status, StatusCode::OK);

    let mut browser = Browser::new(&app);
    let page = authorize(&mut browser, &[]).await;
    assert!(!page.body.contains(r#"<a class="button""#), "the client offers no provider's button");
    let sent = browser.sign_in("acme", &page, "Peter@Initech.example", "").await;
    assert!(sent.location.as_ref().unwrap().as_str().starts_with(&upstream.base), "{} {}", sent.status, sent.body);
    let back = follow(&mut browser, &sent).await;
    assert_eq!(upstream.last_request()["login_hint"], "Peter@Initech.example", "the address goes upstream as a hint");
    let person = id_token_of(&app, &web, &follow(&mut browser, &back).await).await;
    assert_eq!(
        app.get(&format!("/realms/acme/users/{}", person["sub"].as_str().unwrap())).await.data()["username"],
        "carol"
    );

    // A `login_hint` at the domain goes straight to the provider; other addresses and names do not.
    let mut hinted = Browser::new(&app);
    let sent = authorize(&mut hinted, &[("login_hint", "milton@initech.example")]).await;
    assert!(sent.location.as_ref().unwrap().as_str().starts_with(&upstream.base), "{}", sent.body);
    let mut local = Browser::new(&app);
    let page = authorize(&mut local, &[("login_hint", "ada@example.com")]).await;
    assert!(page.shows_login_form());
    let answer = local.sign_in("acme", &page, "ada", "analytical engine").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "a password still signs in elsewhere");
}

#[tokio::test]
async fn a_github_style_provider_is_read_through_its_user_info() {
    let app = spawn_trusting().await;
    let (web, _) = realm_with_clients(&app).await;
    let upstream = ScriptedProvider::start(&app, json!({ "id": 583231, "login": "octocat", "email": null })).await;
    upstream.plain_oauth();
    let provider = json!({
        "id": "github", "displayName": "GitHub", "protocol": "OAuth2", "clientId": "Iv1.acme", "clientSecret": "gh-secret-5678",
        "authorizationUrl": format!("{}/authorize", upstream.base), "tokenUrl": format!("{}/token", upstream.base),
        "userinfoUrl": format!("{}/userinfo", upstream.base), "scopes": ["read:user"],
    });
    assert_eq!(app.post("/realms/acme/identity-providers", provider).await.status, StatusCode::CREATED);
    app.put("/realms/acme/clients/web/identity-providers", json!({ "identityProviders": ["github"] })).await;

    let mut browser = Browser::new(&app);
    let page = authorize(&mut browser, &[]).await;
    let sent = browser.open(&button(&page, "github")).await;
    let back = follow(&mut browser, &sent).await;
    assert!(!upstream.last_request().contains_key("nonce"), "no nonce where no ID token comes back");
    let person = id_token_of(&app, &web, &follow(&mut browser, &back).await).await;
    let user = app.get(&format!("/realms/acme/users/{}", person["sub"].as_str().unwrap())).await;
    assert_eq!(user.data()["username"], "octocat");
    let created = app.events("user_created").await;
    assert_eq!(created.last().unwrap().2["identity_provider"], "github");
}

#[tokio::test]
async fn a_user_info_about_someone_else_refuses_the_sign_in_and_an_unreadable_one_is_passed_over() {
    let app = spawn_trusting().await;
    let (web, upstream) = scripted(&app, false).await;
    upstream.user_info_answers(Ok(json!({ "sub": "someone-else", "email": "mallory@example.com" })));
    assert!(refused_upstream(&through_corp(&app).await), "OpenID Connect Core §5.3.2");
    upstream.user_info_answers(Err(500));
    let person = id_token_of(&app, &web, &through_corp(&app).await).await;
    let user = app.get(&format!("/realms/acme/users/{}", person["sub"].as_str().unwrap())).await;
    assert_eq!(user.data()["username"], "carol", "the ID token suffices");
}

#[tokio::test]
async fn the_login_page_offers_the_providers_as_they_are_now() {
    let app = crate::support::spawn_app().await;
    realm_with_clients(&app).await;
    let provider = json!({
        "id": "corp", "displayName": "Corp", "protocol": "OpenIdConnect", "clientId": "acme-at-corp",
        "clientSecret": "corp-secret-1234", "discoveryUrl": "https://login.corp.example/.well-known/openid-configuration",
    });
    assert_eq!(app.post("/realms/acme/identity-providers", provider).await.status, StatusCode::CREATED);
    let offer = |providers: Value| {
        app.put("/realms/acme/clients/web/identity-providers", json!({ "identityProviders": providers }))
    };
    assert_eq!(offer(json!(["corp"])).await.status, StatusCode::OK);
    let mut browser = Browser::new(&app);
    let mut buttons = async || {
        let page = authorize(&mut browser, &[]).await;
        assert!(page.shows_login_form(), "{}", page.body);
        let mut shown = Vec::new();
        let mut rest = page.body.as_str();
        // Each provider's button is a link.
        while let Some(at) = rest.find(r#"<a class="button""#) {
            rest = &rest[at..];
            rest = &rest[rest.find(">Sign in with ").unwrap() + ">Sign in with ".len()..];
            shown.push(rest[..rest.find('<').unwrap()].to_owned());
        }
        shown
    };
    assert_eq!(buttons().await, ["Corp"]);
    // The pages of a client are served from what this host keeps of its providers: every change
    // shows on the next page.
    let change = |body: Value| app.put("/realms/acme/identity-providers/corp", body);
    assert_eq!(change(json!({ "displayName": "Corp Worldwide" })).await.status, StatusCode::OK);
    assert_eq!(buttons().await, ["Corp Worldwide"]);
    assert_eq!(change(json!({ "status": "Disabled" })).await.status, StatusCode::OK);
    assert!(buttons().await.is_empty(), "a disabled provider is not offered");
    assert_eq!(change(json!({ "status": "Active" })).await.status, StatusCode::OK);
    assert_eq!(buttons().await, ["Corp Worldwide"]);
    assert_eq!(offer(json!([])).await.status, StatusCode::OK);
    assert!(buttons().await.is_empty(), "no longer offered by the client");
    assert_eq!(offer(json!(["corp"])).await.status, StatusCode::OK);
    assert_eq!(buttons().await, ["Corp Worldwide"]);
    assert_eq!(app.delete("/realms/acme/identity-providers/corp").await.status, StatusCode::OK);
    assert!(buttons().await.is_empty(), "a deleted provider is not offered");
}
