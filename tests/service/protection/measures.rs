//! Attack protection over real HTTP: every rule at its threshold boundary, driven by the
//! manual clock, with the counters in memory and again in a real Redis.
//!
//! Sources are told apart by `X-Forwarded-For` (the tests' host trusts its loopback proxy).

use castellan::Services;
use castellan::kernel::config::Settings;
use castellan::protection::Judged;
use castellan::protection::detection::{
    Attempt, AttemptKind, Classification, Counts, Decision, Measure, MeasureKind, Outcome, Severity, Source,
};
use castellan::protection::incidents::{self, Attack};
use castellan::store::{Backend, Transaction, clients, realms};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::smtp::MailServer;
use crate::support::{Answer, TestApp, TestClient, TestDatabase, answer, spawn_with};

pub fn redis_url() -> String {
    std::env::var("TEST_REDIS_URL").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| "redis://127.0.0.1:6379".into())
}

/// Where attack protection counts.
#[derive(Debug, Clone, Copy)]
enum Counting {
    Memory,
    Redis,
}

pub struct Protected {
    pub app: TestApp,
    pub realm: String,
    pub client: TestClient,
}

const MINUTE: i64 = 60;
pub const PASSWORD: &str = "correct horse battery staple 7";

async fn protected(counting: Counting, adjust: impl FnOnce(&mut Settings)) -> Protected {
    let app = spawn_with(TestDatabase::new().await, |settings| {
        if matches!(counting, Counting::Redis) {
            settings.redis_url = Some(redis_url());
        }
        adjust(settings);
    })
    .await;
    protecting(app).await
}

/// `app` with a realm of attack protection's tests and a client `shop` of the password grant.
pub async fn protecting(app: TestApp) -> Protected {
    // A realm of its own: Redis is shared by every test.
    let realm = format!("atk-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let created = app.create_realm(&realm).await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let client = app.create_client(&realm, "shop", &["password"], &[]).await;
    Protected { app, realm, client }
}

impl Protected {
    pub async fn sign_in(&self, username: &str, password: &str, from: &str) -> Answer {
        let url = format!("{}/realms/{}/protocol/openid-connect/token", self.app.base, self.realm);
        let response = self
            .app
            .http
            .post(url)
            .basic_auth(&self.client.id, Some(&self.client.secret))
            .header("x-forwarded-for", from)
            .form(&[("grant_type", "password"), ("username", username), ("password", password)])
            .send()
            .await
            .expect("the service answers");
        answer(response).await
    }

    /// Fails `count` times from `from`, each against a name of its own the realm never had.
    pub async fn fail_unknown(&self, prefix: &str, count: usize, from: &str) {
        for n in 0..count {
            let refused = self.sign_in(&format!("{prefix}-{n}"), "guess", from).await;
            assert_eq!(refused.body["error_code"], "InvalidCredentials", "attempt {n}: {:?}", refused.body);
        }
    }

    pub async fn user(&self, username: &str) -> String {
        self.app.create_user(&self.realm, username, PASSWORD).await
    }

    pub async fn incidents(&self) -> Vec<Value> {
        let listed = self.app.get(&format!("/threat-incidents?realmId={}", self.realm)).await;
        assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
        listed.items().clone()
    }

    /// The realm's one incident, read whole.
    async fn only_incident(&self) -> Value {
        let incidents = self.incidents().await;
        assert_eq!(incidents.len(), 1, "{incidents:?}");
        self.incident(incidents[0]["id"].as_str().unwrap()).await
    }

    pub async fn incident(&self, id: &str) -> Value {
        let read = self.app.get(&format!("/threat-incidents/{id}")).await;
        assert_eq!(read.status, StatusCode::OK, "{:?}", read.body);
        read.data().clone()
    }
}

/// Runs a scenario as two tests: with the counters in memory, and in Redis.
macro_rules! in_memory_and_in_redis {
    ($scenario:ident) => {
        mod $scenario {
            #[tokio::test]
            async fn in_memory() {
                super::$scenario(super::Counting::Memory).await;
            }

            #[tokio::test]
            async fn in_redis() {
                super::$scenario(super::Counting::Redis).await;
            }
        }
    };
}

fn blocked(answer: &Answer) -> bool {
    answer.status == StatusCode::TOO_MANY_REQUESTS && answer.body["error_code"] == "TooManyRequests"
}

async fn eight_accounts_block_a_source_and_seven_do_not(counting: Counting) {
    let p = protected(counting, |_| {}).await;
    p.user("ada").await;
    let source = "198.51.100.7";
    p.fail_unknown("list", 7, source).await;
    // Seven accounts and an eighth failure against one of them: below both thresholds.
    let again = p.sign_in("list-0", "guess", source).await;
    assert_eq!(again.body["error_code"], "InvalidCredentials");
    assert!(p.incidents().await.is_empty(), "no detection yet");
    // The eighth account: the attempt is answered as usual, and the source is blocked.
    let eighth = p.sign_in("list-7", "guess", source).await;
    assert_eq!(eighth.body["error_code"], "InvalidCredentials");

    let unknown = p.sign_in("nobody", "guess", source).await;
    let known_and_right = p.sign_in("ada", PASSWORD, source).await;
    assert!(blocked(&unknown) && blocked(&known_and_right), "{:?} {:?}", unknown.body, known_and_right.body);
    assert_eq!(unknown.body, known_and_right.body, "the same answer whatever was typed");
    let elsewhere = p.sign_in("ada", PASSWORD, "198.51.100.8").await;
    assert_eq!(elsewhere.status, StatusCode::OK, "only the source is blocked: {:?}", elsewhere.body);

    let incident = p.only_incident().await;
    assert_eq!(incident["kind"], "CredentialStuffing", "every name was unknown");
    assert_eq!(incident["title"], "Credential stuffing");
    assert_eq!(incident["severity"], "Medium");
    assert_eq!(incident["status"], "Active");
    assert_eq!(incident["clientId"], "shop");
    assert_eq!(incident["blockedSources"], 1);
    assert_eq!(incident["refusedAttempts"], 2, "the two refused attempts are counted");
    let measure = &incident["measures"][0];
    assert_eq!(measure["type"], "SourceBlocked");
    assert_eq!(measure["targetAddress"], source);
    assert_eq!(measure["standing"], "InForce");
    let reasons = measure["reasons"].as_array().unwrap();
    assert!(reasons.iter().any(|r| r.as_str().unwrap().contains("8 accounts")), "{reasons:?}");

    // Fifteen minutes later the block has lapsed.
    p.app.advance(15 * MINUTE - 1).await;
    assert!(blocked(&p.sign_in("ada", PASSWORD, source).await), "still within 15 minutes");
    p.app.advance(1).await;
    let after = p.sign_in("ada", PASSWORD, source).await;
    assert_eq!(after.status, StatusCode::OK, "{:?}", after.body);
    let incident = p.only_incident().await;
    assert_eq!(incident["measures"][0]["standing"], "Lapsed");
}

in_memory_and_in_redis!(eight_accounts_block_a_source_and_seven_do_not);

/// Fails `count` times against one unknown name from `source`: refused as a wrong password, or
/// by the realm lockout, which locks a name the realm does not have out as it would an account.
async fn fail_one_name(p: &Protected, count: usize, source: &str) {
    for n in 0..count {
        let refused = p.sign_in("ghost", "guess", source).await;
        let code = refused.body["error_code"].as_str().unwrap_or("");
        assert!(matches!(code, "InvalidCredentials" | "UserTemporarilyLocked"), "attempt {n}: {:?}", refused.body);
    }
}

async fn thirty_failures_block_and_each_block_in_a_day_lasts_longer(counting: Counting) {
    let p = protected(counting, |_| {}).await;
    let source = "192.0.2.9";
    fail_one_name(&p, 29, source).await;
    assert!(p.incidents().await.is_empty(), "29 failures are not enough");
    fail_one_name(&p, 1, source).await;
    assert!(blocked(&p.sign_in("ghost", "guess", source).await), "the 30th failure blocks");

    let lapse = |incident: &Value| {
        let measure = incident["measures"].as_array().unwrap().last().unwrap().clone();
        let created = chrono::DateTime::parse_from_rfc3339(measure["createdAt"].as_str().unwrap()).unwrap();
        let lapses = chrono::DateTime::parse_from_rfc3339(measure["lapsesAt"].as_str().unwrap()).unwrap();
        (lapses - created).num_seconds()
    };
    let first = p.incidents().await[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(lapse(&p.incident(&first).await), 15 * MINUTE);

    // The second block within 24 hours lasts an hour, and joins the incident (within 30 minutes).
    p.app.advance(15 * MINUTE).await;
    fail_one_name(&p, 30, source).await;
    assert!(blocked(&p.sign_in("ghost", "guess", source).await));
    let incident = p.incident(&first).await;
    assert_eq!(lapse(&incident), 60 * MINUTE);
    assert_eq!(incident["detections"], 2);
    assert_eq!(incident["severity"], "Medium");

    // An hour later the incident was resolved for quiet; the third block lasts a day and is High.
    p.app.advance(60 * MINUTE).await;
    assert_eq!(p.incident(&first).await["status"], "Resolved");
    fail_one_name(&p, 30, source).await;
    assert!(blocked(&p.sign_in("ghost", "guess", source).await));
    let incidents = p.incidents().await;
    assert_eq!(incidents.len(), 2, "a new incident: the first is resolved");
    let third = p.incident(incidents[0]["id"].as_str().unwrap()).await;
    assert_eq!(lapse(&third), 24 * 60 * MINUTE);
    assert_eq!(third["severity"], "High", "a source blocked for the third time within 24 hours");
}

in_memory_and_in_redis!(thirty_failures_block_and_each_block_in_a_day_lasts_longer);

async fn attempts_decided_at_once_block_their_source_once(counting: Counting) {
    let p = protected(counting, |_| {}).await;
    let source = "192.0.2.44";
    p.fail_unknown("list", 7, source).await;
    // Six eighth accounts at once: each may be decided on before another's block is in force.
    let answers = tokio::join!(
        p.sign_in("more-1", "guess", source),
        p.sign_in("more-2", "guess", source),
        p.sign_in("more-3", "guess", source),
        p.sign_in("more-4", "guess", source),
        p.sign_in("more-5", "guess", source),
        p.sign_in("more-6", "guess", source),
    );
    for answer in [answers.0, answers.1, answers.2, answers.3, answers.4, answers.5] {
        assert!(answer.body["error_code"] == "InvalidCredentials" || blocked(&answer), "{:?}", answer.body);
    }
    let incidents = p.incidents().await;
    assert_eq!(incidents.len(), 1);
    let id = incidents[0]["id"].as_str().unwrap().to_owned();
    let incident = p.incident(&id).await;
    assert_eq!(incident["blockedSources"], 1, "{incident}");
    assert_eq!(incident["measures"].as_array().unwrap().len(), 1, "{incident}");

    // The block was counted once: the next one within the day is the second, lasting an hour.
    p.app.advance(15 * MINUTE).await;
    p.fail_unknown("again", 8, source).await;
    assert!(blocked(&p.sign_in("ghost", "guess", source).await));
    p.app.advance(60 * MINUTE - 1).await;
    assert!(blocked(&p.sign_in("ghost", "guess", source).await), "still within the hour");
    p.app.advance(1).await;
    let after = p.sign_in("ghost", "guess", source).await;
    assert_eq!(after.body["error_code"], "InvalidCredentials", "an hour, not a day: {:?}", after.body);
}

in_memory_and_in_redis!(attempts_decided_at_once_block_their_source_once);

/// Records a detection of `classification` that blocks `address` for 15 minutes, as an attempt's
/// sign-in would; the transaction is left for the caller to commit.
async fn record_block(
    state: &Services,
    realm: &str,
    client: &str,
    classification: Classification,
    address: &str,
) -> Transaction {
    let realm = realms::find(state.store.pool(), realm).await.unwrap().expect("realm");
    let client = clients::find(state.store.pool(), &realm.id, client).await.unwrap().expect("client");
    let decision = Decision {
        measures: vec![Measure { kind: MeasureKind::SourceBlocked, seconds: Some(15 * 60) }],
        classification: Some(classification),
        severity: Some(Severity::Medium),
        reasons: vec![format!("{classification:?} from {address}")],
    };
    let source = Source { approved_for_account: false, datacenter: false, tor: false, shared_network: false };
    let counts = Counts { source_failures: 8, source_accounts: 8, ..Counts::default() };
    let attempt =
        Attempt { kind: AttemptKind::Password, outcome: Outcome::Failed, account_known: false, source, counts };
    let attack = Attack { realm: &realm, client: &client, user: None, address };
    let mut tx = state.store.begin().await.unwrap();
    incidents::record(state, &state.protection, &mut tx, &attack, &Judged { decision, attempt }, state.clock.now())
        .await
        .unwrap();
    tx
}

#[tokio::test]
async fn a_source_blocked_while_another_attempt_was_decided_opens_no_second_incident() {
    let p = protected(Counting::Memory, |_| {}).await;
    let source = "192.0.2.45";
    // Both decided before either was recorded, the second seeing more accounts than the first.
    record_block(&p.app.state, &p.realm, &p.client.id, Classification::CredentialStuffing, source)
        .await
        .commit()
        .await
        .unwrap();
    record_block(&p.app.state, &p.realm, &p.client.id, Classification::PasswordSpraying, source)
        .await
        .commit()
        .await
        .unwrap();

    let incident = p.only_incident().await;
    assert_eq!(incident["kind"], "CredentialStuffing");
    assert_eq!(incident["detections"], 1, "{incident}");
    assert_eq!(incident["blockedSources"], 1, "{incident}");
    assert_eq!(incident["measures"].as_array().unwrap().len(), 1, "{incident}");
}

#[tokio::test]
async fn detections_recorded_at_once_join_one_incident() {
    let p = protected(Counting::Memory, |_| {}).await;
    let first =
        record_block(&p.app.state, &p.realm, &p.client.id, Classification::CredentialStuffing, "192.0.2.46").await;
    let second = {
        let (state, realm, client) = (p.app.state.clone(), p.realm.clone(), p.client.id.clone());
        tokio::spawn(async move {
            let tx = record_block(&state, &realm, &client, Classification::CredentialStuffing, "192.0.2.47").await;
            tx.commit().await.unwrap();
        })
    };
    // The second detection waits for the first's transaction: on SQLite for the one write
    // connection, on PostgreSQL for the realm's detection lock.
    if p.app.state.store.backend() == Backend::Postgres {
        let watcher = p.app.database().await;
        loop {
            let (waiting,): (i64,) = sqlx::query_as(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' \
                 AND query LIKE '%pg_advisory_xact_lock%'",
            )
            .fetch_one(watcher.pool())
            .await
            .unwrap();
            if waiting > 0 || second.is_finished() {
                break;
            }
            tokio::task::yield_now().await;
        }
    }
    first.commit().await.unwrap();
    second.await.unwrap();

    let incident = p.only_incident().await;
    assert_eq!(incident["detections"], 2, "{incident}");
    assert_eq!(incident["blockedSources"], 2, "{incident}");
    assert_eq!(incident["measures"].as_array().unwrap().len(), 2, "{incident}");
}

#[tokio::test]
async fn datacenter_and_tor_sources_are_blocked_at_half_the_thresholds() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("networks-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let (datacenters, tor) = (dir.join("datacenters.txt"), dir.join("tor-exits.txt"));
    std::fs::write(&datacenters, "# a hosting provider\n203.0.113.0/24\n").unwrap();
    std::fs::write(&tor, "198.51.100.200\n").unwrap();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let p = protected(Counting::Memory, |settings| {
        settings.datacenter_networks_file = Some(datacenters.clone());
        settings.tor_exits_file = Some(tor.clone());
        settings.country_database_file = Some(fixtures.join("countries.mmdb"));
        settings.network_database_file = Some(fixtures.join("networks.mmdb"));
    })
    .await;
    // An ordinary address stays open after four accounts.
    p.fail_unknown("plain", 4, "192.0.2.50").await;
    assert!(!blocked(&p.sign_in("plain-0", "guess", "192.0.2.50").await));
    for source in ["203.0.113.77", "198.51.100.200"] {
        p.fail_unknown(source, 3, source).await;
        assert!(!blocked(&p.sign_in("x", "guess", source).await), "three accounts and a fourth attempt: open");
        // `x` was the fourth account: blocked now.
        assert!(blocked(&p.sign_in("y", "guess", source).await), "{source}: four accounts block");
    }
    let incident = p.incident(p.incidents().await[0]["id"].as_str().unwrap()).await;
    let measures = incident["measures"].as_array().unwrap();
    assert_eq!(measures.len(), 2);
    let reasons: Vec<String> =
        measures.iter().flat_map(|m| m["reasons"].as_array().unwrap().clone()).map(|r| r.to_string()).collect();
    assert!(reasons.iter().any(|r| r.contains("datacenter network") && r.contains("halved")), "{reasons:?}");
    assert!(reasons.iter().any(|r| r.contains("Tor exit") && r.contains("halved")), "{reasons:?}");

    // Countries and networks of the blocked sources, from the MaxMind-format databases.
    let tor_block = measures.iter().find(|m| m["targetAddress"] == "198.51.100.200").unwrap();
    assert_eq!((&tor_block["country"], &tor_block["network"]), (&json!("NL"), &json!("AS64500 Example Hosting")));
    let datacenter_block = measures.iter().find(|m| m["targetAddress"] == "203.0.113.77").unwrap();
    assert_eq!(datacenter_block["country"], "BR");
    assert!(datacenter_block.get("network").is_none(), "unknown to the network database");
    let summary = p.app.get(&format!("/threat-incidents/summary?realmId={}", p.realm)).await;
    let names = |list: &str| -> Vec<(String, i64)> {
        summary.data()[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["name"].as_str().unwrap().to_owned(), s["blockedSources"].as_i64().unwrap()))
            .collect()
    };
    assert_eq!(names("countries"), [("BR".to_owned(), 1), ("NL".to_owned(), 1)]);
    assert_eq!(names("networks"), [("AS64500 Example Hosting".to_owned(), 1), ("Unknown".to_owned(), 1)]);
}

async fn smart_lockout_closes_an_account_to_strangers_only(counting: Counting) {
    let p = protected(counting, |_| {}).await;
    let ada = p.user("ada").await;
    let home = "192.0.2.10";
    assert_eq!(p.sign_in("ada", PASSWORD, home).await.status, StatusCode::OK, "home is approved now");
    // Nine failures from strangers, each from an address of its own (no source is blocked).
    for n in 0..9 {
        p.sign_in("ada", "guess", &format!("203.0.113.{n}")).await;
    }
    let stranger = p.sign_in("ada", PASSWORD, "198.51.100.1").await;
    assert_eq!(stranger.status, StatusCode::OK, "nine failures do not close the account: {:?}", stranger.body);
    // The tenth: closed to every address it was never approved at.
    p.sign_in("ada", "guess", "203.0.113.9").await;
    let refused = p.sign_in("ada", PASSWORD, "198.51.100.2").await;
    assert_eq!(refused.body["error_code"], "InvalidCredentials", "refused as if wrong: {:?}", refused.body);
    assert_eq!(p.sign_in("ada", PASSWORD, home).await.status, StatusCode::OK, "approved addresses keep working");
    assert_eq!(p.sign_in("ada", PASSWORD, "198.51.100.1").await.status, StatusCode::OK, "approved by its sign-in");

    let standing = p.app.get(&format!("/realms/{}/users/{ada}/threat-standing", p.realm)).await;
    assert_eq!(standing.status, StatusCode::OK, "{:?}", standing.body);
    let in_force = standing.data()["measuresInForce"].as_array().unwrap();
    assert_eq!(in_force.len(), 1);
    assert_eq!(in_force[0]["type"], "ClosedToUnknownAddresses");
    assert_eq!(standing.data()["passwordExposed"], false);
    let incident = p.incident(p.incidents().await[0]["id"].as_str().unwrap()).await;
    assert_eq!(incident["kind"], "BruteForce");
    assert_eq!(incident["severity"], "High", "brute force on one account");
    assert_eq!(incident["protectedAccounts"], 1);

    // Lifted by an operator: strangers are let in again, and the failures that closed the account
    // are forgotten, so one more does not close it again at once.
    let measure = in_force[0]["id"].as_str().unwrap();
    let lifted = p.app.post(&format!("/threat-incidents/mitigations/{measure}/revoke"), json!({})).await;
    assert_eq!(lifted.status, StatusCode::OK, "{:?}", lifted.body);
    p.sign_in("ada", "guess", "203.0.113.50").await;
    let after_lift = p.sign_in("ada", PASSWORD, "198.51.100.4").await;
    assert_eq!(after_lift.status, StatusCode::OK, "{:?}", after_lift.body);

    // Closed again by ten more failures; 30 minutes later it opens by itself.
    for n in 0..10 {
        p.sign_in("ada", "guess", &format!("203.0.113.{}", 60 + n)).await;
    }
    assert_eq!(p.sign_in("ada", PASSWORD, "198.51.100.3").await.body["error_code"], "InvalidCredentials");
    p.app.advance(30 * MINUTE).await;
    let reopened = p.sign_in("ada", PASSWORD, "198.51.100.3").await;
    assert_eq!(reopened.status, StatusCode::OK, "30 minutes later: {:?}", reopened.body);
}

in_memory_and_in_redis!(smart_lockout_closes_an_account_to_strangers_only);

async fn a_correct_password_from_a_list_is_exposed(counting: Counting) {
    let mail = MailServer::start().await;
    let url = mail.url.clone();
    let p = protected(counting, move |settings| settings.smtp_url = Some(url)).await;
    let ada = p.user("ada").await;
    let home = "192.0.2.10";
    assert_eq!(p.sign_in("ada", PASSWORD, home).await.status, StatusCode::OK);
    let source = "198.51.100.66";
    p.fail_unknown("list", 5, source).await;
    let exposed = p.sign_in("ada", PASSWORD, source).await;
    assert_eq!(exposed.body["error_code"], "InvalidCredentials", "refused as if wrong: {:?}", exposed.body);

    // The holder is told by e-mail, branded for the client signed in to.
    let letter = mail.letter(&p.app, "ada@example.com").await;
    assert!(letter.data.contains("shop: your password must be changed"), "{}", letter.data);
    let compromised = p.app.events("credential_compromised").await;
    assert_eq!(compromised.len(), 1);
    assert_eq!(compromised[0].2["user_id"], ada.as_str());
    assert_eq!(compromised[0].2["ip_address"], source);
    let detected = p.app.events("attack_detected").await;
    assert_eq!(detected.len(), 1, "once per incident");

    let incident = p.incident(p.incidents().await[0]["id"].as_str().unwrap()).await;
    assert_eq!(incident["severity"], "Critical");
    assert_eq!(incident["kind"], "CredentialStuffing");
    assert_eq!(incident["exposedPasswords"], 1);
    let measure = &incident["measures"][0];
    assert_eq!(measure["type"], "PasswordExposed");
    assert_eq!(measure["standing"], "ChangeRequired");
    assert!(measure.get("lapsesAt").is_none(), "never lapses");
    let revoke = p
        .app
        .post(&format!("/threat-incidents/mitigations/{}/revoke", measure["id"].as_str().unwrap()), json!({}))
        .await;
    assert_eq!(revoke.status, StatusCode::CONFLICT, "resolved only by a password change");

    // The attacker keeps being refused as if wrong; the owner at home is asked to change it.
    let again = p.sign_in("ada", PASSWORD, "203.0.113.4").await;
    assert_eq!(again.body["error_code"], "InvalidCredentials");
    let owner = p.sign_in("ada", PASSWORD, home).await;
    assert_eq!(owner.body["error_code"], "PasswordChangeRequired", "{:?}", owner.body);

    let exposures = p.app.get(&format!("/threat-incidents/exposures?realmId={}&unresolvedOnly=true", p.realm)).await;
    assert_eq!(exposures.items().len(), 1);
    assert_eq!(exposures.items()[0]["userId"], ada.as_str());
    assert_eq!(exposures.items()[0]["exposures"], 1);
    let standing = p.app.get(&format!("/realms/{}/users/{ada}/threat-standing", p.realm)).await;
    assert_eq!(standing.data()["passwordExposed"], true);

    // A new password resolves the exposure.
    let changed =
        p.app.put(&format!("/realms/{}/users/{ada}", p.realm), json!({ "password": "a brand new passphrase 9" })).await;
    assert_eq!(changed.status, StatusCode::OK, "{:?}", changed.body);
    assert_eq!(p.sign_in("ada", "a brand new passphrase 9", home).await.status, StatusCode::OK);
    let exposures = p.app.get(&format!("/threat-incidents/exposures?realmId={}&unresolvedOnly=true", p.realm)).await;
    assert!(exposures.items().is_empty());
    let standing = p.app.get(&format!("/realms/{}/users/{ada}/threat-standing", p.realm)).await;
    assert_eq!(standing.data()["passwordExposed"], false);
    assert_eq!(standing.data()["latestExposure"]["resolved"], true);
    assert_eq!(standing.data()["exposures"][0]["standing"], "Resolved");
}

in_memory_and_in_redis!(a_correct_password_from_a_list_is_exposed);

#[tokio::test]
async fn three_accounts_that_do_not_look_like_a_list_expose_nothing() {
    let p = protected(Counting::Memory, |_| {}).await;
    p.user("ada").await;
    for name in ["cy", "dee", "eve"] {
        p.user(name).await;
        p.sign_in(name, "guess", "198.51.100.70").await;
    }
    // Three real accounts: no list (no unknown names, fewer than five, no datacenter).
    let signed_in = p.sign_in("ada", PASSWORD, "198.51.100.70").await;
    assert_eq!(signed_in.status, StatusCode::OK, "{:?}", signed_in.body);
}

#[tokio::test]
async fn a_shared_network_is_never_blocked_whole_nor_its_passwords_exposed() {
    let p = protected(Counting::Memory, |_| {}).await;
    let office = "192.0.2.200";
    for n in 0..5 {
        let name = format!("staff-{n}");
        p.user(&name).await;
        assert_eq!(p.sign_in(&name, PASSWORD, office).await.status, StatusCode::OK);
    }
    p.user("ada").await;
    // Ten unknown names from the office: anywhere else a block.
    p.fail_unknown("typo", 10, office).await;
    assert!(!blocked(&p.sign_in("typo-0", "guess", office).await), "five approving accounts: a shared network");
    let signed_in = p.sign_in("ada", PASSWORD, office).await;
    assert_eq!(signed_in.status, StatusCode::OK, "never exposed from a shared network: {:?}", signed_in.body);
    assert!(p.incidents().await.is_empty());

    // With four approving accounts the same address is an ordinary source.
    let q = protected(Counting::Memory, |_| {}).await;
    for n in 0..4 {
        let name = format!("staff-{n}");
        q.user(&name).await;
        q.sign_in(&name, PASSWORD, office).await;
    }
    q.fail_unknown("typo", 8, office).await;
    assert!(blocked(&q.sign_in("typo-0", "guess", office).await), "four approving accounts do not make it shared");
}

#[tokio::test]
async fn dismissing_lifts_every_measure_and_forgets_what_the_sources_did() {
    let p = protected(Counting::Memory, |_| {}).await;
    p.user("ada").await;
    let source = "198.51.100.9";
    p.fail_unknown("list", 8, source).await;
    assert!(blocked(&p.sign_in("ada", PASSWORD, source).await));
    let id = p.incidents().await[0]["id"].as_str().unwrap().to_owned();

    // An Auditor reads but cannot act.
    let auditor = p.app.key_with(&["Auditor"], None).await;
    let read = p.app.call_as(&auditor, reqwest::Method::GET, &format!("/threat-incidents/{id}"), None).await;
    assert_eq!(read.status, StatusCode::OK);
    let refused = p
        .app
        .call_as(&auditor, reqwest::Method::POST, &format!("/threat-incidents/{id}/dismiss"), Some(json!({})))
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);

    let dismissed = p.app.post(&format!("/threat-incidents/{id}/dismiss"), json!({})).await;
    assert_eq!(dismissed.status, StatusCode::OK, "{:?}", dismissed.body);
    assert_eq!(dismissed.data()["status"], "Dismissed");
    let again = p.app.post(&format!("/threat-incidents/{id}/dismiss"), json!({})).await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    let incident = p.incident(&id).await;
    assert_eq!(incident["measures"][0]["standing"], "Lifted");
    assert!(incident["measures"][0]["liftedBy"].is_string());

    let signed_in = p.sign_in("ada", PASSWORD, "198.51.100.10").await;
    assert_eq!(signed_in.status, StatusCode::OK);
    let unblocked = p.sign_in("list-0", "guess", source).await;
    assert_eq!(unblocked.body["error_code"], "InvalidCredentials", "the block is lifted: {:?}", unblocked.body);
    // Forgotten: seven more accounts do not block again, and the next block is a first (15 minutes).
    p.fail_unknown("next", 6, source).await;
    assert!(!blocked(&p.sign_in("next-0", "guess", source).await), "a new count");
    p.fail_unknown("last", 1, source).await;
    assert!(blocked(&p.sign_in("ada", PASSWORD, source).await), "eight new accounts");
    let newest = p.incidents().await[0]["id"].as_str().unwrap().to_owned();
    assert_ne!(newest, id);
    let measure = &p.incident(&newest).await["measures"][0];
    let created = chrono::DateTime::parse_from_rfc3339(measure["createdAt"].as_str().unwrap()).unwrap();
    let lapses = chrono::DateTime::parse_from_rfc3339(measure["lapsesAt"].as_str().unwrap()).unwrap();
    assert_eq!((lapses - created).num_seconds(), 15 * MINUTE, "the dismissed block no longer counts");

    // Lifting one measure, recorded in the trail as an update under the caller's name.
    let lifted = p
        .app
        .post(&format!("/threat-incidents/mitigations/{}/revoke", measure["id"].as_str().unwrap()), json!({}))
        .await;
    assert_eq!(lifted.status, StatusCode::OK, "{:?}", lifted.body);
    assert_eq!(lifted.data()["standing"], "Lifted");
    assert_eq!(p.sign_in("ada", PASSWORD, source).await.status, StatusCode::OK);
    let trail = p.app.get("/audit-trail?action=Update").await;
    let kinds: Vec<&str> = trail.items().iter().filter_map(|row| row["resourceType"].as_str()).collect();
    assert!(kinds.contains(&"threat_incident") && kinds.contains(&"threat_measure"), "{kinds:?}");
}

#[tokio::test]
async fn operators_are_notified_as_the_owner_chose_and_an_account_once_an_hour() {
    let p = protected(Counting::Memory, |_| {}).await;
    let preferences = p.app.put("/account/notification-preferences", json!({ "attacksDetected": "Off" })).await;
    assert_eq!(preferences.status, StatusCode::OK, "{:?}", preferences.body);
    p.user("ada").await;
    p.fail_unknown("list", 8, "198.51.100.20").await;
    let notifications = p.app.get("/account/notifications").await;
    assert!(notifications.items().is_empty(), "Off raises nothing");

    p.app.put("/account/notification-preferences", json!({ "attacksDetected": "InConsole" })).await;
    // Brute force on ada from strangers: closed, then reported once within the hour.
    for n in 0..10 {
        p.sign_in("ada", "guess", &format!("203.0.113.{n}")).await;
    }
    for n in 10..25 {
        p.sign_in("ada", "guess", &format!("203.0.113.{n}")).await;
    }
    let notifications = p.app.get("/account/notifications").await;
    let attacks: Vec<&Value> = notifications.items().iter().filter(|n| n["type"] == "attacks_detected").collect();
    assert_eq!(attacks.len(), 1, "one incident opened: {attacks:?}");
    assert_eq!(attacks[0]["severity"], "Warning");
    let incidents = p.incidents().await;
    let brute = incidents.iter().find(|i| i["kind"] == "BruteForce").unwrap();
    assert_eq!(brute["protectedAccounts"], 1, "the account is reported once within the hour");
    assert!(
        p.sign_in("ada", PASSWORD, "198.51.100.99").await.body["error_code"] == "InvalidCredentials",
        "still refused each time"
    );
}

#[tokio::test]
async fn incidents_are_listed_filtered_and_summed_up() {
    let p = protected(Counting::Memory, |_| {}).await;
    p.fail_unknown("list", 8, "198.51.100.30").await;
    p.sign_in("list-0", "guess", "198.51.100.30").await;
    let wrong = p.app.get("/threat-incidents?incidentStatus=Open").await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST);
    assert_eq!(wrong.refused_fields(), [("incidentStatus".to_owned(), "OneOf".to_owned())]);
    let active = p.app.get(&format!("/threat-incidents?realmId={}&incidentStatus=Active&clientId=shop", p.realm)).await;
    assert_eq!(active.items().len(), 1);
    assert!(active.items()[0].get("measures").is_none(), "lists carry no measures");
    let resolved = p.app.get(&format!("/threat-incidents?realmId={}&incidentStatus=Resolved", p.realm)).await;
    assert!(resolved.items().is_empty());

    let summary = p.app.get(&format!("/threat-incidents/summary?days=7&realmId={}", p.realm)).await;
    assert_eq!(summary.status, StatusCode::OK, "{:?}", summary.body);
    let data = summary.data();
    assert_eq!(data["days"], 7);
    assert_eq!(data["openIncidents"], 1);
    assert_eq!(data["measuresInForce"], 1);
    assert_eq!(data["totals"]["incidents"], 1);
    assert_eq!(data["totals"]["blockedSources"], 1);
    assert_eq!(data["totals"]["refusedAttempts"], 1);
    assert_eq!(data["byDay"].as_array().unwrap().len(), 8, "every day of the period, today included");
    assert_eq!(data["byKind"][0]["name"], "CredentialStuffing");
    assert_eq!(data["bySeverity"][0]["name"], "Medium");
    assert_eq!(data["countries"][0]["name"], "Unknown");
    assert_eq!(data["latestMeasures"][0]["type"], "SourceBlocked");
    let other = p.app.get("/threat-incidents/summary?days=12").await;
    assert_eq!(other.data()["days"], 30, "30 unless 7, 30 or 90");
}

/// The value of the fail-open metric for `cause`, 0 before any.
async fn failed_open(app: &TestApp, cause: &str) -> u64 {
    let metrics = app.http.get(format!("{}/metrics", app.base)).send().await.unwrap().text().await.unwrap();
    let name = format!("castellan_attack_protection_failed_open_total{{cause=\"{cause}\"}} ");
    metrics.lines().find_map(|line| line.strip_prefix(name.as_str())).map_or(0, |n| n.trim().parse().unwrap())
}

#[tokio::test]
async fn a_detector_that_traps_or_never_answers_leaves_sign_in_working() {
    let component = std::path::PathBuf::from(env!("FAILING_DETECTOR_COMPONENT"));
    let p = protected(Counting::Memory, |settings| settings.detector_component = Some(component)).await;
    p.user("ada").await;
    let source = "198.51.100.40";
    // Odd failure counts make the component trap, even ones run it into the deadline: a list worked
    // through far past every threshold is never blocked, and the correct password is accepted.
    for n in 0..12 {
        let refused = p.sign_in(&format!("list-{n}"), "guess", source).await;
        assert_eq!(refused.body["error_code"], "InvalidCredentials", "{:?}", refused.body);
    }
    let signed_in = p.sign_in("ada", PASSWORD, source).await;
    assert_eq!(signed_in.status, StatusCode::OK, "protection fails open: {:?}", signed_in.body);
    assert!(p.incidents().await.is_empty());
    assert_eq!(failed_open(&p.app, "detector").await, 13, "each attempt logged and counted");
}

#[tokio::test(flavor = "current_thread")]
async fn a_component_that_runs_on_gives_the_thread_back_at_every_tick_until_its_deadline() {
    use castellan::protection::detection::{Attempt, AttemptKind, Counts, Outcome, Source};

    let component = std::path::PathBuf::from(env!("FAILING_DETECTOR_COMPONENT"));
    let detector = castellan::protection::detector::AttackDetector::load(Some(&component)).unwrap();
    // A task beside the call, on the same (only) thread: it runs only while the call yields.
    let turns = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counting = turns.clone();
    let beside = tokio::spawn(async move {
        loop {
            counting.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tokio::task::yield_now().await;
        }
    });
    let source = Source { approved_for_account: false, datacenter: false, tor: false, shared_network: false };
    // An even failure count makes the component spin until its deadline stops it.
    let counts = Counts { source_failures: 2, ..Counts::default() };
    let attempt =
        Attempt { kind: AttemptKind::Password, outcome: Outcome::Failed, account_known: true, source, counts };
    assert_eq!(detector.decide(attempt).await, None, "stopped at the deadline: no decision");
    assert!(turns.load(std::sync::atomic::Ordering::Relaxed) > 0, "the task beside it ran while the component spun");
    beside.abort();
}

/// A Redis of the test's own, on a free loopback port, stopped when dropped.
struct OwnRedis {
    process: std::process::Child,
    url: String,
}

impl OwnRedis {
    async fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let process = std::process::Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string(), "--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server is installed");
        // Ready once it accepts connections.
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            tokio::task::yield_now().await;
        }
        Self { process, url: format!("redis://127.0.0.1:{port}") }
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

#[tokio::test]
async fn sign_in_proceeds_unprotected_when_the_counting_store_cannot_be_read() {
    let redis = OwnRedis::start().await;
    let url = redis.url.clone();
    let p = protected(Counting::Memory, move |settings| settings.redis_url = Some(url)).await;
    p.user("ada").await;
    let source = "198.51.100.41";
    p.fail_unknown("list", 8, source).await;
    assert!(blocked(&p.sign_in("ada", PASSWORD, source).await), "counted in Redis while it answers");

    drop(redis);
    let signed_in = p.sign_in("ada", PASSWORD, source).await;
    assert_eq!(signed_in.status, StatusCode::OK, "the block cannot be read: fails open: {:?}", signed_in.body);
    p.fail_unknown("more", 8, source).await;
    assert!(failed_open(&p.app, "counting").await >= 9, "each unprotected attempt is counted");
}

impl Protected {
    async fn recover(&self, login: &str, from: &str) -> Answer {
        let url = format!("{}/realms/{}/account/recovery", self.app.base, self.realm);
        let form = [("client_id", "shop"), ("username", login)];
        let response = self
            .app
            .http
            .post(url)
            .header("x-forwarded-for", from)
            .form(&form)
            .send()
            .await
            .expect("the service answers");
        answer(response).await
    }

    async fn reset(&self, token: &str, password: &str) -> Answer {
        let url = format!("{}/realms/{}/account/recovery/reset", self.app.base, self.realm);
        let response =
            self.app.http.post(url).form(&[("token", token), ("password", password)]).send().await.expect("answers");
        answer(response).await
    }

    /// Reset codes stored for the account (one per e-mail sent).
    async fn codes_sent(&self, user_id: &str) -> i64 {
        // Reset codes are shown by no answer (they travel only by e-mail): the table counts them.
        let store = self.app.database().await;
        let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM password_resets WHERE user_id = $1")
            .bind(user_id)
            .fetch_one(store.pool())
            .await
            .unwrap();
        count
    }
}

pub(crate) fn reset_code(message: &crate::support::smtp::Message) -> String {
    let text = message.data.replace("=\r\n", "");
    let start = text.find("cstl_reset_").expect("a code in the e-mail");
    text[start..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect()
}

#[tokio::test]
async fn recovery_answers_alike_and_a_code_resets_the_password_once() {
    let mail = MailServer::start().await;
    let url = mail.url.clone();
    let p = protected(Counting::Memory, move |settings| settings.smtp_url = Some(url)).await;
    p.user("ada").await;
    let asked = p.recover("ada@example.com", "192.0.2.1").await;
    let unknown = p.recover("nobody", "192.0.2.1").await;
    assert_eq!(asked.status, StatusCode::ACCEPTED, "{:?}", asked.body);
    assert_eq!((asked.status, &asked.body), (unknown.status, &unknown.body), "the same answer");

    let letter = mail.letter(&p.app, "ada@example.com").await;
    assert!(letter.data.contains("shop: reset your password"), "{}", letter.data);
    let code = reset_code(&letter);
    let short = p.reset(&code, "short").await;
    assert_eq!(short.body["error_code"], "PasswordRefused");
    let done = p.reset(&code, "a new and long passphrase").await;
    assert_eq!(done.status, StatusCode::OK, "{:?}", done.body);
    assert_eq!(p.sign_in("ada", "a new and long passphrase", "192.0.2.1").await.status, StatusCode::OK);
    let again = p.reset(&code, "yet another passphrase").await;
    assert_eq!(again.body["error_code"], "RecoveryTokenInvalid", "a code works once");

    // A code lapses after 30 minutes.
    p.recover("ada", "192.0.2.1").await;
    p.app.advance(30 * MINUTE).await;
    let codes: Vec<String> = mail.letters(&p.app, "ada@example.com", 2).await.iter().map(reset_code).collect();
    assert_ne!(codes[0], codes[1], "a code of its own each time");
    assert_eq!(p.reset(&codes[1], "yet another passphrase").await.body["error_code"], "RecoveryTokenInvalid");
}

#[tokio::test]
async fn recovery_is_silenced_after_three_requests_for_an_account_and_a_source_asking_for_eight_is_blocked() {
    let p = protected(Counting::Memory, |_| {}).await;
    let ada = p.user("ada").await;
    for n in 0..5 {
        let asked = p.recover("ada", &format!("192.0.2.{n}")).await;
        assert_eq!(asked.status, StatusCode::ACCEPTED, "the usual answer each time");
    }
    assert_eq!(p.codes_sent(&ada).await, 3, "more than three within 30 minutes send nothing");
    assert!(p.incidents().await.is_empty(), "silencing one account's recovery e-mail opens no incident");
    p.app.advance(30 * MINUTE).await;
    p.recover("ada", "192.0.2.9").await;
    assert_eq!(p.codes_sent(&ada).await, 4, "30 minutes later a request sends again");

    let source = "198.51.100.50";
    for n in 0..7 {
        p.user(&format!("member-{n}")).await;
        assert_eq!(p.recover(&format!("member-{n}"), source).await.status, StatusCode::ACCEPTED);
    }
    p.recover("someone-else", source).await;
    assert!(blocked(&p.recover("member-0", source).await), "eight accounts asked for from one address");
    assert!(blocked(&p.sign_in("ada", PASSWORD, source).await), "its password attempts too");
    let incidents = p.incidents().await;
    let abuse: Vec<&Value> = incidents.iter().filter(|i| i["kind"] == "RecoveryAbuse").collect();
    assert_eq!(abuse.len(), 1, "the source's alone: {incidents:?}");
    assert_eq!((&abuse[0]["status"], &abuse[0]["severity"]), (&json!("Active"), &json!("Low")));
    assert_eq!(abuse[0]["blockedSources"], 1);
    let notifications = p.app.get("/account/notifications").await;
    assert!(
        notifications.items().iter().any(|n| n["type"] == "attacks_detected" && n["severity"] == "Info"),
        "informational for recovery abuse: {:?}",
        notifications.items()
    );
}

/// A push gateway on loopback that records what the service posts to it.
struct Gateway {
    url: String,
    posts: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
}

impl Gateway {
    async fn start() -> Self {
        let posts = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = posts.clone();
        let router = axum::Router::new().route(
            "/push",
            axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
                let kept = kept.clone();
                async move {
                    kept.lock().unwrap().push(body);
                    StatusCode::ACCEPTED
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/push", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await });
        Self { url, posts }
    }

    /// The posts received, at least `count`, once the service has finished what it sends after
    /// answering a sign-in.
    async fn posted(&self, app: &TestApp, count: usize) -> Vec<Value> {
        app.settle().await;
        let posts = self.posts.lock().unwrap().clone();
        assert!(posts.len() >= count, "fewer than {count} posts to the push gateway: {posts:?}");
        posts
    }
}

/// An enrolled phone: its id and secret.
struct Phone {
    id: String,
    secret: String,
}

impl Protected {
    /// Signs ada in with her password and enrolls a phone with her access token.
    async fn enroll_phone(&self, username: &str) -> Phone {
        let signed_in = self.sign_in(username, PASSWORD, "192.0.2.10").await;
        let token = signed_in.body["access_token"].as_str().expect("an access token").to_owned();
        let url = format!("{}/realms/{}/account/push-devices", self.app.base, self.realm);
        let form = [("name", "Ada's phone"), ("push_token", "fcm:ada-phone")];
        let enrolled = answer(self.app.http.post(url).bearer_auth(token).form(&form).send().await.unwrap()).await;
        assert_eq!(enrolled.status, StatusCode::CREATED, "{:?}", enrolled.body);
        Phone {
            id: enrolled.body["device_id"].as_str().unwrap().to_owned(),
            secret: enrolled.body["device_secret"].as_str().unwrap().to_owned(),
        }
    }

    /// A password sign-in asking for confirmation on the phone: the push request's id.
    async fn push_sign_in(&self, username: &str, from: &str) -> Answer {
        let url = format!("{}/realms/{}/protocol/openid-connect/token", self.app.base, self.realm);
        let form =
            [("grant_type", "password"), ("username", username), ("password", PASSWORD), ("confirmation", "push")];
        let response = self
            .app
            .http
            .post(url)
            .basic_auth(&self.client.id, Some(&self.client.secret))
            .header("x-forwarded-for", from)
            .form(&form)
            .send()
            .await
            .unwrap();
        answer(response).await
    }

    async fn poll(&self, request: &str) -> Answer {
        let form = [("grant_type", "urn:castellan:params:oauth:grant-type:push"), ("push_request_id", request)];
        self.app.token(&self.client, &form).await
    }

    async fn waiting(&self, phone: &Phone) -> Vec<Value> {
        let url = format!("{}/realms/{}/account/push-requests", self.app.base, self.realm);
        let listed =
            answer(self.app.http.get(url).basic_auth(&phone.id, Some(&phone.secret)).send().await.unwrap()).await;
        assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
        listed.body["requests"].as_array().unwrap().clone()
    }

    async fn decide(&self, phone: &Phone, request: &str, decision: &str) -> Answer {
        let url = format!("{}/realms/{}/account/push-requests/{request}/answer", self.app.base, self.realm);
        let response = self
            .app
            .http
            .post(url)
            .basic_auth(&phone.id, Some(&phone.secret))
            .form(&[("decision", decision)])
            .send()
            .await;
        answer(response.unwrap()).await
    }
}

#[tokio::test]
async fn a_sign_in_confirmed_on_the_phone_gets_its_tokens_once() {
    let gateway = Gateway::start().await;
    let url = gateway.url.clone();
    let p = protected(Counting::Memory, move |settings| settings.push_gateway_url = Some(url)).await;
    p.user("ada").await;
    let without = p.push_sign_in("ada", "192.0.2.20").await;
    assert_eq!(without.body["error_code"], "PushDeviceMissing");
    let phone = p.enroll_phone("ada").await;
    let url = format!("{}/realms/{}/account/push-devices", p.app.base, p.realm);
    let anonymous = answer(p.app.http.post(&url).form(&[("name", "Mallory's")]).send().await.unwrap()).await;
    assert_eq!((anonymous.status, &anonymous.body["error"]), (StatusCode::UNAUTHORIZED, &json!("invalid_token")));

    let asked = p.push_sign_in("ada", "192.0.2.20").await;
    assert_eq!(asked.status, StatusCode::OK, "{:?}", asked.body);
    assert!(asked.body.get("access_token").is_none(), "no token before the phone answers");
    let request = asked.body["push_request_id"].as_str().unwrap().to_owned();
    let posted = gateway.posted(&p.app, 1).await;
    assert_eq!(posted[0]["push_token"], "fcm:ada-phone");
    assert_eq!(posted[0]["push_request_id"], request.as_str());
    assert_eq!(posted[0]["ip_address"], "192.0.2.20");

    assert_eq!(p.poll(&request).await.body["error"], "authorization_pending");
    let waiting = p.waiting(&phone).await;
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0]["push_request_id"], request.as_str());
    let wrong = Phone { id: phone.id.clone(), secret: "cstl_dev_wrong".into() };
    let refused = p.decide(&wrong, &request, "approve").await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "a phone proves itself");

    assert_eq!(p.decide(&phone, &request, "approve").await.body["status"], "Approved");
    let tokens = p.poll(&request).await;
    assert_eq!(tokens.status, StatusCode::OK, "{:?}", tokens.body);
    let claims = crate::support::claims(tokens.body["access_token"].as_str().unwrap());
    assert!(claims["sid"].is_string() || claims["sub"].is_string());
    assert_eq!(p.poll(&request).await.body["error_code"], "PushRequestUnknown", "exchanged once");

    // Refused on the phone, or left unanswered until it lapses.
    let second = p.push_sign_in("ada", "192.0.2.20").await.body["push_request_id"].as_str().unwrap().to_owned();
    p.decide(&phone, &second, "refuse").await;
    assert_eq!(p.poll(&second).await.body["error"], "access_denied");
    let third = p.push_sign_in("ada", "192.0.2.20").await.body["push_request_id"].as_str().unwrap().to_owned();
    p.app.advance(120).await;
    assert_eq!(p.poll(&third).await.body["error"], "expired_token");
    assert_eq!(p.decide(&phone, &third, "approve").await.status, StatusCode::NOT_FOUND, "too late to answer");
}

async fn two_refusals_on_the_phone_pause_its_pushes(counting: Counting) {
    let gateway = Gateway::start().await;
    let url = gateway.url.clone();
    let p = protected(counting, move |settings| settings.push_gateway_url = Some(url)).await;
    let ada = p.user("ada").await;
    let phone = p.enroll_phone("ada").await;
    let attacker = "198.51.100.90";
    for n in 0..2 {
        let request = p.push_sign_in("ada", attacker).await.body["push_request_id"].as_str().unwrap().to_owned();
        let refused = p.decide(&phone, &request, "refuse").await;
        assert_eq!(refused.body["status"], "Refused", "refusal {n}: {:?}", refused.body);
    }
    gateway.posted(&p.app, 2).await;
    let incident = p.only_incident().await;
    assert_eq!(incident["kind"], "PushBombing");
    assert_eq!(incident["severity"], "High");
    assert_eq!(incident["measures"][0]["type"], "SignInPushesPaused");
    assert_eq!(incident["measures"][0]["targetUserId"], ada.as_str());

    // Paused: the sign-in is answered as usual, but no phone hears of it and it lapses unanswered.
    let paused = p.push_sign_in("ada", attacker).await;
    assert_eq!(paused.status, StatusCode::OK, "{:?}", paused.body);
    let request = paused.body["push_request_id"].as_str().unwrap().to_owned();
    assert!(p.waiting(&phone).await.is_empty(), "withheld from the phone");
    assert_eq!(p.poll(&request).await.body["error"], "authorization_pending", "as if nobody answered");
    p.app.advance(120).await;
    assert_eq!(p.poll(&request).await.body["error"], "expired_token");
    assert_eq!(gateway.posts.lock().unwrap().len(), 2, "nothing reached the gateway");

    // Thirty minutes after the pause, pushes reach the phone again.
    p.app.advance(30 * MINUTE).await;
    let request = p.push_sign_in("ada", "192.0.2.10").await.body["push_request_id"].as_str().unwrap().to_owned();
    assert_eq!(p.waiting(&phone).await[0]["push_request_id"], request.as_str());
    gateway.posted(&p.app, 3).await;
}

in_memory_and_in_redis!(two_refusals_on_the_phone_pause_its_pushes);

#[tokio::test]
async fn an_account_enrolls_at_most_ten_phones() {
    let p = protected(Counting::Memory, |_| {}).await;
    p.user("ada").await;
    let token = p.sign_in("ada", PASSWORD, "192.0.2.10").await.body["access_token"].as_str().unwrap().to_owned();
    let url = format!("{}/realms/{}/account/push-devices", p.app.base, p.realm);
    for n in 0..11 {
        let enrolled =
            answer(p.app.http.post(&url).bearer_auth(&token).form(&[("name", "phone")]).send().await.unwrap());
        let enrolled = enrolled.await;
        if n < 10 {
            assert_eq!(enrolled.status, StatusCode::CREATED, "{n}: {:?}", enrolled.body);
        } else {
            assert_eq!(enrolled.body["error_code"], "TooManyDevices");
        }
    }
}
