//! Permissions decided by the Cedar policies in `policies/`.

use castellan::Application;
use castellan::authz::{Authorizer, PolicyFiles, fixtures};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::{TestDatabase, policies_dir, spawn_app};

/// What `castellan policies check` (and CI) runs: the policies validate, every fixture passes, and
/// the role × permission matrix is printed.
#[test]
fn the_policy_check_validates_runs_every_fixture_and_prints_the_role_matrix() {
    let report = fixtures::check(&PolicyFiles::read(&policies_dir()).unwrap()).expect("the policies pass their check");
    assert!(report.contains("validate against their schema"), "{report}");
    assert!(report.contains(&format!("Roles × permissions of the policies in {}", policies_dir().display())));
    assert!(report.contains(" failed\n") && report.contains(", 0 failed"), "{report}");
    assert!(report.contains("Owner") && report.contains("realm:update"), "{report}");
    // A fixture expecting the wrong decision fails the check.
    let dir = copy_of_policies();
    let wrong = std::fs::read_to_string(dir.join("fixtures/roles.json")).unwrap().replacen("\"ALLOW\"", "\"DENY\"", 1);
    std::fs::write(dir.join("fixtures/roles.json"), wrong).unwrap();
    let error = fixtures::check(&PolicyFiles::read(&dir).unwrap()).expect_err("a failing fixture fails").to_string();
    assert!(error.contains("FAIL"), "{error}");
}

/// A copy of the policies folder, to break on purpose.
fn copy_of_policies() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("policies-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(dir.join("fixtures")).unwrap();
    for entry in
        std::fs::read_dir(policies_dir()).unwrap().chain(std::fs::read_dir(policies_dir().join("fixtures")).unwrap())
    {
        let path = entry.unwrap().path();
        if path.is_file() {
            let relative = path.strip_prefix(policies_dir()).unwrap();
            std::fs::copy(&path, dir.join(relative)).unwrap();
        }
    }
    dir
}

#[test]
fn every_policy_fixture_gets_its_expected_decision() {
    let files = PolicyFiles::read(&policies_dir()).unwrap();
    let authz = Authorizer::from_files(&files).expect("policies validate");
    let outcomes = fixtures::run(&authz, &files).expect("fixtures load");
    assert!(outcomes.len() >= 30, "fixtures cover the roles and boundaries");
    let failed: Vec<String> =
        outcomes.iter().filter(|o| !o.passed).map(|o| format!("{}: {}", o.name, o.detail)).collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

#[tokio::test]
async fn the_host_refuses_to_start_on_a_policy_that_does_not_validate() {
    let db = TestDatabase::new().await;
    let dir = db.dir.join("policies");
    std::fs::create_dir_all(&dir).unwrap();
    for file in ["schema.cedarschema", "roles.cedar", "boundaries.cedar"] {
        std::fs::copy(policies_dir().join(file), dir.join(file)).unwrap();
    }
    std::fs::write(
        dir.join("broken.cedar"),
        "@id(\"typo\")\npermit (principal, action == Castellan::Action::\"realm:udpate\", resource);\n",
    )
    .unwrap();
    let files = PolicyFiles::read(&dir).unwrap();
    let error = Application::build(db.settings(), &files).await.err().expect("start-up is refused");
    // The validator's complaint, placed in its file.
    let text = format!("{error:#}");
    assert!(text.contains("realm:udpate") && text.contains("broken.cedar: line 2, column"), "{text}");

    std::fs::write(dir.join("broken.cedar"), "permit (principal, action, resource);\n").unwrap();
    let files = PolicyFiles::read(&dir).unwrap();
    let error = Application::build(db.settings(), &files).await.err().expect("a policy without @id is refused");
    assert!(format!("{error:#}").contains("@id"), "{error:#}");

    // A syntax error names its file, line and column, with the parser's own words.
    std::fs::write(dir.join("broken.cedar"), "@id(\"typo\")\npermit (principal, action, resource)\nwhen { true ;\n")
        .unwrap();
    let error = Authorizer::load(&dir).expect_err("a syntax error is refused").to_string();
    assert!(error.contains("broken.cedar") && error.contains("line 3, column"), "{error}");
    assert!(!error.contains("ParseErrors("), "not a debug dump: {error}");
}

#[test]
fn the_policies_built_into_the_binary_are_those_of_the_policies_folder() {
    let shipped = PolicyFiles::shipped();
    let folder = PolicyFiles::read(&policies_dir()).unwrap();
    assert_eq!(shipped.paths(), folder.paths(), "every file of the folder is built in, and no other");
    for path in folder.paths() {
        assert_eq!(shipped.get(&path), folder.get(&path), "{path} is built in as it is in the folder");
    }
    assert!(fixtures::check(&shipped).unwrap().contains("Roles × permissions of the policies built into castellan"));
}

#[test]
fn the_built_in_policies_export_to_a_folder_the_service_can_run_from() {
    let dir = std::env::temp_dir().join(format!("castellan-export-{}", uuid::Uuid::new_v4()));
    let written = PolicyFiles::shipped().export(&dir).expect("exported");
    assert!(written.contains("roles.cedar") && written.contains("fixtures/roles.json"), "{written}");
    let exported = PolicyFiles::read(&dir).unwrap();
    assert_eq!(exported.paths(), PolicyFiles::shipped().paths());
    assert!(fixtures::check(&exported).is_ok());
    let again = PolicyFiles::shipped().export(&dir).expect_err("never over a folder that holds files");
    assert!(again.to_string().contains("not empty"), "{again}");
    // A folder that does not exist says what to do.
    let missing = PolicyFiles::read(&dir.join("nowhere")).expect_err("no folder").to_string();
    assert!(missing.contains("--policies") && missing.contains("CASTELLAN_POLICIES"), "{missing}");
    assert!(missing.contains("castellan policies export"), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn an_auditor_reads_everything_but_cannot_act() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let auditor = app.key_with(&["Auditor"], None).await;
    for path in [
        "/realms",
        "/realms/acme",
        "/realms/acme/clients",
        "/audit-trail",
        "/access-logs",
        "/roles",
        "/secrets",
        "/account",
    ] {
        assert_eq!(app.call_as(&auditor, Method::GET, path, None).await.status, StatusCode::OK, "{path}");
    }
    let attempts = [
        (Method::POST, "/realms", json!({ "id": "new" })),
        (Method::POST, "/realms/acme/clients", json!({ "id": "web" })),
        (Method::POST, "/roles", json!({ "name": "r", "permissions": ["realm:read"] })),
        (Method::POST, "/secrets", json!({ "name": "k", "roles": ["Auditor"] })),
    ];
    for (method, path, body) in attempts {
        let got = app.call_as(&auditor, method, path, Some(body)).await;
        assert_eq!(got.status, StatusCode::FORBIDDEN, "{path}");
    }
}

#[tokio::test]
async fn a_developer_builds_realms_but_cannot_grant_roles() {
    let app = spawn_app().await;
    let developer = app.key_with(&["Developer"], None).await;
    let created = app.call_as(&developer, Method::POST, "/realms", Some(json!({ "id": "dev" }))).await;
    assert_eq!(created.status, StatusCode::CREATED);
    let role = app
        .call_as(&developer, Method::POST, "/roles", Some(json!({ "name": "r", "permissions": ["realm:read"] })))
        .await;
    assert_eq!(role.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_custom_role_grants_exactly_the_permissions_it_lists() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let role =
        app.post("/roles", json!({ "name": "client-admin", "permissions": ["realm:read", "client:write"] })).await;
    assert_eq!(role.status, StatusCode::CREATED, "{:?}", role.body);
    let key = app.key_with(&["client-admin"], None).await;
    assert_eq!(app.call_as(&key, Method::GET, "/realms/acme", None).await.status, StatusCode::OK);
    let client = app.call_as(&key, Method::POST, "/realms/acme/clients", Some(json!({ "id": "web" }))).await;
    assert_eq!(client.status, StatusCode::CREATED);
    // client:write does not include client:read, nor anything on realms beyond reading.
    assert_eq!(app.call_as(&key, Method::GET, "/realms/acme/clients/web", None).await.status, StatusCode::FORBIDDEN);
    assert_eq!(app.call_as(&key, Method::DELETE, "/realms/acme", None).await.status, StatusCode::FORBIDDEN);

    // Changing the role changes what its holders may do, from the next call.
    let id = role.data()["id"].as_str().unwrap();
    let updated = app.put(&format!("/roles/{id}"), json!({ "permissions": ["realm:read", "client:read"] })).await;
    assert_eq!(updated.status, StatusCode::OK);
    assert_eq!(app.call_as(&key, Method::GET, "/realms/acme/clients/web", None).await.status, StatusCode::OK);
    assert_eq!(
        app.call_as(&key, Method::POST, "/realms/acme/clients", Some(json!({ "id": "api" }))).await.status,
        StatusCode::FORBIDDEN
    );

    // A deleted role grants nothing.
    assert_eq!(app.delete(&format!("/roles/{id}")).await.status, StatusCode::OK);
    assert_eq!(app.call_as(&key, Method::GET, "/realms/acme", None).await.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn role_definitions_are_validated() {
    let app = spawn_app().await;
    let refused = app.post("/roles", json!({ "name": "Owner", "permissions": ["realm:fly", "realm:read"] })).await;
    let fields = refused.refused_fields();
    assert!(fields.contains(&("permissions[0]".to_owned(), "OneOf".to_owned())), "{fields:?}");
    assert!(fields.contains(&("name".to_owned(), "Duplicate".to_owned())), "{fields:?}");
    let empty = app.post("/roles", json!({ "name": "empty", "permissions": [] })).await;
    assert_eq!(empty.refused_fields(), vec![("permissions".to_owned(), "MinLength".to_owned())]);
    assert_eq!(
        app.post("/roles", json!({ "name": "r", "permissions": ["realm:read"] })).await.status,
        StatusCode::CREATED
    );
    let again = app.post("/roles", json!({ "name": "r", "permissions": ["realm:read"] })).await;
    assert_eq!((again.status, again.error_code()), (StatusCode::CONFLICT, "AlreadyExists"));
    let listed = app.get("/roles/permissions").await;
    assert!(listed.data()["permissions"].as_array().unwrap().iter().any(|p| p == "realm:write"));
}

#[tokio::test]
async fn a_keys_scopes_are_its_upper_bound() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let read_only_owner = app.key_with(&["Owner"], Some(&["realm:read"])).await;
    assert_eq!(app.call_as(&read_only_owner, Method::GET, "/realms/acme", None).await.status, StatusCode::OK);
    let refused = app.call_as(&read_only_owner, Method::PUT, "/realms/acme", Some(json!({ "displayName": "x" }))).await;
    assert_eq!((refused.status, refused.error_code()), (StatusCode::FORBIDDEN, "Forbidden"));
    assert_eq!(
        app.call_as(&read_only_owner, Method::GET, "/realms/acme/clients", None).await.status,
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn a_key_never_gets_roles_its_maker_does_not_hold() {
    let app = spawn_app().await;
    let developer = app.key_with(&["Developer"], None).await;
    let escalation =
        app.call_as(&developer, Method::POST, "/secrets", Some(json!({ "name": "mine", "roles": ["Owner"] }))).await;
    assert_eq!(escalation.refused_fields(), vec![("roles[0]".to_owned(), "Escalation".to_owned())]);
    let same = app
        .call_as(&developer, Method::POST, "/secrets", Some(json!({ "name": "mine", "roles": ["Developer"] })))
        .await;
    assert_eq!(same.status, StatusCode::CREATED);
    let unknown = app.post("/secrets", json!({ "name": "x", "roles": ["Nobody"] })).await;
    assert_eq!(unknown.refused_fields(), vec![("roles[0]".to_owned(), "NotFound".to_owned())]);
}
