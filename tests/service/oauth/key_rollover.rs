//! Signing keys and their rollover: a realm's keys sign its clients' tokens, a client given keys of
//! its own publishes them before they sign, a rotation publishes the next key before it signs, and
//! resource servers that cache the JWKS (node's `jose`, and a strict cache that never refetches on
//! an unknown key) accept every token across a rotation.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::node::NodeScript;
use crate::support::{TestApp, TestClient, spawn_app};

/// How long a rotation publishes the next key before it signs.
const LEAD: i64 = castellan::directory::keys::NEXT_KEY_LEAD.num_seconds();

/// The access token lifetime of the test services.
const TOKEN_SECONDS: i64 = 300;

fn kid_of(token: &str) -> String {
    jsonwebtoken::decode_header(token).unwrap().kid.unwrap()
}

/// The keys a listing shows (`/realms/acme/signing-keys` for the realm's, `…/clients/{client}/…`
/// for those that sign a client's tokens): `(kid, status)`, newest first.
async fn listed(app: &TestApp, path: &str) -> Vec<(String, String)> {
    let listed = app.get(path).await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    listed
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|key| (key["id"].as_str().unwrap().to_owned(), key["status"].as_str().unwrap().to_owned()))
        .collect()
}

async fn realm_kids(app: &TestApp) -> Vec<(String, String)> {
    listed(app, "/realms/acme/signing-keys").await
}

async fn kids(app: &TestApp, client: &str) -> Vec<(String, String)> {
    listed(app, &format!("/realms/acme/clients/{client}/signing-keys")).await
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
async fn a_rotation_of_the_realms_keys_publishes_the_next_key_before_it_signs_and_revoking_switches_at_once() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let other = app.create_client("acme", "other", &["client_credentials"], &[]).await;
    let old = client_token(&app, &client).await;
    let first_kid = realm_kids(&app).await[0].0.clone();
    assert_eq!(kid_of(&old), first_kid, "the realm's key signs the client's first token");
    assert_eq!(kid_of(&client_token(&app, &other).await), first_kid, "and every other client's");
    assert_eq!(kids(&app, "agent").await, realm_kids(&app).await, "a client lists the keys that sign for it");
    let refused = app.post("/realms/acme/clients/agent/signing-keys/rotate", json!({})).await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "a client on the realm's keys rotates nothing of its own");

    let rotated = app.post("/realms/acme/signing-keys/rotate", json!({})).await;
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
        realm_kids(&app).await,
        [(new_kid.clone(), "Next".to_owned()), (first_kid.clone(), "Active".to_owned())]
    );

    app.advance(LEAD - 1).await;
    let last_old = client_token(&app, &client).await;
    assert_eq!(kid_of(&last_old), first_kid, "up to the last moment of the lead");
    app.advance(1).await;
    assert_eq!(kid_of(&client_token(&app, &client).await), new_kid, "the new key signs once its lead is over");
    assert_eq!(
        realm_kids(&app).await,
        [(new_kid.clone(), "Active".to_owned()), (first_kid.clone(), "Retired".to_owned())]
    );
    assert!(introspect_active(&app, &client, &last_old).await, "a retired key's tokens live out their lifetime");
    app.advance(TOKEN_SECONDS - 1).await;
    assert!(published_kids(&app, "acme").await.contains(&first_kid), "published while its last token lives");
    app.advance(2).await;
    assert!(!published_kids(&app, "acme").await.contains(&first_kid), "gone once its tokens have expired");

    // A rotation that revokes withdraws every earlier key at once, and its new key signs at once.
    let fresh = client_token(&app, &client).await;
    assert!(introspect_active(&app, &client, &fresh).await);
    let revoking = app.post("/realms/acme/signing-keys/rotate", json!({ "revokeOldKeys": true })).await;
    assert_eq!(revoking.data()["revokedKeysCount"], 2);
    let revoking_kid = revoking.data()["signingKeyId"].as_str().unwrap().to_owned();
    assert!(!introspect_active(&app, &client, &fresh).await, "tokens of a revoked key are inactive at once");
    assert_eq!(published_kids(&app, "acme").await, std::slice::from_ref(&revoking_kid));
    assert_eq!(kid_of(&client_token(&app, &client).await), revoking_kid);

    let trail = app.get("/audit-trail?resourceType=signing_key&realmId=acme").await;
    let done = trail.items().iter().filter(|row| row["outcome"] == "Succeeded" && row.get("clientId").is_none());
    assert_eq!(done.count(), 2, "each rotation of the realm's keys is in the trail: {:?}", trail.body);
    let rotated = app.events("keys_rotated").await;
    assert_eq!(rotated.len(), 2, "each rotation of the realm's keys raises keys_rotated: {rotated:?}");
    assert!(rotated.iter().all(|(realm, client, _)| realm.as_deref() == Some("acme") && client.is_none()));
    assert_eq!(rotated[1].2["signing_key_id"], revoking_kid.as_str());
    assert_eq!(rotated[1].2["revoked_keys_count"], 2);
    let bad = app.post("/realms/acme/signing-keys/rotate", json!({ "revokeOldKeys": "yes" })).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_client_given_keys_of_its_own_publishes_its_first_before_it_signs_and_rotates_alone() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let shared = app.create_client("acme", "shared", &["client_credentials"], &[]).await;
    let body = json!({ "id": "own", "clientConfiguration": { "grantTypes": ["client_credentials"] },
                       "signingKey": { "keys": "Own" } });
    let created = app.post("/realms/acme/clients", body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    assert_eq!(created.data()["signingKey"]["keys"], "Own");
    let own = TestClient {
        realm: "acme".into(),
        id: "own".into(),
        secret: created.data()["clientSecret"].as_str().unwrap().to_owned(),
    };
    let realm_kid = kid_of(&client_token(&app, &shared).await);
    let [(own_kid, stage)] = kids(&app, "own").await.try_into().unwrap();
    assert_eq!(stage, "Next", "its first key is published, not signing yet");
    assert!(published_kids(&app, "acme").await.contains(&own_kid));
    assert_eq!(kid_of(&client_token(&app, &own).await), realm_kid, "the realm's key signs meanwhile");
    app.advance(LEAD).await;
    let own_token = client_token(&app, &own).await;
    assert_eq!(kid_of(&own_token), own_kid, "then its own");
    let shared_token = client_token(&app, &shared).await;

    // Revoking its keys ends its tokens alone.
    let revoked = app.post("/realms/acme/clients/own/signing-keys/rotate", json!({ "revokeOldKeys": true })).await;
    assert_eq!(revoked.status, StatusCode::OK, "{:?}", revoked.body);
    assert!(!introspect_active(&app, &own, &own_token).await);
    assert!(introspect_active(&app, &shared, &shared_token).await, "another client's tokens live on");
    let events = app.events("keys_rotated").await;
    assert_eq!((events.len(), events[0].1.as_deref()), (1, Some("own")));
    assert_eq!(events[0].2["revoked_keys_count"], 1);

    // Back to the realm's keys: its own stop signing and stay published until their tokens expire.
    let latest = client_token(&app, &own).await;
    let back = app.put("/realms/acme/clients/own", json!({ "signingKey": { "keys": "Realm" } })).await;
    assert_eq!(back.status, StatusCode::OK, "{:?}", back.body);
    assert_eq!(kid_of(&client_token(&app, &own).await), realm_kid);
    assert!(introspect_active(&app, &own, &latest).await, "its own key's last token lives out its lifetime");
    app.advance(TOKEN_SECONDS + 1).await;
    assert_eq!(published_kids(&app, "acme").await, [realm_kid], "then the realm's JWKS holds the realm's key alone");
}

#[tokio::test]
async fn keys_of_its_own_rotate_on_schedule_when_the_clock_passes_the_rotation_period() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let on_realm = app.put("/realms/acme/clients/agent", json!({ "signingKey": { "rotationDays": 30 } })).await;
    assert_eq!(on_realm.status, StatusCode::BAD_REQUEST, "the realm's keys have no schedule of a client's");
    assert_eq!(on_realm.refused_fields(), [("signingKey.rotationDays".to_owned(), "Conflict".to_owned())]);
    let set =
        app.put("/realms/acme/clients/agent", json!({ "signingKey": { "keys": "Own", "rotationDays": 30 } })).await;
    assert_eq!(set.data()["signingKey"]["rotationDays"], 30);
    app.advance(LEAD).await;
    let first = app.token(&client, &[("grant_type", "client_credentials")]).await.body["access_token"].clone();
    let first_kid = jsonwebtoken::decode_header(first.as_str().unwrap()).unwrap().kid.unwrap();
    assert_eq!(first_kid, kids(&app, "agent").await[0].0, "its own key");
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
    let rotated = app.post("/realms/acme/signing-keys/rotate", json!({})).await;
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
async fn a_new_clients_first_token_is_signed_by_a_key_verifiers_already_hold() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let web = app.create_client("acme", "web", &["client_credentials"], &[]).await;
    // The verifiers fetch the JWKS for a token of one client; another client is created after they
    // did: its first token is signed by a key they hold, and needs no fetch.
    let mut api = ResourceServer::start(&app, "acme");
    let web_token = client_token(&app, &web).await;
    accepted(&api.verify(&app, &web_token).await, &kid_of(&web_token), [1, 1]);
    let agent = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    let first = client_token(&app, &agent).await;
    accepted(&api.verify(&app, &first).await, &kid_of(&web_token), [1, 1]);
}

/// The JWKS is built once per change of the realm's keys and served from memory, with an entity
/// tag: a verifier asking again with it is told nothing changed, until a rotation changes it.
#[tokio::test]
async fn the_jwks_is_served_from_memory_with_a_tag_that_changes_with_the_keys() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let client = app.create_client("acme", "agent", &["client_credentials"], &[]).await;
    client_token(&app, &client).await;
    let url = format!("{}/realms/acme/protocol/openid-connect/certs", app.base);
    let first = app.http.get(&url).send().await.unwrap();
    assert_eq!(first.headers()["cache-control"], "public, max-age=60");
    assert_eq!(first.headers()["content-type"], "application/jwk-set+json");
    let tag = first.headers()["etag"].to_str().unwrap().to_owned();
    let body: Value = first.json().await.unwrap();
    assert_eq!(body["keys"].as_array().unwrap().len(), 1);
    let again = app.http.get(&url).header("if-none-match", &tag).send().await.unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(again.headers()["etag"], tag.as_str());
    let hits = |metrics: &str| {
        let line =
            metrics.lines().find(|l| l.starts_with(r#"castellan_cache_lookups_total{cache="jwks",result="hit"}"#));
        line.and_then(|l| l.rsplit(' ').next()).and_then(|n| n.parse::<u64>().ok()).unwrap_or(0)
    };
    assert!(hits(&app.state.metrics.render()) >= 1, "the second answer came from memory");

    app.post("/realms/acme/signing-keys/rotate", json!({})).await;
    let rotated = app.http.get(&url).header("if-none-match", &tag).send().await.unwrap();
    assert_eq!(rotated.status(), StatusCode::OK, "a rotation changes the set");
    assert_ne!(rotated.headers()["etag"], tag.as_str());
    let body: Value = rotated.json().await.unwrap();
    assert_eq!(body["keys"].as_array().unwrap().len(), 2, "the next key is published with the current one");
}
