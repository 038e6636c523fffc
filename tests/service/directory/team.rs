//! The account's team: invitations by e-mail through a real SMTP server on loopback, console
//! sign-in at the platform realm, members' roles, personal access tokens, impersonation, and the
//! notification preferences with the operational notifications posted to their webhook.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::operations::webhooks::{SHOP_HOOKS, receiving, recorded, register};
use crate::support::receiver::Receiver;
use crate::support::smtp::{MailServer, Message};
use crate::support::{Answer, TestApp, TestClient, TestDatabase, answer, claims, spawn_app, spawn_with};

pub const PASSWORD: &str = "Vq7-lantern-Orbit-42";

/// A service that sends e-mail to `mail` and may post to loopback receivers.
pub async fn spawn_mailing() -> (TestApp, MailServer) {
    let mail = MailServer::start().await;
    let url = mail.url.clone();
    let app = spawn_with(TestDatabase::new().await, move |settings| {
        settings.smtp_url = Some(url);
        receiving(settings);
    })
    .await;
    (app, mail)
}

/// The invitation token an e-mail carries.
fn token_in(message: &Message) -> String {
    let text = message.data.replace("=\r\n", "");
    let start = text.find("cstl_inv_").expect("a token in the e-mail");
    text[start..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect()
}

async fn accept(app: &TestApp, token: &str, username: &str) -> Answer {
    let body = json!({ "token": token, "username": username, "password": PASSWORD });
    let url = format!("{}/account/invitations/accept", app.admin);
    answer(app.http.post(url).json(&body).send().await.unwrap()).await
}

/// Invites `email` with `roles`, accepts as `username`; returns the person's id.
pub async fn join(app: &TestApp, mail: &MailServer, email: &str, username: &str, roles: &[&str]) -> String {
    let invited = app.post("/account/invitations", json!({ "email": email, "roles": roles })).await;
    assert_eq!(invited.status, StatusCode::CREATED, "{:?}", invited.body);
    let token = token_in(&mail.letter(app, email).await);
    let joined = accept(app, &token, username).await;
    assert_eq!(joined.status, StatusCode::CREATED, "{:?}", joined.body);
    joined.data()["userId"].as_str().unwrap().to_owned()
}

/// Signs in to the console: the password grant at the platform realm, as the public platform client.
async fn sign_in(app: &TestApp, username: &str, password: &str) -> Answer {
    let url = format!("{}/realms/platform/protocol/openid-connect/token", app.base);
    let form = [("grant_type", "password"), ("client_id", "platform"), ("username", username), ("password", password)];
    answer(app.http.post(url).form(&form).send().await.unwrap()).await
}

async fn console_token(app: &TestApp, username: &str) -> String {
    let signed_in = sign_in(app, username, PASSWORD).await;
    assert_eq!(signed_in.status, StatusCode::OK, "{:?}", signed_in.body);
    assert!(signed_in.body.get("refresh_token").is_none(), "the console gets no refresh token");
    signed_in.body["access_token"].as_str().unwrap().to_owned()
}

async fn as_bearer(app: &TestApp, token: &str, method: Method, path: &str, body: Option<Value>) -> Answer {
    let mut request = app.http.request(method, format!("{}{path}", app.admin)).bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    answer(request.send().await.unwrap()).await
}

#[tokio::test]
async fn an_invited_person_joins_the_team_and_signs_in_to_the_console() {
    let (app, mail) = spawn_mailing().await;
    let invited = app.post("/account/invitations", json!({ "email": "ada@example.com", "roles": ["Admin"] })).await;
    assert_eq!(invited.status, StatusCode::CREATED, "{:?}", invited.body);
    assert_eq!(
        (invited.data()["status"].as_str(), invited.data()["roles"].clone()),
        (Some("Pending"), json!(["Admin"]))
    );
    assert!(invited.data().get("token").is_none(), "the token travels only in the e-mail");
    let message = mail.letter(&app, "ada@example.com").await;
    assert!(message.data.contains("Subject: You are invited to join Default account"), "{}", message.data);
    assert_eq!(message.from, "no-reply@localhost", "from the configured sender");
    let token = token_in(&message);

    let joined = accept(&app, &token, "ada").await;
    assert_eq!(joined.status, StatusCode::CREATED, "{:?}", joined.body);
    let ada = joined.data()["userId"].as_str().unwrap().to_owned();
    assert_eq!(joined.data()["roles"], json!(["Admin"]));
    let again = accept(&app, &token, "ada2").await;
    assert_eq!(again.refused_fields(), vec![("token".to_owned(), "NotFound".to_owned())], "used once");

    let team = app.get("/account/members").await;
    let people: Vec<(&str, &Value)> =
        team.data().as_array().unwrap().iter().map(|m| (m["username"].as_str().unwrap(), &m["roles"])).collect();
    assert_eq!(people, vec![("owner", &json!(["Owner"])), ("ada", &json!(["Admin"]))]);
    let listed = app.get("/account/invitations").await;
    assert_eq!(listed.items()[0]["status"], "Accepted");
    assert_eq!(listed.items()[0]["acceptedUserId"], ada.as_str());

    // The person signs in to the console and acts with the roles of the team.
    assert_eq!(sign_in(&app, "ada", "wrong password").await.body["error"], "invalid_grant");
    let token = console_token(&app, "ada").await;
    assert_eq!(claims(&token)["sub"], ada.as_str());
    let created = as_bearer(&app, &token, Method::POST, "/realms", Some(json!({ "id": "ada-realm" }))).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let change = app.get("/audit-trail?resourceType=realm").await;
    let actor = &change.items()[0];
    assert_eq!((actor["actorType"].as_str(), actor["actorUserId"].as_str()), (Some("User"), Some(ada.as_str())));
    app.state.access_log.flush().await;
    let logged = app.get(&format!("/access-logs?actorUserId={ada}")).await;
    assert!(
        logged.items().iter().any(|e| e["path"] == "/api/v1/admin/realms" && e["status"] == 201),
        "{:?}",
        logged.body
    );
    let sign_ins: Vec<(&str, &str)> = logged
        .items()
        .iter()
        .filter(|e| e["path"] == "/realms/platform/protocol/openid-connect/token")
        .map(|e| (e["outcome"].as_str().unwrap(), e["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(sign_ins, vec![("Accepted", "console sign-in"), ("Refused", "InvalidCredentials")], "{:?}", logged.body);

    // An Admin cannot make anyone an Owner, nor close the account to its last Owner.
    let escalate = as_bearer(
        &app,
        &token,
        Method::POST,
        "/account/invitations",
        Some(json!({ "email": "x@example.com", "roles": ["Owner"] })),
    )
    .await;
    assert_eq!(escalate.refused_fields(), vec![("roles[0]".to_owned(), "Escalation".to_owned())]);
}

#[tokio::test]
async fn invitations_are_refused_clearly_and_lapse() {
    // Without an SMTP server nothing is stored and the answer says why.
    let app = spawn_app().await;
    let unsent = app.post("/account/invitations", json!({ "email": "ada@example.com", "roles": ["Admin"] })).await;
    assert_eq!((unsent.status, unsent.error_code()), (StatusCode::SERVICE_UNAVAILABLE, "ServiceUnavailable"));
    assert_eq!(app.get("/account/invitations").await.body["pagination"]["totalItems"], 0, "{:?}", unsent.body);

    let (app, mail) = spawn_mailing().await;
    let refused = app.post("/account/invitations", json!({ "email": "not-an-address", "roles": [] })).await;
    assert_eq!(
        refused.refused_fields(),
        vec![("email".to_owned(), "Format".to_owned()), ("roles".to_owned(), "MinLength".to_owned())]
    );
    let developer = app.key_with(&["Developer"], None).await;
    let body = json!({ "email": "bob@example.com", "roles": ["Developer"] });
    let forbidden = app.call_as(&developer, Method::POST, "/account/invitations", Some(body.clone())).await;
    assert_eq!(forbidden.status, StatusCode::FORBIDDEN, "a Developer does not govern the account");

    let first = app.post("/account/invitations", body.clone()).await;
    assert_eq!(first.status, StatusCode::CREATED);
    let duplicate = app.post("/account/invitations", body.clone()).await;
    assert_eq!(duplicate.refused_fields(), vec![("email".to_owned(), "Duplicate".to_owned())]);
    let revoked_token = token_in(&mail.letter(&app, "bob@example.com").await);
    let id = first.data()["id"].as_str().unwrap();
    assert_eq!(app.delete(&format!("/account/invitations/{id}")).await.status, StatusCode::OK);
    assert_eq!(app.delete(&format!("/account/invitations/{id}")).await.status, StatusCode::CONFLICT);
    assert_eq!(accept(&app, &revoked_token, "bob").await.refused_fields()[0].1, "NotFound");

    let second = app.post("/account/invitations", json!({ "email": "carol@example.com", "roles": ["Auditor"] })).await;
    assert_eq!(second.status, StatusCode::CREATED);
    let lapsing = token_in(&mail.letter(&app, "carol@example.com").await);
    app.advance(7 * 24 * 3600 + 1).await;
    assert_eq!(accept(&app, &lapsing, "carol").await.refused_fields()[0].1, "NotFound", "expired after 7 days");
    let listed = app.get("/account/invitations").await;
    let states: Vec<&str> = listed.items().iter().map(|i| i["status"].as_str().unwrap()).collect();
    assert_eq!(states, vec!["Expired", "Revoked"]);
}

#[tokio::test]
async fn members_roles_bound_their_console_and_their_personal_access_tokens() {
    let (app, mail) = spawn_mailing().await;
    let ada = join(&app, &mail, "ada@example.com", "ada", &["Admin"]).await;
    let token = console_token(&app, "ada").await;

    // A personal access token acts for the person who made it.
    let made = as_bearer(
        &app,
        &token,
        Method::POST,
        "/secrets",
        Some(json!({ "name": "laptop", "type": "PersonalAccessToken", "roles": ["Admin"] })),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{:?}", made.body);
    let pat = made.data()["value"].as_str().unwrap().to_owned();
    assert!(pat.starts_with("cstl_pat_"));
    let pat_id = made.data()["id"].as_str().unwrap().to_owned();
    let created = app.call_as(&pat, Method::POST, "/realms", Some(json!({ "id": "by-pat" }))).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    app.state.access_log.flush().await;
    let logged = app.get(&format!("/access-logs?credentialId={pat_id}")).await;
    assert_eq!(logged.items()[0]["actorUserId"], ada.as_str(), "{:?}", logged.body);
    let key =
        as_bearer(&app, &token, Method::POST, "/secrets", Some(json!({ "name": "ci", "roles": ["Admin"] }))).await;
    let key = key.data()["value"].as_str().unwrap().to_owned();

    // Demoted to Auditor: the console and the token read, and no longer act.
    let demoted = app.put(&format!("/account/members/{ada}"), json!({ "roles": ["Auditor"] })).await;
    assert_eq!(demoted.status, StatusCode::OK, "{:?}", demoted.body);
    assert_eq!(as_bearer(&app, &token, Method::GET, "/realms", None).await.status, StatusCode::OK);
    let console = as_bearer(&app, &token, Method::POST, "/realms", Some(json!({ "id": "x1" }))).await;
    assert_eq!(console.status, StatusCode::FORBIDDEN);
    assert_eq!(app.call_as(&pat, Method::GET, "/realms", None).await.status, StatusCode::OK);
    let by_pat = app.call_as(&pat, Method::POST, "/realms", Some(json!({ "id": "x2" }))).await;
    assert_eq!(by_pat.status, StatusCode::FORBIDDEN, "never beyond what the person holds now");

    // The last Owner stays; others can be removed, and their console and tokens stop at once.
    let owner = app.get("/account/members").await.data()[0]["userId"].as_str().unwrap().to_owned();
    let demote_owner = app.put(&format!("/account/members/{owner}"), json!({ "roles": ["Admin"] })).await;
    assert_eq!(demote_owner.status, StatusCode::CONFLICT);
    assert_eq!(app.delete(&format!("/account/members/{owner}")).await.status, StatusCode::CONFLICT);
    assert_eq!(app.delete(&format!("/account/members/{ada}")).await.status, StatusCode::OK);
    assert_eq!(as_bearer(&app, &token, Method::GET, "/realms", None).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(app.call_as(&pat, Method::GET, "/realms", None).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(sign_in(&app, "ada", PASSWORD).await.body["error"], "invalid_grant");
    // An API key the person made stays the account's, acting for no one: it cannot make a PAT.
    assert_eq!(app.call_as(&key, Method::GET, "/realms", None).await.status, StatusCode::OK);
    let orphan = app
        .call_as(
            &key,
            Method::POST,
            "/secrets",
            Some(json!({ "name": "p", "type": "PersonalAccessToken", "roles": ["Admin"] })),
        )
        .await;
    assert_eq!(orphan.refused_fields(), vec![("type".to_owned(), "Conflict".to_owned())]);
}

#[tokio::test]
async fn only_a_person_signed_in_to_the_console_impersonates() {
    let (app, mail) = spawn_mailing().await;
    app.create_realm("acme").await;
    let web = app.create_client("acme", "web", &["password"], &[]).await;
    let user = app.create_user("acme", "jo", "correct-horse-battery").await;
    join(&app, &mail, "ada@example.com", "ada", &["Admin"]).await;
    join(&app, &mail, "eve@example.com", "eve", &["Auditor"]).await;
    let path = format!("/realms/acme/users/{user}/impersonate");
    let body = json!({ "clientId": "web" });

    // Machine credentials are refused whatever their roles, and the attempt is recorded.
    let owner_key = app.post(&path, body.clone()).await;
    assert_eq!((owner_key.status, owner_key.error_code()), (StatusCode::FORBIDDEN, "ImpersonationActorNotAPerson"));
    let pat = app.post("/secrets", json!({ "name": "p", "type": "PersonalAccessToken", "roles": ["Owner"] })).await;
    let pat = pat.data()["value"].as_str().unwrap().to_owned();
    assert_eq!(
        app.call_as(&pat, Method::POST, &path, Some(body.clone())).await.error_code(),
        "ImpersonationActorNotAPerson"
    );
    let secret = app.post("/secrets", json!({ "name": "cs", "type": "ClientSecret", "roles": ["Owner"] })).await;
    let secret = secret.data()["value"].as_str().unwrap().to_owned();
    let platform = crate::support::TestClient { realm: "platform".into(), id: "platform".into(), secret };
    let bearer = app.token(&platform, &[("grant_type", "client_credentials")]).await;
    let bearer = bearer.body["access_token"].as_str().unwrap().to_owned();
    let refused = as_bearer(&app, &bearer, Method::POST, &path, Some(body.clone())).await;
    assert_eq!(refused.error_code(), "ImpersonationActorNotAPerson");
    let trail = app.get("/audit-trail?action=Impersonate").await;
    assert_eq!(trail.items().len(), 3, "{:?}", trail.body);
    assert!(trail.items().iter().all(|c| c["outcome"] == "Refused" && c["actorType"] == "Credential"));
    assert!(trail.items().iter().all(|c| c["resourceId"] == user.as_str()));

    // A person without the permission is refused as anyone would be.
    let eve = console_token(&app, "eve").await;
    let auditor = as_bearer(&app, &eve, Method::POST, &path, Some(body.clone())).await;
    assert_eq!(auditor.error_code(), "Forbidden");

    // A person of the team gets a short-lived token for the user that names them in `act`.
    let ada = console_token(&app, "ada").await;
    let ada_id = claims(&ada)["sub"].as_str().unwrap().to_owned();
    let events_before = app.events("admin_resource_created").await.len();
    let done = as_bearer(&app, &ada, Method::POST, &path, Some(body.clone())).await;
    assert_eq!(done.status, StatusCode::OK, "{:?}", done.body);
    assert!(done.data().get("refresh_token").is_none());
    assert!(done.data()["expires_in"].as_i64().unwrap() <= 300);
    let token = done.data()["access_token"].as_str().unwrap();
    let granted = claims(token);
    assert_eq!((granted["sub"].as_str(), granted["act"]["sub"].as_str()), (Some(user.as_str()), Some(ada_id.as_str())));
    assert_eq!(granted["client_id"], "web");
    let introspected = app.protocol(&web, "token/introspect", &[("token", token)]).await;
    assert_eq!(introspected.body["active"], true, "{:?}", introspected.body);
    crate::oauth::introspection::assert_describes(
        &crate::oauth::introspection::introspected(&app, &web, token, None).await,
        token,
    );
    let trail = app.get("/audit-trail?action=Impersonate").await;
    let succeeded: Vec<&Value> = trail.items().iter().filter(|c| c["outcome"] == "Succeeded").collect();
    assert_eq!(succeeded.len(), 1);
    assert_eq!(succeeded[0]["actorUserId"], ada_id.as_str());
    assert_eq!(app.events("admin_resource_created").await.len(), events_before, "an impersonation publishes no event");
    for kind in ["admin_resource_updated", "login_succeeded"] {
        assert!(app.events(kind).await.iter().all(|(_, _, data)| data["user_id"] != user.as_str()), "{kind}");
    }

    // The token lapses within five minutes; the team's own people are never impersonated.
    app.advance(301).await;
    let lapsed = app.protocol(&web, "token/introspect", &[("token", token)]).await;
    assert_eq!(lapsed.body["active"], false);
    let eve_id = claims(&eve)["sub"].as_str().unwrap().to_owned();
    let ada = console_token(&app, "ada").await;
    let team = as_bearer(
        &app,
        &ada,
        Method::POST,
        &format!("/realms/platform/users/{eve_id}/impersonate"),
        Some(json!({ "clientId": "platform" })),
    )
    .await;
    assert_eq!(team.status, StatusCode::FORBIDDEN);
}

/// An impersonation has no session: its liveness used to look only at the client, so a person
/// disabled or deleted after it was issued stayed signed in at introspection until it lapsed.
#[tokio::test]
async fn an_impersonation_goes_inactive_on_every_host_once_its_person_is_disabled_or_deleted() {
    let (app, mail) = spawn_mailing().await;
    app.create_realm("acme").await;
    let web = app.create_client("acme", "web", &["password"], &[]).await;
    let jo = app.create_user("acme", "jo", "correct-horse-battery").await;
    let kim = app.create_user("acme", "kim", "correct-horse-battery").await;
    join(&app, &mail, "ada@example.com", "ada", &["Admin"]).await;
    let ada = console_token(&app, "ada").await;
    let impersonate = |user: String| {
        let (app, ada) = (&app, ada.clone());
        async move {
            let path = format!("/realms/acme/users/{user}/impersonate");
            let done = as_bearer(app, &ada, Method::POST, &path, Some(json!({ "clientId": "web" }))).await;
            assert_eq!(done.status, StatusCode::OK, "{:?}", done.body);
            done.data()["access_token"].as_str().unwrap().to_owned()
        }
    };
    let (as_jo, as_kim) = (impersonate(jo.clone()).await, impersonate(kim.clone()).await);
    let second = crate::support::spawn_beside(&app).await;
    async fn active(host: &TestApp, web: &TestClient, token: String) -> Value {
        host.protocol(web, "token/introspect", &[("token", &token)]).await.body["active"].clone()
    }
    for host in [&app, &second] {
        assert_eq!(active(host, &web, as_jo.clone()).await, true);
        assert_eq!(active(host, &web, as_kim.clone()).await, true);
    }

    let disabled = app.put(&format!("/realms/acme/users/{jo}"), json!({ "status": "Disabled" })).await;
    assert_eq!(disabled.status, StatusCode::OK, "{:?}", disabled.body);
    assert_eq!(app.delete(&format!("/realms/acme/users/{kim}")).await.status, StatusCode::OK);
    for host in [&app, &second] {
        assert_eq!(active(host, &web, as_jo.clone()).await, false, "disabled");
        assert_eq!(active(host, &web, as_kim.clone()).await, false, "deleted");
        let userinfo = host
            .http
            .get(format!("{}/realms/acme/protocol/openid-connect/userinfo", host.base))
            .bearer_auth(&as_jo)
            .send()
            .await
            .unwrap();
        assert_eq!(userinfo.status(), StatusCode::UNAUTHORIZED);
    }
    // Enabled again, the person's impersonation is good again until it lapses.
    app.put(&format!("/realms/acme/users/{jo}"), json!({ "status": "Active" })).await;
    assert_eq!(active(&second, &web, as_jo.clone()).await, true);
}

#[tokio::test]
async fn a_disabled_client_webhook_raises_a_critical_notification_posted_unsigned() {
    let (app, _mail) = spawn_mailing().await;
    app.create_realm("hooks").await;
    app.create_client("hooks", "shop", &["client_credentials"], &[]).await;

    let preferences = app.get("/account/notification-preferences").await;
    assert_eq!(preferences.data(), &json!({ "attacksDetected": "InConsole" }));
    let refused = app
        .put(
            "/account/notification-preferences",
            json!({ "webhookUrl": "http://example.com/n", "attacksDetected": "Loudly" }),
        )
        .await;
    assert_eq!(
        refused.refused_fields(),
        vec![("webhookUrl".to_owned(), "Format".to_owned()), ("attacksDetected".to_owned(), "OneOf".to_owned())]
    );
    let inside = app.put("/account/notification-preferences", json!({ "webhookUrl": "https://10.0.0.1/n" })).await;
    assert_eq!(
        inside.refused_fields(),
        vec![("webhookUrl".to_owned(), "Format".to_owned())],
        "private addresses are refused"
    );
    let notified = Receiver::start().await;
    // The first post fails; the second, a minute later, goes through.
    notified.answer_with(503);
    let saved = app
        .put(
            "/account/notification-preferences",
            json!({ "webhookUrl": notified.url, "attacksDetected": "EmailAndWebhook" }),
        )
        .await;
    assert_eq!(saved.data(), &json!({ "webhookUrl": notified.url, "attacksDetected": "EmailAndWebhook" }));

    let failing = Receiver::start().await;
    failing.answer_with(500);
    let (id, _) =
        register(&app, SHOP_HOOKS, json!({ "name": "orders", "url": failing.url, "events": ["user_created"] })).await;
    for n in 1..=10 {
        assert_eq!(app.post(&format!("{SHOP_HOOKS}/{id}/test"), json!({})).await.status, StatusCode::CREATED);
        recorded(&app, SHOP_HOOKS, "Failed", n).await;
    }
    assert_eq!(app.get(&format!("{SHOP_HOOKS}/{id}")).await.data()["status"], "Disabled");

    let posted = notified.delivered(&app, 1).await;
    let body = posted[0].json();
    assert_eq!((body["type"].as_str(), body["severity"].as_str()), (Some("webhook_disabled"), Some("Critical")));
    assert_eq!((body["resource_id"].as_str(), body["realm_id"].as_str()), (Some(id.as_str()), Some("hooks")));
    for field in ["id", "title", "description", "created_at"] {
        assert!(body[field].as_str().is_some_and(|v| !v.is_empty()), "{field}: {body}");
    }
    assert_eq!(posted[0].header("x-service-signature"), "", "notification webhooks are not signed");
    assert_eq!(post_state(&app, "Pending", 1).await["type"], "webhook_disabled", "to be tried again");
    notified.answer_with(200);
    app.advance(59).await;
    assert_eq!(notified.received().len(), 1, "not before a minute has passed");
    app.advance(1).await;
    let posted = notified.delivered(&app, 2).await;
    assert_eq!(posted[1].body, posted[0].body, "the same post again");
    post_state(&app, "Sent", 2).await;
    let history = app.get(&format!("{SHOP_HOOKS}/deliveries?pageSize=200")).await;
    assert_eq!(history.items().len(), 10, "the notification is not in the delivery history");
    assert_eq!(notified.received().len(), 2, "raised once, when the endpoint was disabled");

    // A further failure of the disabled endpoint raises nothing more.
    assert_eq!(app.post(&format!("{SHOP_HOOKS}/{id}/test"), json!({})).await.status, StatusCode::CREATED);
    recorded(&app, SHOP_HOOKS, "Failed", 11).await;
    assert_eq!(app.get("/account/notifications").await.items().len(), 1);
}

/// The only notification, whose post must be in `state` after `attempts` once the posts due now
/// have run.
async fn post_state(app: &TestApp, state: &str, attempts: i64) -> Value {
    app.settle().await;
    let listed = app.get("/account/notifications").await;
    assert_eq!(listed.items().len(), 1, "{:?}", listed.body);
    let only = listed.items()[0].clone();
    assert_eq!((&only["webhookPost"], &only["webhookPostAttempts"]), (&json!(state), &json!(attempts)), "{only}");
    only
}

/// `count` failed sign-ins at `client` with names nobody has, five from each address (so that no
/// source is blocked), from addresses of `round`.
async fn fail_unknown(app: &TestApp, client: &TestClient, count: usize, round: usize) {
    for n in 0..count {
        let (from, name) = (format!("198.51.{round}.{}", n / 5), format!("nobody-{n}"));
        let response = app
            .http
            .post(format!("{}/realms/{}/protocol/openid-connect/token", app.base, client.realm))
            .basic_auth(&client.id, Some(&client.secret))
            .header("x-forwarded-for", from)
            .form(&[("grant_type", "password"), ("username", name.as_str()), ("password", "x")])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    }
}

async fn unusual_failures_reported(app: &TestApp) -> Vec<Value> {
    let listed = app.get("/account/notifications").await;
    listed.items().iter().filter(|n| n["type"] == "sign_in_failures_unusual").cloned().collect()
}

#[tokio::test]
async fn an_unusual_hour_of_failed_sign_ins_in_a_realm_is_reported_once_a_day() {
    let app = spawn_app().await;
    for realm in ["busy", "quiet"] {
        app.create_realm(realm).await;
    }
    let busy = app.create_client("busy", "shop", &["password"], &[]).await;
    let quiet = app.create_client("quiet", "shop", &["password"], &[]).await;
    fail_unknown(&app, &busy, 25, 1).await;
    fail_unknown(&app, &quiet, 10, 2).await;
    app.advance(3600).await;
    let first = unusual_failures_reported(&app).await;
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!((first[0]["resourceId"].as_str(), first[0]["severity"].as_str()), (Some("busy"), Some("Warning")));
    assert!(first[0]["description"].as_str().unwrap().starts_with("25 sign-ins failed in realm busy"), "{}", first[0]);
    fail_unknown(&app, &busy, 25, 3).await;
    app.advance(3600).await;
    assert_eq!(unusual_failures_reported(&app).await.len(), 1, "once a day for the realm");
}
