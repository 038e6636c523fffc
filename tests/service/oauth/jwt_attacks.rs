//! Forged, altered and misused JWTs, as an attacker would try them, at every endpoint that accepts
//! an access token: introspection answers `active: false`, userinfo 401, token exchange
//! `DelegationSubjectTokenInactive`. The genuine token passes all three first, so every refusal
//! below is the forgery's own.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use hmac::{Hmac, Mac};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rcgen::{CertificateParams, KeyPair};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Sha256, Sha384, Sha512};

use crate::support::{TestApp, TestClient, claims, spawn_app};

const EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";

/// The realm under attack: `introspector` introspects, `agent` exchanges under a grant from Ada,
/// `web` signs Ada in; `other_web` signs Ada in at another realm.
struct Target {
    introspector: TestClient,
    agent: TestClient,
    web: TestClient,
    other_web: TestClient,
}

/// What each endpoint made of a token: introspection's `active`, userinfo's status, and whether
/// the exchange refused it as an inactive subject token.
#[derive(Debug, PartialEq, Eq)]
struct Verdicts {
    introspection_active: bool,
    userinfo: StatusCode,
    exchange: String,
}

fn refused() -> Verdicts {
    Verdicts {
        introspection_active: false,
        userinfo: StatusCode::UNAUTHORIZED,
        exchange: "DelegationSubjectTokenInactive".into(),
    }
}

async fn verdicts(app: &TestApp, target: &Target, token: &str) -> Verdicts {
    let introspected = app.protocol(&target.introspector, "token/introspect", &[("token", token)]).await;
    let userinfo = app
        .http
        .get(format!("{}/realms/acme/protocol/openid-connect/userinfo", app.base))
        .header("authorization", format!("Bearer {token}"))
        .send()
        .await
        .unwrap()
        .status();
    let form = [
        ("grant_type", EXCHANGE),
        ("subject_token", token),
        ("subject_token_type", ACCESS_TOKEN),
        ("scope", "orders:read"),
    ];
    let exchanged = app.token(&target.agent, &form).await;
    let exchange = if exchanged.status == StatusCode::OK {
        "issued".to_owned()
    } else {
        exchanged.body["error_code"].as_str().unwrap_or("").to_owned()
    };
    Verdicts { introspection_active: introspected.body["active"] == true, userinfo, exchange }
}

async fn assert_refused_everywhere(app: &TestApp, target: &Target, name: &str, token: &str) {
    assert_eq!(verdicts(app, target, token).await, refused(), "{name}: {token}");
}

async fn target(app: &TestApp) -> Target {
    let mut signers = Vec::new();
    for realm in ["acme", "other"] {
        app.create_realm(realm).await;
        signers.push(app.create_client(realm, "web", &["password", "refresh_token"], &["orders:read"]).await);
        app.create_user(realm, "ada", "analytical engine").await;
    }
    let other_web = signers.pop().unwrap();
    let web = signers.pop().unwrap();
    let introspector = app.create_client("acme", "introspector", &["client_credentials"], &[]).await;
    let body = json!({
        "id": "agent",
        "clientConfiguration": { "grantTypes": ["client_credentials"], "allowedScopes": ["orders:read"], "tokenExchangeEnabled": true },
    });
    let created = app.post("/realms/acme/clients", body).await;
    let agent = TestClient {
        realm: "acme".into(),
        id: "agent".into(),
        secret: created.data()["clientSecret"].as_str().unwrap().to_owned(),
    };
    let ada = app.get("/realms/acme/users?searchTerm=ada").await.items()[0]["id"].as_str().unwrap().to_owned();
    let grant = json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read"] });
    assert_eq!(app.post("/realms/acme/delegation-grants", grant).await.status, StatusCode::CREATED);
    Target { introspector, agent, web, other_web }
}

/// Ada's sign-in through `client`: the whole token answer.
async fn sign_in(app: &TestApp, client: &TestClient, scope: &str) -> Value {
    let form = [("grant_type", "password"), ("username", "ada"), ("password", "analytical engine"), ("scope", scope)];
    let answer = app.token(client, &form).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.body
}

fn part(value: &Value) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(value).unwrap())
}

fn header_of(token: &str) -> Value {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(token.split('.').next().unwrap()).unwrap()).unwrap()
}

fn hmac_signed(alg: &str, key: &[u8], header: &Value, claims: &Value) -> String {
    let input = format!("{}.{}", part(header), part(claims));
    let signature = match alg {
        "HS256" => Hmac::<Sha256>::new_from_slice(key).unwrap().chain_update(&input).finalize().into_bytes().to_vec(),
        "HS384" => Hmac::<Sha384>::new_from_slice(key).unwrap().chain_update(&input).finalize().into_bytes().to_vec(),
        _ => Hmac::<Sha512>::new_from_slice(key).unwrap().chain_update(&input).finalize().into_bytes().to_vec(),
    };
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature))
}

/// The realm's public key of `kid`, in every encoding an HMAC key confusion could use.
async fn public_key_encodings(app: &TestApp, kid: &str) -> Vec<(String, Vec<u8>)> {
    let jwks = app.get_json(&format!("{}/realms/acme/protocol/openid-connect/certs", app.base)).await;
    let jwk = jwks["keys"].as_array().unwrap().iter().find(|k| k["kid"] == kid).unwrap().clone();
    let coordinate = |name: &str| URL_SAFE_NO_PAD.decode(jwk[name].as_str().unwrap()).unwrap();
    let (x, y) = (coordinate("x"), coordinate("y"));
    let point = [vec![4u8], x.clone(), y].concat();
    // SubjectPublicKeyInfo of a P-256 key: the algorithm identifiers, then the point.
    let spki = [hex::decode("3059301306072a8648ce3d020106082a8648ce3d030107034200").unwrap(), point.clone()].concat();
    let wrapped: Vec<String> =
        STANDARD.encode(&spki).as_bytes().chunks(64).map(|line| String::from_utf8(line.to_vec()).unwrap()).collect();
    let pem = format!("-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n", wrapped.join("\n"));
    vec![
        ("PEM".into(), pem.clone().into_bytes()),
        ("PEM without its last newline".into(), pem.trim_end().as_bytes().to_vec()),
        ("DER".into(), spki.clone()),
        ("base64 of the DER".into(), STANDARD.encode(&spki).into_bytes()),
        ("the JWK as JSON".into(), serde_json::to_vec(&jwk).unwrap()),
        ("the raw point".into(), point),
        ("the x coordinate".into(), x),
        ("x as in the JWK".into(), jwk["x"].as_str().unwrap().as_bytes().to_vec()),
    ]
}

#[tokio::test]
async fn forged_and_misused_jwts_are_refused_at_introspection_userinfo_and_token_exchange() {
    let app = spawn_app().await;
    let target = target(&app).await;
    let signed_in = sign_in(&app, &target.web, "openid orders:read").await;
    let genuine = signed_in["access_token"].as_str().unwrap();
    let genuine_claims = claims(genuine);
    let genuine_header = header_of(genuine);
    let kid = genuine_header["kid"].as_str().unwrap().to_owned();
    let signature = genuine.rsplit('.').next().unwrap();
    let (head, body) = (genuine.split('.').next().unwrap(), genuine.split('.').nth(1).unwrap());

    // The genuine token is accepted everywhere: the refusals below are the forgeries'.
    let accepted = verdicts(&app, &target, genuine).await;
    assert_eq!((accepted.introspection_active, accepted.userinfo), (true, StatusCode::OK));
    assert_eq!(accepted.exchange, "issued");

    // alg "none", in any case, with and without a signature.
    for alg in ["none", "None", "NONE", "nOnE"] {
        let header = json!({ "alg": alg, "typ": "at+jwt", "kid": kid });
        let unsigned = format!("{}.{body}.", part(&header));
        assert_refused_everywhere(&app, &target, alg, &unsigned).await;
        assert_refused_everywhere(&app, &target, alg, &format!("{}.{body}.{signature}", part(&header))).await;
    }

    // HMAC keyed with the realm's public key, in every encoding and every HMAC strength.
    for (encoding, key) in public_key_encodings(&app, &kid).await {
        for alg in ["HS256", "HS384", "HS512"] {
            let header = json!({ "alg": alg, "typ": "at+jwt", "kid": kid });
            let forged = hmac_signed(alg, &key, &header, &genuine_claims);
            assert_refused_everywhere(&app, &target, &format!("{alg} keyed with {encoding}"), &forged).await;
        }
    }

    // Another realm's genuine token, and this realm's token naming the other realm's key.
    let foreign = sign_in(&app, &target.other_web, "orders:read").await;
    let foreign = foreign["access_token"].as_str().unwrap();
    assert_refused_everywhere(&app, &target, "another realm's token", foreign).await;
    let foreign_kid = header_of(foreign)["kid"].as_str().unwrap().to_owned();
    for kid in [foreign_kid.as_str(), "unknown", "../../../../etc/passwd", "' OR '1'='1", ""] {
        let header = json!({ "alg": "ES256", "typ": "at+jwt", "kid": kid });
        assert_refused_everywhere(
            &app,
            &target,
            &format!("kid {kid}"),
            &format!("{}.{body}.{signature}", part(&header)),
        )
        .await;
    }
    let without_kid = json!({ "alg": "ES256", "typ": "at+jwt" });
    assert_refused_everywhere(&app, &target, "no kid", &format!("{}.{body}.{signature}", part(&without_kid))).await;

    // Signed by the attacker's own key, which the header offers as jwk, jku, x5u or x5c.
    let attacker = KeyPair::generate().unwrap();
    let certificate =
        CertificateParams::new(vec!["attacker.example".to_owned()]).unwrap().self_signed(&attacker).unwrap();
    let raw = attacker.public_key_raw();
    let attacker_jwk = json!({
        "kty": "EC", "crv": "P-256", "kid": kid,
        "x": URL_SAFE_NO_PAD.encode(&raw[1..33]), "y": URL_SAFE_NO_PAD.encode(&raw[33..65]),
    });
    let encoding = EncodingKey::from_ec_pem(attacker.serialize_pem().as_bytes()).unwrap();
    let injected: Vec<(&str, Value)> = vec![
        ("jwk", attacker_jwk.clone()),
        ("jku", json!("https://attacker.example/jwks.json")),
        ("x5u", json!("https://attacker.example/cert.pem")),
        ("x5c", json!([STANDARD.encode(certificate.der())])),
    ];
    for (name, value) in injected {
        for with_kid in [Some(kid.as_str()), None] {
            let mut header = json!({ "alg": "ES256", "typ": "at+jwt", name: value });
            if let Some(kid) = with_kid {
                header["kid"] = json!(kid);
            }
            let header: Header = serde_json::from_value(header).unwrap();
            let forged = jsonwebtoken::encode(&header, &genuine_claims, &encoding).unwrap();
            assert_refused_everywhere(&app, &target, &format!("injected {name}"), &forged).await;
        }
    }
    let mut own = Header::new(Algorithm::ES256);
    own.typ = Some("at+jwt".into());
    own.kid = Some(kid.clone());
    let forged = jsonwebtoken::encode(&own, &genuine_claims, &encoding).unwrap();
    assert_refused_everywhere(&app, &target, "the attacker's key under the realm's kid", &forged).await;

    // Claims altered under the genuine signature.
    let mut tampered = Vec::new();
    for (name, value) in [
        ("scope", json!("orders:read orders:write admin")),
        ("sub", json!("01900000-0000-7000-8000-000000000000")),
        ("exp", json!(genuine_claims["exp"].as_i64().unwrap() + 86_400)),
        ("iss", json!(format!("{}/realms/other", app.base))),
        ("client_id", json!("agent")),
    ] {
        let mut altered = genuine_claims.clone();
        altered[name] = value;
        tampered.push((format!("altered {name}"), format!("{head}.{}.{signature}", part(&altered))));
    }
    // Signatures altered, cut, moved from another token, or dropped.
    let mut flipped = URL_SAFE_NO_PAD.decode(signature).unwrap();
    flipped[10] ^= 1;
    let other_signature = foreign.rsplit('.').next().unwrap();
    tampered.push(("a flipped bit".into(), format!("{head}.{body}.{}", URL_SAFE_NO_PAD.encode(&flipped))));
    tampered.push(("a cut signature".into(), format!("{head}.{body}.{}", &signature[..40])));
    tampered.push(("another token's signature".into(), format!("{head}.{body}.{other_signature}")));
    tampered.push(("no signature".into(), format!("{head}.{body}.")));
    tampered.push(("two parts".into(), format!("{head}.{body}")));
    tampered.push(("padding added".into(), format!("{head}.{body}.{signature}==")));
    for (name, token) in &tampered {
        assert_refused_everywhere(&app, &target, name, token).await;
    }

    // The wrong type: a genuine ID token, and the access token's header claiming another type.
    let id_token = signed_in["id_token"].as_str().unwrap();
    assert_eq!(header_of(id_token)["kid"], header_of(genuine)["kid"], "signed by the same key");
    assert_refused_everywhere(&app, &target, "an ID token", id_token).await;
    for typ in ["JWT", "jwt", "application/jwt", "id_token+jwt"] {
        let mut header = genuine_header.clone();
        header["typ"] = json!(typ);
        assert_refused_everywhere(&app, &target, typ, &format!("{}.{body}.{signature}", part(&header))).await;
    }

    // A refresh token is no bearer token; introspection describes it only to its own client, and
    // never as an access token.
    let refresh = sign_in(&app, &target.web, "orders:read").await["refresh_token"].as_str().unwrap().to_owned();
    assert_refused_everywhere(&app, &target, "a refresh token", &refresh).await;

    // Expired by one second on the service's clock (the manual clock of the tests).
    let expires_at = genuine_claims["exp"].as_i64().unwrap();
    let now = app.state.clock.now().timestamp();
    app.advance(expires_at - now - 1).await;
    assert!(verdicts(&app, &target, genuine).await.introspection_active, "one second before it expires");
    app.advance(2).await;
    assert_refused_everywhere(&app, &target, "expired by one second", genuine).await;
}
