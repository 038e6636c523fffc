//! The token service: discovery, JWKS, the token endpoint's grants, introspection, revocation,
//! userinfo and the realm lockout.

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{DecodingKey, Validation};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{TestApp, TestClient, spawn_app};

/// Verifies `token` the way a relying party does, knowing only the realm's discovery address:
/// discovery → `jwks_uri` → the key named by `kid` → signature and issuer.
async fn verify_with_discovery(app: &TestApp, realm: &str, token: &str) -> Value {
    let discovery = app.discovery(realm).await;
    let jwks: JwkSet =
        app.http.get(discovery["jwks_uri"].as_str().unwrap()).send().await.unwrap().json().await.unwrap();
    let header = jsonwebtoken::decode_header(token).unwrap();
    let jwk = jwks.find(header.kid.as_deref().unwrap()).expect("the signing key is published");
    let mut validation = Validation::new(header.alg);
    validation.set_issuer(&[discovery["issuer"].as_str().unwrap()]);
    validation.validate_aud = false;
    validation.validate_exp = false; // the service runs on the manual clock
    jsonwebtoken::decode::<Value>(token, &DecodingKey::from_jwk(jwk).unwrap(), &validation).unwrap().claims
}

async fn realm_with_person(app: &TestApp) -> (TestClient, String) {
    app.create_realm("acme").await;
    let client =
        app.create_client("acme", "web", &["password", "refresh_token", "client_credentials"], &["orders:read"]).await;
    let user = app.create_user("acme", "ada", "analytical engine").await;
    (client, user)
}

async fn sign_in(app: &TestApp, client: &TestClient, scope: &str) -> Value {
    let answer = app
        .token(
            client,
            &[("grant_type", "password"), ("username", "ada"), ("password", "analytical engine"), ("scope", scope)],
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body
}

#[tokio::test]
async fn discovery_names_every_endpoint_under_the_realm_issuer() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let document =
        app.http.get(format!("{}/realms/acme/.well-known/openid-configuration", app.base)).send().await.unwrap();
    assert_eq!(document.status(), StatusCode::OK);
    let document: Value = document.json().await.unwrap();
    let issuer = format!("{}/realms/acme", app.base);
    assert_eq!(document["issuer"], issuer.as_str());
    for (field, path) in [
        ("token_endpoint", "token"),
        ("jwks_uri", "certs"),
        ("introspection_endpoint", "token/introspect"),
        ("revocation_endpoint", "revoke"),
        ("userinfo_endpoint", "userinfo"),
        ("authorization_endpoint", "auth"),
    ] {
        assert_eq!(document[field], format!("{issuer}/protocol/openid-connect/{path}"));
    }
    // `none`: a public client names itself at the token endpoint, with a PKCE verifier for proof;
    // `private_key_jwt`: a client holding keys signs an assertion with one.
    assert_eq!(
        document["token_endpoint_auth_methods_supported"],
        json!(["client_secret_basic", "client_secret_post", "private_key_jwt", "none"])
    );
    for endpoint in ["introspection", "revocation"] {
        let methods = &document[format!("{endpoint}_endpoint_auth_methods_supported")];
        assert_eq!(methods, &json!(["client_secret_basic", "client_secret_post", "private_key_jwt"]));
    }
    // Registration is named only where the realm takes it.
    assert!(document.get("registration_endpoint").is_none());
    let missing =
        app.http.get(format!("{}/realms/nowhere/.well-known/openid-configuration", app.base)).send().await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn client_credentials_give_an_rfc_9068_token_that_verifies_through_discovery() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "agent", &["client_credentials"], &["orders:read", "orders:write"]).await;
    let answer = app.token(&client, &[("grant_type", "client_credentials"), ("scope", "orders:read")]).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(answer.headers["cache-control"], "no-store");
    assert_eq!(answer.body["token_type"], "Bearer");
    assert_eq!(answer.body["expires_in"], 300);
    assert_eq!(answer.body["scope"], "orders:read");
    assert!(answer.body.get("refresh_token").is_none(), "no refresh token for client credentials");
    let token = answer.body["access_token"].as_str().unwrap();

    let header = jsonwebtoken::decode_header(token).unwrap();
    assert_eq!(header.typ.as_deref(), Some("at+jwt"));
    assert_eq!(header.alg, jsonwebtoken::Algorithm::ES256);
    let claims = verify_with_discovery(&app, "acme", token).await;
    assert_eq!(claims["iss"], format!("{}/realms/acme", app.base));
    assert_eq!(claims["sub"], "agent");
    assert_eq!(claims["client_id"], "agent");
    assert_eq!(claims["azp"], "agent");
    assert_eq!(claims["scope"], "orders:read");
    assert_eq!(claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(), 300);
    assert!(claims["jti"].as_str().is_some_and(|j| !j.is_empty()));

    let logins = app.events("login_succeeded").await;
    assert_eq!(logins.len(), 1);
    assert_eq!(logins[0].1.as_deref(), Some("agent"));
    assert_eq!(logins[0].2["grant_type"], "client_credentials");
}

#[tokio::test]
async fn an_rs256_client_signs_with_rsa_and_both_keys_are_in_the_realm_jwks() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let es = app.create_client("acme", "es", &["client_credentials"], &[]).await;
    let rs = app.create_client("acme", "rs", &["client_credentials"], &[]).await;
    let changed = app.put("/realms/acme/clients/rs", json!({ "signingKey": { "algorithm": "RS256" } })).await;
    assert_eq!(changed.status, StatusCode::OK, "{:?}", changed.body);
    assert_eq!(changed.data()["signingKey"]["algorithm"], "RS256");
    // A change of algorithm is a rotation: the RSA key is published first and signs after the lead.
    let before = app.token(&rs, &[("grant_type", "client_credentials")]).await.body["access_token"].clone();
    assert_eq!(jsonwebtoken::decode_header(before.as_str().unwrap()).unwrap().alg, jsonwebtoken::Algorithm::ES256);
    app.advance(castellan::directory::keys::NEXT_KEY_LEAD.num_seconds()).await;
    let es_token = app.token(&es, &[("grant_type", "client_credentials")]).await.body["access_token"].clone();
    let rs_token = app.token(&rs, &[("grant_type", "client_credentials")]).await.body["access_token"].clone();
    let rs_token = rs_token.as_str().unwrap();
    assert_eq!(jsonwebtoken::decode_header(rs_token).unwrap().alg, jsonwebtoken::Algorithm::RS256);
    assert_eq!(verify_with_discovery(&app, "acme", rs_token).await["sub"], "rs");
    assert_eq!(verify_with_discovery(&app, "acme", es_token.as_str().unwrap()).await["sub"], "es");
    let jwks = app.jwks("acme").await;
    let types: Vec<&str> = jwks["keys"].as_array().unwrap().iter().map(|k| k["kty"].as_str().unwrap()).collect();
    assert!(types.contains(&"EC") && types.contains(&"RSA"), "{jwks}");
    assert!(!jwks.to_string().contains("\"d\""), "no private key material");
}

#[tokio::test]
async fn client_authentication_works_by_basic_and_by_body_and_refuses_everything_else() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let by_body = app
        .http
        .post(&url)
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", "agent"),
            ("client_secret", client.secret.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(by_body.status(), StatusCode::OK);

    let wrong = TestClient { secret: "cstl_cs_wrong".into(), ..client };
    let refused = app.token(&wrong, &[("grant_type", "client_credentials")]).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert_eq!(refused.body["error"], "invalid_client");
    assert_eq!(refused.body["error_code"], "InvalidClient");
    assert!(refused.headers["www-authenticate"].to_str().unwrap().starts_with("Basic"));

    let both = app
        .http
        .post(&url)
        .basic_auth("agent", Some(&wrong.secret))
        .form(&[("grant_type", "client_credentials"), ("client_id", "agent"), ("client_secret", "x")])
        .send()
        .await
        .unwrap();
    assert_eq!(both.status(), StatusCode::BAD_REQUEST);
    let json_body = app.http.post(&url).json(&json!({ "grant_type": "client_credentials" })).send().await.unwrap();
    assert_eq!(json_body.status(), StatusCode::BAD_REQUEST);
    let body: Value = json_body.json().await.unwrap();
    assert_eq!(body["error"], "invalid_request");
}

#[tokio::test]
async fn grants_and_scopes_are_limited_to_what_the_client_may_use() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "agent", &["client_credentials"], &["orders:read"]).await;
    let disabled = app.token(&client, &[("grant_type", "password"), ("username", "x"), ("password", "y")]).await;
    assert_eq!(
        (disabled.body["error"].as_str(), disabled.body["error_code"].as_str()),
        (Some("unauthorized_client"), Some("GrantTypeDisabled"))
    );
    let unknown = app.token(&client, &[("grant_type", "urn:example:magic")]).await;
    assert_eq!(unknown.body["error"], "unsupported_grant_type");
    let excess =
        app.token(&client, &[("grant_type", "client_credentials"), ("scope", "orders:read orders:delete")]).await;
    assert_eq!(excess.status, StatusCode::BAD_REQUEST);
    assert_eq!(excess.body["error"], "invalid_scope");
    assert!(excess.body["error_description"].as_str().unwrap().contains("orders:delete"), "the excess is named");
    let target =
        app.token(&client, &[("grant_type", "client_credentials"), ("resource", "https://api.example.com")]).await;
    assert_eq!(target.body["error"], "invalid_target");
    let missing = app.token(&client, &[]).await;
    assert_eq!(missing.body["error"], "invalid_request");
    let repeated =
        app.token(&client, &[("grant_type", "client_credentials"), ("grant_type", "client_credentials")]).await;
    assert_eq!(repeated.body["error"], "invalid_request");
}

#[tokio::test]
async fn a_password_sign_in_opens_a_session_and_gives_access_refresh_and_id_tokens() {
    let app = spawn_app().await;
    let (client, user_id) = realm_with_person(&app).await;
    let tokens = sign_in(&app, &client, "openid profile email orders:read").await;
    let access = verify_with_discovery(&app, "acme", tokens["access_token"].as_str().unwrap()).await;
    assert_eq!(access["sub"], user_id.as_str());
    assert!(access["sid"].as_str().is_some());
    let id_token = verify_with_discovery(&app, "acme", tokens["id_token"].as_str().unwrap()).await;
    assert_eq!(id_token["aud"], "web");
    assert_eq!(id_token["preferred_username"], "ada");
    assert_eq!(id_token["email"], "ada@example.com");
    assert_eq!(id_token["sid"], access["sid"]);
    assert!(tokens["refresh_token"].as_str().is_some());

    let sessions = app.get(&format!("/realms/acme/sessions?userId={user_id}")).await;
    assert_eq!(sessions.status, StatusCode::OK, "{:?}", sessions.body);
    assert_eq!(sessions.items().len(), 1, "one session opened");
    assert_eq!(sessions.items()[0]["id"], access["sid"]);
    let login = &app.events("login_succeeded").await[0].2;
    assert_eq!(login["grant_type"], "password");
    assert_eq!(login["user_id"], user_id.as_str());
    assert_eq!(login["session_id"], access["sid"]);
    assert_eq!(login["authentication_methods"], json!(["pwd"]));
    assert_eq!(login["ip_address"], "127.0.0.1");
    for field in [
        "username",
        "email",
        "user_agent",
        "failure_reason",
        "resource",
        "scopes",
        "acr",
        "identity_provider",
        "consumer_id",
        "consumer_name",
    ] {
        assert!(login.get(field).is_some(), "login_succeeded carries {field}");
    }

    let userinfo: Value = app
        .http
        .get(format!("{}/realms/acme/protocol/openid-connect/userinfo", app.base))
        .bearer_auth(tokens["access_token"].as_str().unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(userinfo["sub"], user_id.as_str());
    assert_eq!(userinfo["email"], "ada@example.com");
}

#[tokio::test]
async fn wrong_passwords_unknown_people_and_required_changes_are_refused_and_recorded() {
    let app = spawn_app().await;
    let (client, user_id) = realm_with_person(&app).await;
    let wrong = app.token(&client, &[("grant_type", "password"), ("username", "ada"), ("password", "wrong")]).await;
    assert_eq!((wrong.status, wrong.body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")));
    let nobody = app.token(&client, &[("grant_type", "password"), ("username", "nobody"), ("password", "wrong")]).await;
    assert_eq!(nobody.body, wrong.body, "an unknown person gets the same answer");
    app.put(&format!("/realms/acme/users/{user_id}"), json!({ "mustChangePassword": true })).await;
    let change =
        app.token(&client, &[("grant_type", "password"), ("username", "ada"), ("password", "analytical engine")]).await;
    assert_eq!(change.body["error_code"], "PasswordChangeRequired");
    let failures = app.events("login_failed").await;
    let reasons: Vec<&str> = failures.iter().map(|(_, _, d)| d["failure_reason"].as_str().unwrap()).collect();
    assert_eq!(reasons, ["invalid_credentials", "invalid_credentials", "password_change_required"]);
    assert_eq!(failures[0].2["user_id"], user_id.as_str());
    assert_eq!(failures[1].2["user_id"], Value::Null);
}

#[tokio::test]
async fn refresh_tokens_rotate_and_a_reused_one_ends_the_session() {
    let app = spawn_app().await;
    let (client, _) = realm_with_person(&app).await;
    let first = sign_in(&app, &client, "orders:read").await;
    let first_refresh = first["refresh_token"].as_str().unwrap();
    let (named, _) = first_refresh.split_once('.').unwrap();
    let forged = format!("{named}.{}", "A".repeat(43));
    let refused = app.token(&client, &[("grant_type", "refresh_token"), ("refresh_token", &forged)]).await;
    assert_eq!(refused.body["error_code"], "InvalidRefreshToken", "the id alone proves nothing");
    let second = app.token(&client, &[("grant_type", "refresh_token"), ("refresh_token", first_refresh)]).await;
    assert_eq!(second.status, StatusCode::OK, "{:?}", second.body);
    let second_refresh = second.body["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(second_refresh, first_refresh, "rotated");
    let access = second.body["access_token"].as_str().unwrap().to_owned();
    let active = app.protocol(&client, "token/introspect", &[("token", &access)]).await;
    assert_eq!(active.body["active"], true);

    let replay = app.token(&client, &[("grant_type", "refresh_token"), ("refresh_token", first_refresh)]).await;
    assert_eq!(replay.body["error"], "invalid_grant");
    assert_eq!(replay.body["error_code"], "RefreshTokenReused");
    let reuse = app.events("token_reuse_detected").await;
    assert_eq!(reuse.len(), 1);
    assert_eq!(reuse[0].2["session_id"], active.body["sid"]);
    // The session is over: the newest refresh token and the access token are dead too.
    let after = app.token(&client, &[("grant_type", "refresh_token"), ("refresh_token", &second_refresh)]).await;
    assert_eq!(after.body["error"], "invalid_grant");
    let inactive = app.protocol(&client, "token/introspect", &[("token", &access)]).await;
    assert_eq!(inactive.body, json!({ "active": false }));
}

#[tokio::test]
async fn introspection_reports_inactive_for_expired_foreign_and_unknown_tokens() {
    let app = spawn_app().await;
    let (client, _) = realm_with_person(&app).await;
    let other_realm = {
        app.create_realm("other").await;
        app.create_client("other", "web", &["client_credentials"], &[]).await
    };
    let tokens = sign_in(&app, &client, "orders:read").await;
    let access = tokens["access_token"].as_str().unwrap();
    let active = app.protocol(&client, "token/introspect", &[("token", access)]).await;
    assert_eq!(active.status, StatusCode::OK);
    assert_eq!(active.body["active"], true);
    assert_eq!(active.body["username"], "ada");
    assert_eq!(active.body["scope"], "orders:read");
    assert_eq!(active.body["client_id"], "web");
    let refresh =
        app.protocol(&client, "token/introspect", &[("token", tokens["refresh_token"].as_str().unwrap())]).await;
    assert_eq!(refresh.body["active"], true);
    assert_eq!(refresh.body["token_type"], "refresh_token");

    let elsewhere = app.protocol(&other_realm, "token/introspect", &[("token", access)]).await;
    assert_eq!(elsewhere.body, json!({ "active": false }), "a token of another realm");
    let garbage = app.protocol(&client, "token/introspect", &[("token", "not.a.token")]).await;
    assert_eq!(garbage.body, json!({ "active": false }));
    let unauthenticated = app
        .http
        .post(format!("{}/realms/acme/protocol/openid-connect/token/introspect", app.base))
        .form(&[("token", access)])
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status(), StatusCode::UNAUTHORIZED);

    app.advance(301).await;
    let expired = app.protocol(&client, "token/introspect", &[("token", access)]).await;
    assert_eq!(expired.body, json!({ "active": false }), "expired by the service's clock");
}

#[tokio::test]
async fn revocation_deactivates_access_tokens_and_ends_sessions_of_refresh_tokens() {
    let app = spawn_app().await;
    let (client, _) = realm_with_person(&app).await;
    let tokens = sign_in(&app, &client, "orders:read").await;
    let access = tokens["access_token"].as_str().unwrap();
    let revoked = app.protocol(&client, "revoke", &[("token", access), ("token_type_hint", "access_token")]).await;
    assert_eq!(revoked.status, StatusCode::OK);
    let check = app.protocol(&client, "token/introspect", &[("token", access)]).await;
    assert_eq!(check.body["active"], false);
    let event = &app.events("token_revoked").await[0].2;
    assert_eq!(event["token_type_hint"], "access_token");
    assert!(event["token_id"].as_str().is_some());

    let again = sign_in(&app, &client, "orders:read").await;
    let refresh = again["refresh_token"].as_str().unwrap();
    assert_eq!(app.protocol(&client, "revoke", &[("token", refresh)]).await.status, StatusCode::OK);
    let session_access = again["access_token"].as_str().unwrap();
    assert_eq!(app.protocol(&client, "token/introspect", &[("token", session_access)]).await.body["active"], false);
    let refreshed = app.token(&client, &[("grant_type", "refresh_token"), ("refresh_token", refresh)]).await;
    assert_eq!(refreshed.body["error"], "invalid_grant");
    let unknown = app.protocol(&client, "revoke", &[("token", "whatever")]).await;
    assert_eq!(unknown.status, StatusCode::OK, "RFC 7009: an invalid token is not an error");
}

#[tokio::test]
async fn the_realm_lockout_applies_per_unapproved_address_and_lifts_with_time() {
    let app = spawn_app().await;
    let (client, _) = realm_with_person(&app).await;
    app.put("/realms/acme", json!({ "maxFailedAttempts": 3, "lockoutDurationMinutes": 10 })).await;
    let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let attempt = |from: &'static str, password: &'static str| {
        let request = app
            .http
            .post(&url)
            .basic_auth(&client.id, Some(&client.secret))
            .header("x-forwarded-for", from)
            .form(&[("grant_type", "password"), ("username", "ada"), ("password", password)]);
        async move {
            let response = request.send().await.unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        }
    };
    // 203.0.113.9 signs in once: it is approved for ada and never locked out.
    assert_eq!(attempt("203.0.113.9", "analytical engine").await.0, StatusCode::OK);
    for _ in 0..3 {
        assert_eq!(attempt("198.51.100.7", "wrong").await.1["error_code"], "InvalidCredentials");
    }
    let locked = attempt("198.51.100.7", "analytical engine").await;
    assert_eq!(locked.1["error_code"], "UserTemporarilyLocked", "even the right password waits");
    for _ in 0..4 {
        attempt("203.0.113.9", "wrong").await;
    }
    assert_eq!(attempt("203.0.113.9", "analytical engine").await.0, StatusCode::OK, "an approved address");
    let locked_out = app.events("user_locked_out").await;
    assert_eq!(locked_out.len(), 1);
    assert_eq!(locked_out[0].2["access_failed_count"], 3);
    assert!(locked_out[0].2["lockout_end"].as_str().is_some());

    app.advance(10 * 60 + 1).await;
    assert_eq!(attempt("198.51.100.7", "analytical engine").await.0, StatusCode::OK, "the lock has run out");
}

/// Six wrong passwords from one address: an existing account answered `UserTemporarilyLocked`
/// with the hash skipped, a name the realm never had kept answering `InvalidCredentials`, which
/// told which accounts exist. A typed name the realm does not have is now locked out the same way.
#[tokio::test]
async fn the_realm_lockout_answers_a_name_the_realm_never_had_exactly_as_an_account() {
    let app = spawn_app().await;
    let (client, _) = realm_with_person(&app).await;
    app.put("/realms/acme", json!({ "maxFailedAttempts": 5, "lockoutDurationMinutes": 15 })).await;
    let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let attempt = |from: &'static str, username: &'static str| {
        let request = app
            .http
            .post(&url)
            .basic_auth(&client.id, Some(&client.secret))
            .header("x-forwarded-for", from)
            .form(&[("grant_type", "password"), ("username", username), ("password", "wrong")]);
        async move {
            let response = request.send().await.unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        }
    };
    for n in 1..=7 {
        let existing = attempt("198.51.100.7", "ada").await;
        let unknown = attempt("198.51.100.8", "nobody").await;
        assert_eq!(existing, unknown, "attempt {n}");
        let expected = if n <= 5 { "InvalidCredentials" } else { "UserTemporarilyLocked" };
        assert_eq!(existing.1["error_code"], expected, "attempt {n}");
    }
    // The typed name counts however it is written, and only from the address that failed.
    assert_eq!(attempt("198.51.100.8", "NoBody").await.1["error_code"], "UserTemporarilyLocked");
    assert_eq!(attempt("198.51.100.9", "nobody").await.1["error_code"], "InvalidCredentials");
    // No account, no event about one.
    assert_eq!(app.events("user_locked_out").await.len(), 1);

    app.advance(15 * 60 + 1).await;
    assert_eq!(attempt("198.51.100.7", "ada").await, attempt("198.51.100.8", "nobody").await);
    assert_eq!(attempt("198.51.100.8", "nobody").await.1["error_code"], "InvalidCredentials", "the lock ran out");

    // Failures past their window are forgotten by the hourly pruning, for accounts and names alike.
    // No answer shows the counted failures themselves, so they are counted in the database.
    let count = |table: &'static str| {
        let app = &app;
        async move {
            let store = app.database().await;
            let statement = format!("SELECT COUNT(*) FROM {table}");
            sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(statement)).fetch_one(store.pool()).await.unwrap()
        }
    };
    assert_eq!((count("login_failures").await, count("unknown_login_failures").await), (1, 2));
    app.advance(2 * 60 * 60).await;
    assert_eq!((count("login_failures").await, count("unknown_login_failures").await), (0, 0));
}

#[tokio::test]
async fn a_refresh_token_presented_twice_at_once_is_exchanged_once_and_the_session_ends() {
    let app = spawn_app().await;
    let (client, _) = realm_with_person(&app).await;
    let first = sign_in(&app, &client, "orders:read").await;
    let refresh = first["refresh_token"].as_str().unwrap();
    let form = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
    let (one, two) = tokio::join!(app.token(&client, &form), app.token(&client, &form));
    let mut statuses = [one.status, two.status];
    statuses.sort();
    assert_eq!(statuses, [StatusCode::OK, StatusCode::BAD_REQUEST], "{:?} {:?}", one.body, two.body);
    let refused = if one.status == StatusCode::OK { &two } else { &one };
    assert_eq!(refused.body["error_code"], "RefreshTokenReused");
    assert_eq!(app.events("token_reuse_detected").await.len(), 1);
    let winner = if one.status == StatusCode::OK { &one } else { &two };
    let access = winner.body["access_token"].as_str().unwrap();
    assert_eq!(app.protocol(&client, "token/introspect", &[("token", access)]).await.body["active"], false);
}

/// Interoperability: the `openidconnect` crate, given only the realm's issuer, discovers the
/// provider, fetches the JWKS and accepts our ID token (signature, issuer, audience, expiry).
#[tokio::test]
async fn an_oidc_client_library_verifies_our_id_tokens_from_discovery_alone() {
    use openidconnect::core::{CoreIdToken, CoreIdTokenVerifier, CoreJwsSigningAlgorithm, CoreProviderMetadata};
    use openidconnect::{ClientId, IssuerUrl, Nonce};

    let app = spawn_app().await;
    let (client, user_id) = realm_with_person(&app).await;
    let tokens = sign_in(&app, &client, "openid email").await;
    let issuer = IssuerUrl::new(format!("{}/realms/acme", app.base)).unwrap();
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let metadata = CoreProviderMetadata::discover_async(issuer, &http).await.expect("discovery and JWKS");
    let verifier = CoreIdTokenVerifier::new_public_client(
        ClientId::new(client.id.clone()),
        metadata.issuer().clone(),
        metadata.jwks().clone(),
    )
    .set_allowed_algs(vec![CoreJwsSigningAlgorithm::EcdsaP256Sha256]);
    let id_token: CoreIdToken = tokens["id_token"].as_str().unwrap().parse().unwrap();
    let no_nonce = |_: Option<&Nonce>| -> Result<(), String> { Ok(()) };
    let claims = id_token.claims(&verifier, no_nonce).expect("the ID token verifies");
    assert_eq!(claims.subject().as_str(), user_id);
    assert_eq!(claims.email().map(|e| e.as_str()), Some("ada@example.com"));

    let other = CoreIdTokenVerifier::new_public_client(
        ClientId::new("someone-else".into()),
        metadata.issuer().clone(),
        metadata.jwks().clone(),
    )
    .set_allowed_algs(vec![CoreJwsSigningAlgorithm::EcdsaP256Sha256]);
    assert!(id_token.claims(&other, no_nonce).is_err(), "the audience is checked");
}

/// A confidential client refused at the token endpoint (here a wrong secret) is a failed sign-in
/// of that client: `login_failed` naming it, at most once a minute per address it is tried from.
/// A client that does not exist raises nothing.
#[tokio::test]
async fn a_refused_client_raises_login_failed_once_a_minute_per_address() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let shop = app.create_client("acme", "shop", &["client_credentials"], &[]).await;
    let wrong = crate::support::TestClient { secret: "cstl_cs_wrong".into(), ..shop.clone() };
    let grant = [("grant_type", "client_credentials")];
    for _ in 0..3 {
        assert_eq!(app.token(&wrong, &grant).await.status, StatusCode::UNAUTHORIZED);
    }
    let ghost = crate::support::TestClient { id: "ghost".into(), ..wrong.clone() };
    assert_eq!(app.token(&ghost, &grant).await.status, StatusCode::UNAUTHORIZED);
    let failed = app.events("login_failed").await;
    assert_eq!(failed.len(), 1, "one a minute, none for a client that does not exist: {failed:?}");
    let (realm, client, data) = &failed[0];
    assert_eq!((realm.as_deref(), client.as_deref()), (Some("acme"), Some("shop")));
    assert_eq!(data["failure_reason"], "invalid_client");
    assert_eq!(data["grant_type"], "client_credentials");
    assert!(data["ip_address"].is_string() && data["user_id"].is_null(), "{data}");

    app.advance(60).await;
    app.token(&wrong, &grant).await;
    assert_eq!(app.events("login_failed").await.len(), 2, "the next minute raises again");
    app.token(&shop, &grant).await;
    assert_eq!(app.events("login_succeeded").await.len(), 1);
}
