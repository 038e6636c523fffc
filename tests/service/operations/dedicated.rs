//! The dedicated environment (`/api/v1/dedicated/instance`): what the deployment is, the
//! account's maintenance window, and the networks its admin credentials may be used from —
//! enforced on every admin request, before the request counts against the caller's limit.

use chrono::{DateTime, Days, SecondsFormat, TimeDelta, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{Answer, TestApp, TestDatabase, answer, spawn_beside, spawn_with};

const INSTANCE: &str = "/api/v1/dedicated/instance";

/// Calls `path` (from the service's root) with `key`, from the address `from` when given.
async fn call_from(app: &TestApp, key: &str, method: Method, path: &str, body: Option<Value>, from: &str) -> Answer {
    let mut request = app.http.request(method, format!("{}{path}", app.base)).header("x-api-key", key);
    if !from.is_empty() {
        request = request.header("x-forwarded-for", from);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    answer(request.send().await.expect("the service answers")).await
}

#[tokio::test]
async fn the_instance_describes_the_deployment_and_keeps_the_accounts_maintenance_window() {
    let app = spawn_with(TestDatabase::new().await, |settings| settings.region = Some("eu-test-1".into())).await;
    let read = call_from(&app, &app.key, Method::GET, INSTANCE, None, "").await;
    assert_eq!(read.status, StatusCode::OK, "{:?}", read.body);
    let instance = read.data();
    assert_eq!(instance["publicUrl"], app.base);
    assert_eq!(instance["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(instance["region"], "eu-test-1");
    assert_eq!(instance["status"], "Running");
    assert_eq!(instance["hosts"], 1);
    let database = if app.state.store.is_shared() { "PostgreSQL" } else { "SQLite" };
    assert_eq!(instance["database"], database);
    assert_eq!(instance["sharedCounters"], false);
    assert!(instance.get("adminNetworks").is_none(), "no networks: {instance}");
    assert_eq!(instance["callerAddress"], "127.0.0.1");
    assert!(instance.get("maintenanceWindow").is_none() && instance.get("updatedAt").is_none(), "{instance}");
    assert_eq!(app.get("/dedicated/instance").await.data(), instance, "the same under the admin API's base");

    // A window tomorrow night, running over midnight into the day after.
    let now = app.state.clock.now();
    let tomorrow = now.date_naive() + Days::new(1);
    let start = tomorrow.and_hms_opt(23, 30, 0).unwrap().and_utc();
    let weekday = tomorrow.format("%A").to_string();
    let iso = |at: DateTime<Utc>| at.to_rfc3339_opts(SecondsFormat::Millis, true);
    let window = json!({ "weekday": weekday, "startTime": "23:30", "durationMinutes": 120 });
    let set = call_from(&app, &app.key, Method::PUT, INSTANCE, Some(json!({ "maintenanceWindow": window })), "").await;
    assert_eq!(set.status, StatusCode::OK, "{:?}", set.body);
    let expected =
        json!({ "weekday": weekday, "startTime": "23:30", "durationMinutes": 120, "nextStartAt": iso(start) });
    assert_eq!(set.data()["maintenanceWindow"], expected);
    assert_eq!(set.data()["updatedAt"], iso(now));
    assert_eq!(set.data()["status"], "Running");
    app.advance((start + TimeDelta::minutes(90) - now).num_seconds() + 1).await; // 01:00 the day after
    let during = app.get("/dedicated/instance").await;
    assert_eq!(during.data()["status"], "InMaintenanceWindow");
    assert_eq!(during.data()["maintenanceWindow"]["nextStartAt"], iso(start + Days::new(7)));
    app.advance(30 * 60).await; // 01:30, the window's end
    assert_eq!(app.get("/dedicated/instance").await.data()["status"], "Running");

    // Every bad field is named, and nothing is written.
    let bad = json!({
        "maintenanceWindow": { "weekday": "Caturday", "startTime": "24:10", "durationMinutes": 5, "zone": "CET" },
        "adminNetworks": ["10.0.0.0/8", "not a network", "10.0.0.0/8"],
        "status": "Paused",
    });
    let refused = call_from(&app, &app.key, Method::PUT, INSTANCE, Some(bad), "").await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{:?}", refused.body);
    assert_eq!(refused.error_code(), "ValidationFailed");
    let mut fields: Vec<String> = refused.refused_fields().into_iter().map(|(field, _)| field).collect();
    fields.sort();
    let expected = [
        "adminNetworks[1]",
        "adminNetworks[2]",
        "maintenanceWindow.durationMinutes",
        "maintenanceWindow.startTime",
        "maintenanceWindow.weekday",
        "maintenanceWindow.zone",
        "status",
    ];
    assert_eq!(fields, expected, "{:?}", refused.body);
    let kept = app.get("/dedicated/instance").await;
    assert_eq!(kept.data()["maintenanceWindow"]["weekday"], weekday);
    assert!(kept.data().get("adminNetworks").is_none(), "{:?}", kept.body);

    // Omitted fields keep their value; null removes the window.
    let cleared = app.put("/dedicated/instance", json!({ "maintenanceWindow": null })).await;
    assert_eq!(cleared.status, StatusCode::OK, "{:?}", cleared.body);
    assert!(cleared.data().get("maintenanceWindow").is_none(), "{:?}", cleared.body);

    // Reading needs account:read, changing account:update.
    let auditor = app.key_with(&["Auditor"], None).await;
    let developer = app.key_with(&["Developer"], None).await;
    assert_eq!(call_from(&app, &auditor, Method::GET, INSTANCE, None, "").await.status, StatusCode::OK);
    let body = json!({ "maintenanceWindow": window });
    let forbidden = call_from(&app, &developer, Method::PUT, INSTANCE, Some(body), "").await;
    assert_eq!(forbidden.status, StatusCode::FORBIDDEN, "{:?}", forbidden.body);
    assert_eq!(
        call_from(&app, "cstl_key_unknown", Method::GET, INSTANCE, None, "").await.status,
        StatusCode::UNAUTHORIZED
    );

    // Each change is in the trail with what it replaced (and each refused one with its reason).
    let refused = app.get("/audit-trail?resourceType=dedicated_instance&status=Refused").await;
    let mut codes: Vec<&str> = refused.items().iter().filter_map(|c| c["errorCode"].as_str()).collect();
    codes.sort_unstable();
    assert_eq!(codes, ["Forbidden", "ValidationFailed"], "{:?}", refused.body);
    let trail = app.get("/audit-trail?resourceType=dedicated_instance&status=Succeeded").await;
    let changes = trail.items();
    assert_eq!(changes.len(), 2, "{:?}", trail.body);
    let first = changes.iter().find(|c| c["after"]["maintenanceWindow"].is_object()).expect("the window was set");
    assert_eq!(first["before"], json!({ "maintenanceWindow": null, "adminNetworks": [] }));
    assert_eq!(first["after"]["maintenanceWindow"]["weekday"], weekday);
}

#[tokio::test]
async fn admin_networks_admit_only_their_addresses_and_refusals_spend_no_allowance() {
    let app = spawn_with(TestDatabase::new().await, |settings| settings.admin_rate_limits.requests = 12).await;
    let (inside, outside) = ("203.0.113.40", "198.51.100.9");

    // A list that leaves out the caller's own address is refused: the account would shut itself out.
    let body = json!({ "adminNetworks": ["203.0.113.0/24"] });
    let refused = call_from(&app, &app.key, Method::PUT, INSTANCE, Some(body.clone()), outside).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{:?}", refused.body);
    assert_eq!(refused.refused_fields(), [("adminNetworks".to_owned(), "Conflict".to_owned())]);
    assert!(refused.body.to_string().contains(outside), "the message names the caller's address");

    let set = call_from(&app, &app.key, Method::PUT, INSTANCE, Some(body), inside).await;
    assert_eq!(set.status, StatusCode::OK, "{:?}", set.body);
    assert_eq!(set.data()["adminNetworks"], json!(["203.0.113.0/24"]));
    assert_eq!(set.data()["callerAddress"], inside);

    // Every admin request of the account from elsewhere is refused, both addresses of the
    // instance included, and none of them spends the caller's allowance (12 a minute).
    for _ in 0..15 {
        let away = call_from(&app, &app.key, Method::GET, "/api/v1/admin/realms", None, outside).await;
        assert_eq!(away.status, StatusCode::FORBIDDEN, "{:?}", away.body);
        assert_eq!(away.error_code(), "AdminNetworkNotAllowed");
    }
    let away = call_from(&app, &app.key, Method::GET, INSTANCE, None, outside).await;
    assert_eq!(away.error_code(), "AdminNetworkNotAllowed");
    let away = call_from(&app, &app.key, Method::PUT, INSTANCE, Some(json!({ "adminNetworks": [] })), outside).await;
    assert_eq!(away.error_code(), "AdminNetworkNotAllowed");
    let mapped = call_from(&app, &app.key, Method::GET, "/api/v1/admin/realms", None, "::ffff:203.0.113.7").await;
    assert_eq!(mapped.status, StatusCode::OK, "an IPv4 address mapped into IPv6 is itself");
    let home = call_from(&app, &app.key, Method::GET, "/api/v1/admin/access-logs?pageSize=50", None, inside).await;
    assert_eq!(home.status, StatusCode::OK, "{:?}", home.body);

    // The access log keeps each refusal with its reason; the trail keeps the refused change.
    let refusals: Vec<&Value> = home.items().iter().filter(|e| e["reason"] == "AdminNetworkNotAllowed").collect();
    assert_eq!(refusals.len(), 17, "{:?}", home.body);
    assert!(refusals.iter().all(|e| e["status"] == 403 && e["outcome"] == "Refused" && e["ipAddress"] == outside));
    let trail = call_from(&app, &app.key, Method::GET, "/api/v1/admin/audit-trail", None, inside).await;
    let refused_change = trail.items().iter().find(|c| c["errorCode"] == "AdminNetworkNotAllowed").cloned();
    assert!(refused_change.is_some_and(|c| c["resourceType"] == "dedicated_instance"), "{:?}", trail.body);

    // The way back in for an account whose addresses changed: the operator's command empties the
    // list (here through the same function, on the service's own database connection).
    let account = castellan::kernel::ids::AccountId::known(app.account_id.as_str());
    let now = app.state.clock.now();
    let opened =
        castellan::operations::instance::open_admin_networks(&app.state.store, Some(&account), now).await.unwrap();
    assert_eq!(opened, [account]);
    app.state.caches.apply(&castellan::store::changes::Invalidation::Account(opened[0].clone()));
    let back = call_from(&app, &app.key, Method::GET, INSTANCE, None, outside).await;
    assert_eq!(back.status, StatusCode::OK, "{:?}", back.body);
    assert!(back.data().get("adminNetworks").is_none(), "no networks: {:?}", back.body);
}

#[tokio::test]
async fn admin_networks_set_on_one_host_are_in_force_on_the_other_when_the_answer_returns() {
    let one = spawn_with(TestDatabase::new().await, |_| {}).await;
    if !one.state.store.is_shared() {
        return; // SQLite is embedded: one host owns the file (the tests above cover it).
    }
    let two = spawn_beside(&one).await;
    let (inside, outside) = ("203.0.113.40", "198.51.100.9");
    // The second host knows the account's networks (none) from a request it served.
    let warm = call_from(&two, &two.key, Method::GET, INSTANCE, None, outside).await;
    assert_eq!(warm.status, StatusCode::OK, "{:?}", warm.body);
    assert_eq!(warm.data()["hosts"], 2, "both hosts follow the deployment's changes");

    let body = json!({ "adminNetworks": [inside] });
    let set = call_from(&one, &one.key, Method::PUT, INSTANCE, Some(body), inside).await;
    assert_eq!(set.status, StatusCode::OK, "{:?}", set.body);
    let away = call_from(&two, &two.key, Method::GET, "/api/v1/admin/realms", None, outside).await;
    assert_eq!(away.error_code(), "AdminNetworkNotAllowed", "{:?}", away.body);
    assert_eq!(call_from(&two, &two.key, Method::GET, INSTANCE, None, inside).await.status, StatusCode::OK);

    // The operator's command reaches the running hosts too.
    let account = castellan::kernel::ids::AccountId::known(one.account_id.as_str());
    let store = one.database().await;
    let now = one.state.clock.now();
    castellan::operations::instance::open_admin_networks(&store, Some(&account), now).await.unwrap();
    let mut applied = two.state.caches.applied();
    loop {
        if call_from(&two, &two.key, Method::GET, INSTANCE, None, outside).await.status == StatusCode::OK {
            break;
        }
        let arrived = tokio::time::timeout(std::time::Duration::from_secs(5), applied.changed()).await;
        assert!(matches!(arrived, Ok(Ok(()))), "the second host never heard the command");
    }
}
