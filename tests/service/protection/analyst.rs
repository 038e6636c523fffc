//! The incident analyst over real HTTP, driven by the manual clock: readings scheduled every five
//! minutes (opening, critical, closing; once each), the plan and the realm's consent, the daily
//! quota, readings in the caller's language, recommendations applied and reverted, and the
//! post-incident report as HTML and as PDF (rendered with poppler and read back).

use castellan::kernel::config::Settings;
use chrono::{TimeDelta, Timelike};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{Answer, TestApp, TestClient, TestDatabase, answer, spawn_with};

const PASSWORD: &str = "correct horse battery staple 7";
const MINUTE: i64 = 60;

pub struct Realm {
    pub app: TestApp,
    pub realm: String,
    pub client: TestClient,
}

/// A realm that lets the AI advisor analyse it (or not), on a service adjusted by `adjust`.
pub async fn realm_with(consent: bool, adjust: impl FnOnce(&mut Settings)) -> Realm {
    let app = spawn_with(TestDatabase::new().await, adjust).await;
    let realm = Realm::create(&app, "watched", consent).await;
    Realm { app, realm: realm.0, client: realm.1 }
}

impl Realm {
    async fn create(app: &TestApp, id: &str, consent: bool) -> (String, TestClient) {
        let created = app.post("/realms", json!({ "id": id, "aiAdvisor": consent })).await;
        assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
        assert_eq!(created.data()["aiAdvisor"], consent);
        let client = app.create_client(id, "shop", &["password"], &[]).await;
        (id.to_owned(), client)
    }

    pub async fn sign_in(&self, username: &str, password: &str, from: &str) -> Answer {
        sign_in(&self.app, &self.realm, &self.client, username, password, from).await
    }

    /// Eight names the realm never had, from one address: the address is blocked, and a
    /// credential-stuffing incident opens.
    pub async fn stuff(&self, from: &str) {
        stuff(&self.app, &self.realm, &self.client, from).await;
    }

    pub async fn incident(&self) -> Value {
        let listed = self.app.get(&format!("/threat-incidents?realmId={}", self.realm)).await;
        assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
        assert_eq!(listed.items().len(), 1, "{:?}", listed.body);
        listed.items()[0].clone()
    }

    pub async fn readings(&self, incident: &str, language: Option<&str>) -> (Vec<Value>, Option<String>) {
        let mut request = self
            .app
            .http
            .get(format!("{}/threat-incidents/{incident}/analyses", self.app.admin))
            .header("x-api-key", &self.app.key);
        if let Some(language) = language {
            request = request.header("accept-language", language);
        }
        let response = request.send().await.expect("the service answers");
        let content_language = response.headers().get("content-language").map(|v| v.to_str().unwrap().to_owned());
        let answered = answer(response).await;
        assert_eq!(answered.status, StatusCode::OK, "{:?}", answered.body);
        (answered.data().as_array().expect("a list").clone(), content_language)
    }

    pub async fn settings(&self) -> Value {
        self.app.get(&format!("/realms/{}", self.realm)).await.data().clone()
    }
}

async fn sign_in(
    app: &TestApp,
    realm: &str,
    client: &TestClient,
    username: &str,
    password: &str,
    from: &str,
) -> Answer {
    let response = app
        .http
        .post(format!("{}/realms/{realm}/protocol/openid-connect/token", app.base))
        .basic_auth(&client.id, Some(&client.secret))
        .header("x-forwarded-for", from)
        .form(&[("grant_type", "password"), ("username", username), ("password", password)])
        .send()
        .await
        .expect("the service answers");
    answer(response).await
}

async fn stuff(app: &TestApp, realm: &str, client: &TestClient, from: &str) {
    for n in 0..8 {
        let refused = sign_in(app, realm, client, &format!("list-{n}"), "guess", from).await;
        assert_eq!(refused.body["error_code"], "InvalidCredentials", "{:?}", refused.body);
    }
}

fn moments(readings: &[Value]) -> Vec<&str> {
    readings.iter().map(|r| r["moment"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn an_incident_is_read_when_it_has_run_five_minutes_when_it_turns_critical_and_when_it_closes() {
    let r = realm_with(true, |_| {}).await;
    let ada = r.app.create_user(&r.realm, "ada", PASSWORD).await;
    r.stuff("198.51.100.7").await;
    let incident = r.incident().await;
    let id = incident["id"].as_str().unwrap();
    assert_eq!(incident["severity"], "Medium");
    r.app.advance(4 * MINUTE).await;
    assert!(r.readings(id, None).await.0.is_empty(), "the incident has not yet run five minutes");
    r.app.advance(MINUTE).await;
    let (readings, language) = r.readings(id, None).await;
    assert_eq!(moments(&readings), ["Opened"]);
    let opening = &readings[0];
    assert_eq!((opening["status"].as_str(), opening["producedBy"].as_str()), (Some("Completed"), Some("component")));
    assert_eq!(opening["classification"], "CredentialStuffing");
    assert!(opening["confidence"].as_i64().unwrap() >= 80, "{opening}");
    assert!(opening["whatHappened"].as_str().unwrap().contains("100% of the failures"), "{opening}");
    assert_eq!(language.as_deref(), Some("en"));
    assert!(opening.get("report").is_none(), "only the closing reading reports");
    let first = &opening["recommendations"][0];
    assert_eq!(
        (first["change"].as_str(), first["currentValue"].as_bool()),
        (Some("RefuseBreachedPasswords"), Some(false))
    );
    assert!(first["noticed"].as_str().unwrap().contains("refused"), "{first}");
    r.app.advance(10 * MINUTE).await;
    assert_eq!(r.readings(id, None).await.0.len(), 1, "each reading runs once");

    // A correct password from a second address working through names: the incident turns critical.
    for n in 0..3 {
        r.sign_in(&format!("other-{n}"), "guess", "203.0.113.9").await;
    }
    let exposed = r.sign_in("ada", PASSWORD, "203.0.113.9").await;
    assert_eq!(exposed.body["error_code"], "InvalidCredentials", "refused as if wrong: {:?}", exposed.body);
    assert_eq!(r.incident().await["severity"], "Critical");
    r.app.advance(5 * MINUTE).await;
    let (readings, _) = r.readings(id, None).await;
    assert_eq!(moments(&readings), ["TurnedCritical", "Opened"], "newest first");
    assert!(readings[0]["exposedPasswords"].as_str().unwrap().starts_with("1 correct password"), "{}", readings[0]);

    // Thirty quiet minutes close it; the next run reads it once more, with the report.
    r.app.advance(35 * MINUTE).await;
    assert_eq!(r.incident().await["status"], "Resolved");
    let (readings, _) = r.readings(id, None).await;
    assert_eq!(moments(&readings), ["Closed", "TurnedCritical", "Opened"]);
    let report = &readings[0]["report"];
    for section in ["nature", "dataAndPeople", "risks", "measures", "communication"] {
        assert!(!report[section].as_str().unwrap_or_default().is_empty(), "{section}: {report}");
    }
    assert!(report["communication"].as_str().unwrap().contains("72 hours"), "{report}");
    r.app.advance(2 * 24 * 60 * MINUTE).await;
    assert_eq!(r.readings(id, None).await.0.len(), 3, "nothing more, ever");

    // In French, for a caller who prefers it.
    let (french, language) = r.readings(id, Some("fr-CH, fr;q=0.9, en;q=0.5")).await;
    assert_eq!(language.as_deref(), Some("fr"));
    assert_eq!(french[0]["language"], "fr");
    assert!(french[0]["report"]["communication"].as_str().unwrap().contains("72 heures"), "{}", french[0]);
    assert_eq!(french[0]["classification"], readings[0]["classification"]);
    let _ = ada;
}

#[tokio::test]
async fn no_reading_without_consent_or_plan_nor_for_a_dismissed_incident_nor_a_day_after_closing() {
    let r = realm_with(false, |_| {}).await;
    r.stuff("198.51.100.7").await;
    let id = r.incident().await["id"].as_str().unwrap().to_owned();
    r.app.advance(10 * MINUTE).await;
    assert!(r.readings(&id, None).await.0.is_empty(), "the realm has not consented");
    // Consent given: the next run reads the incident still open.
    let consent = r.app.put(&format!("/realms/{}", r.realm), json!({ "aiAdvisor": true })).await;
    assert_eq!(consent.status, StatusCode::OK, "{:?}", consent.body);
    r.app.advance(5 * MINUTE).await;
    assert_eq!(moments(&r.readings(&id, None).await.0), ["Opened"]);
    // Withdrawn before it closes: no closing reading.
    r.app.put(&format!("/realms/{}", r.realm), json!({ "aiAdvisor": false })).await;
    r.app.advance(40 * MINUTE).await;
    assert_eq!(r.incident().await["status"], "Resolved");
    assert_eq!(moments(&r.readings(&id, None).await.0), ["Opened"]);
    // Given back more than a day after it closed: too late for the closing reading.
    r.app.advance(24 * 60 * MINUTE).await;
    r.app.put(&format!("/realms/{}", r.realm), json!({ "aiAdvisor": true })).await;
    r.app.advance(10 * MINUTE).await;
    assert_eq!(moments(&r.readings(&id, None).await.0), ["Opened"], "closed more than 24 hours ago");

    // A dismissed incident gets no closing reading.
    r.stuff("198.51.100.8").await;
    let listed = r.app.get(&format!("/threat-incidents?realmId={}&incidentStatus=Active", r.realm)).await;
    let second = listed.items()[0]["id"].as_str().unwrap().to_owned();
    r.app.advance(10 * MINUTE).await;
    assert_eq!(moments(&r.readings(&second, None).await.0), ["Opened"]);
    let dismissed = r.app.post(&format!("/threat-incidents/{second}/dismiss"), json!({})).await;
    assert_eq!(dismissed.status, StatusCode::OK, "{:?}", dismissed.body);
    r.app.advance(60 * MINUTE).await;
    assert_eq!(moments(&r.readings(&second, None).await.0), ["Opened"], "dismissed: no closing reading");

    // An account whose plan does not include the advisor gets no reading, consent or not.
    let other = realm_with(true, |settings| settings.analyst.plan_accounts = vec!["another-account".into()]).await;
    other.stuff("198.51.100.9").await;
    let id = other.incident().await["id"].as_str().unwrap().to_owned();
    other.app.advance(15 * MINUTE).await;
    assert!(other.readings(&id, None).await.0.is_empty(), "the plan does not include the advisor");
}

#[tokio::test]
async fn an_account_runs_at_most_twelve_readings_a_utc_day() {
    let app = spawn_with(TestDatabase::new().await, |_| {}).await;
    // Start a quarter of an hour before midnight, UTC: the next one, when this one is nearer.
    let now = app.state.clock.now();
    let day = TimeDelta::days(1).num_seconds();
    let to_midnight = day - i64::from(now.num_seconds_from_midnight());
    app.advance((to_midnight - 15 * MINUTE).rem_euclid(day)).await;
    let mut incidents = Vec::new();
    for n in 0..13 {
        let (realm, client) = Realm::create(&app, &format!("shop-{n}"), true).await;
        stuff(&app, &realm, &client, "198.51.100.7").await;
        let listed = app.get(&format!("/threat-incidents?realmId={realm}")).await;
        incidents.push(listed.items()[0]["id"].as_str().unwrap().to_owned());
    }
    // The incidents started at 23:45; the run between 23:50 and 23:55 reads twelve of them.
    app.advance(10 * MINUTE).await;
    assert_eq!(readings_of(&app, &incidents).await, 12, "twelve readings, the thirteenth waits");
    // The first run of the new day, before 00:05, reads the thirteenth.
    app.advance(10 * MINUTE + 1).await;
    assert_eq!(app.state.clock.now().hour(), 0, "a new UTC day");
    assert_eq!(readings_of(&app, &incidents).await, 13, "the new day reads the thirteenth");
}

async fn readings_of(app: &TestApp, incidents: &[String]) -> usize {
    let mut count = 0;
    for id in incidents {
        count += app.get(&format!("/threat-incidents/{id}/analyses")).await.data().as_array().unwrap().len();
    }
    count
}

#[tokio::test]
async fn ten_addresses_guessing_one_account_read_as_brute_force_from_ten_sources_with_what_to_tighten() {
    let r = realm_with(true, |_| {}).await;
    r.app.create_user(&r.realm, "ada", PASSWORD).await;
    for n in 0..10 {
        let refused = r.sign_in("ada", &format!("guess {n}"), &format!("203.0.113.{}", 40 + n)).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{:?}", refused.body);
    }
    let incident = r.incident().await;
    assert_eq!((incident["kind"].as_str(), incident["severity"].as_str()), (Some("BruteForce"), Some("High")));
    assert_eq!(incident["blockedSources"], 0, "no address failed often enough to be blocked: {incident}");
    r.app.advance(5 * MINUTE).await;
    let (readings, _) = r.readings(incident["id"].as_str().unwrap(), None).await;
    let reading = &readings[0];
    assert_eq!(reading["classification"], "BruteForce", "{reading}");
    assert!(reading["whatHappened"].as_str().unwrap().contains("10 source"), "{reading}");
    assert!(
        reading["recommendations"].as_array().is_some_and(|all| !all.is_empty()),
        "a lockout to tighten: {reading}"
    );
}

#[tokio::test]
async fn a_client_holding_a_stale_password_and_a_surge_of_people_read_as_what_they_are() {
    let r = realm_with(true, |_| {}).await;
    // An application's server signed in as ada before; her password changed, the server did not.
    let ada = r.app.create_user(&r.realm, "ada", PASSWORD).await;
    let server = "198.51.100.20";
    assert_eq!(r.sign_in("ada", PASSWORD, server).await.status, StatusCode::OK);
    let changed =
        r.app.put(&format!("/realms/{}/users/{ada}", r.realm), json!({ "password": "a new one, chosen today" })).await;
    assert_eq!(changed.status, StatusCode::OK, "{:?}", changed.body);
    for _ in 0..30 {
        r.sign_in("ada", PASSWORD, server).await;
    }
    let incident = r.incident().await;
    r.app.advance(5 * MINUTE).await;
    let (readings, _) = r.readings(incident["id"].as_str().unwrap(), None).await;
    assert_eq!(readings[0]["classification"], "Misconfiguration", "{}", readings[0]);
    assert!(readings[0].get("recommendations").is_none(), "nothing to tighten for a stale client");

    // Six people, each from a new address, each retrying their own password: no attack.
    let surge = realm_with(true, |_| {}).await;
    for n in 0..6 {
        let name = format!("person-{n}");
        surge.app.create_user(&surge.realm, &name, PASSWORD).await;
        for _ in 0..10 {
            surge.sign_in(&name, "what was it again", &format!("203.0.113.{}", 10 + n)).await;
        }
    }
    let incident = surge.incident().await;
    assert_eq!(incident["protectedAccounts"], 6, "{incident}");
    surge.app.advance(5 * MINUTE).await;
    let (readings, _) = surge.readings(incident["id"].as_str().unwrap(), None).await;
    assert_eq!(readings[0]["classification"], "LegitimateSurge", "{}", readings[0]);
    assert!(readings[0].get("recommendations").is_none(), "tightening would lock them out");
}
