//! DPoP (RFC 9449): tokens bound to a key the client holds. Proofs are signed here with keys the
//! test makes, as a client would, and the binding is checked where tokens are used: userinfo,
//! introspection and the refresh grant.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use openidconnect::TokenIntrospectionResponse;
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::{Answer, TestApp, TestClient, answer, claims, spawn_app};

/// A client's P-256 key: signs proofs carrying its public JWK.
struct ProofKey {
    signing: EncodingKey,
    jwk: Value,
}

impl ProofKey {
    fn new() -> Self {
        let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let point = pair.public_key_raw();
        let jwk = json!({
            "kty": "EC", "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        Self { signing: EncodingKey::from_ec_pem(pair.serialize_pem().as_bytes()).unwrap(), jwk }
    }

    /// RFC 7638, computed here on its own: SHA-256 of `{"crv","kty","x","y"}` in that order.
    fn thumbprint(&self) -> String {
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            self.jwk["x"].as_str().unwrap(),
            self.jwk["y"].as_str().unwrap()
        );
        URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
    }

    /// A proof for `method` at `url`, with these claims over the defaults (fresh `jti`, `iat` the
    /// service's now); `typ` and the JWK in the header.
    fn proof(&self, app: &TestApp, method: &str, url: &str, changes: Value) -> String {
        let mut claims = json!({
            "htm": method, "htu": url, "iat": app.state.clock.now().timestamp(),
            "jti": uuid::Uuid::new_v4().to_string(),
        });
        for (name, value) in changes.as_object().unwrap() {
            claims[name] = value.clone();
        }
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".into());
        header.jwk = Some(serde_json::from_value(self.jwk.clone()).unwrap());
        jsonwebtoken::encode(&header, &claims, &self.signing).unwrap()
    }
}

fn token_url(app: &TestApp) -> String {
    format!("{}/realms/acme/protocol/openid-connect/token", app.base)
}

/// A token request of `client` with `form`, and the proof when given.
async fn token(app: &TestApp, client: &TestClient, form: &[(&str, &str)], proof: Option<&str>) -> Answer {
    let mut request = app.http.post(token_url(app)).basic_auth(&client.id, Some(&client.secret)).form(form);
    if let Some(proof) = proof {
        request = request.header("DPoP", proof);
    }
    answer(request.send().await.unwrap()).await
}

/// The nonce the token endpoint gives a proof without one.
async fn nonce_for(app: &TestApp, client: &TestClient, key: &ProofKey) -> String {
    let proof = key.proof(app, "POST", &token_url(app), json!({}));
    let asked = token(app, client, &[("grant_type", "client_credentials")], Some(&proof)).await;
    assert_eq!((asked.status, asked.body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("use_dpop_nonce")));
    asked.headers["dpop-nonce"].to_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_token_bound_to_a_key_is_used_only_with_a_fresh_proof_by_that_key() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let agent = app.create_client("acme", "agent", &["client_credentials", "password", "refresh_token"], &[]).await;
    app.create_user("acme", "ada", "analytical engine").await;
    let key = ProofKey::new();
    let discovery = app.discovery("acme").await;
    assert!(discovery["dpop_signing_alg_values_supported"].as_array().unwrap().contains(&json!("ES256")));

    // The token endpoint asks for its nonce first, then binds the tokens to the proof's key.
    let nonce = nonce_for(&app, &agent, &key).await;
    let url = token_url(&app);
    let password = [("grant_type", "password"), ("username", "ada"), ("password", "analytical engine")];
    let proof = key.proof(&app, "POST", &url, json!({ "nonce": nonce }));
    let bound = token(&app, &agent, &password, Some(&proof)).await;
    assert_eq!(bound.status, StatusCode::OK, "{:?}", bound.body);
    assert_eq!(bound.body["token_type"], "DPoP");
    let access = bound.body["access_token"].as_str().unwrap().to_owned();
    assert_eq!(claims(&access)["cnf"], json!({ "jkt": key.thumbprint() }));
    let described = crate::oauth::introspection::introspected(&app, &agent, &access, None).await;
    crate::oauth::introspection::assert_describes(&described, &access);
    assert_eq!(described.token_type().map(|t| t.as_ref().to_ascii_lowercase()).as_deref(), Some("dpop"));
    let replayed = token(&app, &agent, &password, Some(&proof)).await;
    assert_eq!(replayed.body["error"], "invalid_dpop_proof", "a proof is good once: {:?}", replayed.body);

    let refused = [
        ("another method", key.proof(&app, "GET", &url, json!({ "nonce": nonce }))),
        ("another address", key.proof(&app, "POST", "https://elsewhere.example/token", json!({ "nonce": nonce }))),
        (
            "an old proof",
            key.proof(&app, "POST", &url, json!({ "nonce": nonce, "iat": app.state.clock.now().timestamp() - 600 })),
        ),
        ("a forged nonce", key.proof(&app, "POST", &url, json!({ "nonce": "1.forged" }))),
        ("not a proof", "not.a.proof".to_owned()),
    ];
    for (what, proof) in refused {
        let answered = token(&app, &agent, &[("grant_type", "client_credentials")], Some(&proof)).await;
        assert_eq!(answered.status, StatusCode::BAD_REQUEST, "{what}: {:?}", answered.body);
        assert!(answered.body["error"].as_str().unwrap().contains("dpop"), "{what}: {:?}", answered.body);
    }

    // At userinfo: refused as a bearer token, and without a proof or with a replayed one.
    let userinfo = format!("{}/realms/acme/protocol/openid-connect/userinfo", app.base);
    let ath = URL_SAFE_NO_PAD.encode(Sha256::digest(access.as_bytes()));
    let as_bearer = app.http.get(&userinfo).bearer_auth(&access).send().await.unwrap();
    assert_eq!(as_bearer.status(), StatusCode::UNAUTHORIZED, "a bound token is no bearer token");
    let scheme = format!("DPoP {access}");
    let without = app.http.get(&userinfo).header("authorization", &scheme).send().await.unwrap();
    assert_eq!(without.status(), StatusCode::UNAUTHORIZED);
    let challenge = without.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.starts_with("DPoP error=\"invalid_token\", algs=\"ES256"), "{challenge}");
    let proof = key.proof(&app, "GET", &userinfo, json!({ "ath": ath }));
    let with = app.http.get(&userinfo).header("authorization", &scheme).header("DPoP", &proof).send().await.unwrap();
    assert_eq!(with.status(), StatusCode::OK);
    let again = app.http.get(&userinfo).header("authorization", &scheme).header("DPoP", &proof).send().await.unwrap();
    assert_eq!(again.status(), StatusCode::UNAUTHORIZED, "replayed");
    let stranger = ProofKey::new().proof(&app, "GET", &userinfo, json!({ "ath": ath }));
    let by_other =
        app.http.get(&userinfo).header("authorization", &scheme).header("DPoP", &stranger).send().await.unwrap();
    assert_eq!(by_other.status(), StatusCode::UNAUTHORIZED, "signed by another key");
    let no_ath = key.proof(&app, "GET", &userinfo, json!({}));
    let unhashed =
        app.http.get(&userinfo).header("authorization", &scheme).header("DPoP", &no_ath).send().await.unwrap();
    assert_eq!(unhashed.status(), StatusCode::UNAUTHORIZED, "the proof must name the token");
    // The account endpoints challenge in the scheme the token came with.
    let consents = format!("{}/realms/acme/account/consents", app.base);
    let unproven = app.http.get(&consents).header("authorization", &scheme).send().await.unwrap();
    assert_eq!(unproven.status(), StatusCode::UNAUTHORIZED);
    assert!(unproven.headers()["www-authenticate"].to_str().unwrap().starts_with("DPoP error=\"invalid_token\""));
    let as_bearer = app.http.get(&consents).bearer_auth(&access).send().await.unwrap();
    assert_eq!(as_bearer.headers()["www-authenticate"], "Bearer error=\"invalid_token\"");
    let proof = key.proof(&app, "GET", &consents, json!({ "ath": ath }));
    let proven = app.http.get(&consents).header("authorization", &scheme).header("DPoP", &proof).send().await.unwrap();
    assert_eq!(proven.status(), StatusCode::OK, "bound and proven");

    // Introspection shows the binding.
    let introspected = app.protocol(&agent, "token/introspect", &[("token", &access)]).await;
    assert_eq!(introspected.body["token_type"], "DPoP");
    assert_eq!(introspected.body["cnf"]["jkt"], key.thumbprint());

    // The refresh token is bound too: only a proof by the same key refreshes it.
    let refresh = bound.body["refresh_token"].as_str().unwrap();
    let form = [("grant_type", "refresh_token"), ("refresh_token", refresh)];
    let unproven = token(&app, &agent, &form, None).await;
    assert_eq!(unproven.body["error"], "invalid_dpop_proof", "{:?}", unproven.body);
    let other = ProofKey::new();
    let other_nonce = nonce_for(&app, &agent, &other).await;
    let by_other =
        token(&app, &agent, &form, Some(&other.proof(&app, "POST", &url, json!({ "nonce": other_nonce })))).await;
    assert_eq!(by_other.body["error"], "invalid_dpop_proof");
    let refreshed = token(&app, &agent, &form, Some(&key.proof(&app, "POST", &url, json!({ "nonce": nonce })))).await;
    assert_eq!(refreshed.status, StatusCode::OK, "{:?}", refreshed.body);
    assert_eq!(claims(refreshed.body["access_token"].as_str().unwrap())["cnf"]["jkt"], key.thumbprint());

    // Tokens asked for without a proof stay bearer tokens.
    let plain = token(&app, &agent, &[("grant_type", "client_credentials")], None).await;
    assert_eq!(plain.body["token_type"], "Bearer");
    assert!(claims(plain.body["access_token"].as_str().unwrap()).get("cnf").is_none());

    // A nonce is good for five minutes.
    app.advance(301).await;
    let stale = token(
        &app,
        &agent,
        &[("grant_type", "client_credentials")],
        Some(&key.proof(&app, "POST", &url, json!({ "nonce": nonce }))),
    )
    .await;
    assert_eq!(stale.body["error"], "use_dpop_nonce");
}

#[tokio::test]
async fn a_proof_without_its_type_or_signed_with_a_secret_is_refused() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let agent = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let key = ProofKey::new();
    let nonce = nonce_for(&app, &agent, &key).await;
    let url = token_url(&app);
    let claims =
        json!({ "htm": "POST", "htu": url, "iat": app.state.clock.now().timestamp(), "jti": "j", "nonce": nonce });
    let mut untyped = Header::new(Algorithm::ES256);
    untyped.jwk = Some(serde_json::from_value(key.jwk.clone()).unwrap());
    let untyped = jsonwebtoken::encode(&untyped, &claims, &key.signing).unwrap();
    let hmac = {
        let mut header = Header::new(Algorithm::HS256);
        header.typ = Some("dpop+jwt".into());
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(b"k")).unwrap()
    };
    for (what, proof) in [("no typ", untyped), ("an HMAC", hmac)] {
        let answered = token(&app, &agent, &[("grant_type", "client_credentials")], Some(&proof)).await;
        assert_eq!(answered.body["error"], "invalid_dpop_proof", "{what}: {:?}", answered.body);
    }
}
