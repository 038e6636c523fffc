//! Signing keys and their rollover: a client's first key comes with the client, a rotation
//! publishes the next key before it signs, and resource servers that cache the JWKS (node's `jose`,
//! and a strict cache that never refetches on an unknown key) accept every token across a rotation.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::node::NodeScript;
use crate::support::{TestApp, TestClient, spawn_app};

/// How long a rotation publishes the next key before it signs.
const LEAD: i64 = castellan::tokens::keys::NEXT_KEY_LEAD.num_seconds();

/// The access token lifetime of the test services.
const TOKEN_SECONDS: i64 = 300;

fn kid_of(token: &str) -> String {
    jsonwebtoken::decode_header(token).unwrap().kid.unwrap()
}

/// The client's keys as the listing shows them: `(kid, status)`, newest first.
async fn kids(app: &TestApp, client: &str) -> Vec<(String, String)> {
    let listed = app.get(&format!("/realms/acme/clients/{client}/signing-keys")).await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    listed
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|key| (key["id"].as_str().unwrap().to_owned(), key["status"].as_str().unwrap().to_owned()))
        .collect()
}

async fn client_token(app: &TestApp, client: &TestClient) -> String {
    let answer = app.token(client, &[("grant_type", "client_credentials")]).await;
    answer.body["access_token"].as_str().expect("a token").to_owned()
}

async fn introspect_active(app: &TestApp, client: &TestClient, token: &str) -> bool {
    app.protocol(client, "token/introspect", &[("token", token)]).await.body["active"] == true
}

async fn published_kids(app: &TestApp, realm: &str) -> Vec<String> {
    let jwks = app.jwks(realm).await;
    jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_rotation_publishes_the_next_key_before_it_signs_and_revoking_switches_at_once() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let first_kid = kids(&app, "agent").await[0].0.clone();
    assert!(published_kids(&app, "acme").await.contains(&first_kid), "a new client's key is published with it");
    let old = client_token(&app, &client).await;
    assert_eq!(kid_of(&old), first_kid, "and signs its first token");

    let rotated = app.post("/realms/acme/clients/agent/signing-keys/rotate", json!({})).await;
    assert_eq!(rotated.status, StatusCode::OK, "{:?}", rotated.body);
    assert_eq!(rotated.data()["revokedKeysCount"], 0);
    let new_kid = rotated.data()["signingKeyId"].as_str().unwrap().to_owned();
    let rotated_at = app.state.clock.now();
    let signs_from = chrono::DateTime::parse_from_rfc3339(rotated.data()["signsFrom"].as_str().unwrap()).unwrap();
    let lead = (signs_from.to_utc() - rotated_at).num_milliseconds();
    assert!((LEAD * 1000 - 1000..=LEAD * 1000).contains(&lead), "signs {lead} ms after the rotation");
    assert!(published_kids(&app, "acme").await.contains(&new_kid), "published at once");
    assert_eq!(kid_of(&client_token(&app, &client).await), first_kid, "the current key signs until then");
    assert_eq!(
        kids(&app, "agent").await,
        [(new_kid.clone(), "Next".to_owned()), (first_kid.clone(), "Active".to_owned())]
    );

    app.advance(LEAD - 1).await;
    let last_old = client_token(&app, &client).await;
    assert_eq!(kid_of(&last_old), first_kid, "up to the last moment of the lead");
    app.advance(1).await;
    assert_eq!(kid_of(&client_token(&app, &client).await), new_kid, "the new key signs once its lead is over");
    assert_eq!(
        kids(&app, "agent").await,
        [(new_kid.clone(), "Active".to_owned()), (first_kid.clone(), "Retired".to_owned())]
    );
    assert!(introspect_active(&app, &client, &last_old).await, "a retired key's tokens live out their lifetime");
    app.advance(TOKEN_SECONDS - 1).await;
    assert!(published_kids(&app, "acme").await.contains(&first_kid), "published while its last token lives");
    app.advance(2).await;
    assert!(!published_kids(&app, "acme").await.contains(&first_kid), "gone once its tokens have expired");

    // A token of the current key, checked once: its verified signature is remembered. A rotation
    // that revokes withdraws every earlier key at once and its new key signs at once.
    let fresh = client_token(&app, &client).await;
    assert!(introspect_active(&app, &client, &fresh).await);
    let revoking = app.post("/realms/acme/clients/agent/signing-keys/rotate", json!({ "revokeOldKeys": true })).await;
    assert_eq!(revoking.data()["revokedKeysCount"], 2);
    let revoking_kid = revoking.data()["signingKeyId"].as_str().unwrap().to_owned();
    assert!(!introspect_active(&app, &client, &fresh).await, "tokens of a revoked key are inactive at once");
    assert_eq!(published_kids(&app, "acme").await, std::slice::from_ref(&revoking_kid));
    assert_eq!(kid_of(&client_token(&app, &client).await), revoking_kid);

    let events = app.events("keys_rotated").await;
    assert_eq!(events.len(), 2);
    assert_eq!(events[1].1.as_deref(), Some("agent"));
    assert_eq!(events[1].2["revoked_keys_count"], 2);
    assert!(events[1].2.get("signing_key_id").is_some() && events[1].2.get("encryption_key_id").is_some());
    let bad = app.post("/realms/acme/clients/agent/signing-keys/rotate", json!({ "revokeOldKeys": "yes" })).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn keys_rotate_on_schedule_when_the_clock_passes_the_rotation_period() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let set = app.put("/realms/acme/clients/agent", json!({ "signingKey": { "rotationDays": 30 } })).await;
    assert_eq!(set.data()["signingKey"]["rotationDays"], 30);
    let first = app.token(&client, &[("grant_type", "client_credentials")]).await.body["access_token"].clone();
    let first_kid = jsonwebtoken::decode_header(first.as_str().unwrap()).unwrap().kid.unwrap();
    app.advance(29 * 86_400).await;
    assert!(app.events("keys_rotated").await.is_empty(), "not yet due");
    app.advance(86_400 + 3_600).await;
    let events = app.events("keys_rotated").await;
    assert_eq!(events.len(), 1, "rotated once, by the hourly job");
    assert_eq!(events[0].2["automatic"], true);
    assert_eq!(events[0].2["rotation_days"], 30);
    app.advance(LEAD).await;
    let next = app.token(&client, &[("grant_type", "client_credentials")]).await.body["access_token"].clone();
    let next_kid = jsonwebtoken::decode_header(next.as_str().unwrap()).unwrap().kid.unwrap();
    assert_ne!(next_kid, first_kid);
    assert_eq!(events[0].2["signing_key_id"], next_kid.as_str());
}

/// node's `jose` as a resource server (`tests/relying-party/resource_server.mjs`): each token is
/// checked by a verifier with jose's defaults and by one that keeps the JWKS for its `max-age` and
/// never fetches it on an unknown key; the service's clock is aged into their caches.
struct ResourceServer(NodeScript);

impl ResourceServer {
    fn start(app: &TestApp, realm: &str) -> Self {
        let issuer = format!("{}/realms/{realm}", app.base);
        let jwks = format!("{issuer}/protocol/openid-connect/certs");
        Self(NodeScript::start("resource_server.mjs", "jose", &[&jwks, &issuer]))
    }

    /// Both verifiers' answers on `token` at the service's present instant.
    async fn verify(&mut self, app: &TestApp, token: &str) -> Value {
        let line = json!({ "token": token, "now": app.state.clock.now().timestamp() });
        self.0.send(&line.to_string()).await;
        self.0.next().await
    }
}

/// Asserts that both verifiers accepted a token signed by `kid`, each having fetched the JWKS
/// `fetches` times in all.
fn accepted(answer: &Value, kid: &str, fetches: [u64; 2]) {
    for (verifier, fetched) in ["jose", "cache"].into_iter().zip(fetches) {
        assert_eq!(answer[verifier]["ok"], true, "{verifier}: {answer}");
        assert_eq!(answer[verifier]["kid"], kid, "{verifier}: {answer}");
        assert_eq!(answer[verifier]["fetches"], fetched, "{verifier} fetched the JWKS: {answer}");
    }
}

#[tokio::test]
async fn verifiers_that_cached_the_jwks_before_a_rotation_accept_every_token_after_it() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let mut api = ResourceServer::start(&app, "acme");
    let first = client_token(&app, &client).await;
    let first_kid = kid_of(&first);
    accepted(&api.verify(&app, &first).await, &first_kid, [1, 1]);

    // Both cached the JWKS a moment ago. The first token after the rotation is signed by a key
    // they hold: neither fetches.
    let rotated = app.post("/realms/acme/clients/agent/signing-keys/rotate", json!({})).await;
    let next_kid = rotated.data()["signingKeyId"].as_str().unwrap().to_owned();
    accepted(&api.verify(&app, &client_token(&app, &client).await).await, &first_kid, [1, 1]);

    // Shortly before the next key signs, the strict cache's copy is older than the JWKS max-age: it
    // fetches again (jose keeps its copy) and so learns the next key before it signs.
    app.advance(LEAD - 30).await;
    let last_old = client_token(&app, &client).await;
    accepted(&api.verify(&app, &last_old).await, &first_kid, [1, 2]);

    // The next key signs: the strict cache, which never fetches on an unknown key, already holds
    // it; jose fetches on the unknown key as it is built to. Tokens of the old key still verify.
    app.advance(30).await;
    let next = client_token(&app, &client).await;
    accepted(&api.verify(&app, &next).await, &next_kid, [2, 2]);
    accepted(&api.verify(&app, &last_old).await, &first_kid, [2, 2]);
}

#[tokio::test]
async fn a_new_clients_first_token_is_signed_by_a_key_published_with_the_client() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let web = app.create_client("acme", "web", &["client_credentials"], &[]).await;
    let agent = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let agent_kid = kids(&app, "agent").await[0].0.clone();
    // The verifiers fetch the JWKS for a token of another client, after the agent was created and
    // before it asked for any token: the agent's first token needs no fetch.
    let mut api = ResourceServer::start(&app, "acme");
    accepted(&api.verify(&app, &client_token(&app, &web).await).await, &kids(&app, "web").await[0].0, [1, 1]);
    let first = client_token(&app, &agent).await;
    accepted(&api.verify(&app, &first).await, &agent_kid, [1, 1]);
}
