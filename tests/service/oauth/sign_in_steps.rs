//! The steps of a browser sign-in beyond the password: the page that waits for a phone's
//! confirmation, password recovery as pages, self sign-up (with `prompt=create`), and the
//! console's people signing in on the platform realm's login page, the Owner's first password
//! included.

use reqwest::StatusCode;
use serde_json::json;

use crate::oauth::browser::{
    Browser, Page, REDIRECT, VERIFIER, challenge, exchange, realm_with_clients, request, signed_in,
};
use crate::support::smtp::MailServer;
use crate::support::{TestApp, TestClient, TestDatabase, answer, claims, spawn_app, spawn_with};

const LOGIN: &str = "/realms/acme/protocol/openid-connect/auth/login";
const PUSH: &str = "/realms/acme/protocol/openid-connect/auth/push";

/// The address a page that waits reloads.
fn reloaded(page: &Page) -> String {
    let marker = "content=\"2;url=";
    let start = page.body.find(marker).unwrap_or_else(|| panic!("a page that reloads: {}", page.body)) + marker.len();
    let end = start + page.body[start..].find('"').unwrap();
    page.body[start..end].replace("&amp;", "&")
}

/// The address of the page's link whose address contains `part`.
fn link(page: &Page, part: &str) -> String {
    let at = page.body.find(part).unwrap_or_else(|| panic!("a link to {part}: {}", page.body));
    let start = page.body[..at].rfind("href=\"").unwrap() + "href=\"".len();
    let end = start + page.body[start..].find('"').unwrap();
    page.body[start..end].replace("&amp;", "&")
}

/// ada's access token, from a browser sign-in.
async fn access_token(app: &TestApp, web: &TestClient) -> String {
    let mut browser = Browser::new(app);
    let answer = signed_in(&mut browser, "web", "s").await;
    let tokens = exchange(app, web, &answer.param("code").unwrap(), VERIFIER).await;
    tokens.body["access_token"].as_str().expect("an access token").to_owned()
}

/// A phone enrolled with a person's access token: its id and secret.
struct Phone {
    id: String,
    secret: String,
}

async fn enroll(app: &TestApp, token: &str) -> Phone {
    let url = format!("{}/realms/acme/account/push-devices", app.base);
    let form = [("name", "Ada's phone")];
    let enrolled = answer(app.http.post(url).bearer_auth(token).form(&form).send().await.unwrap()).await;
    assert_eq!(enrolled.status, StatusCode::CREATED, "{:?}", enrolled.body);
    let field = |name: &str| enrolled.body[name].as_str().unwrap().to_owned();
    Phone { id: field("device_id"), secret: field("device_secret") }
}

/// The phone answers the one request waiting for it.
async fn decide(app: &TestApp, phone: &Phone, decision: &str) {
    let url = format!("{}/realms/acme/account/push-requests", app.base);
    let listed = answer(app.http.get(url).basic_auth(&phone.id, Some(&phone.secret)).send().await.unwrap()).await;
    let requests = listed.body["requests"].as_array().unwrap().clone();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let id = requests[0]["push_request_id"].as_str().unwrap();
    let url = format!("{}/realms/acme/account/push-requests/{id}/answer", app.base);
    let form = [("decision", decision)];
    let answered =
        answer(app.http.post(url).basic_auth(&phone.id, Some(&phone.secret)).form(&form).send().await.unwrap()).await;
    assert_eq!(answered.status, StatusCode::OK, "{:?}", answered.body);
}

/// A browser that typed ada's right password and now waits for her phone.
async fn waiting(app: &TestApp) -> (Browser, Page) {
    let mut browser = Browser::new(app);
    let pkce = challenge(VERIFIER);
    let page = browser.authorize("acme", &request("web", "w", "n", &pkce)).await;
    let waiting = browser.sign_in("acme", &page, "ada", "analytical engine").await;
    assert_eq!(waiting.status, StatusCode::OK, "{}", waiting.body);
    assert!(waiting.body.contains("Confirm on your phone"), "{}", waiting.body);
    assert!(waiting.param("code").is_none() && browser.cookies.contains_key("castellan_push"));
    (browser, waiting)
}

#[tokio::test]
async fn a_phone_confirms_a_browser_sign_in_on_a_page_that_waits_for_it() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let phone = enroll(&app, &access_token(&app, &web).await).await;

    let (mut browser, page) = waiting(&app).await;
    let address = reloaded(&page);
    assert!(address.contains(PUSH) && address.contains("csrf="), "{address}");
    let still = browser.open(&address).await;
    assert!(still.body.contains("Confirm on your phone"), "nobody answered yet: {}", still.body);

    decide(&app, &phone, "approve").await;
    // Another browser holding the page's address and cookies, but not the binding to the request,
    // collects nothing.
    let mut other = Browser::new(&app);
    other.cookies = browser.cookies.clone();
    let request_id = other.cookies["castellan_push"].split('.').next().unwrap().to_owned();
    other.cookies.insert("castellan_push".into(), format!("{request_id}.forged"));
    let refused = other.open(&reloaded(&still)).await;
    assert!(refused.shows_login_form() && refused.body.contains("That took too long."), "{}", refused.body);

    let answer = browser.open(&reloaded(&still)).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    assert!(answer.location.as_ref().unwrap().as_str().starts_with(REDIRECT));
    assert_eq!(answer.param("state").as_deref(), Some("w"));
    assert!(!browser.cookies.contains_key("castellan_push"), "the waiting is over");
    assert!(browser.cookies.contains_key("castellan_session"));
    let tokens = exchange(&app, &web, &answer.param("code").unwrap(), VERIFIER).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    assert_eq!(claims(tokens.body["id_token"].as_str().unwrap())["amr"], json!(["pwd", "push"]));
    let logins = app.events("login_succeeded").await;
    let (_, _, last) = logins.last().unwrap();
    assert_eq!(last["authentication_methods"], json!(["pwd", "push"]));
}

#[tokio::test]
async fn a_refusal_on_the_phone_or_no_answer_in_time_leads_back_to_the_login_page() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let phone = enroll(&app, &access_token(&app, &web).await).await;

    let (mut browser, page) = waiting(&app).await;
    decide(&app, &phone, "refuse").await;
    let refused = browser.open(&reloaded(&page)).await;
    assert!(refused.shows_login_form() && refused.body.contains("The sign-in was refused on the phone."));
    assert!(!browser.cookies.contains_key("castellan_push") && !browser.cookies.contains_key("castellan_session"));

    let (mut browser, page) = waiting(&app).await;
    app.advance(121).await;
    let lapsed = browser.open(&reloaded(&page)).await;
    assert!(lapsed.shows_login_form() && lapsed.body.contains("The phone did not answer in time."), "{}", lapsed.body);
    // The button does what the reload does.
    let (mut browser, page) = waiting(&app).await;
    let pressed = browser.submit(PUSH, &page, &[]).await;
    assert!(pressed.body.contains("Confirm on your phone"), "{}", pressed.body);
}

#[tokio::test]
async fn a_forgotten_password_is_reset_on_the_pages_and_the_sign_in_goes_on() {
    let mail = MailServer::start().await;
    let url = mail.url.clone();
    let app = spawn_with(TestDatabase::new().await, move |settings| settings.smtp_url = Some(url)).await;
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = Browser::new(&app);
    let pkce = challenge(VERIFIER);
    let login = browser.authorize("acme", &request("web", "keep-me", "n", &pkce)).await;
    let forgot = browser.open(&link(&login, "/auth/recovery?")).await;
    assert!(forgot.shows_login_form() && forgot.body.contains("Reset your password"), "{}", forgot.body);

    let recovery = "/realms/acme/protocol/openid-connect/auth/recovery";
    let unknown = browser.submit(recovery, &forgot, &[("username", "nobody")]).await;
    // Each page's form is good until the next page is shown: the form is asked for again.
    let forgot = browser.open(&link(&login, "/auth/recovery?")).await;
    let asked = browser.submit(recovery, &forgot, &[("username", "ada")]).await;
    assert_eq!((asked.status, unknown.status), (StatusCode::OK, StatusCode::OK));
    // What the page says (its style's nonce and the form's token are each page's own).
    let words = |page: &Page| page.body[page.body.find("<main>").unwrap()..page.body.find("<form").unwrap()].to_owned();
    assert_eq!(words(&asked), words(&unknown), "the same answer whatever the account");
    assert!(asked.body.contains(r#"autocomplete="one-time-code""#));

    let letter = mail.letter(&app, "ada@example.com").await;
    let code = crate::protection::measures::reset_code(&letter);
    let reset = "/realms/acme/protocol/openid-connect/auth/recovery/reset";
    let wrong =
        browser.submit(reset, &asked, &[("code", "cstl_reset_wrong"), ("new_password", "a new passphrase")]).await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST);
    assert!(wrong.body.contains("This code is not valid or has expired."));
    assert!(
        wrong.body.contains(
            r#"name="code" type="text" autocomplete="one-time-code" required autofocus aria-describedby="form-error""#
        ),
        "{}",
        wrong.body
    );
    let short = browser.submit(reset, &wrong, &[("code", &code), ("new_password", "short")]).await;
    assert!(short.body.contains("too short or too long"), "{}", short.body);
    let done = browser.submit(reset, &short, &[("code", &code), ("new_password", "a new passphrase")]).await;
    assert!(done.shows_login_form() && done.body.contains("Your password was changed."), "{}", done.body);

    let answer = browser.sign_in("acme", &done, "ada", "a new passphrase").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    assert_eq!(answer.param("state").as_deref(), Some("keep-me"), "the request went along");
    let tokens = exchange(&app, &web, &answer.param("code").unwrap(), VERIFIER).await;
    assert_eq!(tokens.status, StatusCode::OK);
    let again = browser.submit(reset, &done, &[("code", &code), ("new_password", "another passphrase")]).await;
    assert!(again.body.contains("This code is not valid or has expired."), "a code works once");
}

#[tokio::test]
async fn the_recovery_e_mail_links_to_a_page_that_takes_the_code() {
    let mail = MailServer::start().await;
    let url = mail.url.clone();
    let app = spawn_with(TestDatabase::new().await, move |settings| settings.smtp_url = Some(url)).await;
    realm_with_clients(&app).await;
    let asked = app.http.post(format!("{}/realms/acme/account/recovery", app.base));
    let asked = asked.form(&[("client_id", "web"), ("username", "ada")]).send().await.unwrap();
    assert_eq!(asked.status(), StatusCode::ACCEPTED);
    let letter = mail.letter(&app, "ada@example.com").await;
    let code = crate::protection::measures::reset_code(&letter);
    let link = format!("{}/realms/acme/account/password?code={code}", app.base);
    // Quoted-printable writes `=` as `=3D` and folds long lines.
    let text = letter.data.replace("=\r\n", "").replace("=3D", "=");
    assert!(text.contains(&link), "{text}");

    let mut browser = Browser::new(&app);
    let form = browser.open(&link).await;
    assert!(form.shows_login_form() && form.body.contains("Choose a new password"), "{}", form.body);
    let done =
        browser.submit("/realms/acme/account/password", &form, &[("new_password", "a passphrase from a link")]).await;
    assert!(done.body.contains("Your password is set."), "{}", done.body);
    let pkce = challenge(VERIFIER);
    let login = browser.authorize("acme", &request("web", "s", "n", &pkce)).await;
    let signed_in = browser.sign_in("acme", &login, "ada", "a passphrase from a link").await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER, "{}", signed_in.body);
}

#[tokio::test]
async fn self_sign_up_is_off_until_the_realm_allows_it() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let prompts = app.discovery("acme").await["prompt_values_supported"].clone();
    assert!(!prompts.as_array().unwrap().contains(&json!("create")), "{prompts}");
    let mut browser = Browser::new(&app);
    let pkce = challenge(VERIFIER);
    let login = browser.authorize("acme", &request("web", "s", "n", &pkce)).await;
    assert!(!login.body.contains("Create an account"));
    let mut asked = request("web", "s", "n", &pkce);
    asked.push(("prompt", "create"));
    let refused = browser.authorize("acme", &asked).await;
    assert_eq!(refused.param("error").as_deref(), Some("invalid_request"));

    let register = "/realms/acme/protocol/openid-connect/auth/register";
    let form = [("username", "grace"), ("email", "grace@example.com"), ("password", "a long passphrase")];
    let posted = browser.submit(register, &login, &form).await;
    assert!(posted.shows_login_form() && !posted.body.contains("Create your account"), "{}", posted.body);
    assert_eq!(app.get("/realms/acme/users?searchTerm=grace").await.items().len(), 0, "nobody signed up");
    assert!(app.events("user_created").await.iter().all(|(_, client, _)| client.is_none()));

    let platform = app.put("/realms/platform", json!({ "selfSignUp": true })).await;
    assert_eq!(platform.status, StatusCode::CONFLICT, "{:?}", platform.body);

    // Allowed, but with no way to confirm an address by e-mail, nobody signs up.
    assert_eq!(app.put("/realms/acme", json!({ "selfSignUp": true })).await.status, StatusCode::OK);
    let prompts = app.discovery("acme").await["prompt_values_supported"].clone();
    assert!(!prompts.as_array().unwrap().contains(&json!("create")), "{prompts}");
    let login = browser.authorize("acme", &request("web", "s", "n", &pkce)).await;
    assert!(!login.body.contains("Create an account"), "no e-mail, no sign-up");
    let posted = browser.submit(register, &login, &form).await;
    assert!(posted.shows_login_form() && !posted.body.contains("Confirm your email"), "{}", posted.body);
}

#[tokio::test]
async fn prompt_consent_asks_the_person_even_for_the_realms_own_client() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let prompts = app.discovery("acme").await["prompt_values_supported"].clone();
    assert!(prompts.as_array().unwrap().contains(&json!("consent")), "advertised: {prompts}");
    let mut browser = Browser::new(&app);
    let pkce = challenge(VERIFIER);
    // The realm's own client asks nobody without the prompt.
    let first = signed_in(&mut browser, "web", "s").await;
    assert!(first.param("code").is_some());
    let mut asked = request("web", "kept", "n", &pkce);
    asked.push(("prompt", "consent"));
    let page = browser.authorize("acme", &asked).await;
    assert_eq!(page.status, StatusCode::OK, "{:?}", page.location);
    assert!(page.body.contains("The web app asks for access to your account"), "{}", page.body);
    assert!(!page.body.contains("served from"), "the realm's own client is not presented as a third party");
    let denied =
        browser.submit("/realms/acme/protocol/openid-connect/auth/consent", &page, &[("decision", "deny")]).await;
    assert_eq!(denied.param("error").as_deref(), Some("access_denied"));
    assert_eq!(denied.param("state").as_deref(), Some("kept"));
    let page = browser.authorize("acme", &asked).await;
    let allowed =
        browser.submit("/realms/acme/protocol/openid-connect/auth/consent", &page, &[("decision", "allow")]).await;
    assert_eq!(allowed.status, StatusCode::SEE_OTHER);
    assert!(allowed.param("code").is_some());
}

#[tokio::test]
async fn a_person_signs_up_on_the_page_confirms_the_code_from_the_email_and_is_signed_in() {
    let mail = MailServer::start().await;
    let url = mail.url.clone();
    let app = spawn_with(TestDatabase::new().await, move |settings| settings.smtp_url = Some(url)).await;
    let (web, _) = realm_with_clients(&app).await;
    let allowed = app.put("/realms/acme", json!({ "selfSignUp": true })).await;
    assert_eq!(allowed.data()["selfSignUp"], true);
    let prompts = app.discovery("acme").await["prompt_values_supported"].clone();
    assert!(prompts.as_array().unwrap().contains(&json!("create")), "{prompts}");

    let mut browser = Browser::new(&app);
    let pkce = challenge(VERIFIER);
    let login = browser.authorize("acme", &request("web", "s", "n", &pkce)).await;
    assert!(link(&login, "/auth/register?").contains("client_id=web"));
    let mut asked = request("web", "new", "n-1", &pkce);
    asked.push(("prompt", "create"));
    let form = browser.authorize("acme", &asked).await;
    assert!(form.body.contains("Create your account for The web app"), "{}", form.body);
    assert!(form.body.contains(r#"name="email" type="email" autocomplete="email""#));

    // What each field refuses by itself, whatever any account holds.
    let register = "/realms/acme/protocol/openid-connect/auth/register";
    let tries = [
        (("ada@example.com", "grace@example.com", "a long passphrase"), "username", "no @"),
        (("grace hopper", "grace@example.com", "a long passphrase"), "username", "A username has no spaces"),
        (("grace", "grace-at-example", "a long passphrase"), "email", "This is not an email address."),
        (("grace", "grace@example.com", "short"), "password", "too short or too long"),
    ];
    let mut page = form;
    for ((username, email, password), field, text) in tries {
        let fields = [("username", username), ("email", email), ("password", password)];
        page = browser.submit(register, &page, &fields).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{username} {email}");
        assert!(page.body.contains(text), "{text}: {}", page.body);
        let tied = format!(r#"name="{field}""#);
        let input = &page.body[page.body.find(&tied).unwrap()..];
        assert!(input[..input.find('>').unwrap()].contains(r#"aria-invalid="true""#), "the error is tied to {field}");
    }

    // Every try counts against the source's five a minute.
    app.advance(60).await;
    // A taken username or address is answered like a free one: the e-mail tells the address's owner.
    let words = |page: &Page| page.body[page.body.find("<main>").unwrap()..page.body.find("<form").unwrap()].to_owned();
    let mut answers = Vec::new();
    for (username, email) in
        [("ada", "someone@example.com"), ("someone", "ada@example.com"), ("grace", "grace@example.com")]
    {
        let form = browser.authorize("acme", &asked).await;
        let fields = [("username", username), ("email", email), ("password", "a long passphrase")];
        let answer = browser.submit(register, &form, &fields).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        answers.push(answer);
    }
    assert!(answers[0].body.contains("Confirm your email address"), "{}", answers[0].body);
    assert_eq!(words(&answers[0]), words(&answers[1]), "a taken username and a taken address read alike");
    assert_eq!(words(&answers[1]), words(&answers[2]), "and like a free one");
    let taken_name = mail.letter(&app, "someone@example.com").await;
    assert!(taken_name.data.contains("choose another username") && !taken_name.data.contains("cstl_signup_"));
    let taken_address = mail.letter(&app, "ada@example.com").await;
    assert!(taken_address.data.contains("already has") && !taken_address.data.contains("cstl_signup_"));
    assert_eq!(
        app.get("/realms/acme/users?searchTerm=grace").await.items().len(),
        0,
        "nobody until the code comes back"
    );

    let letter = mail.letter(&app, "grace@example.com").await;
    let text = letter.data.replace("=\r\n", "");
    let at = text.find("cstl_signup_").expect("a code");
    let code: String = text[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect();
    let confirm = "/realms/acme/protocol/openid-connect/auth/register/confirm";
    let wrong = browser.submit(confirm, &answers[2], &[("code", "cstl_signup_wrong")]).await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST);
    assert!(wrong.body.contains("This code is not valid or has expired."), "{}", wrong.body);
    let answer = browser.submit(confirm, &wrong, &[("code", &code)]).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    assert_eq!(answer.param("state").as_deref(), Some("new"));
    let tokens = exchange(&app, &web, &answer.param("code").unwrap(), VERIFIER).await;
    let id_token = claims(tokens.body["id_token"].as_str().unwrap());
    assert_eq!(id_token["preferred_username"], "grace");
    let user = app.get(&format!("/realms/acme/users/{}", id_token["sub"].as_str().unwrap())).await;
    assert_eq!(user.data()["emailConfirmed"], true, "the code came back from the address");
    assert_eq!(id_token["nonce"], "n-1");
    let again = browser.submit(confirm, &wrong, &[("code", &code)]).await;
    assert!(again.body.contains("This code is not valid or has expired."), "a code works once");

    let created = app.events("user_created").await;
    let (realm, client, data) = created.iter().find(|(_, _, d)| d["username"] == "grace").expect("user_created");
    assert_eq!((realm.as_deref(), client.as_deref()), (Some("acme"), Some("web")));
    assert_eq!(
        (&data["client_id"], &data["email"], &data["id"]),
        (&json!("web"), &json!("grace@example.com"), &id_token["sub"])
    );
    // The new account signs in like any other.
    let mut later = Browser::new(&app);
    let login = later.authorize("acme", &request("web", "s", "n", &pkce)).await;
    assert_eq!(later.sign_in("acme", &login, "grace", "a long passphrase").await.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn sign_ups_are_limited_per_source_and_a_flood_of_them_blocks_it() {
    let mail = MailServer::start().await;
    let url = mail.url.clone();
    let app = spawn_with(TestDatabase::new().await, move |settings| settings.smtp_url = Some(url)).await;
    realm_with_clients(&app).await;
    app.put("/realms/acme", json!({ "selfSignUp": true })).await;
    let register = "/realms/acme/protocol/openid-connect/auth/register";
    let mut browser = Browser::new(&app);
    let pkce = challenge(VERIFIER);
    let mut asked = request("web", "s", "n", &pkce);
    asked.push(("prompt", "create"));
    let mut sign_up = async |n: usize| {
        let form = browser.authorize("acme", &asked).await;
        let (username, email) = (format!("bulk{n}"), format!("bulk{n}@example.com"));
        let fields = [("username", username.as_str()), ("email", email.as_str()), ("password", "a long passphrase")];
        browser.submit(register, &form, &fields).await
    };
    // Five a minute from one address; the sixth waits.
    for n in 0..5 {
        assert_eq!(sign_up(n).await.status, StatusCode::OK, "sign-up {n}");
    }
    let sixth = sign_up(5).await;
    assert!(sixth.body.contains("Too many sign-in attempts"), "{}", sixth.body);
    // Within the hour, the tenth from the address blocks it: attack protection watches sign-ups.
    for n in 6..=10 {
        app.advance(60).await;
        let answer = sign_up(n).await;
        if n < 10 {
            assert_eq!(answer.status, StatusCode::OK, "sign-up {n}: {}", answer.body);
        } else {
            assert!(answer.body.contains("Too many sign-in attempts"), "the tenth blocks: {}", answer.body);
        }
    }
    let incidents = app.get("/threat-incidents?realmId=acme").await;
    let incident = &incidents.items()[0];
    assert_eq!((&incident["kind"], &incident["severity"]), (&json!("SignUpAbuse"), &json!("Medium")), "{incident}");
    app.advance(60).await;
    let blocked = sign_up(11).await;
    assert!(blocked.body.contains("Too many sign-in attempts"), "the source stays blocked: {}", blocked.body);
    assert_eq!(mail.letters(&app, "bulk10@example.com", 0).await.len(), 0, "the blocking sign-up sent nothing");
    assert_eq!(mail.letters(&app, "bulk9@example.com", 1).await.len(), 1, "the ones before it went out");
}

/// The console's authorization request at the platform realm.
fn console_request<'a>(redirect: &'a str, pkce: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", "platform"),
        ("redirect_uri", redirect),
        ("state", "console"),
        ("code_challenge", pkce),
        ("code_challenge_method", "S256"),
    ]
}

#[tokio::test]
async fn the_owner_chooses_a_password_from_the_first_start_link_and_signs_in_to_the_console_on_the_page() {
    let app = spawn_app().await;
    let owner_link = app.owner_link.clone().expect("the first start gives the Owner a link");
    let mut browser = Browser::new(&app);
    let choose = browser.open(&owner_link).await;
    assert!(choose.shows_login_form() && choose.body.contains("Choose a new password"), "{}", choose.body);
    let set = "/realms/platform/account/password";
    let short = browser.submit(set, &choose, &[("new_password", "short")]).await;
    assert_eq!(short.status, StatusCode::BAD_REQUEST);
    let done = browser.submit(set, &short, &[("new_password", "the owner's passphrase")]).await;
    assert!(done.body.contains("Your password is set."), "{}", done.body);
    let again = browser.submit(set, &short, &[("new_password", "someone else's passphrase")]).await;
    assert!(again.body.contains("This code is not valid or has expired."), "the link works once");

    let console = format!("{}/console/callback", app.base);
    let pkce = challenge(VERIFIER);
    let elsewhere = browser.authorize("platform", &console_request(REDIRECT, &pkce)).await;
    assert_eq!(elsewhere.status, StatusCode::BAD_REQUEST, "only the console's address");
    let mut without_pkce = console_request(&console, &pkce);
    without_pkce.truncate(4);
    let refused = browser.authorize("platform", &without_pkce).await;
    assert_eq!(refused.param("error").as_deref(), Some("invalid_request"), "people's sign-in needs PKCE");

    let page = browser.authorize("platform", &console_request(&console, &pkce)).await;
    assert!(page.shows_login_form() && page.body.contains("Sign in to Platform"), "{}", page.body);
    let wrong = browser.sign_in("platform", &page, "owner", "not the passphrase").await;
    assert!(wrong.body.contains("The username or password is not correct."));
    let answer = browser.sign_in("platform", &wrong, "owner", "the owner's passphrase").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    assert!(answer.location.as_ref().unwrap().as_str().starts_with(&console));

    let url = format!("{}/realms/platform/protocol/openid-connect/token", app.base);
    let code = answer.param("code").unwrap();
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", "platform"),
        ("code", &code),
        ("redirect_uri", &console),
        ("code_verifier", VERIFIER),
    ];
    let tokens = crate::support::answer(app.http.post(&url).form(&form).send().await.unwrap()).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    assert!(tokens.body.get("refresh_token").is_none(), "the console gets no refresh token");
    let bearer = tokens.body["access_token"].as_str().unwrap();
    let realms = app.http.get(format!("{}/realms", app.admin)).bearer_auth(bearer).send().await.unwrap();
    assert_eq!(realms.status(), StatusCode::OK, "the person acts on the admin API as the Owner");

    app.state.access_log.flush().await;
    let log = app.get("/access-logs?pageSize=100").await;
    let on_page: Vec<_> = log.items().iter().filter(|e| e["path"] == LOGIN.replace("acme", "platform")).collect();
    let outcomes: Vec<_> = on_page.iter().map(|e| e["outcome"].as_str().unwrap()).collect();
    assert!(outcomes.contains(&"Refused") && outcomes.contains(&"Accepted"), "{on_page:?}");
}
