//! Suspensions of a person's use of a client: the Full level refuses every sign-in and token at the
//! client and ends its tokens at introspection at once; the Restricted level withholds scopes and
//! roles from new tokens; both start and end on the clock, can be lifted, and publish
//! `user_suspended` and `user_suspension_ended` with every field.

use chrono::{DateTime, Duration, Utc};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::oauth::browser::{Browser, VERIFIER, challenge, exchange, realm_with_clients, request};
use crate::support::{Answer, TestApp, TestClient, claims, created_id, spawn_app};

const PASSWORD: &str = "analytical engine";

/// The realm's clients: `web` signs people in with passwords and refresh tokens, `shop` too.
struct Realm {
    web: TestClient,
    shop: TestClient,
    ada: String,
}

async fn realm(app: &TestApp) -> Realm {
    app.create_realm("acme").await;
    let grants = ["password", "refresh_token"];
    let web = app.create_client("acme", "web", &grants, &["orders:read", "orders:write"]).await;
    let shop = app.create_client("acme", "shop", &grants, &["orders:read"]).await;
    let ada = app.create_user("acme", "ada", PASSWORD).await;
    Realm { web, shop, ada }
}

async fn sign_in(app: &TestApp, client: &TestClient, scope: &str) -> Answer {
    let form = [("grant_type", "password"), ("username", "ada"), ("password", PASSWORD), ("scope", scope)];
    app.token(client, &form).await
}

/// Ada's tokens at `client`, failing the test on a refusal.
async fn tokens(app: &TestApp, client: &TestClient, scope: &str) -> Value {
    let answer = sign_in(app, client, scope).await;
    assert_eq!(answer.status, StatusCode::OK, "{}: {:?}", client.id, answer.body);
    answer.body
}

async fn refresh(app: &TestApp, client: &TestClient, token: &Value) -> Answer {
    let refresh = token["refresh_token"].as_str().expect("a refresh token");
    app.token(client, &[("grant_type", "refresh_token"), ("refresh_token", refresh)]).await
}

async fn active(app: &TestApp, client: &TestClient, token: &Value) -> bool {
    let access = token["access_token"].as_str().expect("an access token");
    let answer = app.protocol(client, "token/introspect", &[("token", access)]).await;
    answer.body["active"].as_bool().expect("active")
}

fn path(client: &str, user: &str) -> String {
    format!("/realms/acme/clients/{client}/users/{user}/suspensions")
}

async fn suspend(app: &TestApp, client: &str, user: &str, body: Value) -> Value {
    let created = app.post(&path(client, user), body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    created.data().clone()
}

async fn lift(app: &TestApp, suspension: &Value) -> Answer {
    let (client, user, id) = (&suspension["clientId"], &suspension["userId"], &suspension["id"]);
    let lift = format!("{}/{}/lift", path(client.as_str().unwrap(), user.as_str().unwrap()), id.as_str().unwrap());
    app.post(&lift, json!({})).await
}

async fn read(app: &TestApp, suspension: &Value) -> Value {
    let (client, user, id) = (&suspension["clientId"], &suspension["userId"], &suspension["id"]);
    let one =
        app.get(&format!("{}/{}", path(client.as_str().unwrap(), user.as_str().unwrap()), id.as_str().unwrap())).await;
    assert_eq!(one.status, StatusCode::OK, "{:?}", one.body);
    one.data().clone()
}

fn refused_as_suspended(answer: &Answer) {
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{:?}", answer.body);
    assert_eq!(answer.body["error"], "invalid_grant", "{:?}", answer.body);
    assert_eq!(answer.body["error_code"], "UserSuspended", "{:?}", answer.body);
}

/// The `data` of the events of this type published for the suspension, with the client they name.
async fn events_of(app: &TestApp, event_type: &str, suspension: &Value) -> Vec<(Option<String>, Value)> {
    let all = app.events(event_type).await;
    all.into_iter()
        .filter(|(_, _, data)| data["id"] == suspension["id"])
        .map(|(_, client, data)| (client, data))
        .collect()
}

/// An instant `seconds` after a token's `iat`, as ISO 8601.
fn after(iat: &Value, seconds: i64) -> String {
    let at = DateTime::<Utc>::from_timestamp(iat.as_i64().unwrap(), 0).unwrap() + Duration::seconds(seconds);
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn roles(token: &Value) -> (Value, Value) {
    let claims = claims(token["access_token"].as_str().unwrap());
    (claims["realm_resource_access"]["roles"].clone(), claims["resource_access"].clone())
}

#[tokio::test]
async fn a_full_suspension_refuses_sign_in_refresh_and_introspection_at_its_client_only() {
    let app = spawn_app().await;
    let Realm { web, shop, ada } = realm(&app).await;
    let at_web = tokens(&app, &web, "orders:read").await;
    let at_shop = tokens(&app, &shop, "orders:read").await;

    let suspension = suspend(&app, "web", &ada, json!({ "level": "Full", "reason": "chargeback fraud" })).await;
    assert_eq!(suspension["status"], "Active");
    assert!(!active(&app, &web, &at_web).await, "the web token is inactive at once");
    assert!(active(&app, &shop, &at_shop).await, "another client's token is untouched");
    refused_as_suspended(&sign_in(&app, &web, "orders:read").await);
    refused_as_suspended(&refresh(&app, &web, &at_web).await);
    tokens(&app, &shop, "orders:read").await;
    let failed = app.events("login_failed").await;
    let (_, client, data) = failed.last().expect("a login_failed");
    assert_eq!((client.as_deref(), &data["failure_reason"]), (Some("web"), &json!("user_suspended")));

    let written = events_of(&app, "user_suspended", &suspension).await;
    let expected = json!({
        "id": suspension["id"], "user_id": ada, "level": "Full", "status": "Active",
        "starts_at": suspension["startsAt"], "ends_at": null, "restricted_scopes": [],
        "revokes_every_role": false, "revoked_role_ids": [], "sessions_terminated_at": null, "lifted_at": null,
    });
    assert_eq!(written, vec![(Some("web".to_owned()), expected)], "published once, to the client's endpoints");
    let created = app.events("admin_resource_created").await;
    let (_, _, change) = created.last().unwrap();
    assert_eq!((&change["resource_type"], &change["resource_id"]), (&json!("suspension"), &suspension["id"]));

    let lifted = lift(&app, &suspension).await;
    assert_eq!(lifted.status, StatusCode::OK, "{:?}", lifted.body);
    assert_eq!(lifted.data()["status"], "Lifted");
    let ended = events_of(&app, "user_suspension_ended", &suspension).await;
    assert_eq!(ended.len(), 1);
    let (client, data) = &ended[0];
    assert_eq!(client.as_deref(), Some("web"));
    assert_eq!((&data["status"], &data["lifted_at"]), (&json!("Lifted"), &lifted.data()["liftedAt"]));
    assert!(active(&app, &web, &at_web).await, "its session was not ended: the token is good again");
    let after_lift = refresh(&app, &web, &at_web).await;
    assert_eq!(after_lift.status, StatusCode::OK, "{:?}", after_lift.body);
    tokens(&app, &web, "orders:read").await;

    let again = lift(&app, &suspension).await;
    assert_eq!((again.status, again.error_code()), (StatusCode::CONFLICT, "SuspensionAlreadyEnded"));
    assert_eq!(events_of(&app, "user_suspension_ended", &suspension).await.len(), 1);
}

#[tokio::test]
async fn a_restricted_suspension_withholds_scopes_and_roles_from_new_tokens_until_lifted() {
    let app = spawn_app().await;
    let Realm { web, ada, .. } = realm(&app).await;
    let admin = created_id(&app, "/realms/acme/roles", json!({ "name": "admin" })).await;
    let clerk = created_id(&app, "/realms/acme/clients/web/roles", json!({ "name": "clerk" })).await;
    for role in [&admin, &clerk] {
        let granted = app.post(&format!("/realms/acme/users/{ada}/roles"), json!({ "roleId": role })).await;
        assert_eq!(granted.status, StatusCode::CREATED, "{:?}", granted.body);
    }
    let before = tokens(&app, &web, "orders:read orders:write").await;
    assert_eq!(roles(&before), (json!(["admin"]), json!({ "web": { "roles": ["clerk"] } })));

    let body = json!({ "level": "Restricted", "restrictedScopes": ["orders:write"], "revokedRoleIds": [admin] });
    let suspension = suspend(&app, "web", &ada, body).await;
    assert!(active(&app, &web, &before).await, "tokens already issued keep their scopes");
    let narrowed = tokens(&app, &web, "orders:read orders:write").await;
    assert_eq!(narrowed["scope"], "orders:read", "the answer names the scopes the token carries");
    assert_eq!(claims(narrowed["access_token"].as_str().unwrap())["scope"], "orders:read");
    assert_eq!(roles(&narrowed), (json!([]), json!({ "web": { "roles": ["clerk"] } })));
    let refreshed = refresh(&app, &web, &before).await;
    assert_eq!(refreshed.body["scope"], "orders:read", "{:?}", refreshed.body);

    assert_eq!(lift(&app, &suspension).await.status, StatusCode::OK);
    let refreshed = refresh(&app, &web, &refreshed.body).await;
    assert_eq!(refreshed.body["scope"], "orders:read orders:write", "the refresh token kept its grant");
    let restored = tokens(&app, &web, "orders:read orders:write").await;
    assert_eq!(roles(&restored), roles(&before), "lifting gives back what was withheld");

    suspend(&app, "web", &ada, json!({ "level": "Restricted", "revokesEveryRole": true })).await;
    let bare = tokens(&app, &web, "orders:read orders:write").await;
    assert_eq!(roles(&bare), (json!([]), json!({})));
    assert_eq!(bare["scope"], "orders:read orders:write");
    let roles_left = app.get(&format!("/realms/acme/users/{ada}/roles")).await;
    let direct = roles_left.data()["direct"].as_array().map(Vec::len);
    assert_eq!(direct, Some(2), "the assignments themselves stay: {:?}", roles_left.body);
}

#[tokio::test]
async fn a_scheduled_suspension_starts_and_runs_out_on_the_clock_with_both_events() {
    let app = spawn_app().await;
    let Realm { web, ada, .. } = realm(&app).await;
    let early = tokens(&app, &web, "orders:read").await;
    let iat = claims(early["access_token"].as_str().unwrap())["iat"].clone();
    let body = json!({
        "level": "Full", "startsAt": after(&iat, 3600), "endsAt": after(&iat, 7200), "terminateSessions": true,
    });
    let suspension = suspend(&app, "web", &ada, body).await;
    assert_eq!(suspension["status"], "Scheduled");
    let written = events_of(&app, "user_suspended", &suspension).await;
    assert_eq!(written[0].1["status"], "Scheduled", "announced when written");
    assert!(active(&app, &web, &early).await);
    tokens(&app, &web, "orders:read").await;

    app.advance(3600 + 15).await;
    let started = read(&app, &suspension).await;
    assert_eq!(started["status"], "Active");
    assert!(started["sessionsTerminatedAt"].is_string(), "{started:?}");
    refused_as_suspended(&sign_in(&app, &web, "orders:read").await);
    assert!(!active(&app, &web, &early).await);
    assert!(events_of(&app, "user_suspension_ended", &suspension).await.is_empty());

    app.advance(3600).await;
    let ended = read(&app, &suspension).await;
    assert_eq!(ended["status"], "Ended");
    let announced = events_of(&app, "user_suspension_ended", &suspension).await;
    assert_eq!(announced.len(), 1, "announced once");
    let data = &announced[0].1;
    assert_eq!((&data["status"], &data["lifted_at"]), (&json!("Ended"), &Value::Null));
    assert_eq!(data["sessions_terminated_at"], started["sessionsTerminatedAt"]);
    assert_eq!(data["ends_at"], suspension["endsAt"]);
    tokens(&app, &web, "orders:read").await;
    assert!(!active(&app, &web, &early).await, "the sessions it ended stay ended");
    let ended_session = refresh(&app, &web, &early).await;
    assert_eq!(ended_session.body["error_code"], "InvalidRefreshToken", "{:?}", ended_session.body);
    let late = lift(&app, &suspension).await;
    assert_eq!((late.status, late.error_code()), (StatusCode::CONFLICT, "SuspensionAlreadyEnded"));

    app.advance(3600).await;
    assert_eq!(events_of(&app, "user_suspension_ended", &suspension).await.len(), 1, "never announced twice");
    let listed = |status: &'static str| {
        let app = &app;
        async move {
            let page = app.get(&format!("/suspensions?realmId=acme&status={status}")).await;
            assert_eq!(page.status, StatusCode::OK, "{:?}", page.body);
            page.items().iter().map(|s| s["id"].clone()).collect::<Vec<_>>()
        }
    };
    assert_eq!(listed("Ended").await, vec![suspension["id"].clone()]);
    assert!(listed("Active").await.is_empty());
}

#[tokio::test]
async fn a_full_suspension_sends_the_browser_back_with_access_denied() {
    let app = spawn_app().await;
    let (web, shop) = realm_with_clients(&app).await;
    let ada = app.get("/realms/acme/users?searchTerm=ada").await.items()[0]["id"].as_str().unwrap().to_owned();
    let mut browser = Browser::new(&app);
    let pkce = challenge(VERIFIER);
    let page = browser.authorize("acme", &request("web", "s-1", "n-1", &pkce)).await;
    let signed_in = browser.sign_in("acme", &page, "ada", PASSWORD).await;
    let code = signed_in.param("code").expect("a code");

    suspend(&app, "web", &ada, json!({ "level": "Full" })).await;
    let refused = exchange(&app, &web, &code, VERIFIER).await;
    refused_as_suspended(&refused);
    let again = browser.authorize("acme", &request("web", "s-2", "n-2", &pkce)).await;
    assert_eq!(again.status, StatusCode::SEE_OTHER, "{}", again.body);
    assert_eq!(
        (again.param("error").as_deref(), again.param("state").as_deref()),
        (Some("access_denied"), Some("s-2"))
    );
    assert!(again.param("code").is_none());

    let elsewhere = browser.authorize("acme", &request("shop", "s-3", "n-3", &pkce)).await;
    let code = elsewhere.param("code").expect("the browser is still signed in for other clients");
    assert_eq!(exchange(&app, &shop, &code, VERIFIER).await.status, StatusCode::OK);
}

#[tokio::test]
async fn suspensions_are_checked_field_by_field_and_need_user_update() {
    let app = spawn_app().await;
    let Realm { ada, .. } = realm(&app).await;
    let elsewhere = created_id(&app, "/realms/acme/clients/shop/roles", json!({ "name": "buyer" })).await;
    let empty = app.post(&path("web", &ada), json!({})).await;
    assert!(empty.refused_fields().contains(&("level".into(), "Required".into())), "{:?}", empty.body);
    let cases = [
        (json!({ "level": "Frozen" }), "level", "OneOf"),
        (json!({ "level": "Restricted" }), "restrictedScopes", "Required"),
        (json!({ "level": "Full", "startsAt": "2001-01-01T00:00:00Z" }), "startsAt", "Range"),
        (json!({ "level": "Full", "endsAt": "2001-01-01T00:00:00Z" }), "endsAt", "Range"),
        (json!({ "level": "Full", "endsAt": "soon" }), "endsAt", "Format"),
        (json!({ "level": "Full", "revokedRoleIds": [elsewhere] }), "revokedRoleIds[0]", "NotFound"),
        (json!({ "level": "Full", "revokesEveryRole": true, "revokedRoleIds": ["x"] }), "revokedRoleIds", "Conflict"),
        (json!({ "level": "Restricted", "restrictedScopes": ["has space"] }), "restrictedScopes[0]", "Pattern"),
        (json!({ "level": "Full", "colour": "red" }), "colour", "Unknown"),
    ];
    for (body, field, rule) in cases {
        let refused = app.post(&path("web", &ada), body.clone()).await;
        assert_eq!(refused.error_code(), "ValidationFailed", "{body}: {:?}", refused.body);
        assert!(refused.refused_fields().contains(&(field.into(), rule.into())), "{body}: {:?}", refused.body);
    }
    let ghost = "01900000-0000-7000-8000-000000000000";
    assert_eq!(app.post(&path("web", ghost), json!({ "level": "Full" })).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.post(&path("ghost", &ada), json!({ "level": "Full" })).await.status, StatusCode::FORBIDDEN);
    assert!(app.get("/suspensions").await.items().is_empty(), "nothing refused was written");

    let reader = app.key_with(&["Auditor"], None).await;
    let refused =
        app.call_as(&reader, reqwest::Method::POST, &path("web", &ada), Some(json!({ "level": "Full" }))).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{:?}", refused.body);
    let first = suspend(&app, "web", &ada, json!({ "level": "Full" })).await;
    let second = suspend(&app, "shop", &ada, json!({ "level": "Full" })).await;
    let mine = app.get(&path("web", &ada)).await;
    assert_eq!(mine.items().iter().map(|s| &s["id"]).collect::<Vec<_>>(), vec![&first["id"]]);
    let all = app.call_as(&reader, reqwest::Method::GET, "/suspensions?clientId=shop", None).await;
    assert_eq!(all.items().iter().map(|s| &s["id"]).collect::<Vec<_>>(), vec![&second["id"]]);
    let bad = app.get("/suspensions?status=Sleeping").await;
    assert!(bad.refused_fields().contains(&("status".into(), "OneOf".into())), "{:?}", bad.body);
}

#[tokio::test]
async fn the_clients_endpoint_receives_both_events_with_every_field() {
    let app =
        crate::support::spawn_with(crate::support::TestDatabase::new().await, crate::operations::webhooks::receiving)
            .await;
    let Realm { ada, .. } = realm(&app).await;
    let receiver = crate::support::receiver::Receiver::start().await;
    let events = ["user_suspended", "user_suspension_ended"];
    crate::operations::webhooks::register(
        &app,
        "/realms/acme/clients/web/webhooks",
        json!({ "name": "Trust and safety", "url": receiver.url, "events": events }),
    )
    .await;

    let suspension =
        suspend(&app, "web", &ada, json!({ "level": "Restricted", "restrictedScopes": ["orders:write"] })).await;
    assert_eq!(lift(&app, &suspension).await.status, StatusCode::OK);
    let delivered = receiver.delivered(&app, 2).await;
    // Deliveries run side by side: they arrive in any order.
    let mut bodies: Vec<Value> = delivered.iter().map(crate::support::receiver::Delivery::json).collect();
    bodies.sort_by_key(|body| body["type"] != "user_suspended");
    let fields = [
        "id",
        "user_id",
        "level",
        "status",
        "starts_at",
        "ends_at",
        "restricted_scopes",
        "revokes_every_role",
        "revoked_role_ids",
        "sessions_terminated_at",
        "lifted_at",
    ];
    for (body, (event, status)) in
        bodies.iter().zip([("user_suspended", "Active"), ("user_suspension_ended", "Lifted")])
    {
        assert_eq!((body["type"].as_str(), body["client_id"].as_str()), (Some(event), Some("web")), "{body}");
        let data = body["data"].as_object().unwrap();
        assert_eq!(data.keys().map(String::as_str).collect::<Vec<_>>(), fields, "every field, in the table's order");
        assert_eq!((&data["status"], &data["restricted_scopes"]), (&json!(status), &json!(["orders:write"])));
    }
    assert!(bodies[0]["data"]["lifted_at"].is_null() && bodies[1]["data"]["lifted_at"].is_string());
}
