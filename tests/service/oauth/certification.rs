//! The modules of the OpenID Foundation's Basic OP certification plan
//! (`oidcc-basic-certification-test-plan`) that apply to a code-flow provider and are not shown in
//! `browser` or `logout`, each a test named after its module. They drive the endpoints over HTTP
//! as the plan's client does, with a browser that keeps cookies.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::oauth::browser::{Browser, REDIRECT, VERIFIER, challenge, exchange, realm_with_clients, request, signed_in};
use crate::support::{TestApp, TestClient, claims, spawn_app};

/// Signs ada in to `web` with these request parameters replacing the defaults; the token answer.
async fn code_flow(app: &TestApp, browser: &mut Browser, web: &TestClient, changes: &[(&str, &str)]) -> Value {
    let pkce = challenge(VERIFIER);
    let mut params = request("web", "s", "n", &pkce);
    for (name, value) in changes {
        params.retain(|(n, _)| n != name);
        if !value.is_empty() {
            params.push((name, value));
        }
    }
    let page = browser.authorize("acme", &params).await;
    let answer =
        if page.shows_login_form() { browser.sign_in("acme", &page, "ada", "analytical engine").await } else { page };
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    let code = answer.param("code").unwrap_or_else(|| panic!("a code: {:?}", answer.location));
    let tokens = exchange(app, web, &code, VERIFIER).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    tokens.body
}

async fn userinfo(app: &TestApp, token: &str) -> Value {
    let url = format!("{}/realms/acme/protocol/openid-connect/userinfo", app.base);
    app.http.get(url).bearer_auth(token).send().await.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn oidcc_ensure_request_without_nonce_succeeds_for_code_flow() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let tokens = code_flow(&app, &mut Browser::new(&app), &web, &[("nonce", "")]).await;
    assert!(claims(tokens["id_token"].as_str().unwrap()).get("nonce").is_none());
}

#[tokio::test]
async fn oidcc_ensure_other_scope_order_succeeds() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let tokens = code_flow(&app, &mut Browser::new(&app), &web, &[("scope", "email openid")]).await;
    assert_eq!(claims(tokens["id_token"].as_str().unwrap())["email"], "ada@example.com");
}

#[tokio::test]
async fn oidcc_scope_profile_email_and_all_release_their_claims_at_userinfo() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let profile = code_flow(&app, &mut browser, &web, &[("scope", "openid profile")]).await;
    let info = userinfo(&app, profile["access_token"].as_str().unwrap()).await;
    assert_eq!(info["preferred_username"], "ada");
    assert!(info.get("email").is_none(), "{info}");
    let email = code_flow(&app, &mut browser, &web, &[("scope", "openid email")]).await;
    let info = userinfo(&app, email["access_token"].as_str().unwrap()).await;
    assert_eq!(info["email"], "ada@example.com");
    assert!(info.get("preferred_username").is_none(), "{info}");
    let all = code_flow(&app, &mut browser, &web, &[("scope", "openid profile email")]).await;
    let info = userinfo(&app, all["access_token"].as_str().unwrap()).await;
    assert_eq!((info["preferred_username"].clone(), info["email"].clone()), (json!("ada"), json!("ada@example.com")));
}

#[tokio::test]
async fn oidcc_userinfo_get_post_header_and_post_body() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let tokens = code_flow(&app, &mut Browser::new(&app), &web, &[]).await;
    let token = tokens["access_token"].as_str().unwrap();
    let sub = claims(tokens["id_token"].as_str().unwrap())["sub"].clone();
    let url = format!("{}/realms/acme/protocol/openid-connect/userinfo", app.base);
    let get: Value = app.http.get(&url).bearer_auth(token).send().await.unwrap().json().await.unwrap();
    let header: Value = app.http.post(&url).bearer_auth(token).send().await.unwrap().json().await.unwrap();
    let body: Value = app.http.post(&url).form(&[("access_token", token)]).send().await.unwrap().json().await.unwrap();
    for answer in [get, header, body] {
        assert_eq!(answer["sub"], sub, "{answer}");
    }
    let both = app.http.post(&url).bearer_auth(token).form(&[("access_token", token)]).send().await.unwrap();
    assert_eq!(both.status(), StatusCode::BAD_REQUEST, "one way of sending the token (RFC 6750 §2)");
}

#[tokio::test]
async fn oidcc_server_client_secret_post() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let code = signed_in(&mut browser, "web", "s").await.param("code").unwrap();
    let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
        ("client_id", "web"),
        ("client_secret", web.secret.as_str()),
    ];
    let answer: Value = app.http.post(url).form(&form).send().await.unwrap().json().await.unwrap();
    assert!(answer["id_token"].is_string(), "{answer}");
}

#[tokio::test]
async fn oidcc_response_type_missing_is_answered_to_the_client() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let pkce = challenge(VERIFIER);
    let mut params = request("web", "s", "n", &pkce);
    params.retain(|(name, _)| *name != "response_type");
    let answer = Browser::new(&app).authorize("acme", &params).await;
    assert_eq!(answer.param("error").as_deref(), Some("invalid_request"));
    params.push(("response_type", "token"));
    let answer = Browser::new(&app).authorize("acme", &params).await;
    assert_eq!(answer.param("error").as_deref(), Some("unsupported_response_type"));
}

#[tokio::test]
async fn oidcc_redirect_uri_query_ok_mismatch_and_added() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let with_query = "http://127.0.0.1:9/callback?foo=bar";
    let body = json!({ "clientConfiguration": { "redirectUris": [REDIRECT, with_query] } });
    assert_eq!(app.put("/realms/acme/clients/web", body).await.status, StatusCode::OK);
    let mut browser = Browser::new(&app);
    let page = browser.authorize("acme", &[]).await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    // OK: the registered query is kept and the answer's parameters are added to it.
    let pkce = challenge(VERIFIER);
    let mut params = request("web", "s", "n", &pkce);
    params.retain(|(name, _)| *name != "redirect_uri");
    params.push(("redirect_uri", with_query));
    let form = browser.authorize("acme", &params).await;
    let answer = browser.sign_in("acme", &form, "ada", "analytical engine").await;
    let location = answer.location.clone().unwrap();
    assert_eq!(location.query_pairs().find(|(n, _)| n == "foo").map(|(_, v)| v.into_owned()).as_deref(), Some("bar"));
    let code = answer.param("code").unwrap();
    let form = [
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("redirect_uri", with_query),
        ("code_verifier", VERIFIER),
    ];
    assert_eq!(app.token(&web, &form).await.status, StatusCode::OK);
    // Mismatch, and a query added to an address registered without one: a page, no redirect.
    for changed in ["http://127.0.0.1:9/callback?foo=baz", "http://127.0.0.1:9/callback?foo=bar&extra=1"] {
        params.retain(|(name, _)| *name != "redirect_uri");
        params.push(("redirect_uri", changed));
        let page = browser.authorize("acme", &params).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{changed}");
        assert!(page.location.is_none());
    }
}

#[tokio::test]
async fn oidcc_login_hint_fills_in_the_name() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let pkce = challenge(VERIFIER);
    let mut params = request("web", "s", "n", &pkce);
    params.push(("login_hint", "ada@example.com"));
    let page = Browser::new(&app).authorize("acme", &params).await;
    assert_eq!(page.input("username").as_deref(), Some("ada@example.com"));
}

#[tokio::test]
async fn oidcc_id_token_hint_signs_in_the_person_it_names_and_no_one_else() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let first = code_flow(&app, &mut browser, &web, &[]).await;
    let hint = first["id_token"].as_str().unwrap();
    let again = code_flow(&app, &mut browser, &web, &[("prompt", "none"), ("id_token_hint", hint)]).await;
    let (a, b) = (claims(hint), claims(again["id_token"].as_str().unwrap()));
    assert_eq!(a["sub"], b["sub"]);

    // A hint naming someone else: the browser's sign-in does not count.
    app.create_user("acme", "grace", "compiler of compilers").await;
    let mut other = Browser::new(&app);
    let page = other.authorize("acme", &request("web", "s", "n", &challenge(VERIFIER))).await;
    other.sign_in("acme", &page, "grace", "compiler of compilers").await;
    let pkce = challenge(VERIFIER);
    let mut params = request("web", "s", "n", &pkce);
    params.extend([("prompt", "none"), ("id_token_hint", hint)]);
    let answer = other.authorize("acme", &params).await;
    assert_eq!(answer.param("error").as_deref(), Some("login_required"));
    // A hint the realm did not sign is refused.
    let forged = format!("{hint}x");
    params.retain(|(name, _)| *name != "id_token_hint");
    params.push(("id_token_hint", &forged));
    assert_eq!(other.authorize("acme", &params).await.param("error").as_deref(), Some("invalid_request"));
}

#[tokio::test]
async fn oidcc_max_age_10000_keeps_the_sign_in() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let first = code_flow(&app, &mut browser, &web, &[]).await;
    app.advance(60).await;
    let again = code_flow(&app, &mut browser, &web, &[("max_age", "10000"), ("prompt", "none")]).await;
    let (a, b) = (claims(first["id_token"].as_str().unwrap()), claims(again["id_token"].as_str().unwrap()));
    assert_eq!(a["auth_time"], b["auth_time"]);
}

#[tokio::test]
async fn oidcc_codereuse_30seconds() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let code = signed_in(&mut Browser::new(&app), "web", "s").await.param("code").unwrap();
    app.advance(30).await;
    assert_eq!(exchange(&app, &web, &code, VERIFIER).await.status, StatusCode::OK);
    app.advance(30).await;
    assert_eq!(exchange(&app, &web, &code, VERIFIER).await.body["error"], "invalid_grant");
}

#[tokio::test]
async fn oidcc_refresh_token_keeps_the_person_and_the_sign_in_time() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let tokens = code_flow(&app, &mut Browser::new(&app), &web, &[]).await;
    app.advance(10).await;
    let refreshed = app
        .token(&web, &[("grant_type", "refresh_token"), ("refresh_token", tokens["refresh_token"].as_str().unwrap())])
        .await;
    assert_eq!(refreshed.status, StatusCode::OK, "{:?}", refreshed.body);
    let (a, b) = (claims(tokens["id_token"].as_str().unwrap()), claims(refreshed.body["id_token"].as_str().unwrap()));
    assert_eq!((a["sub"].clone(), a["auth_time"].clone()), (b["sub"].clone(), b["auth_time"].clone()));
    assert_eq!(b["amr"], json!(["pwd"]));
}

#[tokio::test]
async fn oidcc_ensure_post_request_succeeds() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let pkce = challenge(VERIFIER);
    let params = request("web", "s", "n", &pkce);
    let url = format!("{}/realms/acme/protocol/openid-connect/auth", app.base);
    let page = app.http.post(url).form(&params).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.unwrap().contains(r#"<form method="post""#));
}

#[tokio::test]
async fn oidcc_display_claims_acr_values_and_unknown_parameters_are_taken_without_harm() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let essential = r#"{"id_token":{"email":{"essential":true}}}"#;
    let changes = [("display", "popup"), ("claims", essential), ("acr_values", "1 2"), ("extra_parameter", "ignored")];
    let tokens = code_flow(&app, &mut browser, &web, &changes).await;
    assert_eq!(claims(tokens["id_token"].as_str().unwrap())["acr"], "1");
}
