//! Configuration export and import: an exported account imported into an empty one exports the
//! same; conflicts handled by the chosen policy; a dry run that writes and publishes nothing; a
//! refused item that refuses only what belongs to it; one part imported alone.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::operations::webhooks::receiving;
use crate::support::receiver::Receiver;
use crate::support::{TestApp, TestDatabase, created_id, spawn_with};

/// A realm with something of every part: scopes of the catalogue and of the realm, settings that
/// name them, roles, a group granting realm and client roles, an organization, a resource server,
/// clients (one granted a role, one public), and webhook endpoints of the realm and of a client.
async fn configure(app: &TestApp, receiver: &Receiver) {
    assert_eq!(
        app.post("/scopes", json!({ "name": "orders:read", "description": "Read orders" })).await.status,
        StatusCode::CREATED
    );
    let realm = json!({ "id": "acme", "displayName": "Acme", "maxFailedAttempts": 7, "selfSignUp": true });
    assert_eq!(app.post("/realms", realm).await.status, StatusCode::CREATED);
    created_id(app, "/realms/acme/scopes", json!({ "name": "reports:read" })).await;
    let settings = json!({ "clientRegistration": "Open", "registrationScopes": ["reports:read"] });
    assert_eq!(app.put("/realms/acme", settings).await.status, StatusCode::OK);
    let admin = created_id(app, "/realms/acme/roles", json!({ "name": "admin", "description": "Everything" })).await;
    let web = json!({
        "id": "web", "name": "Web shop", "description": "The storefront",
        "clientConfiguration": {
            "grantTypes": ["authorization_code", "refresh_token", "client_credentials"],
            "allowedScopes": ["openid", "orders:read", "reports:read"],
            "redirectUris": ["https://shop.example.com/callback"],
            "allowedOrigins": ["https://shop.example.com"],
        },
        "branding": { "primaryColor": "#224466" },
        "signingKey": { "keys": "Own", "rotationDays": 30 },
    });
    assert_eq!(app.post("/realms/acme/clients", web).await.status, StatusCode::CREATED);
    let spa = json!({ "id": "spa", "type": "Public", "clientConfiguration": { "redirectUris": ["http://127.0.0.1:8080/cb"] } });
    assert_eq!(app.post("/realms/acme/clients", spa).await.status, StatusCode::CREATED);
    let clerk = created_id(app, "/realms/acme/clients/web/roles", json!({ "name": "clerk" })).await;
    let granted = app.post("/realms/acme/clients/web/granted-roles", json!({ "roleId": admin })).await;
    assert_eq!(granted.status, StatusCode::CREATED, "{:?}", granted.body);
    let staff = created_id(app, "/realms/acme/groups", json!({ "name": "staff", "description": "Shop staff" })).await;
    for role in [&admin, &clerk] {
        let granted = app.post(&format!("/realms/acme/groups/{staff}/roles"), json!({ "roleId": role })).await;
        assert_eq!(granted.status, StatusCode::CREATED, "{:?}", granted.body);
    }
    let google = json!({ "id": "google", "protocol": "OpenIdConnect", "clientId": "acme-at-google",
        "discoveryUrl": "https://accounts.google.com/.well-known/openid-configuration", "clientSecret": "GOCSPX-secret-1234",
        "trustVerifiedEmail": true, "roleMappings": [{ "claim": "hd", "value": "acme.example", "roles": ["admin"], "groups": ["staff"] }] });
    assert_eq!(app.post("/realms/acme/identity-providers", google).await.status, StatusCode::CREATED);
    let initech = json!({ "name": "Initech", "domains": ["initech.example"] });
    let initech = created_id(app, "/realms/acme/organizations", initech).await;
    let offer = json!({ "identityProviders": ["google"] });
    assert_eq!(app.put("/realms/acme/clients/web/identity-providers", offer.clone()).await.status, StatusCode::OK);
    let offered = app.put(&format!("/realms/acme/organizations/{initech}/identity-providers"), offer).await;
    assert_eq!(offered.status, StatusCode::OK, "{:?}", offered.body);
    let api = json!({ "name": "Orders API", "address": "https://api.example.com/orders",
                      "scopes": ["orders:read"], "allowedClients": ["web"] });
    created_id(app, "/realms/acme/resource-servers", api).await;
    let hook = json!({ "name": "Audit", "url": receiver.url, "events": ["admin_resource_created"], "retries": 3 });
    created_id(app, "/realms/acme/webhooks", hook).await;
    let hook = json!({ "name": "Shop", "url": receiver.url, "events": ["login_succeeded"], "status": "Paused" });
    created_id(app, "/realms/acme/clients/web/webhooks", hook).await;
}

async fn export(app: &TestApp) -> Value {
    let answer = app.get("/export").await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.data().clone()
}

async fn import(app: &TestApp, path: &str, document: &Value) -> Value {
    let answer = app.post(path, document.clone()).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.data().clone()
}

fn counts(report: &Value) -> [i64; 6] {
    ["created", "updated", "unchanged", "skipped", "withdrawn", "refused"]
        .map(|name| report["counts"][name].as_i64().expect(name))
}

/// The item of a report with this collection and key.
fn item<'a>(report: &'a Value, collection: &str, key: &str) -> &'a Value {
    report["items"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["collection"] == collection && i["key"] == key))
        .unwrap_or_else(|| panic!("no {collection} {key} in {report:#}"))
}

async fn trail_length(app: &TestApp) -> usize {
    let store = app.database().await;
    let (count,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM audit_trail").fetch_one(store.pool()).await.expect("the trail");
    usize::try_from(count).expect("a count")
}

#[tokio::test]
async fn an_exported_account_imported_into_an_empty_one_exports_the_same() {
    let receiver = Receiver::start().await;
    let source = spawn_with(TestDatabase::new().await, receiving).await;
    configure(&source, &receiver).await;
    let document = export(&source).await;
    assert_eq!(document["format"], "castellan-configuration/1");
    let text = document.to_string();
    for secret in ["clientSecret", "signingSecret", "createdAt", "realmId", "lastFour"] {
        assert!(!text.contains(secret), "{secret} is not exported: {text}");
    }
    let acme = &document["realms"][0];
    assert_eq!(document["realms"].as_array().map(Vec::len), Some(1), "the service's own realm is not exported");
    assert_eq!(acme["registrationScopes"], json!(["reports:read"]));
    assert_eq!(acme["identityProviders"][0]["roleMappings"][0]["groups"], json!(["staff"]));
    assert!(!text.contains("GOCSPX"), "nor an identity provider's secret");
    assert_eq!(acme["groups"][0]["roles"], json!([{ "name": "admin" }, { "name": "clerk", "clientId": "web" }]));
    let web = acme["clients"].as_array().unwrap().iter().find(|c| c["id"] == "web").unwrap();
    assert_eq!(web["grantedRoles"], json!([{ "name": "admin" }]));
    assert_eq!(web["identityProviders"], json!(["google"]));
    assert_eq!(acme["organizations"][0]["identityProviders"], json!(["google"]));

    let target = spawn_with(TestDatabase::new().await, receiving).await;
    let report = import(&target, "/import", &document).await;
    assert_eq!(counts(&report), [19, 0, 0, 0, 0, 0], "{report:#}");
    let web = item(&report, "Client", "web");
    assert!(web["secret"].as_str().is_some_and(|s| s.len() > 20), "a new secret is shown once: {web}");
    assert!(item(&report, "Client", "spa").get("secret").is_none(), "a public client has none");
    assert!(item(&report, "RealmWebhook", &receiver.url)["secret"].is_string());
    assert_eq!(export(&target).await, document, "the import reproduces the account");
    let created = target.events("admin_resource_created").await;
    assert!(
        created.iter().any(|(realm, _, data)| realm.as_deref() == Some("acme") && data["resource_type"] == "client")
    );

    // The same document again changes nothing, whatever the policy.
    let trail = trail_length(&target).await;
    for policy in ["Skip", "Overwrite", "Fail"] {
        let again = import(&target, &format!("/import?onConflict={policy}"), &document).await;
        assert_eq!(counts(&again), [0, 0, 18, 0, 0, 0], "{policy}: {again:#}");
    }
    assert_eq!(trail_length(&target).await, trail, "nothing was written");
}

#[tokio::test]
async fn conflicts_follow_the_policy_and_a_dry_run_writes_and_publishes_nothing() {
    let receiver = Receiver::start().await;
    let app = spawn_with(TestDatabase::new().await, receiving).await;
    configure(&app, &receiver).await;
    let before = export(&app).await;
    let mut document = before.clone();
    let acme = &mut document["realms"][0];
    acme["roles"][0]["description"] = json!("Nearly everything");
    acme["roles"].as_array_mut().unwrap().push(json!({ "name": "auditor" }));
    acme["groups"][0]["roles"] = json!([{ "name": "admin" }, { "name": "auditor" }]);

    let trail = trail_length(&app).await;
    let events = app.events("admin_resource_created").await.len() + app.events("admin_resource_updated").await.len();
    let dry = import(&app, "/import?onConflict=Overwrite&dryRun=true", &document).await;
    assert_eq!(dry["dryRun"], true);
    assert_eq!(item(&dry, "RealmRole", "admin")["outcome"], "Updated");
    assert_eq!(item(&dry, "RealmRole", "auditor")["outcome"], "Created");
    assert_eq!(item(&dry, "GroupRole", "auditor")["outcome"], "Created");
    assert_eq!(item(&dry, "GroupRole", "web/clerk")["outcome"], "Withdrawn");
    assert_eq!(counts(&dry), [2, 1, 16, 0, 1, 0], "{dry:#}");
    assert_eq!(export(&app).await, before, "a dry run writes nothing");
    assert_eq!(trail_length(&app).await, trail);
    let published = app.events("admin_resource_created").await.len() + app.events("admin_resource_updated").await.len();
    assert_eq!(published, events, "and publishes nothing");

    let skipped = import(&app, "/import?dryRun=true", &document).await;
    assert_eq!(item(&skipped, "RealmRole", "admin")["outcome"], "Skipped");
    assert_eq!(item(&skipped, "GroupRole", "auditor")["outcome"], "Created", "a held group gains the grants it lacks");
    assert!(
        skipped["items"].as_array().unwrap().iter().all(|i| i["outcome"] != "Withdrawn"),
        "only overwriting withdraws"
    );
    let failed = import(&app, "/import?onConflict=Fail&dryRun=true", &document).await;
    let refused = item(&failed, "RealmRole", "admin");
    assert_eq!(refused["outcome"], "Refused");
    assert!(refused["reasons"][0]["message"].as_str().unwrap().contains("already holds it"), "{refused}");
    assert_eq!(item(&failed, "RealmRole", "auditor")["outcome"], "Created", "one conflict stops nothing else");

    let done = import(&app, "/import?onConflict=Overwrite", &document).await;
    assert_eq!(counts(&done), counts(&dry), "the import does what its dry run said");
    let after = export(&app).await;
    assert_eq!(after["realms"][0]["roles"], document["realms"][0]["roles"]);
    assert_eq!(after["realms"][0]["groups"][0]["roles"], json!([{ "name": "admin" }, { "name": "auditor" }]));
    assert!(trail_length(&app).await > trail);
}

#[tokio::test]
async fn a_refused_item_refuses_only_what_belongs_to_it() {
    let app = spawn_with(TestDatabase::new().await, receiving).await;
    let document = json!({
        "realms": [
            { "id": "Not A Realm Id", "roles": [{ "name": "admin" }], "clients": [{ "id": "web" }] },
            { "id": "shop", "roles": [{ "name": "admin" }],
              "clients": [
                  { "id": "good", "roles": [{ "name": "clerk" }] },
                  { "id": "bad", "clientConfiguration": { "grantTypes": ["implicit"] }, "roles": [{ "name": "clerk" }] },
              ],
              "groups": [{ "name": "staff", "roles": [{ "name": "admin" }, { "name": "ghost" }, { "name": "clerk", "clientId": "bad" }] }] },
        ],
    });
    let report = import(&app, "/import", &document).await;
    let bad_realm = item(&report, "Realm", "Not A Realm Id");
    assert_eq!(bad_realm["outcome"], "Refused");
    assert_eq!(bad_realm["reasons"][0]["field"], "id", "{bad_realm}");
    let orphan = report["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["realmId"] == "Not A Realm Id" && i["key"] == "web")
        .unwrap();
    assert_eq!(orphan["outcome"], "Refused");
    assert!(orphan["reasons"][0]["message"].as_str().unwrap().contains("was not imported"));

    let bad = item(&report, "Client", "bad");
    assert_eq!(bad["outcome"], "Refused");
    assert!(bad["reasons"][0]["field"].as_str().unwrap().starts_with("clientConfiguration.grantTypes"), "{bad}");
    let roles: Vec<(&Value, &Value)> = report["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["collection"] == "ClientRole")
        .map(|i| (&i["clientId"], &i["outcome"]))
        .collect();
    assert_eq!(roles, [(&json!("good"), &json!("Created")), (&json!("bad"), &json!("Refused"))]);
    assert_eq!(item(&report, "GroupRole", "admin")["outcome"], "Created");
    assert_eq!(item(&report, "GroupRole", "ghost")["outcome"], "Refused");
    assert_eq!(item(&report, "GroupRole", "bad/clerk")["outcome"], "Refused");
    assert_eq!(item(&report, "Group", "staff")["outcome"], "Created");
    assert_eq!(app.get("/realms/shop/clients/good/roles").await.items().len(), 1);
    assert_eq!(app.get("/realms/shop/clients/bad").await.status, StatusCode::FORBIDDEN, "never created");

    // A document whose shape is wrong is refused whole, every problem with its path.
    let broken = json!({ "realms": [{ "id": "x", "clients": [{ "name": "no id" }, { "id": "a" }, { "id": "a" }] }], "users": [] });
    let answer = app.post("/import", broken).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let fields = answer.refused_fields();
    for expected in
        [("realms[0].clients[0].id", "Required"), ("realms[0].clients[2].id", "Duplicate"), ("users", "Unknown")]
    {
        assert!(fields.contains(&(expected.0.to_owned(), expected.1.to_owned())), "{expected:?} in {fields:?}");
    }
    assert_eq!(app.get("/realms/x").await.status, StatusCode::FORBIDDEN, "nothing was imported");
}

#[tokio::test]
async fn one_part_imports_alone_into_the_realms_the_account_holds() {
    let receiver = Receiver::start().await;
    let source = spawn_with(TestDatabase::new().await, receiving).await;
    configure(&source, &receiver).await;
    let roles = source.get("/export/roles").await;
    assert_eq!(roles.status, StatusCode::OK);
    let document = roles.data().clone();
    assert_eq!(document["realms"][0].as_object().map(|r| r.len()), Some(3), "id, roles, clients: {document:#}");
    assert_eq!(document["realms"][0]["clients"], json!([{ "id": "web", "roles": [{ "name": "clerk" }] }]));

    let target = spawn_with(TestDatabase::new().await, receiving).await;
    let orphaned = import(&target, "/import/roles", &document).await;
    assert_eq!(counts(&orphaned), [0, 0, 0, 0, 0, 2], "no realm acme: {orphaned:#}");
    assert!(item(&orphaned, "RealmRole", "admin")["reasons"][0]["message"].as_str().unwrap().contains("no realm acme"));
    target.create_realm("acme").await;
    target.post("/realms/acme/clients", json!({ "id": "web" })).await;
    let report = import(&target, "/import/roles", &document).await;
    assert_eq!(counts(&report), [2, 0, 0, 0, 0, 0], "{report:#}");
    assert_eq!(report["resourceTypes"], json!(["roles"]));
    assert_eq!(target.get("/realms/acme").await.data()["displayName"], "acme", "the realm itself is left as it is");
    assert_eq!(target.get("/realms/acme/clients/web/roles").await.items()[0]["name"], "clerk");
    assert_eq!(target.post("/import/users", json!({})).await.status, StatusCode::BAD_REQUEST);
    let auditor = target.key_with(&["Auditor"], None).await;
    let refused = target.call_as(&auditor, reqwest::Method::POST, "/import?dryRun=true", Some(document.clone())).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "an import changes realms");
    let read = target.call_as(&auditor, reqwest::Method::GET, "/export", None).await;
    assert_eq!(read.status, StatusCode::OK, "an export only reads them");
}
