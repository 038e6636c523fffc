//! Sign-in through a browser: the authorization endpoint, the login page, single sign-on and the
//! authorization code grant with PKCE. Tests named `oidcc_*` follow the module of the OpenID
//! Foundation's Basic OP certification plan of that name; the others each show one rule of the
//! OAuth 2.0 Security Best Current Practice (RFC 9700). A `Browser` keeps cookies and never
//! follows redirects, so every answer is seen as a browser receives it.

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_SECURITY_POLICY, LOCATION, SET_COOKIE};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::{TestApp, TestClient, claims, spawn_app};

pub const REDIRECT: &str = "http://127.0.0.1:9/callback";
pub const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-a-long-enough-verifier";

pub fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// A browser: keeps the cookies the service sets, follows no redirect.
pub struct Browser {
    http: reqwest::Client,
    base: String,
    pub cookies: HashMap<String, String>,
    /// The `Accept-Language` it sends, if any.
    pub language: Option<&'static str>,
    /// The address it comes from, as the proxy in front of the service tells it
    /// (`X-Forwarded-For`); loopback when none.
    pub address: Option<&'static str>,
}

/// What the browser was answered.
pub struct Page {
    /// The address that answered.
    pub url: url::Url,
    pub status: StatusCode,
    pub location: Option<url::Url>,
    pub policy: Option<String>,
    pub body: String,
}

impl Page {
    /// A parameter of the query of the address the browser goes to next.
    pub fn param(&self, name: &str) -> Option<String> {
        let location = self.next()?;
        location.query_pairs().find(|(n, _)| n == name).map(|(_, v)| v.into_owned())
    }

    /// Where the browser goes next: the redirect's address, or that of a page that goes on at once
    /// (a refresh after zero seconds).
    pub fn next(&self) -> Option<url::Url> {
        if let Some(location) = &self.location {
            return Some(location.clone());
        }
        let marker = r#"http-equiv="refresh" content="0;url="#;
        let start = self.body.find(marker)? + marker.len();
        let end = start + self.body[start..].find('"')?;
        url::Url::parse(&self.body[start..end].replace("&amp;", "&")).ok()
    }

    /// The value of the form's hidden or text input `name`.
    pub fn input(&self, name: &str) -> Option<String> {
        let at = self.body.find(&format!(r#"name="{name}""#))?;
        let tag = &self.body[at..at + self.body[at..].find('>')?];
        let start = tag.find(r#"value=""#)? + r#"value=""#.len();
        let end = tag[start..].find('"')?;
        Some(tag[start..start + end].replace("&quot;", "\"").replace("&amp;", "&"))
    }

    pub fn shows_login_form(&self) -> bool {
        self.status == StatusCode::OK && self.body.contains(r#"<form method="post""#)
    }
}

impl Browser {
    pub fn new(app: &TestApp) -> Self {
        // It trusts the test authority, which certifies the upstream providers on loopback.
        let authority = std::fs::read(crate::support::receiver::authority_file()).unwrap();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .add_root_certificate(reqwest::Certificate::from_pem(&authority).unwrap())
            .build()
            .unwrap();
        Self { http, base: app.base.clone(), cookies: HashMap::new(), language: None, address: None }
    }

    /// A request with the browser's cookies and language.
    fn request(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        let mut request = self.http.request(method, url).header("cookie", self.cookie_header());
        if let Some(address) = self.address {
            request = request.header("x-forwarded-for", address);
        }
        match self.language {
            Some(language) => request.header("accept-language", language),
            None => request,
        }
    }

    fn cookie_header(&self) -> String {
        self.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    async fn keep(&mut self, response: reqwest::Response) -> Page {
        for value in response.headers().get_all(SET_COOKIE) {
            let text = value.to_str().unwrap();
            let (pair, _) = text.split_once(';').unwrap_or((text, ""));
            let (name, value) = pair.split_once('=').unwrap();
            if value.is_empty() {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_owned(), value.to_owned());
            }
        }
        Self::page(response).await
    }

    async fn page(response: reqwest::Response) -> Page {
        let (url, status) = (response.url().clone(), response.status());
        // A relative address is resolved against the request's (another site's answers use them).
        let location = response.headers().get(LOCATION).map(|l| response.url().join(l.to_str().unwrap()).unwrap());
        let policy = response.headers().get(CONTENT_SECURITY_POLICY).map(|p| p.to_str().unwrap().to_owned());
        Page { url, status, location, policy, body: response.text().await.unwrap() }
    }

    pub async fn authorize(&mut self, realm: &str, params: &[(&str, &str)]) -> Page {
        self.visit(&format!("/realms/{realm}/protocol/openid-connect/auth"), params).await
    }

    /// The same authorization request sent `times` times at once, as from several tabs; the
    /// cookies the answers set are not kept.
    pub async fn authorize_together(&self, realm: &str, params: &[(&str, &str)], times: usize) -> Vec<Page> {
        let url = format!("{}/realms/{realm}/protocol/openid-connect/auth", self.base);
        let each = (0..times).map(|_| async {
            let response = self.request(reqwest::Method::GET, &url).query(params).send().await.unwrap();
            Self::page(response).await
        });
        futures_util::future::join_all(each).await
    }

    /// Posts the hidden fields of `page`'s first form, and `extra`, to `path` of the realm.
    pub async fn submit(&mut self, path: &str, page: &Page, extra: &[(&str, &str)]) -> Page {
        let first = page.body.find("<form").unwrap_or(0);
        self.submit_from(path, &page.body[first..], extra).await
    }

    /// Posts the hidden fields of `page`'s form whose id is `id`, and `extra`, to `path`.
    pub async fn submit_form(&mut self, path: &str, page: &Page, id: &str, extra: &[(&str, &str)]) -> Page {
        let at = page.body.find(&format!(r#"id="{id}""#)).unwrap_or_else(|| panic!("no form {id}: {}", page.body));
        self.submit_from(path, &page.body[at..], extra).await
    }

    /// Posts the hidden fields of the form `html` starts in, up to its end.
    async fn submit_from(&mut self, path: &str, html: &str, extra: &[(&str, &str)]) -> Page {
        let html = &html[..html.find("</form>").unwrap_or(html.len())];
        let section = Page {
            url: url::Url::parse("http://form.invalid/").unwrap(),
            status: StatusCode::OK,
            location: None,
            policy: None,
            body: html.to_owned(),
        };
        let mut form: Vec<(String, String)> = Vec::new();
        let mut rest = html;
        while let Some(at) = rest.find(r#"<input type="hidden" name=""#) {
            rest = &rest[at + r#"<input type="hidden" name=""#.len()..];
            let name = &rest[..rest.find('"').unwrap()];
            if extra.iter().all(|(n, _)| *n != name) {
                form.push((name.to_owned(), section.input(name).unwrap()));
            }
        }
        form.extend(extra.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())));
        let url = format!("{}{path}", self.base);
        let response = self.request(reqwest::Method::POST, &url).form(&form).send().await.unwrap();
        self.keep(response).await
    }

    /// A GET of `path` with the browser's cookies.
    pub async fn visit(&mut self, path: &str, params: &[(&str, &str)]) -> Page {
        let url = format!("{}{path}", self.base);
        let response = self.request(reqwest::Method::GET, &url).query(params).send().await.unwrap();
        self.keep(response).await
    }

    /// A form posted to a whole address (another site's page) with the browser's cookies.
    pub async fn post_to(&mut self, url: &str, form: &[(&str, &str)]) -> Page {
        let response = self.request(reqwest::Method::POST, url).form(form).send().await.unwrap();
        self.keep(response).await
    }

    /// A GET of a whole address (one a relying party built) with the browser's cookies.
    pub async fn open(&mut self, url: &str) -> Page {
        let response = self.request(reqwest::Method::GET, url).send().await.unwrap();
        self.keep(response).await
    }

    /// Submits the login form of `page` with these credentials.
    pub async fn sign_in(&mut self, realm: &str, page: &Page, username: &str, password: &str) -> Page {
        let path = format!("/realms/{realm}/protocol/openid-connect/auth/login");
        self.submit(&path, page, &[("username", username), ("password", password)]).await
    }
}

pub async fn realm_with_clients(app: &TestApp) -> (TestClient, TestClient) {
    app.create_realm("acme").await;
    let web = web_client(app, "web").await;
    let shop = web_client(app, "shop").await;
    app.create_user("acme", "ada", "analytical engine").await;
    (web, shop)
}

/// A web application's client, created naming no grant type: every browser test signs in with a
/// new client's defaults, the code flow and refresh tokens.
pub async fn web_client(app: &TestApp, id: &str) -> TestClient {
    app.create_scopes("acme", &["orders:read"]).await;
    let body = json!({
        "id": id,
        "name": format!("The {id} app"),
        "clientConfiguration": { "allowedScopes": ["orders:read"], "redirectUris": [REDIRECT] },
    });
    let created = app.post("/realms/acme/clients", body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let grants = &created.data()["clientConfiguration"]["grantTypes"];
    assert_eq!(grants, &json!(["authorization_code", "refresh_token"]), "the defaults");
    let secret = created.data()["clientSecret"].as_str().expect("a secret").to_owned();
    TestClient { realm: "acme".to_owned(), id: id.to_owned(), secret }
}

pub fn request<'a>(
    client: &'a str,
    state: &'a str,
    nonce: &'a str,
    code_challenge: &'a str,
) -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client),
        ("redirect_uri", REDIRECT),
        ("scope", "openid profile orders:read"),
        ("state", state),
        ("nonce", nonce),
        ("code_challenge", code_challenge),
        ("code_challenge_method", "S256"),
    ]
}

pub async fn exchange(app: &TestApp, client: &TestClient, code: &str, verifier: &str) -> crate::support::Answer {
    let form =
        [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", REDIRECT), ("code_verifier", verifier)];
    app.token(client, &form).await
}

/// Signs ada in through the login page and returns the redirect carrying the code.
pub async fn signed_in(browser: &mut Browser, client: &str, state: &str) -> Page {
    let pkce = challenge(VERIFIER);
    let page = browser.authorize("acme", &request(client, state, "n-0S6_WzA2Mj", &pkce)).await;
    assert!(page.shows_login_form(), "{} {}", page.status, page.body);
    let answer = browser.sign_in("acme", &page, "ada", "analytical engine").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    answer
}

#[tokio::test]
async fn oidcc_server_a_person_signs_in_on_the_page_and_the_client_exchanges_the_code() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let pkce = challenge(VERIFIER);
    let page = browser.authorize("acme", &request("web", "xyz", "n-0S6_WzA2Mj", &pkce)).await;
    assert!(page.shows_login_form());
    assert!(page.body.contains("Sign in to The web app"), "branded with the client's name");
    assert!(page.body.contains(r#"<label for="username">"#) && page.body.contains(r#"<label for="password">"#));
    let policy = page.policy.clone().expect("a Content-Security-Policy");
    assert!(policy.contains("frame-ancestors 'none'") && policy.contains("default-src 'none'"), "{policy}");
    assert!(policy.contains("form-action 'self' http://127.0.0.1:9"), "{policy}");

    let answer = browser.sign_in("acme", &page, "ada", "analytical engine").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
    let location = answer.location.clone().unwrap();
    assert!(location.as_str().starts_with(REDIRECT), "{location}");
    assert_eq!(answer.param("state").as_deref(), Some("xyz"));
    assert_eq!(answer.param("iss"), Some(format!("{}/realms/acme", app.base)), "RFC 9207");
    let session_cookie = browser.cookies.get("castellan_session").expect("a session cookie").clone();
    assert!(!session_cookie.is_empty());

    let code = answer.param("code").expect("a code");
    let tokens = exchange(&app, &web, &code, VERIFIER).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    let access = tokens.body["access_token"].as_str().unwrap();
    assert!(tokens.body["refresh_token"].is_string());
    let id_token = claims(tokens.body["id_token"].as_str().unwrap());
    assert_eq!(id_token["nonce"], "n-0S6_WzA2Mj");
    assert_eq!(id_token["aud"], "web");
    assert_eq!(id_token["amr"], json!(["pwd"]));
    assert_eq!(id_token["acr"], "1");
    assert_eq!(id_token["preferred_username"], "ada");
    let digest = Sha256::digest(access.as_bytes());
    assert_eq!(id_token["at_hash"], URL_SAFE_NO_PAD.encode(&digest[..16]));
    assert!(id_token["auth_time"].is_i64());
    assert_eq!(claims(access)["sid"], id_token["sid"]);

    let logins = app.events("login_succeeded").await;
    let (_, client, data) = logins.last().expect("a login_succeeded event");
    assert_eq!(client.as_deref(), Some("web"));
    assert_eq!(data["grant_type"], "authorization_code");
    assert_eq!(data["authentication_methods"], json!(["pwd"]));
    assert_eq!(data["acr"], "1");
    assert_eq!(data["session_id"], id_token["sid"]);

    // The refresh token of this flow rotates like any other.
    let refreshed = app
        .token(
            &web,
            &[("grant_type", "refresh_token"), ("refresh_token", tokens.body["refresh_token"].as_str().unwrap())],
        )
        .await;
    assert_eq!(refreshed.status, StatusCode::OK, "{:?}", refreshed.body);
}

#[tokio::test]
async fn a_wrong_password_shows_the_page_again_with_the_error_tied_to_the_fields() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let page = browser.authorize("acme", &request("web", "s", "n", &challenge(VERIFIER))).await;
    let again = browser.sign_in("acme", &page, "ada", "difference engine").await;
    assert!(again.shows_login_form(), "{}", again.body);
    assert!(again.body.contains(r#"role="alert""#) && again.body.contains(r#"aria-describedby="form-error""#));
    assert!(again.body.contains("The username or password is not correct."));
    assert_eq!(again.input("username").as_deref(), Some("ada"), "the name typed is kept");
    assert!(!browser.cookies.contains_key("castellan_session"));
    let failed = app.events("login_failed").await;
    assert_eq!(failed.last().unwrap().2["failure_reason"], "invalid_credentials");
    // An unknown name is answered exactly like a wrong password.
    let unknown = browser.sign_in("acme", &again, "nobody", "analytical engine").await;
    assert!(unknown.body.contains("The username or password is not correct."));
}

#[tokio::test]
async fn a_login_form_posted_without_the_browsers_form_cookie_is_refused() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let page = browser.authorize("acme", &request("web", "s", "n", &challenge(VERIFIER))).await;
    // Another browser (a cross-site form post carries no cookie of ours) submits the same form.
    let mut other = Browser::new(&app);
    let forged = other.sign_in("acme", &page, "ada", "analytical engine").await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    assert!(forged.location.is_none());
    assert!(!other.cookies.contains_key("castellan_session"));
}

#[tokio::test]
async fn oidcc_codereuse_a_code_presented_twice_is_refused_and_ends_what_it_issued() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let answer = signed_in(&mut browser, "web", "s").await;
    let code = answer.param("code").unwrap();
    let first = exchange(&app, &web, &code, VERIFIER).await;
    assert_eq!(first.status, StatusCode::OK);
    let access = first.body["access_token"].as_str().unwrap();
    let active = app.protocol(&web, "token/introspect", &[("token", access)]).await;
    assert_eq!(active.body["active"], true);

    let second = exchange(&app, &web, &code, VERIFIER).await;
    assert_eq!(second.status, StatusCode::BAD_REQUEST);
    assert_eq!(second.body["error"], "invalid_grant");
    assert_eq!(second.body["error_code"], "AuthorizationCodeReused");
    let after = app.protocol(&web, "token/introspect", &[("token", access)]).await;
    assert_eq!(after.body["active"], false, "the tokens issued from the code are revoked");
    let refresh = first.body["refresh_token"].as_str().unwrap();
    let refreshed = app.token(&web, &[("grant_type", "refresh_token"), ("refresh_token", refresh)]).await;
    assert_eq!(refreshed.body["error"], "invalid_grant");
}

#[tokio::test]
async fn a_code_lives_sixty_seconds() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let code = signed_in(&mut browser, "web", "s").await.param("code").unwrap();
    app.advance(61).await;
    let late = exchange(&app, &web, &code, VERIFIER).await;
    assert_eq!(late.body["error"], "invalid_grant");
    assert_eq!(late.body["error_code"], "InvalidAuthorizationCode");
}

/// A code carries its grant sealed: issuing one opens no session (its exchange does, under the
/// `sid` the code names), an altered code is unknown and spends nothing, and a code is unknown in
/// any other realm, even to a client of the same id there.
#[tokio::test]
async fn a_code_holds_its_grant_sealed_and_its_session_opens_at_the_exchange() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let code = signed_in(&mut browser, "web", "s").await.param("code").unwrap();
    let open_sessions = async || app.get("/realms/acme/sessions?clientId=web").await.items().to_vec();
    assert!(open_sessions().await.is_empty(), "no client session before the exchange");

    for at in [8, code.len() / 2, code.len() - 2] {
        let mut altered = code.clone().into_bytes();
        altered[at] = if altered[at] == b'A' { b'B' } else { b'A' };
        let altered = String::from_utf8(altered).unwrap();
        let refused = exchange(&app, &web, &altered, VERIFIER).await;
        assert_eq!(refused.body["error_code"], "InvalidAuthorizationCode", "changed at {at}: {:?}", refused.body);
    }
    app.create_realm("globex").await;
    let body = json!({ "id": "web", "clientConfiguration": { "redirectUris": [REDIRECT] } });
    let created = app.post("/realms/globex/clients", body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let secret = created.data()["clientSecret"].as_str().unwrap().to_owned();
    let elsewhere = TestClient { realm: "globex".to_owned(), id: "web".to_owned(), secret };
    let refused = exchange(&app, &elsewhere, &code, VERIFIER).await;
    assert_eq!(refused.body["error_code"], "InvalidAuthorizationCode", "{:?}", refused.body);

    let tokens = exchange(&app, &web, &code, VERIFIER).await;
    assert_eq!(tokens.status, StatusCode::OK, "nothing spent the code: {:?}", tokens.body);
    let sessions = open_sessions().await;
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let id_token = claims(tokens.body["id_token"].as_str().unwrap());
    assert_eq!(id_token["sid"], sessions[0]["id"]);
}

#[tokio::test]
async fn oidcc_ensure_registered_redirect_uri_an_unregistered_address_is_never_redirected_to() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let pkce = challenge(VERIFIER);
    for redirect in
        ["https://attacker.example/callback", "http://127.0.0.1:9/callback/../evil", "http://127.0.0.1:9/callback?x=1"]
    {
        let mut params = request("web", "s", "n", &pkce);
        params.retain(|(name, _)| *name != "redirect_uri");
        params.push(("redirect_uri", redirect));
        let page = browser.authorize("acme", &params).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{redirect}");
        assert!(page.location.is_none(), "{redirect}");
        assert!(page.body.contains("The return address is not registered"));
    }
    // Nor is an unknown client's.
    let page = browser.authorize("acme", &request("nobody", "s", "n", &pkce)).await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(page.location.is_none());
    // Without any parameter the endpoint answers a page, not a 404.
    let bare = browser.authorize("acme", &[]).await;
    assert_eq!(bare.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn oidcc_prompt_none_not_logged_in_answers_login_required_to_the_client() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let pkce = challenge(VERIFIER);
    let mut params = request("web", "af0ifjsldkj", "n", &pkce);
    params.push(("prompt", "none"));
    let answer = browser.authorize("acme", &params).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
    assert_eq!(answer.param("error").as_deref(), Some("login_required"));
    assert_eq!(answer.param("state").as_deref(), Some("af0ifjsldkj"));
    assert!(answer.param("iss").is_some());
    assert!(answer.param("code").is_none());
}

#[tokio::test]
async fn single_sign_on_a_second_client_signs_the_person_in_without_the_form() {
    let app = spawn_app().await;
    let (web, shop) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let first = signed_in(&mut browser, "web", "s").await;
    let web_tokens = exchange(&app, &web, &first.param("code").unwrap(), VERIFIER).await;

    let pkce = challenge(VERIFIER);
    let mut params = request("shop", "t", "n2", &pkce);
    params.push(("prompt", "none"));
    let second = browser.authorize("acme", &params).await;
    assert_eq!(second.status, StatusCode::SEE_OTHER, "{}", second.body);
    let shop_tokens = exchange(&app, &shop, &second.param("code").unwrap(), VERIFIER).await;
    assert_eq!(shop_tokens.status, StatusCode::OK, "{:?}", shop_tokens.body);
    let (a, b) =
        (claims(web_tokens.body["id_token"].as_str().unwrap()), claims(shop_tokens.body["id_token"].as_str().unwrap()));
    assert_eq!(a["sub"], b["sub"]);
    assert_eq!(a["auth_time"], b["auth_time"], "one sign-in");
    assert_ne!(a["sid"], b["sid"], "a session per client");
    assert_eq!(b["nonce"], "n2");
}

#[tokio::test]
async fn oidcc_prompt_login_and_oidcc_max_age_1_ask_for_the_password_again() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    signed_in(&mut browser, "web", "s").await;
    let pkce = challenge(VERIFIER);

    let mut login = request("web", "s", "n", &pkce);
    login.push(("prompt", "login"));
    assert!(browser.authorize("acme", &login).await.shows_login_form());

    let mut max_age = request("web", "s", "n", &pkce);
    max_age.push(("max_age", "1"));
    assert_eq!(browser.authorize("acme", &max_age).await.status, StatusCode::SEE_OTHER, "signed in under a second ago");
    app.advance(2).await;
    let page = browser.authorize("acme", &max_age).await;
    assert!(page.shows_login_form());
    // Signing in again moves auth_time forward.
    let answer = browser.sign_in("acme", &page, "ada", "analytical engine").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn pkce_plain_is_refused_and_public_clients_must_send_a_challenge() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let created = app
        .post(
            "/realms/acme/clients",
            json!({ "id": "spa", "type": "Public",
                    "clientConfiguration": { "grantTypes": ["authorization_code"], "redirectUris": [REDIRECT],
                                             "allowedScopes": ["orders:read"] } }),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let mut browser = Browser::new(&app);
    let mut plain = request("web", "s", "n", VERIFIER);
    plain.retain(|(name, _)| *name != "code_challenge_method");
    plain.push(("code_challenge_method", "plain"));
    let answer = browser.authorize("acme", &plain).await;
    assert_eq!(answer.param("error").as_deref(), Some("invalid_request"));

    let mut without = request("spa", "s", "n", "");
    without.retain(|(name, _)| !name.starts_with("code_challenge"));
    let answer = browser.authorize("acme", &without).await;
    assert_eq!(answer.param("error").as_deref(), Some("invalid_request"));
    assert!(answer.param("error_description").unwrap().contains("PKCE"));

    // The public client signs in with PKCE and exchanges its code with no secret.
    let code = signed_in(&mut browser, "spa", "s").await.param("code").unwrap();
    let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", "spa"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ];
    let tokens: Value = app.http.post(url).form(&form).send().await.unwrap().json().await.unwrap();
    assert!(tokens["access_token"].is_string(), "{tokens}");
}

#[tokio::test]
async fn a_public_client_with_the_default_grants_refreshes_and_revokes_naming_itself() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let body = json!({ "id": "spa", "type": "Public",
                       "clientConfiguration": { "redirectUris": [REDIRECT], "allowedScopes": ["orders:read"] } });
    let created = app.post("/realms/acme/clients", body).await;
    assert_eq!(created.data()["clientConfiguration"]["grantTypes"], json!(["authorization_code", "refresh_token"]));
    let mut browser = Browser::new(&app);
    let code = signed_in(&mut browser, "spa", "s").await.param("code").unwrap();
    let token_url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let post = |url: String, form: Vec<(&'static str, String)>| {
        let http = app.http.clone();
        async move { crate::support::answer(http.post(url).form(&form).send().await.unwrap()).await }
    };
    let exchange = vec![
        ("grant_type", "authorization_code".to_owned()),
        ("client_id", "spa".to_owned()),
        ("code", code),
        ("redirect_uri", REDIRECT.to_owned()),
        ("code_verifier", VERIFIER.to_owned()),
    ];
    let tokens = post(token_url.clone(), exchange).await;
    let first = tokens.body["refresh_token"].as_str().expect("a refresh token the client can use").to_owned();

    // It refreshes with its client_id alone; each refresh token is single-use.
    let refresh = |token: &str| {
        vec![
            ("grant_type", "refresh_token".to_owned()),
            ("client_id", "spa".to_owned()),
            ("refresh_token", token.to_owned()),
        ]
    };
    let refreshed = post(token_url.clone(), refresh(&first)).await;
    assert_eq!(refreshed.status, StatusCode::OK, "{:?}", refreshed.body);
    let second = refreshed.body["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(second, first);
    // Another client, confidential, cannot use it by naming itself without its secret.
    let mut borrowed = refresh(&second);
    borrowed[1].1 = "web".to_owned();
    assert_eq!(post(token_url.clone(), borrowed).await.body["error"], "invalid_client");
    // Neither credentials nor a client_id: the client is asked to authenticate.
    let anonymous = vec![("grant_type", "refresh_token".to_owned()), ("refresh_token", second.clone())];
    assert_eq!(post(token_url.clone(), anonymous).await.status, StatusCode::UNAUTHORIZED);

    // It revokes its own refresh token the same way, which ends the session.
    let revoke_url = format!("{}/realms/acme/protocol/openid-connect/revoke", app.base);
    let revoked = post(revoke_url, vec![("client_id", "spa".to_owned()), ("token", second.clone())]).await;
    assert_eq!(revoked.status, StatusCode::OK, "{:?}", revoked.body);
    let after = post(token_url, refresh(&second)).await;
    assert_eq!(after.body["error"], "invalid_grant", "{:?}", after.body);
}

#[tokio::test]
async fn a_resource_named_in_the_authorization_request_is_the_audience_of_the_codes_tokens() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    app.create_scopes("acme", &["tools:run"]).await;
    let scopes = json!({ "clientConfiguration": { "allowedScopes": ["orders:read", "tools:run"] } });
    assert_eq!(app.put("/realms/acme/clients/web", scopes).await.status, StatusCode::OK);
    let server = json!({ "name": "Tools", "address": "https://mcp.example.com/mcp", "type": "McpServer",
                         "scopes": ["tools:run"], "allowedClients": ["web"] });
    assert_eq!(app.post("/realms/acme/resource-servers", server).await.status, StatusCode::CREATED);

    // A resource the client may not ask for goes back to the client as invalid_target (RFC 8707).
    let mut browser = Browser::new(&app);
    let pkce = challenge(VERIFIER);
    let mut elsewhere = request("web", "s", "n", &pkce);
    elsewhere.push(("resource", "https://unknown.example.com"));
    let refused = browser.authorize("acme", &elsewhere).await;
    assert_eq!(refused.param("error").as_deref(), Some("invalid_target"));

    // The resource travels through the login page; the tokens carry it as their audience, and only
    // the scopes the resource server takes.
    let mut asked = request("web", "s", "n", &pkce);
    asked.retain(|(name, _)| *name != "scope");
    asked.push(("scope", "openid tools:run"));
    asked.push(("resource", "https://mcp.example.com/mcp"));
    let page = browser.authorize("acme", &asked).await;
    assert!(page.shows_login_form(), "{}", page.body);
    let answer = browser.sign_in("acme", &page, "ada", "analytical engine").await;
    let code = answer.param("code").expect("a code");
    let tokens = exchange(&app, &web, &code, VERIFIER).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    let access = crate::support::claims(tokens.body["access_token"].as_str().unwrap());
    assert_eq!(access["aud"], "https://mcp.example.com/mcp", "{access}");
    assert_eq!(access["scope"], "openid tools:run");
    let refresh = tokens.body["refresh_token"].as_str().unwrap();
    let refreshed = app.token(&web, &[("grant_type", "refresh_token"), ("refresh_token", refresh)]).await;
    assert_eq!(crate::support::claims(refreshed.body["access_token"].as_str().unwrap())["aud"], access["aud"]);

    // A scope the resource server does not take is refused for it.
    let mut too_wide = request("web", "s", "n", &pkce);
    too_wide.push(("resource", "https://mcp.example.com/mcp"));
    let refused = browser.authorize("acme", &too_wide).await;
    assert_eq!(refused.param("error").as_deref(), Some("invalid_scope"));
}

#[tokio::test]
async fn a_wrong_or_missing_verifier_and_a_verifier_without_a_challenge_are_refused() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let code = signed_in(&mut browser, "web", "s").await.param("code").unwrap();
    let wrong = exchange(&app, &web, &code, &format!("{VERIFIER}x")).await;
    assert_eq!(wrong.body["error_code"], "InvalidCodeVerifier");

    // A confidential client may leave PKCE out; a verifier then is a downgrade attempt.
    let mut params = request("web", "s", "n", "");
    params.retain(|(name, _)| !name.starts_with("code_challenge"));
    let answer = browser.authorize("acme", &params).await;
    let code = answer.param("code").expect("signed in already: a code at once");
    let downgrade = exchange(&app, &web, &code, VERIFIER).await;
    assert_eq!(downgrade.body["error"], "invalid_grant");
    assert_eq!(downgrade.body["error_code"], "InvalidCodeVerifier");
}

#[tokio::test]
async fn single_sign_on_answers_many_requests_at_once_and_each_code_is_exchanged_once() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    signed_in(&mut browser, "web", "s").await;
    // A signed-in browser's requests arriving together are written in one transaction; each gets
    // its own client session and code.
    let pkce = challenge(VERIFIER);
    let asked = request("web", "s", "n", &pkce);
    let answers = browser.authorize_together("acme", &asked, 12).await;
    let codes: std::collections::HashSet<String> = answers.iter().map(|a| a.param("code").expect("a code")).collect();
    assert_eq!(codes.len(), 12);
    assert_eq!(app.events("login_succeeded").await.len(), 13, "one sign-in and twelve authorizations");

    // Each code is good once (a reuse ends the browser's sign-in, so the others go first).
    for code in codes.iter().skip(1) {
        assert_eq!(exchange(&app, &web, code, VERIFIER).await.status, StatusCode::OK);
    }
    // A code presented many times at once is exchanged once; the others are refused as reused.
    let code = codes.iter().next().unwrap();
    let tries = futures_util::future::join_all((0..8).map(|_| exchange(&app, &web, code, VERIFIER))).await;
    let issued = tries.iter().filter(|t| t.status == StatusCode::OK).count();
    assert_eq!(issued, 1, "{:?}", tries.iter().map(|t| &t.body).collect::<Vec<_>>());
    let refused: Vec<&serde_json::Value> =
        tries.iter().filter(|t| t.status != StatusCode::OK).map(|t| &t.body).collect();
    assert!(refused.iter().all(|body| body["error_code"] == "AuthorizationCodeReused"), "{refused:?}");
}

#[tokio::test]
async fn a_code_issued_to_one_client_is_refused_to_another() {
    let app = spawn_app().await;
    let (web, shop) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let code = signed_in(&mut browser, "web", "s").await.param("code").unwrap();
    let injected = exchange(&app, &shop, &code, VERIFIER).await;
    assert_eq!(injected.body["error"], "invalid_grant");
    assert_eq!(injected.body["error_code"], "InvalidAuthorizationCode");
    // The code was spent by the attempt: the rightful client's exchange is a second use.
    let rightful = exchange(&app, &web, &code, VERIFIER).await;
    assert_eq!(rightful.body["error"], "invalid_grant");
    // That second use ended the browser's sign-in too. A code presented with another redirect URI
    // is refused as well.
    let code = signed_in(&mut browser, "web", "s").await.param("code").unwrap();
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", "http://127.0.0.1:9/other"),
        ("code_verifier", VERIFIER),
    ];
    assert_eq!(app.token(&web, &form).await.body["error_code"], "InvalidAuthorizationCode");
}

#[tokio::test]
async fn discovery_names_the_code_flow_and_nothing_it_names_answers_404() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let document = app.discovery("acme").await;
    assert_eq!(document["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(document["response_types_supported"], json!(["code"]));
    assert_eq!(document["authorization_response_iss_parameter_supported"], true);
    assert!(document["grant_types_supported"].as_array().unwrap().contains(&json!("authorization_code")));
    for (name, value) in document.as_object().unwrap() {
        if name.ends_with("_endpoint") || name == "jwks_uri" {
            let answer = app.http.get(value.as_str().unwrap()).send().await.unwrap();
            assert_ne!(answer.status(), StatusCode::NOT_FOUND, "{name}");
        }
    }
}

#[tokio::test]
async fn the_page_speaks_the_language_of_ui_locales_or_else_the_browsers() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let pkce = challenge(VERIFIER);
    let mut params = request("web", "s", "n", &pkce);
    params.push(("ui_locales", "de fr-CA"));
    let page = browser.authorize("acme", &params).await;
    assert!(page.body.contains(r#"<html lang="fr">"#) && page.body.contains("Connexion à The web app"));
    assert!(page.body.contains("Mot de passe"));
    let refused = browser.sign_in("acme", &page, "ada", "difference engine").await;
    assert!(refused.body.contains("Le nom d’utilisateur ou le mot de passe est incorrect."), "{}", refused.body);

    let url = format!("{}/realms/acme/protocol/openid-connect/auth", app.base);
    let plain = request("web", "s", "n", &pkce);
    let french = app.http.get(&url).query(&plain).header("accept-language", "de;q=1, fr;q=0.9").send().await.unwrap();
    assert!(french.text().await.unwrap().contains("Se connecter"));
    let english = app.http.get(&url).query(&plain).header("accept-language", "ja").send().await.unwrap();
    assert!(english.text().await.unwrap().contains(r#"<html lang="en">"#));
}

#[tokio::test]
async fn the_page_is_branded_with_the_clients_logo_and_colour() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let refused = app
        .put(
            "/realms/acme/clients/web",
            json!({ "branding": { "logoUri": "http://cdn.example/logo.png", "primaryColor": "red" } }),
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let mut fields = refused.refused_fields();
    fields.sort();
    assert_eq!(
        fields,
        [
            ("branding.logoUri".to_owned(), "Format".to_owned()),
            ("branding.primaryColor".to_owned(), "Format".to_owned())
        ]
    );
    let branding = json!({ "branding": { "logoUri": "https://cdn.example/logo.png", "primaryColor": "#1A7F37" } });
    let updated = app.put("/realms/acme/clients/web", branding).await;
    assert_eq!(
        updated.data()["branding"],
        json!({ "logoUri": "https://cdn.example/logo.png", "primaryColor": "#1a7f37" })
    );

    let page = Browser::new(&app).authorize("acme", &request("web", "s", "n", &challenge(VERIFIER))).await;
    assert!(page.body.contains(r#"<img src="https://cdn.example/logo.png" alt="""#));
    assert!(page.body.contains("button{background:#1a7f37}"));
    assert!(page.policy.unwrap().contains("img-src https://cdn.example;"));

    let cleared = app.put("/realms/acme/clients/web", json!({ "branding": { "logoUri": null } })).await;
    assert!(cleared.data()["branding"].get("logoUri").is_none());
    let page = Browser::new(&app).authorize("acme", &request("web", "s", "n", &challenge(VERIFIER))).await;
    assert!(!page.body.contains("<img"));
    assert!(page.policy.unwrap().contains("img-src 'none'"));
}

#[tokio::test]
async fn a_person_who_must_change_their_password_chooses_a_new_one_on_the_page_then_signs_in() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let users = app.get("/realms/acme/users?searchTerm=ada").await;
    let id = users.items()[0]["id"].as_str().unwrap().to_owned();
    let marked = app.put(&format!("/realms/acme/users/{id}"), json!({ "mustChangePassword": true })).await;
    assert_eq!(marked.status, StatusCode::OK, "{:?}", marked.body);
    let mut browser = Browser::new(&app);
    let page = browser.authorize("acme", &request("web", "s", "n", &challenge(VERIFIER))).await;
    // A wrong password is refused as ever: only the right one leads to the change.
    let wrong = browser.sign_in("acme", &page, "ada", "difference engine").await;
    assert!(wrong.body.contains("The username or password is not correct."));
    let step = browser.sign_in("acme", &wrong, "ada", "analytical engine").await;
    assert!(step.body.contains("Choose a new password"), "{}", step.body);
    assert!(!browser.cookies.contains_key("castellan_session"), "not signed in before the change");
    assert_eq!(app.events("login_failed").await.last().unwrap().2["failure_reason"], "password_change_required");

    let change = "/realms/acme/protocol/openid-connect/auth/password";
    let short = browser.submit(change, &step, &[("new_password", "short")]).await;
    assert_eq!(short.status, StatusCode::BAD_REQUEST);
    assert!(short.body.contains(r#"role="alert""#) && short.body.contains("too short or too long"));
    // The form without this browser's cookie is refused.
    let forged = Browser::new(&app).submit(change, &short, &[("new_password", "a brand new passphrase")]).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let changed = browser.submit(change, &short, &[("new_password", "a brand new passphrase")]).await;
    assert!(changed.shows_login_form(), "{}", changed.body);
    assert!(changed.body.contains("Your password was changed."));
    // The ticket sets a password once (posted with the fresh form's token: each page has its own).
    let ticket = short.input("ticket").unwrap();
    let again =
        browser.submit(change, &changed, &[("ticket", &ticket), ("new_password", "yet another passphrase")]).await;
    assert!(again.body.contains("That took too long."), "{}", again.body);

    let old = browser.sign_in("acme", &again, "ada", "analytical engine").await;
    assert!(old.body.contains("The username or password is not correct."));
    let signed_in = browser.sign_in("acme", &old, "ada", "a brand new passphrase").await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER, "{}", signed_in.body);
    let tokens = exchange(&app, &web, &signed_in.param("code").unwrap(), VERIFIER).await;
    assert_eq!(tokens.status, StatusCode::OK);
    // The password grant refuses until the change, and takes the new password after it.
    let granted = app
        .token(&web, &[("grant_type", "password"), ("username", "ada"), ("password", "a brand new passphrase")])
        .await;
    assert_ne!(granted.body["error_code"], "PasswordChangeRequired");
}

/// Browsers ask every site for `/favicon.ico`: the service answers an icon, not a 404 in the log
/// of every page.
#[tokio::test]
async fn the_icon_browsers_ask_for_on_every_page_is_served() {
    let app = spawn_app().await;
    let icon = app.http.get(format!("{}/favicon.ico", app.base)).send().await.unwrap();
    assert_eq!(icon.status(), StatusCode::OK);
    assert_eq!(icon.headers()["content-type"], "image/x-icon");
    let bytes = icon.bytes().await.unwrap();
    assert_eq!(&bytes[..4], &[0, 0, 1, 0], "an ICO file");
    let images = u16::from_le_bytes([bytes[4], bytes[5]]);
    assert!(images >= 1);
    for n in 0..usize::from(images) {
        let entry = &bytes[6 + 16 * n..22 + 16 * n];
        let (size, offset) = (
            u32::from_le_bytes(entry[8..12].try_into().unwrap()),
            u32::from_le_bytes(entry[12..16].try_into().unwrap()),
        );
        assert!((offset + size) as usize <= bytes.len(), "image {n} lies within the file");
    }
}

/// The consent page speaks to the person: it says who is signed in, with a way to sign in as
/// someone else instead, and names each scope by what it gives: the standard ones in the page's
/// language, the realm's own by their description.
#[tokio::test]
async fn the_consent_page_names_the_person_and_what_each_scope_gives_in_its_language() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let scopes = app.get("/realms/acme/scopes?searchTerm=orders").await;
    let id = scopes.items()[0]["id"].as_str().unwrap().to_owned();
    let described = app.put(&format!("/realms/acme/scopes/{id}"), json!({ "description": "Read your orders" })).await;
    assert_eq!(described.status, StatusCode::OK, "{:?}", described.body);
    let mut browser = Browser::new(&app);
    signed_in(&mut browser, "web", "s").await;

    let pkce = challenge(VERIFIER);
    let asked = [request("web", "s", "n", &pkce), vec![("prompt", "consent")]].concat();
    let page = browser.authorize("acme", &asked).await;
    assert_eq!(page.status, StatusCode::OK, "the consent page: {:?}", page.location);
    assert!(page.body.contains("You are signed in as ada."), "{}", page.body);
    for shown in ["Your identity on this service", "Your name and profile", "Read your orders (orders:read)"] {
        assert!(page.body.contains(&format!("<li>{shown}</li>")), "{shown}: {}", page.body);
    }
    let link = page
        .body
        .split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .find(|href| href.contains("prompt=login"));
    let link = link.expect("a way to sign in as someone else").replace("&amp;", "&");
    assert!(page.body.contains("Not you? Sign in as someone else"), "{}", page.body);
    let (path, query) = link.split_once('?').unwrap();
    let params: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    assert!(!params.iter().any(|(name, value)| name == "prompt" && value == "consent"), "{params:?}");
    let params: Vec<(&str, &str)> = params.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    let path = path.split_once("://").map_or(path, |(_, rest)| &rest[rest.find('/').unwrap()..]);
    let switched = browser.visit(path, &params).await;
    assert!(switched.shows_login_form(), "another person signs in: {} {}", switched.status, switched.body);

    let french = [asked.clone(), vec![("ui_locales", "fr")]].concat();
    let page = browser.authorize("acme", &french).await;
    assert!(page.body.contains("Vous êtes connecté en tant que ada."), "{}", page.body);
    assert!(page.body.contains("<li>Votre identité sur ce service</li>"), "{}", page.body);
}
