//! `/realms/{realm}/users`.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::spawn_app;

#[tokio::test]
async fn a_user_is_created_with_an_argon2id_password_that_is_never_shown() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let created = app
        .post(
            "/realms/acme/users",
            json!({ "username": "ada", "email": "Ada@Example.com", "firstName": "Ada", "lastName": "Lovelace",
                    "password": "analytical engine", "mustChangePassword": true }),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.body);
    let user = created.data();
    assert_eq!(user["username"], "ada");
    assert_eq!(user["status"], "Active");
    assert_eq!(user["hasPassword"], true);
    assert_eq!(user["mustChangePassword"], true);
    assert_eq!(user["emailConfirmed"], false);
    let text = created.body.to_string();
    assert!(!text.contains("analytical") && !text.contains("argon2"), "no password nor hash: {text}");

    let id = user["id"].as_str().unwrap();
    // The password hash is shown by no answer: the table shows how it is stored.
    let store = app.database().await;
    let (hash,): (String,) =
        sqlx::query_as("SELECT password_hash FROM users WHERE id = $1").bind(id).fetch_one(store.pool()).await.unwrap();
    assert!(hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{hash}");

    let read = app.get(&format!("/realms/acme/users/{id}")).await;
    assert_eq!(read.data()["email"], "Ada@Example.com");
    assert!(!read.body.to_string().contains("argon2"));
}

#[tokio::test]
async fn passwords_shorter_than_the_realm_minimum_and_bad_fields_are_refused_together() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let realm = app.put("/realms/acme", json!({ "minimumPasswordLength": 12 })).await;
    assert_eq!(realm.status, StatusCode::OK, "{:?}", realm.body);
    let refused = app
        .post(
            "/realms/acme/users",
            json!({ "username": "has space", "email": "not-an-address", "password": "elevenchars" }),
        )
        .await;
    assert_eq!((refused.status, refused.error_code()), (StatusCode::BAD_REQUEST, "ValidationFailed"));
    let fields = refused.refused_fields();
    assert!(fields.contains(&("username".into(), "Pattern".into())), "{fields:?}");
    assert!(fields.contains(&("email".into(), "Format".into())), "{fields:?}");
    assert!(fields.contains(&("password".into(), "MinLength".into())), "{fields:?}");
    let missing = app.post("/realms/acme/users", json!({ "email": "a@b.co" })).await;
    assert!(missing.refused_fields().contains(&("username".into(), "Required".into())));
    let ok = app.post("/realms/acme/users", json!({ "username": "grace", "password": "twelve chars" })).await;
    assert_eq!(ok.status, StatusCode::CREATED, "{:?}", ok.body);
    let listed = app.get("/realms/acme/users").await;
    assert_eq!(listed.items().len(), 1, "nothing was stored by the refused requests");
}

#[tokio::test]
async fn usernames_and_emails_are_unique_in_a_realm_only() {
    let app = spawn_app().await;
    app.create_realm("one").await;
    app.create_realm("two").await;
    app.create_user("one", "ada", "a long password").await;
    let same_name = app.post("/realms/one/users", json!({ "username": "ada" })).await;
    assert!(same_name.refused_fields().contains(&("username".into(), "Duplicate".into())), "{:?}", same_name.body);
    let same_email = app.post("/realms/one/users", json!({ "username": "other", "email": "ADA@example.com" })).await;
    assert!(same_email.refused_fields().contains(&("email".into(), "Duplicate".into())), "{:?}", same_email.body);
    let elsewhere = app.post("/realms/two/users", json!({ "username": "ada", "email": "ada@example.com" })).await;
    assert_eq!(elsewhere.status, StatusCode::CREATED);
}

#[tokio::test]
async fn updates_keep_omitted_fields_clear_nulls_and_raise_user_events() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let id = app.create_user("acme", "ada", "a long password").await;
    let path = format!("/realms/acme/users/{id}");
    let updated = app.put(&path, json!({ "firstName": "Ada", "email": null, "status": "Disabled" })).await;
    assert_eq!(updated.status, StatusCode::OK, "{:?}", updated.body);
    assert_eq!(updated.data()["firstName"], "Ada");
    assert_eq!(updated.data()["email"], serde_json::Value::Null);
    assert_eq!(updated.data()["status"], "Disabled");
    assert_eq!(updated.data()["username"], "ada", "omitted fields keep their value");
    assert_eq!(updated.data()["hasPassword"], true);
    let other_id = app.put(&path, json!({ "id": "00000000-0000-7000-8000-000000000000" })).await;
    assert!(other_id.refused_fields().contains(&("id".into(), "Immutable".into())), "{:?}", other_id.body);

    assert_eq!(app.delete(&path).await.status, StatusCode::OK);
    assert_eq!(app.get(&path).await.status, StatusCode::NOT_FOUND);

    let created = app.events("user_created").await;
    assert_eq!(created.len(), 1);
    let (realm, client, data) = &created[0];
    assert_eq!((realm.as_deref(), client.as_deref()), (Some("acme"), None));
    for field in
        ["id", "username", "email", "first_name", "last_name", "email_confirmed", "status", "realm_id", "client_id"]
    {
        assert!(data.get(field).is_some(), "user_created carries {field}: {data}");
    }
    let updated = app.events("user_updated").await;
    assert_eq!(updated[0].2["status"], "Disabled");
    let deleted = app.events("user_deleted").await;
    assert_eq!(deleted[0].2["first_name"], "Ada", "the account as it stood at deletion");
    let admin = app.events("admin_resource_created").await;
    assert!(admin.iter().any(|(_, _, d)| d["resource_type"] == "user" && d["resource_id"] == id.as_str()));
}

#[tokio::test]
async fn user_lists_page_search_and_filter() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    for name in ["ada", "grace", "alan"] {
        app.post("/realms/acme/users", json!({ "username": name, "emailConfirmed": name == "grace" })).await;
    }
    let searched = app.get("/realms/acme/users?searchTerm=a&sortBy=username&sortDirection=asc&pageSize=2").await;
    let names: Vec<&str> = searched.items().iter().map(|u| u["username"].as_str().unwrap()).collect();
    assert_eq!(names, ["ada", "alan"]);
    assert_eq!(searched.body["pagination"]["totalItems"], 2, "a one-character term matches the start of a name");
    let confirmed = app.get("/realms/acme/users?emailConfirmed=true").await;
    assert_eq!(confirmed.items().len(), 1);
    assert_eq!(confirmed.items()[0]["username"], "grace");
    let bad = app.get("/realms/acme/users?emailConfirmed=maybe").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}

/// The usernames of a search's page, and its pagination.
async fn found(app: &crate::support::TestApp, realm: &str, query: &str) -> (Vec<String>, serde_json::Value) {
    let answer = app.get(&format!("/realms/{realm}/users?sortBy=username&sortDirection=asc&{query}")).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let names = answer.items().iter().map(|u| u["username"].as_str().unwrap().to_owned()).collect();
    (names, answer.body["pagination"].clone())
}

#[tokio::test]
async fn a_search_finds_people_by_any_part_of_their_names_or_address_as_they_are_now() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.create_realm("globex").await;
    let people = [
        json!({ "username": "ada.lovelace", "email": "ADA@Analytical.example", "firstName": "Ada", "lastName": "Lovelace" }),
        json!({ "username": "grace", "email": "grace@navy.example", "firstName": "Grace", "lastName": "Hopper" }),
        json!({ "username": "sure_100%", "firstName": "Zoë" }),
    ];
    let mut ids = Vec::new();
    for person in people {
        let created = app.post("/realms/acme/users", person).await;
        assert_eq!(created.status, StatusCode::CREATED);
        ids.push(created.data()["id"].as_str().unwrap().to_owned());
    }
    let other = json!({ "username": "ada.lovelace", "email": "ada@analytical.example" });
    assert_eq!(app.post("/realms/globex/users", other).await.status, StatusCode::CREATED);
    let search = async |term: &str| {
        let term: String = url::form_urlencoded::byte_serialize(term.as_bytes()).collect();
        found(&app, "acme", &format!("searchTerm={term}")).await
    };

    assert_eq!(search("LYTICAL").await.0, ["ada.lovelace"], "any case, inside the address, this realm only");
    assert_eq!(search("hopper").await.0, ["grace"], "the last name");
    assert_eq!(search("ace").await.0, ["ada.lovelace", "grace"], "the username of one, the first name of the other");
    assert_eq!(search("gR").await.0, ["grace"], "a term of two characters matches the start of a field");
    assert_eq!(search("lo").await.0, ["ada.lovelace"], "of the last name too");
    assert_eq!(search("AD").await.0, ["ada.lovelace"], "in any case");
    assert!(search("an").await.0.is_empty(), "not where the address's domain starts");
    assert!(search("ac").await.0.is_empty(), "never inside a field");
    assert_eq!(search("z").await.0, ["sure_100%"], "nor does a term of one character");
    assert!(search("o").await.0.is_empty());
    assert_eq!(search("zoë").await.0, ["sure_100%"], "beyond ASCII");
    assert_eq!(search("e_1").await.0, ["sure_100%"], "an underscore is itself");
    assert_eq!(search("00%").await.0, ["sure_100%"], "and so is a percent sign");
    assert_eq!(search("s%").await.0, Vec::<String>::new(), "at the start of a field too");
    assert_eq!(search("su").await.0, ["sure_100%"]);
    assert!(search("a_l").await.0.is_empty(), "an underscore stands for no other character");
    assert!(search("lovelace ada").await.0.is_empty(), "no match runs across two fields");
    assert!(search("xyz").await.0.is_empty());
    let (_, pagination) = search("ace").await;
    assert_eq!((&pagination["totalItems"], pagination.get("totalItemsAtLeast")), (&json!(2), None));

    let grace = format!("/realms/acme/users/{}", ids[1]);
    assert_eq!(app.put(&grace, json!({ "lastName": "Murray" })).await.status, StatusCode::OK);
    assert!(search("hopper").await.0.is_empty(), "a changed name is no longer found");
    assert_eq!(search("murray").await.0, ["grace"], "the new one is");
    assert_eq!(app.delete(&grace).await.status, StatusCode::OK);
    assert!(search("murray").await.0.is_empty(), "nor is a deleted person");
    assert_eq!(app.delete("/realms/globex").await.status, StatusCode::OK);
    app.create_realm("globex").await;
    assert!(found(&app, "globex", "searchTerm=lovelace").await.0.is_empty(), "nor the people of a deleted realm");
}

#[tokio::test]
async fn a_search_that_matches_more_than_a_thousand_people_counts_a_thousand_and_pages_on() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.create_client("acme", "web", &["password"], &[]).await;
    let users: Vec<_> = (0..1005)
        .map(|n| json!({ "username": format!("member-{n:04}"), "email": format!("member-{n:04}@corp.example") }))
        .collect();
    let import = app.post("/realms/acme/clients/web/users/import", json!({ "users": users })).await;
    assert_eq!((import.status, &import.data()["created"]), (StatusCode::OK, &json!(1005)), "{:?}", import.body);
    // Holds `me`, but not at the start of a field.
    assert_eq!(app.post("/realms/acme/users", json!({ "username": "homer" })).await.status, StatusCode::CREATED);

    for term in ["corp.example", "me"] {
        let (names, pagination) = found(&app, "acme", &format!("searchTerm={term}&pageSize=10")).await;
        assert_eq!(names.first().map(String::as_str), Some("member-0000"), "{term}");
        assert_eq!(pagination["totalItems"], 1000, "{term}: counted up to a thousand");
        assert_eq!(pagination["totalItemsAtLeast"], true, "{term}: and said to be more");
        let (names, _) = found(&app, "acme", &format!("searchTerm={term}&pageSize=10&pageNumber=101")).await;
        assert_eq!(names, ["member-1000", "member-1001", "member-1002", "member-1003", "member-1004"], "{term}");
    }
    let (names, pagination) = found(&app, "acme", "searchTerm=member-100").await;
    assert_eq!(names, ["member-1000", "member-1001", "member-1002", "member-1003", "member-1004"]);
    assert_eq!((&pagination["totalItems"], pagination.get("totalItemsAtLeast")), (&json!(5), None));
    let (_, pagination) = found(&app, "acme", "").await;
    assert_eq!(
        (&pagination["totalItems"], pagination.get("totalItemsAtLeast")),
        (&json!(1006), None),
        "unsearched lists count all"
    );
}

#[tokio::test]
async fn a_key_without_user_permissions_cannot_touch_users() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let auditor = app.key_with(&["Auditor"], None).await;
    let refused =
        app.call_as(&auditor, reqwest::Method::POST, "/realms/acme/users", Some(json!({ "username": "x" }))).await;
    assert_eq!((refused.status, refused.error_code()), (StatusCode::FORBIDDEN, "Forbidden"));
    let read = app.call_as(&auditor, reqwest::Method::GET, "/realms/acme/users", None).await;
    assert_eq!(read.status, StatusCode::OK);
}

/// A range API in the manner of Have I Been Pwned's, on loopback: knows one breached password.
async fn range_api(known: &'static str) -> String {
    use axum::extract::Path;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let digest = {
        use sha1::Digest as _;
        hex::encode_upper(sha1::Sha1::digest(known.as_bytes()))
    };
    let router = axum::Router::new().route(
        "/range/{prefix}",
        axum::routing::get(move |Path(prefix): Path<String>| {
            let digest = digest.clone();
            async move {
                let padding = "0018A45C4D1DEF81644B54AB7F969B88D65:0\n00D4F6E8FA6EECAD2A3AA415EEC418D38EC:2";
                if digest.starts_with(&prefix) {
                    format!("{}:52579\n{padding}", &digest[5..])
                } else {
                    padding.to_owned()
                }
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{address}/range/")
}

#[tokio::test]
async fn realms_that_block_breached_passwords_check_the_list_and_the_range_api() {
    let list = std::env::temp_dir().join(format!("breached-{}.lst", uuid::Uuid::new_v4()));
    std::fs::write(&list, "#!comment: a test list\npassword123\nletmein2024\n").unwrap();
    let api = range_api("correct horse battery staple").await;
    let db = crate::support::TestDatabase::new().await;
    let app = crate::support::spawn_with(db, |settings| {
        settings.breached_passwords_file = Some(list.clone());
        settings.breached_passwords_api = Some(api);
    })
    .await;
    app.create_realm("acme").await;
    let allowed = app.post("/realms/acme/users", json!({ "username": "a", "password": "Password123" })).await;
    assert_eq!(allowed.status, StatusCode::CREATED, "the realm does not block breached passwords yet");

    app.put("/realms/acme", json!({ "blockBreachedPasswords": true })).await;
    for breached in ["PASSWORD123", "correct horse battery staple"] {
        let refused = app.post("/realms/acme/users", json!({ "username": "b", "password": breached })).await;
        assert_eq!(refused.refused_fields(), vec![("password".to_owned(), "Breached".to_owned())], "{breached}");
    }
    let fresh =
        app.post("/realms/acme/users", json!({ "username": "b", "password": "a rather unusual phrase 7" })).await;
    assert_eq!(fresh.status, StatusCode::CREATED, "{:?}", fresh.body);
    let id = allowed.data()["id"].as_str().unwrap();
    let update = app.put(&format!("/realms/acme/users/{id}"), json!({ "password": "letmein2024" })).await;
    assert!(update.refused_fields().contains(&("password".into(), "Breached".into())));
}
