//! What no credential reaches, whatever its roles: the people of the platform realm, who are the
//! members of every account's team and change only through their own account's team operations,
//! and whatever another account holds. Each walk calls every operation of the admin API's document
//! with a key of each built-in role and of a custom role holding a single permission.

use std::collections::HashMap;

use castellan::kernel::ids::{RealmId, UserId};
use castellan::store::accounts::{self, Person};
use futures_util::StreamExt as _;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{Answer, TestApp, TestDatabase, claims, spawn_with};

const PASSPHRASE: &str = "the owner's own passphrase";

/// The service with admin rate limits no walk reaches.
async fn spawn_unlimited() -> TestApp {
    spawn_with(TestDatabase::new().await, |settings| {
        settings.admin_rate_limits.requests = 1_000_000;
        settings.admin_rate_limits.sensitive_requests = 1_000_000;
    })
    .await
}

/// An operation of the admin API's document.
#[derive(Debug, Clone)]
struct Operation {
    method: Method,
    path: String,
}

impl Operation {
    fn name(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    /// The path with each parameter filled from `values`, or with an id nothing has.
    fn filled(&self, values: &HashMap<&str, String>) -> String {
        let mut path = String::new();
        for segment in self.path.split('/').skip(1) {
            path.push('/');
            match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) => {
                    path.push_str(&values.get(name).cloned().unwrap_or_else(|| uuid::Uuid::now_v7().to_string()))
                }
                None => path.push_str(segment),
            }
        }
        path
    }
}

/// Every operation the admin API's document describes at the admin API's address.
async fn operations(app: &TestApp) -> Vec<Operation> {
    let document = app.get_json(&format!("{}/openapi.json", app.admin)).await;
    let mut found = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        // Served elsewhere, or not behind a credential.
        if path == "/dedicated/instance" || path == "/account/invitations/accept" {
            continue;
        }
        for method in ["get", "post", "put", "delete", "patch"] {
            if item.get(method).is_some() {
                found.push(Operation { method: method.to_uppercase().parse().expect("a method"), path: path.clone() });
            }
        }
    }
    assert!(found.len() > 100, "the document lists the admin API: {}", found.len());
    found
}

/// A key of each built-in role, and of a custom role for each permission alone.
async fn every_kind_of_key(app: &TestApp) -> Vec<(String, String)> {
    let mut keys = Vec::new();
    for role in ["Owner", "Admin", "Developer", "Auditor"] {
        keys.push((role.to_owned(), app.key_with(&[role], None).await));
    }
    let permissions = app.get("/roles/permissions").await.data()["permissions"].clone();
    for permission in permissions.as_array().expect("permissions") {
        let permission = permission.as_str().expect("a name");
        let name = format!("only {permission}");
        let role = app.post("/roles", json!({ "name": name, "permissions": [permission] })).await;
        assert_eq!(role.status, StatusCode::CREATED, "{:?}", role.body);
        keys.push((name.clone(), app.key_with(&[&name], None).await));
    }
    keys
}

/// Calls each operation with each key, a few at a time; the answers with what was called.
async fn walk(
    app: &TestApp,
    keys: &[(String, String)],
    operations: &[Operation],
    values: &HashMap<&str, String>,
) -> Vec<(String, Operation, Answer)> {
    let calls = keys.iter().flat_map(|key| operations.iter().map(move |operation| (key, operation)));
    futures_util::stream::iter(calls)
        .map(|((label, key), operation)| async move {
            let body = (operation.method == Method::POST || operation.method == Method::PUT).then(|| json!({}));
            let answer = app.call_as(key, operation.method.clone(), &operation.filled(values), body).await;
            (label.clone(), operation.clone(), answer)
        })
        .buffer_unordered(8)
        .collect()
        .await
}

/// The Owner of the first start, with a password, signed in at the platform realm.
async fn owner_signed_in(app: &TestApp) -> (String, String) {
    let link = app.owner_link.clone().expect("the first start's link");
    let code = url::Url::parse(&link).unwrap().query_pairs().find(|(k, _)| k == "code").unwrap().1.into_owned();
    let realm = app.state.caches.realm("platform");
    let realm = match realm {
        Some(realm) => realm,
        None => std::sync::Arc::new(
            castellan::store::realms::find(app.state.store.pool(), "platform").await.unwrap().unwrap(),
        ),
    };
    castellan::oauth::signin::recovery::reset(&app.state, &realm, &code, PASSPHRASE)
        .await
        .expect("the owner's password");
    let token = owner_token(app).await.expect("the owner signs in");
    (claims(&token)["sub"].as_str().unwrap().to_owned(), token)
}

/// A console token of the Owner: the password grant at the platform realm.
async fn owner_token(app: &TestApp) -> Option<String> {
    let url = format!("{}/realms/platform/protocol/openid-connect/token", app.base);
    let form = [("grant_type", "password"), ("client_id", "platform"), ("username", "owner"), ("password", PASSPHRASE)];
    let answer = crate::support::answer(app.http.post(url).form(&form).send().await.unwrap()).await;
    answer.body["access_token"].as_str().map(str::to_owned)
}

/// Whether the console token still acts on the admin API (its session lives, its person is on
/// the team).
async fn still_acts(app: &TestApp, token: &str) -> bool {
    let answer = app.http.get(format!("{}/account", app.admin)).bearer_auth(token).send().await.unwrap();
    answer.status() == StatusCode::OK
}

/// The operations a realm path gives on the platform realm: reading it and its client, changing
/// its settings (deleting it is refused as a conflict), and its signing keys.
const PLATFORM_REALM_OPERATIONS: &[&str] = &[
    "GET /realms/{realm}",
    "PUT /realms/{realm}",
    "DELETE /realms/{realm}",
    "GET /realms/{realm}/signing-keys",
    "POST /realms/{realm}/signing-keys/rotate",
    "GET /realms/{realm}/clients",
    "GET /realms/{realm}/clients/{client}",
];

#[tokio::test]
async fn no_realm_operation_reaches_a_team_member_through_the_platform_realm() {
    let app = spawn_unlimited().await;
    let (owner_id, owner_session) = owner_signed_in(&app).await;
    let session_id = claims(&owner_session)["sid"].as_str().map(str::to_owned);
    let keys = every_kind_of_key(&app).await;
    let on_realms: Vec<Operation> =
        operations(&app).await.into_iter().filter(|o| o.path.starts_with("/realms/{realm}")).collect();
    let values = HashMap::from([
        ("realm", "platform".to_owned()),
        ("client", "platform".to_owned()),
        ("userId", owner_id.clone()),
        ("sessionId", session_id.unwrap_or_default()),
    ]);

    let mut reached = Vec::new();
    for (key, operation, answer) in walk(&app, &keys, &on_realms, &values).await {
        let allowed = PLATFORM_REALM_OPERATIONS.contains(&operation.name().as_str());
        let text = answer.body.to_string();
        if (!allowed && answer.status.is_success()) || (allowed && text.contains(&owner_id)) {
            reached.push(format!("{key}: {} answered {}", operation.name(), answer.status));
        }
        // The Owner holds every permission: only a policy keeps it out, before the body is read.
        if key == "Owner" && !allowed {
            assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}: {:?}", operation.name(), answer.body);
        }
    }
    assert!(reached.is_empty(), "{reached:#?}");

    // Nothing happened to the Owner: the same password, the same session, the same role.
    assert!(still_acts(&app, &owner_session).await, "the Owner's console session lives");
    assert!(owner_token(&app).await.is_some(), "the Owner's password is their own");
    let team = app.get("/account/members").await;
    let owner = team.data().as_array().unwrap().iter().find(|m| m["userId"] == owner_id.as_str()).cloned();
    assert_eq!(owner.map(|m| m["roles"].clone()), Some(json!(["Owner"])));
}

#[tokio::test]
async fn a_developer_or_a_user_update_role_cannot_set_the_owners_password_and_become_the_owner() {
    let app = spawn_unlimited().await;
    let (owner_id, _) = owner_signed_in(&app).await;
    let developer = app.key_with(&["Developer"], None).await;
    let role = app.post("/roles", json!({ "name": "people", "permissions": ["user:read", "user:update"] })).await;
    assert_eq!(role.status, StatusCode::CREATED, "{:?}", role.body);
    let people = app.key_with(&["people"], None).await;
    for key in [&developer, &people] {
        let set = json!({ "password": "the attacker's passphrase" });
        let answer = app.call_as(key, Method::PUT, &format!("/realms/platform/users/{owner_id}"), Some(set)).await;
        assert_eq!((answer.status, answer.error_code()), (StatusCode::FORBIDDEN, "Forbidden"));
        let listed = app.call_as(key, Method::GET, "/realms/platform/users", None).await;
        assert_eq!(listed.status, StatusCode::FORBIDDEN);
        let sessions = app.call_as(key, Method::GET, "/realms/platform/sessions", None).await;
        assert_eq!(sessions.status, StatusCode::FORBIDDEN);
        let row = json!([{ "username": "owner2", "email": "owner2@example.com" }]);
        let import = app.call_as(key, Method::POST, "/realms/platform/clients/platform/users/import", Some(row)).await;
        assert_eq!(import.status, StatusCode::FORBIDDEN);
    }
    // An identity provider in the platform realm would link people by their address: refused too.
    let provider = json!({
        "id": "mine", "displayName": "Mine", "issuer": "https://idp.example", "clientId": "c", "clientSecret": "s",
        "trustVerifiedEmail": true,
    });
    let added = app.post("/realms/platform/identity-providers", provider).await;
    assert_eq!(added.status, StatusCode::FORBIDDEN, "{:?}", added.body);
    assert!(owner_token(&app).await.is_some(), "the Owner's password is unchanged");
    let attacker = [("grant_type", "password"), ("client_id", "platform"), ("username", "owner")];
    let url = format!("{}/realms/platform/protocol/openid-connect/token", app.base);
    let tried = app.http.post(url).form(&[attacker.as_slice(), &[("password", "the attacker's passphrase")]].concat());
    assert_eq!(tried.send().await.unwrap().status(), StatusCode::BAD_REQUEST);
}

/// Another account with a realm, its things, an Owner key and a member of its team.
struct Other {
    key: String,
    values: HashMap<&'static str, String>,
    member_id: String,
}

async fn other_account(app: &TestApp) -> Other {
    let key = crate::directory::credentials::other_account(app, "other").await;
    let call = |method: Method, path: &str, body: Value| {
        let key = key.clone();
        let path = path.to_owned();
        async move {
            let answer = app.call_as(&key, method, &path, Some(body)).await;
            assert!(answer.status.is_success(), "{path}: {:?}", answer.body);
            answer.data().clone()
        }
    };
    let body = json!({ "id": "web", "clientConfiguration": { "grantTypes": ["client_credentials"] } });
    call(Method::POST, "/realms/other/clients", body).await;
    let user =
        call(Method::POST, "/realms/other/users", json!({ "username": "ada", "password": "ada's passphrase" })).await;
    let group = call(Method::POST, "/realms/other/groups", json!({ "name": "staff" })).await;
    let role = call(Method::POST, "/realms/other/roles", json!({ "name": "reader" })).await;
    let organization = call(Method::POST, "/realms/other/organizations", json!({ "name": "Acme" })).await;
    let secret = call(Method::POST, "/secrets", json!({ "name": "theirs", "roles": ["Auditor"] })).await;
    let account_role = call(Method::POST, "/roles", json!({ "name": "theirs", "permissions": ["realm:read"] })).await;
    let capture = call(Method::POST, "/webhook-captures", json!({})).await;

    // A member of the other account's team, in the shared platform realm.
    let store = app.database().await;
    let realm = castellan::store::realms::find(store.pool(), "other").await.unwrap().expect("the other realm");
    let account_id = realm.account_id.to_string();
    let person = Person {
        id: UserId::fresh(),
        realm_id: RealmId::platform(),
        username: "their-owner".into(),
        email: Some("owner@other.example".into()),
    };
    let now = app.state.clock.now();
    accounts::insert_person(store.pool(), &person, now).await.unwrap();
    accounts::insert_member(store.pool(), &account_id, &person.id, &["Owner".to_owned()], now).await.unwrap();

    let text = |value: &Value| value["id"].as_str().expect("an id").to_owned();
    let values = HashMap::from([
        ("realm", "other".to_owned()),
        ("client", "web".to_owned()),
        ("userId", text(&user)),
        ("groupId", text(&group)),
        ("roleId", text(&role)),
        ("organizationId", text(&organization)),
        ("id", text(&secret)),
        ("captureId", text(&capture)),
    ]);
    let mut values = values;
    // `/roles/{roleId}` names an account role: walked with the realm role's id, then the account role's.
    values.insert("accountRoleId", text(&account_role));
    Other { key, values, member_id: person.id.to_string() }
}

#[tokio::test]
async fn no_key_of_this_account_reaches_anything_another_account_holds() {
    let app = spawn_unlimited().await;
    let other = other_account(&app).await;
    let keys = every_kind_of_key(&app).await;
    // Operations naming something: each is called with the other account's ids.
    let naming: Vec<Operation> = operations(&app)
        .await
        .into_iter()
        .filter(|o| o.path.contains('{') && !o.path.ends_with("{resourceType}"))
        .collect();
    let mut with_account_role = other.values.clone();
    with_account_role.insert("roleId", other.values["accountRoleId"].clone());
    with_account_role.insert("userId", other.member_id.clone());

    let mut reached = Vec::new();
    for values in [&other.values, &with_account_role] {
        for (key, operation, answer) in walk(&app, &keys, &naming, values).await {
            if answer.status.is_success() {
                reached.push(format!("{key}: {} answered {}", operation.name(), answer.status));
            }
        }
    }
    assert!(reached.is_empty(), "{reached:#?}");

    // The other account's things are as they were.
    let theirs = app.call_as(&other.key, Method::GET, "/realms/other/users", None).await;
    assert_eq!(theirs.items().len(), 1);
    let members = app.call_as(&other.key, Method::GET, "/account/members", None).await;
    assert_eq!(members.data()[0]["roles"], json!(["Owner"]));
}

#[tokio::test]
async fn another_accounts_key_cannot_reach_this_accounts_team_through_either_path() {
    let app = spawn_unlimited().await;
    let (owner_id, owner_session) = owner_signed_in(&app).await;
    let other = other_account(&app).await;
    let demote = json!({ "roles": ["Auditor"] });
    let path = format!("/account/members/{owner_id}");
    let answer = app.call_as(&other.key, Method::PUT, &path, Some(demote)).await;
    assert!(!answer.status.is_success(), "{:?}", answer.body);
    let removed = app.call_as(&other.key, Method::DELETE, &path, None).await;
    assert!(!removed.status.is_success(), "{:?}", removed.body);
    for (method, path, body) in [
        (Method::GET, "/realms/platform/users".to_owned(), None),
        (Method::PUT, format!("/realms/platform/users/{owner_id}"), Some(json!({ "password": "taken over" }))),
        (Method::GET, "/realms/platform/sessions".to_owned(), None),
    ] {
        let answer = app.call_as(&other.key, method, &path, body).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{path}");
    }
    // And the platform realm's owner cannot reach the other account's member.
    let theirs = format!("/realms/platform/users/{}", other.member_id);
    assert_eq!(app.get(&theirs).await.status, StatusCode::FORBIDDEN);
    let set = app.put(&theirs, json!({ "password": "taken over" })).await;
    assert_eq!(set.status, StatusCode::FORBIDDEN);
    assert!(still_acts(&app, &owner_session).await);
    let team = app.get("/account/members").await;
    assert_eq!(team.data().as_array().unwrap().len(), 1, "one member: theirs is not listed here");
}

/// The way back in for a member whom no e-mail reaches is the operator's, on the deployment's host
/// (`castellan team password-link`): a one-time link, in the member's account's trail.
#[tokio::test]
async fn the_operator_gives_a_member_a_one_time_link_to_choose_a_password() {
    let app = spawn_unlimited().await;
    let now = app.state.clock.now();
    let store = &app.state.store;
    let missing =
        castellan::application::bootstrap::password_link(store, &app.state.hasher, "nobody", now).await.unwrap();
    assert!(missing.is_none(), "only a member of a team");
    let made = castellan::application::bootstrap::password_link(store, &app.state.hasher, "owner", now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(made.account_id.to_string(), app.account_id);
    let mut browser = crate::oauth::browser::Browser::new(&app);
    let link = format!("{}/realms/platform/account/password?code={}", app.base, made.code);
    let form = browser.open(&link).await;
    assert!(form.body.contains("Choose a new password"), "{}", form.body);
    let done = browser.submit("/realms/platform/account/password", &form, &[("new_password", PASSPHRASE)]).await;
    assert!(done.body.contains("Your password is set."), "{}", done.body);
    assert!(owner_token(&app).await.is_some(), "the owner signs in with it");
    let trail = app.get("/audit-trail?resourceType=account_member").await;
    let row = trail.items().iter().find(|row| row["actorType"] == "Operator").cloned();
    let row = row.unwrap_or_else(|| panic!("in the trail: {:?}", trail.body));
    assert_eq!(
        (&row["resourceId"], &row["path"]),
        (&json!(made.user_id.to_string()), &json!("castellan team password-link"))
    );
}
