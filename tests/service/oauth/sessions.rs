//! `/realms/{realm}/sessions`.

use reqwest::StatusCode;
use serde_json::Value;

use crate::support::{TestApp, TestClient, spawn_app};

async fn sign_in(app: &TestApp, client: &TestClient) -> Value {
    let answer =
        app.token(client, &[("grant_type", "password"), ("username", "ada"), ("password", "analytical engine")]).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body
}

#[tokio::test]
async fn sessions_are_listed_read_and_revoked_and_revocation_ends_their_tokens_at_once() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "web", &["password", "refresh_token"], &[]).await;
    let user_id = app.create_user("acme", "ada", "analytical engine").await;
    let first = sign_in(&app, &client).await;
    let second = sign_in(&app, &client).await;

    let listed = app.get(&format!("/realms/acme/sessions?userId={user_id}")).await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    assert_eq!(listed.items().len(), 2);
    let session = &listed.items()[0];
    assert_eq!(session["status"], "Active");
    assert_eq!(session["clientId"], "web");
    assert_eq!(session["authenticationMethods"], serde_json::json!(["pwd"]));
    let introspected =
        app.protocol(&client, "token/introspect", &[("token", first["access_token"].as_str().unwrap())]).await;
    let sid = introspected.body["sid"].as_str().unwrap().to_owned();
    assert_eq!(app.get(&format!("/realms/acme/sessions/{sid}")).await.data()["id"], sid.as_str());

    assert_eq!(app.delete(&format!("/realms/acme/sessions/{sid}")).await.status, StatusCode::OK);
    let access = app.protocol(&client, "token/introspect", &[("token", first["access_token"].as_str().unwrap())]).await;
    assert_eq!(access.body["active"], false, "the revoked session's access token");
    let refresh = app
        .token(&client, &[("grant_type", "refresh_token"), ("refresh_token", first["refresh_token"].as_str().unwrap())])
        .await;
    assert_eq!(refresh.body["error"], "invalid_grant");
    let other = app.protocol(&client, "token/introspect", &[("token", second["access_token"].as_str().unwrap())]).await;
    assert_eq!(other.body["active"], true, "the other session lives on");

    let read = app.get(&format!("/realms/acme/sessions/{sid}")).await;
    assert_eq!(read.data()["status"], "Ended");
    assert_eq!(read.data()["endReason"], "revoked_by_administrator");
    assert_eq!(app.get("/realms/acme/sessions").await.items().len(), 1, "only open sessions are listed");
    let again = app.delete(&format!("/realms/acme/sessions/{sid}")).await;
    assert_eq!(again.status, StatusCode::CONFLICT);

    app.advance(36_001).await;
    assert!(app.get("/realms/acme/sessions").await.items().is_empty(), "expired sessions are not open");
}

#[tokio::test]
async fn sessions_of_another_realm_are_not_found_and_deleting_a_user_ends_theirs() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.create_realm("other").await;
    let client = app.create_client("acme", "web", &["password"], &[]).await;
    let user_id = app.create_user("acme", "ada", "analytical engine").await;
    let tokens = sign_in(&app, &client).await;
    let sid = app
        .protocol(&client, "token/introspect", &[("token", tokens["access_token"].as_str().unwrap())])
        .await
        .body["sid"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(app.get(&format!("/realms/other/sessions/{sid}")).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.delete(&format!("/realms/acme/users/{user_id}")).await.status, StatusCode::OK);
    let after = app.protocol(&client, "token/introspect", &[("token", tokens["access_token"].as_str().unwrap())]).await;
    assert_eq!(after.body["active"], false, "a deleted person's tokens are inactive");
}

#[tokio::test]
async fn tokens_checked_at_once_are_each_answered_from_their_own_session() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "web", &["password"], &[]).await;
    let mut tokens = Vec::new();
    for n in 0..6 {
        let name = format!("person-{n}");
        app.create_user("acme", &name, "analytical engine").await;
        for _ in 0..2 {
            let form = [("grant_type", "password"), ("username", name.as_str()), ("password", "analytical engine")];
            let answer = app.token(&client, &form).await;
            assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
            tokens.push((name.clone(), answer.body["access_token"].as_str().unwrap().to_owned()));
        }
    }
    // The first session of each person ends.
    for (_, token) in tokens.iter().step_by(2) {
        let introspected = app.protocol(&client, "token/introspect", &[("token", token)]).await;
        let sid = introspected.body["sid"].as_str().unwrap().to_owned();
        assert_eq!(app.delete(&format!("/realms/acme/sessions/{sid}")).await.status, StatusCode::OK);
    }

    // Checked together, so that their sessions are read in the same rounds.
    let forms: Vec<[(&str, &str); 1]> = tokens.iter().map(|(_, token)| [("token", token.as_str())]).collect();
    let answers =
        futures_util::future::join_all(forms.iter().map(|form| app.protocol(&client, "token/introspect", form))).await;
    for (index, ((name, _), answer)) in tokens.iter().zip(&answers).enumerate() {
        if index % 2 == 0 {
            assert_eq!(answer.body, serde_json::json!({ "active": false }), "{name}'s ended session");
        } else {
            assert_eq!(answer.body["active"], true, "{name}'s open session: {:?}", answer.body);
            assert_eq!(answer.body["username"], name.as_str(), "answered from {name}'s own session");
        }
    }
}

/// Userinfo and token exchange refused a disabled person's access token, but introspection kept
/// answering `active: true` until it expired.
#[tokio::test]
async fn a_disabled_persons_tokens_are_inactive_at_introspection_on_every_host_at_once() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "web", &["password", "refresh_token"], &[]).await;
    let user_id = app.create_user("acme", "ada", "analytical engine").await;
    let tokens = sign_in(&app, &client).await;
    let second = crate::support::spawn_beside(&app).await;
    let (access, refresh) = (tokens["access_token"].as_str().unwrap(), tokens["refresh_token"].as_str().unwrap());
    for token in [access, refresh] {
        assert_eq!(second.protocol(&client, "token/introspect", &[("token", token)]).await.body["active"], true);
    }

    let path = format!("/realms/acme/users/{user_id}");
    let disabled = app.put(&path, serde_json::json!({ "status": "Disabled" })).await;
    assert_eq!(disabled.status, StatusCode::OK, "{:?}", disabled.body);
    for host in [&app, &second] {
        for token in [access, refresh] {
            let answer = host.protocol(&client, "token/introspect", &[("token", token)]).await;
            assert_eq!(answer.body, serde_json::json!({ "active": false }), "{:?}", answer.body);
        }
    }
    // Enabled again, the session it never ended is good again.
    app.put(&path, serde_json::json!({ "status": "Active" })).await;
    assert_eq!(second.protocol(&client, "token/introspect", &[("token", access)]).await.body["active"], true);
}
