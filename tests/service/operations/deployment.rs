//! Three hosts in processes of their own on one PostgreSQL database and one Redis, behind HAProxy
//! configured as `deploy/haproxy.cfg` ships, used through the balancer as a deployment's clients
//! use it: an attack spread over the hosts is one incident; a revocation, a withdrawal and a
//! suspension are in force on every host when their answer returns; the admin limit is counted
//! once; a burst of events is delivered exactly once; a rolling restart under load refuses no
//! request and loses no event; a host killed mid-burst loses no event. SQLite is embedded (one
//! host owns the file): these run on PostgreSQL.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::operations::delivery_reliability::delivered_users;
use crate::support::fleet::{Balancer, Host, HostSettings, bootstrap_key, free_port};
use crate::support::receiver::Receiver;
use crate::support::{Answer, TestClient, TestDatabase, answer};

const HOSTS: usize = 3;
const PASSWORD: &str = "correct horse battery staple 7";
const EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";
/// Concurrent callers of a burst.
const SENDERS: usize = 16;

struct Deployment {
    db: TestDatabase,
    ports: Vec<u16>,
    hosts: Vec<Option<Host>>,
    settings: HostSettings,
    balancer: Balancer,
    key: String,
    realm: String,
    http: reqwest::Client,
}

impl Deployment {
    /// Three hosts and the balancer on a fresh PostgreSQL schema, with a realm of their own
    /// (Redis is shared by every test); none on SQLite.
    async fn start() -> Option<Self> {
        std::env::var("TEST_DATABASE_URL").ok().filter(|url| !url.is_empty())?;
        // No service runs in this process to choose the TLS implementation the receivers use.
        let _ = tokio_rustls::rustls::crypto::aws_lc_rs::default_provider().install_default();
        let db = TestDatabase::new().await;
        let front = free_port();
        let ports: Vec<u16> = (0..HOSTS).map(|_| free_port()).collect();
        let settings = HostSettings {
            redis_url: Some(crate::protection::measures::redis_url()),
            public_url: Some(format!("http://127.0.0.1:{front}")),
            drain_seconds: 2,
        };
        // The first host migrates and bootstraps the database; the others join it.
        let first = Host::start(&db, ports[0], &settings).await;
        let (second, third) =
            tokio::join!(Host::start(&db, ports[1], &settings), Host::start(&db, ports[2], &settings));
        let balancer = Balancer::start(&db.dir, front, &ports).await;
        let key = bootstrap_key(&db.dir);
        let realm = format!("fleet-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        let hosts = vec![Some(first), Some(second), Some(third)];
        let deployment = Self { db, ports, hosts, settings, balancer, key, realm, http: reqwest::Client::new() };
        deployment.align_clocks().await;
        deployment.created("/realms", json!({ "id": deployment.realm })).await;
        Some(deployment)
    }

    /// The address of one host, past the balancer.
    fn host(&self, n: usize) -> String {
        format!("http://127.0.0.1:{}", self.ports[n])
    }

    fn every_host(&self) -> Vec<String> {
        (0..HOSTS).map(|n| self.host(n)).collect()
    }

    /// An admin call through the balancer with the bootstrap key.
    async fn admin(&self, method: Method, path: &str, body: Option<Value>) -> Answer {
        admin_call(&self.http, &self.balancer.base, &self.key, method, path, body).await.expect("the balancer answers")
    }

    async fn created(&self, path: &str, body: Value) -> Value {
        let created = self.admin(Method::POST, path, Some(body)).await;
        assert_eq!(created.status, StatusCode::CREATED, "{path}: {:?}", created.body);
        created.data().clone()
    }

    async fn client(&self, id: &str, configuration: Value) -> TestClient {
        let path = format!("/realms/{}/clients", self.realm);
        let created = self.created(&path, json!({ "id": id, "clientConfiguration": configuration })).await;
        let secret = created["clientSecret"].as_str().unwrap().to_owned();
        TestClient { realm: self.realm.clone(), id: id.to_owned(), secret }
    }

    /// A protocol endpoint of the realm at `base`, as `client`.
    async fn protocol(&self, base: &str, client: &TestClient, endpoint: &str, form: &[(&str, &str)]) -> Answer {
        let url = format!("{base}/realms/{}/protocol/openid-connect/{endpoint}", self.realm);
        let sent = self.http.post(url).basic_auth(&client.id, Some(&client.secret)).form(form).send().await;
        answer(sent.expect("the service answers")).await
    }

    async fn active(&self, base: &str, client: &TestClient, token: &str) -> bool {
        self.protocol(base, client, "token/introspect", &[("token", token)]).await.body["active"] == true
    }

    async fn sign_in(&self, base: &str, client: &TestClient, username: &str, password: &str, from: &str) -> Answer {
        let url = format!("{base}/realms/{}/protocol/openid-connect/token", self.realm);
        let form = [("grant_type", "password"), ("username", username), ("password", password)];
        let sent = self.http.post(url).basic_auth(&client.id, Some(&client.secret)).header("x-forwarded-for", from);
        answer(sent.form(&form).send().await.expect("the service answers")).await
    }

    /// Admin keys of their own for a burst: each may make 300 calls a minute on the standing
    /// clock, counted once across the hosts.
    async fn keys(&self, count: usize) -> Arc<Keys> {
        let mut keys = Vec::new();
        for n in 0..count {
            let secret = self.created("/secrets", json!({ "name": format!("burst {n}"), "roles": ["Admin"] })).await;
            keys.push(secret["value"].as_str().unwrap().to_owned());
        }
        Arc::new(Keys { keys, spent: AtomicUsize::new(0) })
    }

    /// An endpoint of the realm's `shop` client that receives `user_created` at `receiver`.
    async fn endpoint(&self, receiver: &Receiver) {
        let path = format!("/realms/{}/clients/shop/webhooks", self.realm);
        let body =
            json!({ "name": format!("Burst {}", receiver.url), "url": receiver.url, "events": ["user_created"] });
        self.created(&path, body).await;
    }

    /// SIGTERM to host `n`, which drains and exits; HAProxy takes it out; it starts again and
    /// HAProxy takes it back.
    async fn restart(&mut self, n: usize) {
        let name = format!("host{}", n + 1);
        self.hosts[n].take().expect("a running host").terminate().await;
        self.balancer.until(&name, "DOWN").await;
        self.start_again(n).await;
    }

    /// Starts host `n` again in the time of the others, and waits for HAProxy to take it back.
    async fn start_again(&mut self, n: usize) {
        self.hosts[n] = Some(Host::start(&self.db, self.ports[n], &self.settings).await);
        self.align_clocks().await;
        self.balancer.until(&format!("host{}", n + 1), "UP").await;
    }

    /// Sets every host's manual clock to the latest of them. Each starts at the instant it
    /// started and stands still, while the hosts of a deployment share one time: without this, a
    /// host started a second earlier would find what another wrote "now" still in its future.
    async fn align_clocks(&self) {
        let mut latest = None;
        for base in self.every_host() {
            let read = self.http.get(format!("{base}/_dev/clock")).send().await.expect("the clock answers");
            let now = answer(read).await.data()["now"].as_str().unwrap().to_owned();
            let now = chrono::DateTime::parse_from_rfc3339(&now).unwrap();
            latest = latest.max(Some(now));
        }
        // A second on: the clock is read back rounded, and never runs backwards.
        let latest = (latest.expect("a host") + chrono::TimeDelta::seconds(1)).to_rfc3339();
        for base in self.every_host() {
            let set = self.http.post(format!("{base}/_dev/clock")).json(&json!({ "set": latest })).send().await;
            let set = answer(set.expect("the clock answers")).await;
            assert_eq!(set.status, StatusCode::OK, "{:?}", set.body);
        }
    }

    /// Moves the clock of every running host by `seconds` (its delivery step runs with it).
    async fn advance_every_host(&self, seconds: i64) {
        for (n, host) in self.hosts.iter().enumerate() {
            if host.is_some() {
                assert!(step(&self.http, &self.host(n), seconds).await, "host {n} moves its clock");
            }
        }
    }
}

async fn admin_call(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> reqwest::Result<Answer> {
    let mut request = http.request(method, format!("{base}/api/v1/admin{path}")).header("x-api-key", key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    Ok(answer(request.send().await?).await)
}

/// A step of the manual clock at `base`, which delivers what is due; false when it did not answer.
async fn step(http: &reqwest::Client, base: &str, seconds: i64) -> bool {
    let sent = http.post(format!("{base}/_dev/clock")).json(&json!({ "advanceSeconds": seconds })).send().await;
    sent.is_ok_and(|response| response.status() == StatusCode::OK)
}

/// A source address of its own in 198.18.0.0/15 (Redis counts for every test).
fn fresh_source() -> String {
    let bytes = uuid::Uuid::new_v4().into_bytes();
    format!("198.{}.{}.{}", 18 + (bytes[0] & 1), bytes[1], bytes[2].max(1))
}

fn blocked(answer: &Answer) -> bool {
    answer.status == StatusCode::TOO_MANY_REQUESTS && answer.body["error_code"] == "TooManyRequests"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_hosts_behind_haproxy_act_as_one_service() {
    let Some(d) = Deployment::start().await else { return };
    let balancer = d.balancer.base.clone();

    // Credential stuffing from three sources, each attempt landing on the next host: one
    // incident, each source blocked once, and every host refuses the sources at once.
    let shop = d.client("shop", json!({ "grantTypes": ["password"] })).await;
    let sources: Vec<String> = (0..3).map(|_| fresh_source()).collect();
    for n in 0..8 {
        for source in &sources {
            let refused = d.sign_in(&balancer, &shop, &format!("list-{n}"), "guess", source).await;
            assert_eq!(refused.body["error_code"], "InvalidCredentials", "{source} #{n}: {:?}", refused.body);
        }
    }
    for host in d.every_host() {
        for source in &sources {
            assert!(blocked(&d.sign_in(&host, &shop, "list-0", "guess", source).await), "{source} at {host}");
        }
    }
    let incidents = d.admin(Method::GET, &format!("/threat-incidents?realmId={}", d.realm), None).await;
    assert_eq!(incidents.items().len(), 1, "{:?}", incidents.body);
    let id = incidents.items()[0]["id"].as_str().unwrap();
    let incident = d.admin(Method::GET, &format!("/threat-incidents/{id}"), None).await;
    assert_eq!(incident.data()["blockedSources"], 3, "{:?}", incident.body);
    assert_eq!(incident.data()["measures"].as_array().unwrap().len(), 3, "{:?}", incident.body);

    // A revocation: every host knew the token active (and may cache what it read).
    let service = d.client("service", json!({ "grantTypes": ["client_credentials"] })).await;
    let issued = d.protocol(&balancer, &service, "token", &[("grant_type", "client_credentials")]).await;
    let token = issued.body["access_token"].as_str().unwrap().to_owned();
    for host in d.every_host() {
        assert!(d.active(&host, &service, &token).await, "{host}");
    }
    assert_eq!(d.protocol(&balancer, &service, "revoke", &[("token", &token)]).await.status, StatusCode::OK);
    for host in d.every_host() {
        assert!(!d.active(&host, &service, &token).await, "revoked at {host} when the answer returned");
    }

    // A withdrawal: every host exchanged under the grant before it was withdrawn.
    d.created(&format!("/realms/{}/scopes", d.realm), json!({ "name": "orders:read" })).await;
    let web = d.client("web", json!({ "grantTypes": ["password"], "allowedScopes": ["orders:read"] })).await;
    let agent_configuration =
        json!({ "grantTypes": ["client_credentials"], "allowedScopes": ["orders:read"], "tokenExchangeEnabled": true });
    let agent = d.client("agent", agent_configuration).await;
    let user = json!({ "username": "ada", "email": "ada@example.com", "password": PASSWORD });
    let ada = d.created(&format!("/realms/{}/users", d.realm), user).await["id"].as_str().unwrap().to_owned();
    let grant = json!({ "clientId": "agent", "subjectUserId": ada, "scopes": ["orders:read"] });
    let grant =
        d.created(&format!("/realms/{}/delegation-grants", d.realm), grant).await["id"].as_str().unwrap().to_owned();
    let own = d.sign_in(&balancer, &web, "ada", PASSWORD, "192.0.2.10").await;
    let own = own.body["access_token"].as_str().unwrap().to_owned();
    let exchange = [("grant_type", EXCHANGE), ("subject_token", own.as_str()), ("subject_token_type", ACCESS_TOKEN)];
    let mut delegated = Vec::new();
    for host in d.every_host() {
        let answered = d.protocol(&host, &agent, "token", &exchange).await;
        assert_eq!(answered.status, StatusCode::OK, "{host}: {:?}", answered.body);
        delegated.push(answered.body["access_token"].as_str().unwrap().to_owned());
    }
    let path = format!("/realms/{}/delegation-grants/{grant}/withdraw", d.realm);
    let withdrawn = d.admin(Method::POST, &path, Some(json!({ "reason": "the agent leaked its secret" }))).await;
    assert_eq!(withdrawn.status, StatusCode::OK, "{:?}", withdrawn.body);
    for (host, token) in d.every_host().iter().zip(&delegated) {
        assert!(!d.active(host, &agent, token).await, "withdrawn at {host} when the answer returned");
        let refused = d.protocol(host, &agent, "token", &exchange).await;
        assert_eq!(refused.body["error_code"], "DelegationNotPermitted", "{host}: {:?}", refused.body);
    }

    // A full suspension at the sign-in client: her token there goes inactive on every host.
    for host in d.every_host() {
        assert!(d.active(&host, &web, &own).await, "{host}");
    }
    let path = format!("/realms/{}/clients/web/users/{ada}/suspensions", d.realm);
    d.created(&path, json!({ "level": "Full" })).await;
    for host in d.every_host() {
        assert!(!d.active(&host, &web, &own).await, "suspended at {host} when the answer returned");
        let refused = d.sign_in(&host, &web, "ada", PASSWORD, "192.0.2.10").await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{host}: {:?}", refused.body);
    }

    // The admin limit: 300 calls a minute for one caller, whichever hosts answer them.
    let caller = d.created("/secrets", json!({ "name": "reader", "roles": ["Admin"] })).await;
    let caller = caller["value"].as_str().unwrap();
    let path = format!("/realms/{}", d.realm);
    for n in 0..300 {
        let read = admin_call(&d.http, &balancer, caller, Method::GET, &path, None).await.unwrap();
        assert_eq!(read.status, StatusCode::OK, "call {n}: {:?}", read.body);
    }
    let refused = admin_call(&d.http, &balancer, caller, Method::GET, &path, None).await.unwrap();
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS, "the 301st call: {:?}", refused.body);
}

/// Admin keys shared by the senders of a burst, and the first one not yet spent.
struct Keys {
    keys: Vec<String>,
    spent: AtomicUsize,
}

/// The balancer as the callers of a burst reach it.
#[derive(Clone)]
struct Front {
    http: reqwest::Client,
    base: String,
    realm: String,
}

impl Deployment {
    fn front(&self) -> Front {
        Front { http: self.http.clone(), base: self.balancer.base.clone(), realm: self.realm.clone() }
    }
}

/// What a burst of user creations met.
struct Burst {
    /// How many users exist so far.
    created: tokio::sync::watch::Sender<usize>,
    /// Requests answered with anything but the creation (or a spent key), or not answered.
    refused: AtomicUsize,
}

impl Burst {
    fn new() -> Arc<Self> {
        Arc::new(Self { created: tokio::sync::watch::channel(0).0, refused: AtomicUsize::new(0) })
    }
}

/// Creates users `{prefix}-0` … through the balancer with [`SENDERS`] callers. With `retrying`,
/// a caller tries again until the user exists (a creation cut off after its commit is refused
/// as a duplicate on the retry: it happened); without, every request that is not answered with
/// the creation counts as refused.
async fn burst(front: Front, keys: Arc<Keys>, prefix: &'static str, count: usize, retrying: bool, met: Arc<Burst>) {
    let path = format!("/realms/{}/users", front.realm);
    let mut senders = tokio::task::JoinSet::new();
    for first in 0..SENDERS {
        let (front, keys, met, path) = (front.clone(), keys.clone(), met.clone(), path.clone());
        senders.spawn(async move {
            for n in (first..count).step_by(SENDERS) {
                let user = json!({ "username": format!("{prefix}-{n}") });
                loop {
                    let using = keys.spent.load(Ordering::SeqCst);
                    let key = keys.keys.get(using).expect("keys enough for the burst");
                    let answered =
                        admin_call(&front.http, &front.base, key, Method::POST, &path, Some(user.clone())).await;
                    match answered {
                        Ok(created) if created.status == StatusCode::CREATED => break,
                        Ok(spent) if spent.status == StatusCode::TOO_MANY_REQUESTS => {
                            let _ = keys.spent.compare_exchange(using, using + 1, Ordering::SeqCst, Ordering::SeqCst);
                        }
                        Ok(duplicate)
                            if retrying
                                && duplicate.status == StatusCode::BAD_REQUEST
                                && duplicate.body["notifications"][0]["code"] == "Duplicate" =>
                        {
                            break;
                        }
                        Ok(refused) if !retrying => {
                            met.refused.fetch_add(1, Ordering::SeqCst);
                            eprintln!("{prefix}-{n} refused: {} {:?}", refused.status, refused.body);
                            break;
                        }
                        Err(error) if !retrying => {
                            met.refused.fetch_add(1, Ordering::SeqCst);
                            eprintln!("{prefix}-{n} not answered: {error}");
                            break;
                        }
                        _ => tokio::task::yield_now().await,
                    }
                }
                met.created.send_modify(|created| *created += 1);
            }
        });
    }
    senders.join_all().await;
}

/// Callers that ask the hosts, through the balancer, to deliver what is due until the returned
/// switch is turned off.
fn deliverers(front: &Front) -> (Arc<AtomicBool>, tokio::task::JoinSet<()>) {
    let publishing = Arc::new(AtomicBool::new(true));
    let mut deliverers = tokio::task::JoinSet::new();
    for _ in 0..HOSTS {
        let (front, publishing) = (front.clone(), publishing.clone());
        deliverers.spawn(async move {
            while publishing.load(Ordering::SeqCst) {
                step(&front.http, &front.base, 0).await;
            }
        });
    }
    (publishing, deliverers)
}

/// Stops the deliverers, then lets every host deliver what is still due, and then what is
/// scheduled: an attempt that failed under the load (its receiver slow to answer) is retried
/// later, and one a killed host was sending is left to it until its lease ends; the clocks move
/// on to the latest of these until none is left. The failed attempts are told.
async fn delivered(d: &Deployment, (publishing, deliverers): (Arc<AtomicBool>, tokio::task::JoinSet<()>)) {
    publishing.store(false, Ordering::SeqCst);
    deliverers.join_all().await;
    d.advance_every_host(0).await;
    let path = format!("/realms/{}/clients/shop/webhooks/deliveries", d.realm);
    let mut left = Vec::new();
    for _ in 0..10 {
        let failed = d.admin(Method::GET, &format!("{path}?status=Failed&pageSize=200"), None).await;
        for attempt in failed.items() {
            eprintln!(
                "failed attempt of event {} (retry {}): {} {}",
                attempt["eventId"], attempt["retryNumber"], attempt["responseStatus"], attempt["error"]
            );
        }
        let scheduled = d.admin(Method::GET, &format!("{path}?status=Scheduled&pageSize=200"), None).await;
        let waits = scheduled.items().iter().flat_map(|a| [a["dueAt"].as_str(), a["sendingUntil"].as_str()]);
        let Some(last) = waits.flatten().max().map(str::to_owned) else {
            return;
        };
        let due = chrono::DateTime::parse_from_rfc3339(&last).unwrap();
        let read = d.http.get(format!("{}/_dev/clock", d.host(0))).send().await.expect("the clock answers");
        let now = answer(read).await.data()["now"].as_str().unwrap().to_owned();
        let wait = (due - chrono::DateTime::parse_from_rfc3339(&now).unwrap()).num_seconds().max(0) + 1;
        left = scheduled.items().iter().take(3).cloned().collect();
        left.push(json!({ "now": now, "scheduled": scheduled.body["pagination"]["totalItems"] }));
        d.advance_every_host(wait).await;
    }
    panic!("retries were still scheduled after ten rounds: {left:#?}");
}

/// Asserts that every receiver got each user of `prefix` (and no other), and, when `once`,
/// each only once.
fn assert_received(receivers: &[Receiver], prefix: &str, count: usize, once: bool) {
    let expected: HashSet<String> = (0..count).map(|n| format!("{prefix}-{n}")).collect();
    for receiver in receivers {
        let seen: HashMap<String, usize> =
            delivered_users(receiver).into_iter().filter(|(user, _)| user.starts_with(&format!("{prefix}-"))).collect();
        let got: HashSet<String> = seen.keys().cloned().collect();
        let missing: Vec<_> = expected.difference(&got).take(5).collect();
        let unexpected: Vec<_> = got.difference(&expected).take(5).collect();
        assert!(
            missing.is_empty() && unexpected.is_empty(),
            "{prefix}: {} of {count} delivered to {}; missing {missing:?}…, unexpected {unexpected:?}",
            got.intersection(&expected).count(),
            receiver.url
        );
        if once {
            let twice: Vec<_> = seen.iter().filter(|(_, times)| **times > 1).collect();
            assert!(twice.is_empty(), "{prefix}: delivered more than once: {twice:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_hosts_deliver_every_event_through_a_rolling_restart_and_a_kill() {
    const BURST: usize = 10_000;
    const UNDER_RESTART: usize = 1_500;
    const UNDER_KILL: usize = 1_500;
    let Some(mut d) = Deployment::start().await else { return };
    d.client("shop", json!({ "grantTypes": ["client_credentials"] })).await;
    let receivers = [Receiver::start().await, Receiver::start().await];
    for receiver in &receivers {
        d.endpoint(receiver).await;
    }
    let keys = d.keys((BURST + UNDER_RESTART + UNDER_KILL) / 300 + 6).await;

    // A burst no failure interrupts, with every host delivering: each event once per endpoint.
    let delivering = deliverers(&d.front());
    let met = Burst::new();
    burst(d.front(), keys.clone(), "burst", BURST, false, met.clone()).await;
    delivered(&d, delivering).await;
    assert_eq!(met.refused.load(Ordering::SeqCst), 0, "every creation was answered");
    assert_received(&receivers, "burst", BURST, true);

    // A rolling restart under load: each host in turn drains, stops and starts again while the
    // creations go on. No request is refused or left unanswered, and no event is lost.
    let delivering = deliverers(&d.front());
    let met = Burst::new();
    let load = tokio::spawn(burst(d.front(), keys.clone(), "rolling", UNDER_RESTART, false, met.clone()));
    let mut created = met.created.subscribe();
    for n in 0..HOSTS {
        // Each restart begins with creations under way.
        created.wait_for(|created| *created >= (n + 1) * UNDER_RESTART / (HOSTS + 2)).await.unwrap();
        d.restart(n).await;
    }
    load.await.unwrap();
    delivered(&d, delivering).await;
    assert_eq!(met.refused.load(Ordering::SeqCst), 0, "no accepted request was lost");
    assert_received(&receivers, "rolling", UNDER_RESTART, false);

    // SIGKILL of one host a third of the way through a burst: the callers try again until their
    // users exist, and every event is delivered at least once; the attempts the killed host had
    // claimed are sent again once their 60-second lease is over.
    let delivering = deliverers(&d.front());
    let met = Burst::new();
    let load = tokio::spawn(burst(d.front(), keys.clone(), "killed", UNDER_KILL, true, met.clone()));
    let mut created = met.created.subscribe();
    created.wait_for(|created| *created >= UNDER_KILL / 3).await.unwrap();
    d.hosts[1].take().expect("the second host").kill().await;
    d.balancer.until("host2", "DOWN").await;
    d.start_again(1).await;
    load.await.unwrap();
    delivered(&d, delivering).await;
    assert_received(&receivers, "killed", UNDER_KILL, false);
}
