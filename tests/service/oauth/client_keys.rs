//! Clients that hold keys instead of secrets: `private_key_jwt` (RFC 7523 §2.2). Assertions are
//! signed here with keys the test makes, as a client would, and presented at the token and
//! introspection endpoints; the keys are given by value or published at an https address.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::receiver::{Receiver, authority_file};
use crate::support::{Answer, TestApp, TestDatabase, answer, claims, spawn_app, spawn_with};

pub const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// A P-256 key of a client: its private key for signing, its public JWK.
pub struct ClientKey {
    kid: String,
    signing: EncodingKey,
}

impl ClientKey {
    pub fn new(kid: &str) -> (Self, Value) {
        let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let signing = EncodingKey::from_ec_pem(pair.serialize_pem().as_bytes()).unwrap();
        let point = pair.public_key_raw();
        let jwk = json!({
            "kty": "EC", "crv": "P-256", "kid": kid, "use": "sig", "alg": "ES256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        (Self { kid: kid.to_owned(), signing }, jwk)
    }

    /// An assertion of `client` with these claims over the defaults: for the realm (its issuer
    /// identifier as the audience), living a minute from the service's now, with a fresh jti.
    pub fn assertion(&self, app: &TestApp, client: &str, changes: Value) -> String {
        let now = app.state.clock.now().timestamp();
        let mut claims = json!({
            "iss": client, "sub": client, "aud": format!("{}/realms/acme", app.base),
            "exp": now + 60, "iat": now, "jti": uuid::Uuid::new_v4().to_string(),
        });
        for (name, value) in changes.as_object().unwrap() {
            if value.is_null() {
                claims.as_object_mut().unwrap().remove(name);
            } else {
                claims[name] = value.clone();
            }
        }
        self.sign(&claims)
    }

    /// A JWT of exactly these claims, signed with the key.
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.signing).unwrap()
    }
}

/// A client credentials grant authenticated by `assertion`.
async fn grant(app: &TestApp, assertion: &str) -> Answer {
    let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let form = [
        ("grant_type", "client_credentials"),
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", assertion),
    ];
    answer(app.http.post(url).form(&form).send().await.unwrap()).await
}

async fn worker(app: &TestApp, keys: Value) -> Answer {
    let body = json!({ "id": "worker", "clientConfiguration": { "grantTypes": ["client_credentials"], "jwks": keys } });
    app.post("/realms/acme/clients", body).await
}

#[tokio::test]
async fn a_client_holding_keys_authenticates_with_a_signed_assertion_once_and_never_with_a_secret() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let (key, jwk) = ClientKey::new("k1");
    let created = worker(&app, json!({ "keys": [jwk] })).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert!(created.data().get("clientSecret").is_none(), "a client holding keys is given no secret");
    assert_eq!(created.data()["clientConfiguration"]["jwks"]["keys"][0]["kid"], "k1");
    let discovery = app.discovery("acme").await;
    assert!(discovery["token_endpoint_auth_methods_supported"].as_array().unwrap().contains(&json!("private_key_jwt")));
    assert!(
        discovery["token_endpoint_auth_signing_alg_values_supported"].as_array().unwrap().contains(&json!("ES256"))
    );

    let assertion = key.assertion(&app, "worker", json!({}));
    let granted = grant(&app, &assertion).await;
    assert_eq!(granted.status, StatusCode::OK, "{:?}", granted.body);
    assert_eq!(claims(granted.body["access_token"].as_str().unwrap())["client_id"], "worker");
    let replayed = grant(&app, &assertion).await;
    assert_eq!((replayed.status, replayed.body["error"].as_str()), (StatusCode::UNAUTHORIZED, Some("invalid_client")));

    // Introspection takes assertions like the token endpoint.
    let to_issuer = key.assertion(&app, "worker", json!({}));
    let url = format!("{}/realms/acme/protocol/openid-connect/token/introspect", app.base);
    let form = [
        ("token", granted.body["access_token"].as_str().unwrap()),
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", to_issuer.as_str()),
        ("client_id", "worker"),
    ];
    let introspected = answer(app.http.post(url).form(&form).send().await.unwrap()).await;
    assert_eq!(introspected.body["active"], true, "{:?}", introspected.body);

    let (stranger, _) = ClientKey::new("k1");
    let now = app.state.clock.now().timestamp();
    let refused = [
        ("another audience", key.assertion(&app, "worker", json!({ "aud": "https://elsewhere.example/token" }))),
        // The audience is the issuer identifier alone, as one string (the audience injection fix of
        // RFC 7523's update): not an array that also names another server, not an endpoint.
        (
            "the issuer among other audiences",
            key.assertion(
                &app,
                "worker",
                json!({ "aud": ["https://evil-as.example", format!("{}/realms/acme", app.base)] }),
            ),
        ),
        (
            "the issuer alone but in an array",
            key.assertion(&app, "worker", json!({ "aud": [format!("{}/realms/acme", app.base)] })),
        ),
        (
            "the token endpoint",
            key.assertion(
                &app,
                "worker",
                json!({ "aud": format!("{}/realms/acme/protocol/openid-connect/token", app.base) }),
            ),
        ),
        ("expired", key.assertion(&app, "worker", json!({ "exp": now - 60 }))),
        ("living an hour", key.assertion(&app, "worker", json!({ "exp": now + 3600 }))),
        ("without exp", key.assertion(&app, "worker", json!({ "exp": null }))),
        ("without jti", key.assertion(&app, "worker", json!({ "jti": null }))),
        ("issued by another", key.assertion(&app, "worker", json!({ "iss": "someone" }))),
        ("signed by another key", stranger.assertion(&app, "worker", json!({}))),
        ("an HMAC", {
            let claims = json!({ "iss": "worker", "sub": "worker", "aud": format!("{}/realms/acme", app.base), "exp": now + 60, "jti": "h" });
            jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(b"worker")).unwrap()
        }),
        ("not a JWT", "not.a.jwt".to_owned()),
    ];
    for (what, assertion) in refused {
        let answered = grant(&app, &assertion).await;
        assert_eq!(answered.status, StatusCode::UNAUTHORIZED, "{what}: {:?}", answered.body);
        assert_eq!(answered.body["error"], "invalid_client", "{what}");
    }

    // A secret never authenticates a client that holds keys, nor both at once.
    let secret = app.put("/realms/acme/clients/worker", json!({ "clientConfiguration": { "jwks": null } })).await;
    assert_eq!(secret.status, StatusCode::OK);
    let rotated = app.post("/realms/acme/clients/worker/client-secret/rotate", json!({})).await;
    let secret = rotated.data()["clientSecret"].as_str().unwrap().to_owned();
    app.put(
        "/realms/acme/clients/worker",
        json!({ "clientConfiguration": { "jwks": { "keys": [ClientKey::new("k2").1] } } }),
    )
    .await;
    let url = format!("{}/realms/acme/protocol/openid-connect/token", app.base);
    let by_secret =
        app.http.post(&url).basic_auth("worker", Some(&secret)).form(&[("grant_type", "client_credentials")]);
    assert_eq!(answer(by_secret.send().await.unwrap()).await.status, StatusCode::UNAUTHORIZED);
    let both = app.http.post(&url).basic_auth("worker", Some(&secret)).form(&[
        ("grant_type", "client_credentials"),
        ("client_assertion_type", ASSERTION_TYPE),
        ("client_assertion", &key.assertion(&app, "worker", json!({}))),
    ]);
    assert_eq!(answer(both.send().await.unwrap()).await.body["error_code"], "MultipleClientAuthentications");
}

#[tokio::test]
async fn only_public_keys_are_taken() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let (_, mut jwk) = ClientKey::new("k1");
    jwk["d"] = json!("jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI");
    let private = worker(&app, json!({ "keys": [jwk] })).await;
    assert_eq!(private.status, StatusCode::BAD_REQUEST, "{:?}", private.body);
    assert_eq!(private.refused_fields()[0].0, "clientConfiguration.jwks");
    let symmetric = worker(&app, json!({ "keys": [{ "kty": "oct", "k": "c2VjcmV0" }] })).await;
    assert_eq!(symmetric.status, StatusCode::BAD_REQUEST);
    let body = json!({ "id": "spa", "type": "Public", "clientConfiguration": { "jwks": { "keys": [ClientKey::new("k").1] } } });
    assert_eq!(
        app.post("/realms/acme/clients", body).await.status,
        StatusCode::BAD_REQUEST,
        "a public client holds no keys"
    );
}

#[tokio::test]
async fn keys_published_at_an_address_are_fetched_kept_and_fetched_again_for_a_new_key() {
    let trusting = |settings: &mut castellan::kernel::config::Settings| {
        settings.webhook_allowed_networks = vec!["127.0.0.0/8".parse().unwrap()];
        settings.webhook_ca_file = Some(authority_file());
    };
    let app = spawn_with(TestDatabase::new().await, trusting).await;
    app.create_realm("acme").await;
    let published = Receiver::start().await;
    let (first, jwk) = ClientKey::new("k1");
    published.serve(json!({ "keys": [jwk] }), "max-age=300");
    let body = json!({ "id": "worker", "clientConfiguration": { "grantTypes": ["client_credentials"], "jwksUri": published.url } });
    assert_eq!(app.post("/realms/acme/clients", body).await.status, StatusCode::CREATED);
    let insecure = json!({ "clientConfiguration": { "jwksUri": "http://keys.example/jwks" } });
    assert_eq!(app.put("/realms/acme/clients/worker", insecure).await.status, StatusCode::BAD_REQUEST);

    assert_eq!(grant(&app, &first.assertion(&app, "worker", json!({}))).await.status, StatusCode::OK);
    assert_eq!(grant(&app, &first.assertion(&app, "worker", json!({}))).await.status, StatusCode::OK);
    assert_eq!(published.received().len(), 1, "kept as its max-age allows");

    // The client rolls over to a new key: an assertion naming it fetches the set again, at most
    // once a minute.
    let (second, jwk) = ClientKey::new("k2");
    published.serve(json!({ "keys": [jwk] }), "max-age=300");
    assert_eq!(grant(&app, &second.assertion(&app, "worker", json!({}))).await.status, StatusCode::UNAUTHORIZED);
    app.advance(61).await;
    assert_eq!(grant(&app, &second.assertion(&app, "worker", json!({}))).await.status, StatusCode::OK);
    assert_eq!(published.received().len(), 2);
    assert_eq!(grant(&app, &first.assertion(&app, "worker", json!({}))).await.status, StatusCode::UNAUTHORIZED);

    published.answer_with(500);
    app.advance(301).await;
    let unreachable = grant(&app, &second.assertion(&app, "worker", json!({}))).await;
    assert_eq!(unreachable.status, StatusCode::UNAUTHORIZED, "kept no longer than max-age: {:?}", unreachable.body);
    assert_eq!(published.received().len(), 3);
}

#[tokio::test]
async fn a_self_registered_client_registers_its_keys_instead_of_a_secret() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.put("/realms/acme", json!({ "clientRegistration": "Open" })).await;
    let (key, jwk) = ClientKey::new("k1");
    let url = format!("{}/realms/acme/protocol/openid-connect/register", app.base);
    let metadata = json!({
        "redirect_uris": ["https://agent.example/cb"], "token_endpoint_auth_method": "private_key_jwt",
        "jwks": { "keys": [jwk] },
    });
    let registered = answer(app.http.post(&url).json(&metadata).send().await.unwrap()).await;
    assert_eq!(registered.status, StatusCode::CREATED, "{:?}", registered.body);
    assert!(registered.body.get("client_secret").is_none());
    assert_eq!(registered.body["token_endpoint_auth_method"], "private_key_jwt");
    assert_eq!(registered.body["jwks"]["keys"][0]["kid"], "k1");
    let client = registered.body["client_id"].as_str().unwrap();

    // It authenticates with its key, here to revoke a token it never had (RFC 7009: 200 alike).
    let revoke = format!("{}/realms/acme/protocol/openid-connect/revoke", app.base);
    let assertion = key.assertion(&app, client, json!({}));
    let form =
        [("token", "unknown"), ("client_assertion_type", ASSERTION_TYPE), ("client_assertion", assertion.as_str())];
    assert_eq!(app.http.post(&revoke).form(&form).send().await.unwrap().status(), StatusCode::OK);
    let form =
        [("token", "unknown"), ("client_assertion_type", ASSERTION_TYPE), ("client_assertion", assertion.as_str())];
    assert_eq!(app.http.post(&revoke).form(&form).send().await.unwrap().status(), StatusCode::UNAUTHORIZED, "replayed");

    let mut switched = metadata.clone();
    switched["client_id"] = json!(client);
    switched["token_endpoint_auth_method"] = json!("client_secret_basic");
    switched.as_object_mut().unwrap().remove("jwks");
    let token = registered.body["registration_access_token"].as_str().unwrap();
    let uri = registered.body["registration_client_uri"].as_str().unwrap();
    let refused = answer(app.http.put(uri).bearer_auth(token).json(&switched).send().await.unwrap()).await;
    assert_eq!(refused.body["error"], "invalid_client_metadata", "{:?}", refused.body);
    for body in [
        json!({ "redirect_uris": ["https://agent.example/cb"], "token_endpoint_auth_method": "private_key_jwt" }),
        json!({ "redirect_uris": ["https://agent.example/cb"], "jwks": { "keys": [ClientKey::new("k").1] } }),
    ] {
        let refused = answer(app.http.post(&url).json(&body).send().await.unwrap()).await;
        assert_eq!(refused.body["error"], "invalid_client_metadata", "{body}: {:?}", refused.body);
    }
}

#[tokio::test]
async fn openid_client_authenticates_with_its_key() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let issuer = format!("{}/realms/acme", app.base);
    let mut relying_party = crate::support::node::NodeScript::start("private_key_jwt.mjs", "openid-client", &[&issuer]);
    let jwk = relying_party.next().await["jwk"].clone();
    assert_eq!(worker(&app, json!({ "keys": [jwk] })).await.status, StatusCode::CREATED);
    relying_party.send("worker").await;
    let got = relying_party.next().await;
    assert_eq!((got["active"].as_bool(), got["client_id"].as_str()), (Some(true), Some("worker")), "{got}");
    let granted = got["granted"].as_array().unwrap();
    assert_eq!(granted.len(), 2);
    assert_eq!(claims(granted[1].as_str().unwrap())["client_id"], "worker");
    assert!(relying_party.finished().await);
}
