//! User import through a client: password hashes other providers export (bcrypt, Argon2,
//! Keycloak's PBKDF2-SHA256 and -SHA512, salted SHA-256) that sign people in and are replaced by the service's
//! own; bad rows refused with their line while the good ones are imported; conflict policies.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{Answer, TestApp, TestClient, claims, created_id, spawn_app};

const IMPORT: &str = "/realms/acme/clients/web/users/import";

// Hashes as the other providers store them, made by their own libraries (Python's crypt for
// bcrypt, argon2-cffi for Argon2, hashlib for PBKDF2 and SHA-256).
const BCRYPT: &str = "$2b$10$/YTikKGV3TYW6N2mbCClmOHXsaUr5NzeamdtH3fJJNneLGf9qo.Ge";
const ARGON2: &str =
    "$argon2id$v=19$m=65536,t=3,p=4$IyadQO4hRmDvbW1ubvbxLA$cvRiv8qVCsQvJd4g9CkXxHA99FNKEiZFsruMqtoXgM4";
const PBKDF2_VALUE: &str = "Ru0hQMMvPinvn4mXFD7AA6Vk9hSp2AyZdqVuHlt0L/w=";
const PBKDF2_SALT: &str = "azN5Y2wwYWtzNGx0MTIzNA==";
// Keycloak's default since version 24: PBKDF2 with HMAC-SHA-512, 210,000 iterations.
const PBKDF2_512_VALUE: &str =
    "G8na63WzekBaJMpbb0IdnPBrdl5d0xsCWN3TRYgoH80bcDZOvbeXRHcywlNxsCVPNSRj7wlnoGBhJUyYe+58Jg==";
const PBKDF2_512_SALT: &str = "aGVkeWxhbWFyci1zYWx0IQ==";
const SHA256: &str = "74b542f419d116e2de88d431abcc8dfa14efb54f496e364a094c1c5fe3157831";

async fn realm(app: &TestApp) -> TestClient {
    app.create_realm("acme").await;
    app.create_client("acme", "web", &["password"], &["orders:read"]).await
}

async fn import(app: &TestApp, query: &str, content_type: &str, body: String) -> Answer {
    let url = format!("{}/api/v1/admin{IMPORT}{query}", app.base);
    let response = reqwest::Client::new()
        .post(url)
        .header("x-api-key", &app.key)
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .expect("the service answers");
    crate::support::answer(response).await
}

async fn import_json(app: &TestApp, query: &str, rows: Value) -> Value {
    let answer = import(app, query, "application/json", rows.to_string()).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    answer.data().clone()
}

async fn sign_in(app: &TestApp, web: &TestClient, username: &str, password: &str) -> Answer {
    let form = [("grant_type", "password"), ("username", username), ("password", password), ("scope", "orders:read")];
    app.token(web, &form).await
}

async fn stored_hash(app: &TestApp, username: &str) -> String {
    let store = app.database().await;
    let (hash,): (String,) = sqlx::query_as("SELECT password_hash FROM users WHERE username = $1")
        .bind(username)
        .fetch_one(store.pool())
        .await
        .expect("the person is stored");
    hash
}

fn counts(report: &Value) -> [i64; 5] {
    ["rowsRead", "created", "updated", "skipped", "refused"].map(|name| report[name].as_i64().expect(name))
}

#[tokio::test]
async fn imported_users_sign_in_with_their_old_passwords_in_each_format_and_are_rehashed() {
    let app = spawn_app().await;
    let web = realm(&app).await;
    created_id(&app, "/realms/acme/roles", json!({ "name": "admin" })).await;
    created_id(&app, "/realms/acme/clients/web/roles", json!({ "name": "clerk" })).await;
    created_id(&app, "/realms/acme/groups", json!({ "name": "staff" })).await;
    let initech = created_id(&app, "/realms/acme/organizations", json!({ "name": "Initech" })).await;
    let rows = json!({ "users": [
        { "username": "alan", "email": "alan@example.com", "firstName": "Alan", "emailConfirmed": true,
          "passwordHash": { "algorithm": "bcrypt", "value": BCRYPT },
          "roles": ["admin"], "clientRoles": ["clerk"], "groups": ["staff"], "organizations": ["Initech"] },
        { "username": "grace", "passwordHash": { "algorithm": "argon2", "value": ARGON2 } },
        { "username": "katherine",
          "passwordHash": { "algorithm": "pbkdf2-sha256", "value": PBKDF2_VALUE, "salt": PBKDF2_SALT, "iterations": 27500 } },
        { "username": "margaret", "passwordHash": { "algorithm": "sha256", "value": SHA256, "salt": "s4lt", "saltPosition": "prefix" } },
        { "username": "hedy",
          "passwordHash": { "algorithm": "pbkdf2-sha512", "value": PBKDF2_512_VALUE, "salt": PBKDF2_512_SALT, "iterations": 210000 } },
    ]});
    let report = import_json(&app, "", rows).await;
    assert_eq!((report["status"].as_str(), counts(&report)), (Some("Completed"), [5, 5, 0, 0, 0]), "{report:?}");
    assert_eq!(report["refusals"], json!([]));

    let created = app.events("user_created").await;
    assert_eq!(created.len(), 5);
    assert!(created.iter().all(|(_, client, data)| client.as_deref() == Some("web") && data["client_id"] == "web"));
    let alan = created.iter().find(|(_, _, d)| d["username"] == "alan").map(|(_, _, d)| d.clone()).unwrap();
    assert_eq!((&alan["email_confirmed"], &alan["first_name"]), (&json!(true), &json!("Alan")));
    let changes = app.events("admin_resource_created").await;
    let (_, _, change) = changes.last().unwrap();
    assert_eq!((&change["resource_type"], &change["resource_id"]), (&json!("user"), &Value::Null));

    let people = [
        ("alan", "alan turing enigma", "$2b$"),
        ("grace", "grace hopper cobol", "$argon2id$v=19$m=65536"),
        ("katherine", "katherine johnson orbit", "$pbkdf2-sha256$"),
        ("margaret", "margaret hamilton apollo", "$sha256$"),
        ("hedy", "hedy lamarr frequency hopping", "$pbkdf2-sha512$i=210000$"),
    ];
    for (username, password, imported) in people {
        assert!(stored_hash(&app, username).await.starts_with(imported), "{username} is stored as exported");
        // A wrong password for one person only: wrong passwords for many accounts from one address
        // are what attack protection watches for.
        if username == "alan" {
            let wrong = sign_in(&app, &web, username, "not the password").await;
            assert_eq!(wrong.body["error_code"], "InvalidCredentials", "{username}: {:?}", wrong.body);
            assert!(stored_hash(&app, username).await.starts_with(imported), "a wrong password changes nothing");
        }
        let signed_in = sign_in(&app, &web, username, password).await;
        assert_eq!(signed_in.status, StatusCode::OK, "{username}: {:?}", signed_in.body);
        let rehashed = stored_hash(&app, username).await;
        assert!(rehashed.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{username}: {rehashed}");
        assert_eq!(sign_in(&app, &web, username, password).await.status, StatusCode::OK, "{username} again");
    }
    let token =
        sign_in(&app, &web, "alan", "alan turing enigma").await.body["access_token"].as_str().unwrap().to_owned();
    let claims = claims(&token);
    assert_eq!(claims["realm_resource_access"]["roles"], json!(["admin"]));
    assert_eq!(claims["resource_access"], json!({ "web": { "roles": ["clerk"] } }));
    let members = app.get(&format!("/realms/acme/organizations/{initech}/members")).await;
    assert_eq!(members.data().as_array().map(Vec::len), Some(1), "{:?}", members.body);
}

#[tokio::test]
async fn a_file_with_bad_rows_imports_the_good_ones_and_reports_each_bad_line() {
    let app = spawn_app().await;
    realm(&app).await;
    let costly = BCRYPT.replacen("$10$", "$15$", 1);
    let lines = [
        json!({ "username": "alan", "email": "alan@example.com" }).to_string(),
        "{ not json".to_owned(),
        json!({ "email": "nameless@example.com" }).to_string(),
        json!({ "username": "bob", "email": "not an address" }).to_string(),
        String::new(),
        json!({ "username": "carol", "roles": ["ghost"] }).to_string(),
        json!({ "username": "dave", "passwordHash": { "algorithm": "bcrypt", "value": costly } }).to_string(),
        json!({ "username": "alan" }).to_string(),
        json!({ "username": "erin", "email": "ALAN@example.com" }).to_string(),
        json!(["not", "an", "object"]).to_string(),
        json!({ "username": "frank", "passwordHash": { "algorithm": "md5", "value": "x" } }).to_string(),
        json!({ "username": "grace", "lastName": "Hopper" }).to_string(),
    ];
    let answer = import(&app, "?onConflict=Fail", "application/x-ndjson", lines.join("\n")).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let report = answer.data();
    assert_eq!(counts(report), [11, 2, 0, 0, 9], "{report:?}");
    let refused: Vec<(i64, String)> = report["refusals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["line"].as_i64().unwrap(), r["reasons"][0]["field"].as_str().unwrap_or_default().to_owned()))
        .collect();
    let expected = [
        (2, ""),
        (3, "username"),
        (4, "email"),
        (6, "roles[0]"),
        (7, "passwordHash.value"),
        (8, "username"),
        (9, "email"),
        (10, ""),
        (11, "passwordHash.algorithm"),
    ];
    assert_eq!(refused, expected.map(|(line, field)| (line, field.to_owned())).to_vec(), "{report:?}");
    let usernames: Vec<String> = app
        .get("/realms/acme/users")
        .await
        .items()
        .iter()
        .map(|u| u["username"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(usernames.len(), 2);
    assert!(usernames.contains(&"alan".to_owned()) && usernames.contains(&"grace".to_owned()));

    let jobs = app.get(IMPORT).await;
    assert_eq!(jobs.items().len(), 1);
    assert_eq!((jobs.items()[0]["status"].as_str(), jobs.items()[0].get("refusals")), (Some("Completed"), None));
    let id = jobs.items()[0]["id"].as_str().unwrap();
    let one = app.get(&format!("{IMPORT}/{id}")).await;
    assert_eq!(one.data()["refusals"], report["refusals"], "the report is kept");
}

#[tokio::test]
async fn a_row_naming_an_existing_person_is_skipped_refused_or_overwritten_as_chosen() {
    let app = spawn_app().await;
    let web = realm(&app).await;
    let ada = app.create_user("acme", "ada", "analytical engine").await;
    let row = |last: &str| json!([{ "username": "ada", "lastName": last, "passwordHash": { "algorithm": "bcrypt", "value": BCRYPT } }]);

    let skipped = import_json(&app, "", row("Byron")).await;
    assert_eq!(counts(&skipped), [1, 0, 0, 1, 0]);
    let refused = import_json(&app, "?onConflict=Fail", row("Byron")).await;
    assert_eq!(counts(&refused), [1, 0, 0, 0, 1]);
    assert_eq!(refused["refusals"][0]["line"], 1);
    assert_eq!(refused["refusals"][0]["reasons"][0]["code"], "Duplicate");
    assert_eq!(sign_in(&app, &web, "ada", "analytical engine").await.status, StatusCode::OK, "untouched");

    let overwritten = import_json(&app, "?onConflict=Overwrite", row("King")).await;
    assert_eq!(counts(&overwritten), [1, 0, 1, 0, 0]);
    let person = app.get(&format!("/realms/acme/users/{ada}")).await;
    assert_eq!((&person.data()["lastName"], &person.data()["email"]), (&json!("King"), &json!("ada@example.com")));
    let updated = app.events("user_updated").await;
    assert_eq!(updated.last().unwrap().2["last_name"], "King");
    assert_eq!(sign_in(&app, &web, "ada", "alan turing enigma").await.status, StatusCode::OK, "the imported hash");
    assert_eq!(app.events("user_created").await.len(), 1, "only the administrator's creation");
}

#[tokio::test]
async fn imports_need_user_create_and_refuse_what_is_not_a_list_of_rows() {
    let app = spawn_app().await;
    realm(&app).await;
    let bogus = import(&app, "?onConflict=Merge", "application/json", "[]".into()).await;
    assert!(bogus.refused_fields().contains(&("onConflict".into(), "OneOf".into())), "{:?}", bogus.body);
    let text = import(&app, "", "text/csv", "username\nada".into()).await;
    assert_eq!(text.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let object = import(&app, "", "application/json", json!({ "people": [] }).to_string()).await;
    assert_eq!(object.error_code(), "ValidationFailed");
    let auditor = app.key_with(&["Auditor"], None).await;
    let refused = app.call_as(&auditor, Method::POST, IMPORT, Some(json!([{ "username": "ada" }]))).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(app.call_as(&auditor, Method::GET, IMPORT, None).await.items().is_empty(), "nothing was started");
    assert_eq!(import(&app, "", "application/x-ndjson", String::new()).await.data()["rowsRead"], 0);
}

#[tokio::test]
async fn a_dry_run_answers_what_the_import_would_whatever_the_batches_and_writes_and_publishes_nothing() {
    let app = spawn_app().await;
    realm(&app).await;
    app.create_user("acme", "ada", "analytical engine").await;
    // 605 lines: two batches of 500 rows. A person met again in the next batch, and one met again
    // in the same batch, are overwritten alike.
    let mut lines = vec![json!({ "username": "ada", "lastName": "King" }).to_string()];
    lines.extend(
        (0..600).map(|n| {
            json!({ "username": format!("person{n}"), "email": format!("person{n}@example.com") }).to_string()
        }),
    );
    lines.push(json!({ "username": "person5", "lastName": "Again" }).to_string());
    lines.push(json!({ "username": "person599", "lastName": "Merged" }).to_string());
    lines.push(json!({ "username": "zed", "email": "PERSON1@example.com" }).to_string());
    lines.push("not json".to_owned());
    let body = lines.join("\n");
    let changes_before = app.events("admin_resource_created").await.len();

    let dry = import(&app, "?onConflict=Overwrite&dryRun=true", "application/x-ndjson", body.clone()).await;
    assert_eq!(dry.status, StatusCode::OK, "{:?}", dry.body);
    let dry = dry.data().clone();
    assert_eq!((dry["dryRun"].as_bool(), counts(&dry)), (Some(true), [605, 600, 3, 0, 2]), "{dry:?}");
    let lines_refused = |report: &Value| -> Vec<i64> {
        report["refusals"].as_array().unwrap().iter().map(|r| r["line"].as_i64().unwrap()).collect()
    };
    assert_eq!(lines_refused(&dry), vec![604, 605]);
    assert_eq!(app.get("/realms/acme/users").await.body["pagination"]["totalItems"], 1, "nothing written");
    assert_eq!(app.events("user_created").await.len(), 1, "nothing published");
    assert_eq!(app.events("user_updated").await.len(), 0);
    assert_eq!(app.events("admin_resource_created").await.len(), changes_before);
    assert!(app.get(IMPORT).await.items().is_empty(), "no job is kept");

    let real = import(&app, "?onConflict=Overwrite", "application/x-ndjson", body).await.data().clone();
    assert_eq!(counts(&real), counts(&dry), "the import does what its dry run said: {real:?}");
    assert_eq!(lines_refused(&real), lines_refused(&dry));
    assert_eq!(app.get("/realms/acme/users").await.body["pagination"]["totalItems"], 601);
    let last_name = |name: &'static str| {
        let app = &app;
        async move {
            let found = app.get(&format!("/realms/acme/users?pageSize=200&searchTerm={name}")).await;
            let person = found.items().iter().find(|u| u["username"] == name).cloned().unwrap();
            person["lastName"].clone()
        }
    };
    assert_eq!(last_name("person5").await, "Again");
    assert_eq!(last_name("person599").await, "Merged");
    assert_eq!(last_name("ada").await, "King");
    let bogus = import(&app, "?dryRun=maybe", "application/json", "[]".into()).await;
    assert!(bogus.refused_fields().contains(&("dryRun".into(), "Type".into())), "{:?}", bogus.body);
}

#[tokio::test]
async fn a_row_holding_u0000_is_refused_with_its_line_and_the_others_are_imported() {
    let app = spawn_app().await;
    realm(&app).await;
    let lines = [
        json!({ "username": "alan", "firstName": "Alan" }).to_string(),
        json!({ "username": "nul", "firstName": "A\u{0}" }).to_string(),
        json!({ "username": "grace", "lastName": "Hopper" }).to_string(),
    ];
    let answer = import(&app, "", "application/x-ndjson", lines.join("\n")).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let report = answer.data();
    assert_eq!(counts(report), [3, 2, 0, 0, 1], "{report:?}");
    assert_eq!(
        (&report["refusals"][0]["line"], &report["refusals"][0]["reasons"][0]["field"]),
        (&json!(2), &json!("firstName"))
    );
    assert_eq!(app.get("/realms/acme/users").await.items().len(), 2);
}

#[tokio::test]
async fn a_hash_costlier_than_the_service_would_accept_for_its_own_is_refused_with_its_line() {
    let app = spawn_app().await;
    realm(&app).await;
    // One wrong guess against it would take a core for seconds: an anonymous lever on every sign-in.
    let attack = ARGON2.replace("m=65536,t=3,p=4", "m=262144,t=10,p=4");
    let rows = json!([
        { "username": "ok", "passwordHash": { "algorithm": "argon2", "value": ARGON2 } },
        { "username": "heavy", "passwordHash": { "algorithm": "argon2", "value": attack } },
        { "username": "slow", "passwordHash": { "algorithm": "bcrypt", "value": BCRYPT.replacen("$10$", "$13$", 1) } },
        { "username": "long", "passwordHash": { "algorithm": "pbkdf2-sha512", "value": PBKDF2_512_VALUE,
                                                "salt": PBKDF2_512_SALT, "iterations": 210_001 } },
    ]);
    let report = import_json(&app, "", rows).await;
    assert_eq!(counts(&report), [4, 1, 0, 0, 3], "{report:?}");
    let refused: Vec<(i64, &str)> = report["refusals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["line"].as_i64().unwrap(), r["reasons"][0]["field"].as_str().unwrap()))
        .collect();
    assert_eq!(refused, [(2, "passwordHash.value"), (3, "passwordHash.value"), (4, "passwordHash.iterations")]);
}

/// A wrong password takes as long for an unknown name, for an account holding the service's own
/// hash, and for one still holding a costlier imported hash: the time of a refusal does not tell
/// which names are accounts. (A floor is waited out, so each refusal takes at least as long as the
/// costliest check; the test checks that bound, which holds however busy the machine is.)
#[tokio::test]
async fn a_refusal_takes_as_long_whatever_hash_the_name_holds_or_whether_it_names_anyone() {
    let app = spawn_app().await;
    let web = realm(&app).await;
    app.create_user("acme", "ada", "analytical engine").await;
    assert_eq!(sign_in(&app, &web, "nobody", "a guess").await.body["error_code"], "InvalidCredentials");
    assert_eq!(app.state.passwords.refusal_floors.kept("acme"), Some(None), "no imported hash: nothing to even out");

    let rows = json!([{ "username": "alan", "passwordHash": { "algorithm": "bcrypt", "value": BCRYPT } }]);
    import_json(&app, "", rows).await;
    // An import has the floor measured again at the next refusal.
    assert_eq!(sign_in(&app, &web, "nobody", "a guess").await.body["error_code"], "InvalidCredentials");
    let floor = app.state.passwords.refusal_floors.kept("acme").flatten().expect("alan's bcrypt hash sets a floor");
    for (who, password) in [("nobody", "a guess"), ("ada", "a guess"), ("alan", "a guess")] {
        let started = std::time::Instant::now();
        let refused = sign_in(&app, &web, who, password).await;
        let took = started.elapsed();
        assert_eq!(refused.body["error_code"], "InvalidCredentials", "{who}");
        assert!(took >= floor * 4 / 5, "{who}: refused in {took:?}, under the floor {floor:?}");
    }
}

#[tokio::test]
async fn a_row_brings_the_persons_authenticator_apps_sealed_and_counted_as_their_second_factor() {
    let app = spawn_app().await;
    let web = realm(&app).await;
    let app_secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
    let rows = json!([
        { "username": "alan", "passwordHash": { "algorithm": "bcrypt", "value": BCRYPT },
          "totp": [{ "secret": app_secret, "algorithm": "HmacSHA256", "digits": 8, "period": 60, "name": "Alan's phone" }] },
        { "username": "bob", "totp": [{ "secret": "not base32!" }] },
        { "username": "carol", "totp": [{ "secret": app_secret, "digits": 7 }] },
    ]);
    let report = import_json(&app, "", rows).await;
    assert_eq!(counts(&report), [3, 1, 0, 0, 2], "{report:?}");
    let fields: Vec<&str> =
        report["refusals"].as_array().unwrap().iter().map(|r| r["reasons"][0]["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["totp[0].secret", "totp[0]"]);

    let alan = app.get("/realms/acme/users?searchTerm=alan").await.items()[0]["id"].as_str().unwrap().to_owned();
    let kept = app.get(&format!("/realms/acme/users/{alan}/authenticators")).await;
    let listed = kept.data().as_array().unwrap();
    assert_eq!(
        (listed.len(), listed[0]["kind"].as_str(), listed[0]["name"].as_str()),
        (1, Some("Totp"), Some("Alan's phone"))
    );
    assert!(!kept.body.to_string().contains(app_secret), "no secret is answered");
    let store = app.database().await;
    let (sealed,): (String,) =
        sqlx::query_as("SELECT secret_sealed FROM authenticators").fetch_one(store.pool()).await.unwrap();
    assert!(!sealed.contains(app_secret), "sealed at rest");
    assert_eq!(app.events("authenticator_added").await.last().unwrap().2["by"], "administrator");
    // His password alone no longer signs him in: the app is his second factor.
    let refused = sign_in(&app, &web, "alan", "alan turing enigma").await;
    assert_eq!(refused.body["error_code"], "SecondFactorRequired", "{:?}", refused.body);
}
