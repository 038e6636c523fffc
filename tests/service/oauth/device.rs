//! The device authorization grant (RFC 8628), for agents without a browser: the device asks for
//! codes and polls; the person types the user code on the verification page, signs in and
//! approves (or denies) on the consent page. The device is also a stock client no one here wrote
//! (openid-client).

use reqwest::StatusCode;
use serde_json::json;

use crate::oauth::browser::{Browser, Page};
use crate::support::{Answer, TestApp, answer, claims, spawn_app};

const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// Realm `acme` with ada, and `tv`: a public client with the device grant and refresh tokens.
async fn realm_with_a_device_client(app: &TestApp) {
    app.create_realm("acme").await;
    app.create_scopes("acme", &["orders:read"]).await;
    let body = json!({
        "id": "tv", "name": "The TV", "type": "Public",
        "clientConfiguration": { "grantTypes": [DEVICE_GRANT, "refresh_token"], "allowedScopes": ["orders:read"] },
    });
    let created = app.post("/realms/acme/clients", body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    app.create_user("acme", "ada", "analytical engine").await;
}

async fn start(app: &TestApp, client: &str, scope: &str) -> Answer {
    let url = format!("{}/realms/acme/protocol/openid-connect/auth/device", app.base);
    answer(app.http.post(url).form(&[("client_id", client), ("scope", scope)]).send().await.unwrap()).await
}

async fn poll(app: &TestApp, device_code: &str) -> Answer {
    let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let form = [("grant_type", DEVICE_GRANT), ("client_id", "tv"), ("device_code", device_code)];
    answer(app.http.post(url).form(&form).send().await.unwrap()).await
}

/// The person types `user_code` on the verification page; the page that follows.
async fn enter(browser: &mut Browser, user_code: &str) -> Page {
    let form = browser.visit("/realms/acme/device", &[]).await;
    assert_eq!(form.status, StatusCode::OK, "{}", form.body);
    let entered = browser.submit("/realms/acme/device", &form, &[("user_code", user_code)]).await;
    match &entered.location {
        Some(location) => browser.open(location.as_str()).await,
        None => entered,
    }
}

/// The person signs in on `login` and answers the consent page with `decision`.
async fn answer_as_ada(browser: &mut Browser, login: &Page, decision: &str) -> Page {
    assert!(login.shows_login_form(), "{}", login.body);
    let consent = browser.sign_in("acme", login, "ada", "analytical engine").await;
    assert!(consent.body.contains("A device you are connecting asks for this access"), "{}", consent.body);
    assert!(consent.body.contains("The TV asks for access to your account"), "{}", consent.body);
    browser.submit("/realms/acme/protocol/openid-connect/auth/consent", &consent, &[("decision", decision)]).await
}

fn title(page: &Page) -> &str {
    let start = page.body.find("<h1>").map_or(0, |at| at + 4);
    &page.body[start..start + page.body[start..].find("</h1>").unwrap_or(0)]
}

#[tokio::test]
async fn a_device_polls_while_a_person_types_its_code_signs_in_and_approves() {
    let app = spawn_app().await;
    realm_with_a_device_client(&app).await;
    let discovery = app.discovery("acme").await;
    let endpoint = format!("{}/realms/acme/protocol/openid-connect/auth/device", app.base);
    assert_eq!(discovery["device_authorization_endpoint"], json!(endpoint));
    assert!(discovery["grant_types_supported"].as_array().unwrap().contains(&json!(DEVICE_GRANT)));

    let started = start(&app, "tv", "openid orders:read").await;
    assert_eq!(started.status, StatusCode::OK, "{:?}", started.body);
    assert_eq!(started.headers["cache-control"], "no-store");
    let user_code = started.body["user_code"].as_str().unwrap().to_owned();
    assert!(
        user_code.len() == 9
            && user_code.as_bytes()[4] == b'-'
            && user_code.bytes().all(|b| b == b'-' || b"BCDFGHJKLMNPQRSTVWXZ".contains(&b)),
        "{user_code}"
    );
    let verification = format!("{}/realms/acme/device", app.base);
    assert_eq!(started.body["verification_uri"], json!(verification));
    assert_eq!(started.body["verification_uri_complete"], json!(format!("{verification}?user_code={user_code}")));
    assert_eq!((started.body["expires_in"].as_i64(), started.body["interval"].as_i64()), (Some(600), Some(5)));
    let device_code = started.body["device_code"].as_str().unwrap().to_owned();

    // Polling before the person answered: pending; sooner than the interval: slow down, and the
    // interval grows by five seconds.
    assert_eq!(poll(&app, &device_code).await.body["error"], "authorization_pending");
    assert_eq!(poll(&app, &device_code).await.body["error"], "slow_down");
    app.advance(5).await;
    assert_eq!(poll(&app, &device_code).await.body["error"], "slow_down", "the interval is ten seconds now");
    app.advance(10).await;
    app.advance(5).await;
    assert_eq!(poll(&app, &device_code).await.body["error"], "authorization_pending", "fifteen after two slow-downs");

    // The person opens the address with the code in it, sees the code, confirms it, signs in and
    // approves.
    let mut browser = Browser::new(&app);
    let shown = browser.open(started.body["verification_uri_complete"].as_str().unwrap()).await;
    assert_eq!(shown.input("user_code").as_deref(), Some(user_code.as_str()), "{}", shown.body);
    let entered = browser
        .submit("/realms/acme/device", &shown, &[("user_code", &user_code.to_lowercase().replace('-', " "))])
        .await;
    assert_eq!(entered.status, StatusCode::SEE_OTHER, "{}", entered.body);
    let login = browser.open(entered.location.as_ref().unwrap().as_str()).await;
    let done = answer_as_ada(&mut browser, &login, "allow").await;
    assert_eq!((done.status, title(&done)), (StatusCode::OK, "Your device is connected"), "{}", done.body);

    app.advance(15).await;
    let tokens = poll(&app, &device_code).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    let access = claims(tokens.body["access_token"].as_str().unwrap());
    let ada = app.get("/realms/acme/users?searchTerm=ada").await.items()[0]["id"].clone();
    assert_eq!((&access["sub"], access["scope"].as_str()), (&ada, Some("openid orders:read")));
    assert!(tokens.body["id_token"].is_string() && tokens.body["refresh_token"].is_string());
    app.advance(10).await;
    assert_eq!(poll(&app, &device_code).await.body["error"], "invalid_grant", "tokens are handed out once");
    // The code was spent: typed again, it is not known.
    let again = enter(&mut browser, &user_code).await;
    assert!(again.body.contains("This code is not known or has expired"), "{}", again.body);

    // The device's session is the person's, like any other.
    let sessions = app.get("/realms/acme/sessions").await;
    let session = sessions.items().iter().find(|session| session["clientId"] == "tv").cloned();
    assert_eq!(session.map(|s| s["userId"].clone()), Some(ada), "{:?}", sessions.body);
}

#[tokio::test]
async fn a_denied_an_expired_and_a_disabled_device_get_no_tokens() {
    let app = spawn_app().await;
    realm_with_a_device_client(&app).await;
    let mut browser = Browser::new(&app);

    let started = start(&app, "tv", "orders:read").await;
    let login = enter(&mut browser, started.body["user_code"].as_str().unwrap()).await;
    let denied = answer_as_ada(&mut browser, &login, "deny").await;
    assert_eq!(title(&denied), "Access denied", "{}", denied.body);
    // A French browser is answered in French to the end.
    let mut french = Browser::new(&app);
    french.language = Some("fr-FR,fr;q=0.9");
    let started_fr = start(&app, "tv", "orders:read").await;
    let login = enter(&mut french, started_fr.body["user_code"].as_str().unwrap()).await;
    let consent = french.sign_in("acme", &login, "ada", "analytical engine").await;
    let path = "/realms/acme/protocol/openid-connect/auth/consent";
    let refused = french.submit(path, &consent, &[("decision", "deny")]).await;
    assert_eq!(title(&refused), "Accès refusé", "{}", refused.body);
    assert_eq!(poll(&app, started.body["device_code"].as_str().unwrap()).await.body["error"], "access_denied");

    // Ten minutes without an answer: expired, and its code is no longer known.
    let started = start(&app, "tv", "orders:read").await;
    app.advance(601).await;
    assert_eq!(poll(&app, started.body["device_code"].as_str().unwrap()).await.body["error"], "expired_token");
    let late = enter(&mut browser, started.body["user_code"].as_str().unwrap()).await;
    assert_eq!(late.status, StatusCode::BAD_REQUEST);

    // A client without the grant, a scope it may not ask for, another client's device code.
    let web = app.create_client("acme", "web", &["authorization_code"], &[]).await;
    let refused = start(&app, "web", "openid").await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "a confidential client must authenticate: {:?}", refused.body);
    let url = format!("{}/realms/acme/protocol/openid-connect/auth/device", app.base);
    let response = app.http.post(&url).basic_auth(&web.id, Some(&web.secret)).form(&[("scope", "openid")]).send();
    assert_eq!(answer(response.await.unwrap()).await.body["error"], "unauthorized_client");
    assert_eq!(start(&app, "tv", "orders:write").await.body["error"], "invalid_scope");
    let started = start(&app, "tv", "orders:read").await;
    let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let form = [("grant_type", DEVICE_GRANT), ("device_code", started.body["device_code"].as_str().unwrap())];
    let response = app.http.post(&url).basic_auth(&web.id, Some(&web.secret)).form(&form).send();
    assert_eq!(answer(response.await.unwrap()).await.body["error"], "unauthorized_client");

    // One source asks for at most 30 device authorizations a minute.
    let mut answered = Vec::new();
    for _ in 0..30 {
        answered.push(start(&app, "tv", "orders:read").await.status);
    }
    let spent = answered.iter().position(|status| *status == StatusCode::TOO_MANY_REQUESTS);
    let limited = start(&app, "tv", "orders:read").await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS, "{spent:?}");
    assert!(limited.headers.contains_key("retry-after"));
    app.advance(2).await;
    assert_eq!(start(&app, "tv", "orders:read").await.status, StatusCode::OK, "one comes back every two seconds");

    // A client disabled meanwhile: its pending code leads nowhere.
    assert_eq!(app.put("/realms/acme/clients/tv", json!({ "status": "Disabled" })).await.status, StatusCode::OK);
    let login = enter(&mut browser, started.body["user_code"].as_str().unwrap()).await;
    assert_eq!(title(&login), "The application is not known", "{}", login.body);
}

#[tokio::test]
async fn wrong_codes_are_limited_per_source_and_a_blocked_source_types_none() {
    let app = spawn_app().await;
    realm_with_a_device_client(&app).await;
    let started = start(&app, "tv", "orders:read").await;
    let user_code = started.body["user_code"].as_str().unwrap().to_owned();
    let mut browser = Browser::new(&app);
    for guess in ["BCDF-GHJK", "not a code", "ZZZZ-ZZZZ", "BBBB-BBBB", "CCCC-CCCC"] {
        let wrong = enter(&mut browser, guess).await;
        assert_eq!(wrong.status, StatusCode::BAD_REQUEST, "{guess}");
        assert!(wrong.body.contains("This code is not known or has expired"), "{}", wrong.body);
    }
    for n in 0..5 {
        assert_eq!(
            enter(&mut browser, &format!("DDDD-DDD{}", ["B", "C", "D", "F", "G"][n])).await.status,
            StatusCode::BAD_REQUEST
        );
    }
    // The eleventh try within a minute is refused, even with the right code; later it goes.
    let limited = enter(&mut browser, &user_code).await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS, "{}", limited.body);
    app.advance(6).await;
    assert!(enter(&mut browser, &user_code).await.shows_login_form());

    // A source attack protection blocked (eight unknown accounts tried from it) types no code.
    let shop = app.create_client("acme", "shop", &["password"], &[]).await;
    let blocked_source = "198.51.100.7";
    let token = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    for n in 0..8 {
        let username = format!("list-{n}");
        let form = [("grant_type", "password"), ("username", username.as_str()), ("password", "guess")];
        let request =
            app.http.post(&token).basic_auth(&shop.id, Some(&shop.secret)).header("x-forwarded-for", blocked_source);
        request.form(&form).send().await.unwrap();
    }
    let page = browser.visit("/realms/acme/device", &[]).await;
    let csrf = page.input("csrf").unwrap();
    let cookies = browser.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ");
    let typed = app
        .http
        .post(format!("{}/realms/acme/device", app.base))
        .header("cookie", cookies)
        .header("x-forwarded-for", blocked_source)
        .form(&[("user_code", user_code.as_str()), ("csrf", csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(typed.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(typed.text().await.unwrap().contains("Too many sign-in attempts"));
}

#[tokio::test]
async fn openid_client_signs_a_device_in_through_a_person_at_a_browser() {
    let app = spawn_app().await;
    realm_with_a_device_client(&app).await;
    let issuer = format!("{}/realms/acme", app.base);
    let mut device = crate::support::node::NodeScript::start(
        "device_flow.mjs",
        "openid-client",
        &[&issuer, "tv", "openid orders:read"],
    );
    let started = device.next().await;
    let mut browser = Browser::new(&app);
    let login = enter(&mut browser, started["user_code"].as_str().unwrap()).await;
    let done = answer_as_ada(&mut browser, &login, "allow").await;
    assert_eq!(title(&done), "Your device is connected");
    device.send("answered").await;
    let got = device.next().await;
    assert!(got["token_type"].as_str().unwrap().eq_ignore_ascii_case("bearer"), "{got}");
    let ada = app.get("/realms/acme/users?searchTerm=ada").await.items()[0]["id"].clone();
    assert_eq!(
        (got["scope"].as_str(), &got["sub"], &got["userinfo_sub"]),
        (Some("openid orders:read"), &ada, &ada),
        "{got}"
    );
    assert!(device.finished().await);
}
