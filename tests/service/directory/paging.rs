//! Paged lists: pagination and filtering.

use castellan::kernel::clock::iso;
use reqwest::StatusCode;
use serde_json::json;

use crate::support::spawn_app;

fn ids(answer: &crate::support::Answer) -> Vec<String> {
    answer.items().iter().map(|item| item["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn pages_follow_the_spec_rules() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    // 25 clients, one minute apart, so creation order is exact.
    for n in 0..25 {
        let answer =
            app.post("/realms/acme/clients", json!({ "id": format!("c{n:02}"), "name": format!("client {n}") })).await;
        assert_eq!(answer.status, StatusCode::CREATED);
        app.advance(60).await;
    }

    let first = app.get("/realms/acme/clients").await;
    let page = &first.body["pagination"];
    assert_eq!((page["pageNumber"].as_i64(), page["pageSize"].as_i64()), (Some(1), Some(10)));
    assert_eq!((page["totalItems"].as_i64(), page["totalPages"].as_i64()), (Some(25), Some(3)));
    assert_eq!(ids(&first)[0], "c24", "newest first by default");
    assert!(first.body.get("data").is_none(), "pagination replaces data");

    let below = app.get("/realms/acme/clients?pageNumber=0&pageSize=5").await;
    assert_eq!(below.body["pagination"]["pageNumber"], 1, "below 1 reads as 1");
    assert_eq!(ids(&below).len(), 5);

    let above = app.get("/realms/acme/clients?pageSize=5000").await;
    assert_eq!(above.body["pagination"]["pageSize"], 200, "above 200 reads as 200");
    assert_eq!(ids(&above).len(), 25);

    let third = app.get("/realms/acme/clients?pageNumber=3").await;
    assert_eq!(ids(&third), vec!["c04", "c03", "c02", "c01", "c00"]);

    let ascending = app.get("/realms/acme/clients?sortDirection=asc&pageSize=3").await;
    assert_eq!(ids(&ascending), vec!["c00", "c01", "c02"]);
    let by_name = app.get("/realms/acme/clients?sortBy=name&sortDirection=asc&pageSize=3").await;
    assert_eq!(ids(&by_name), vec!["c00", "c01", "c10"], "text order of names");
    let unknown_sort = app.get("/realms/acme/clients?sortBy=colour&sortDirection=asc&pageSize=2").await;
    assert_eq!(ids(&unknown_sort), vec!["c00", "c01"], "unknown sortBy falls back to creation date");

    let searched = app.get("/realms/acme/clients?searchTerm=CLIENT%201&pageSize=50").await;
    assert_eq!(searched.body["pagination"]["totalItems"], 11, "client 1 and client 10–19, case-insensitive");
    let literal = app.get("/realms/acme/clients?searchTerm=%25").await;
    assert_eq!(literal.body["pagination"]["totalItems"], 0, "wildcards are literal");
}

#[tokio::test]
async fn created_from_is_inclusive_and_created_to_exclusive() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    let mut instants = Vec::new();
    for n in 0..4 {
        let created = app.post("/realms/acme/clients", json!({ "id": format!("c{n}") })).await;
        instants.push(created.data()["createdAt"].as_str().unwrap().to_owned());
        app.advance(10).await;
    }
    let path = format!(
        "/realms/acme/clients?sortDirection=asc&createdFrom={}&createdTo={}",
        urlencode(&instants[1]),
        urlencode(&instants[3])
    );
    assert_eq!(ids(&app.get(&path).await), vec!["c1", "c2"]);

    let now = iso(app.state.clock.now());
    let future = app.get(&format!("/realms/acme/clients?createdFrom={}", urlencode(&now))).await;
    assert_eq!(future.items().len(), 0);
}

#[tokio::test]
async fn status_restricts_and_bad_parameters_are_refused() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.post("/realms/acme/clients", json!({ "id": "on" })).await;
    app.post("/realms/acme/clients", json!({ "id": "off", "status": "Disabled" })).await;
    assert_eq!(ids(&app.get("/realms/acme/clients?status=Disabled").await), vec!["off"]);
    assert_eq!(ids(&app.get("/realms/acme/clients?status=Active").await), vec!["on"]);

    let refused =
        app.get("/realms/acme/clients?pageSize=many&sortDirection=sideways&createdFrom=yesterday&colour=red").await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let mut fields = refused.refused_fields();
    fields.sort();
    assert_eq!(
        fields,
        vec![
            ("colour".to_owned(), "Unknown".to_owned()),
            ("createdFrom".to_owned(), "Format".to_owned()),
            ("pageSize".to_owned(), "Type".to_owned()),
            ("sortDirection".to_owned(), "OneOf".to_owned()),
        ]
    );
    let unknown = app.get("/realms/acme/clients?colour=red").await;
    assert_eq!(unknown.refused_fields(), vec![("colour".to_owned(), "Unknown".to_owned())]);
}

/// Every list the document says takes `status` refuses a status its resources cannot have, on
/// `status`, instead of answering an empty page; and takes one they can.
#[tokio::test]
async fn every_list_with_a_status_refuses_one_its_resources_cannot_have() {
    let app = spawn_app().await;
    app.create_realm("acme").await;
    app.create_client("acme", "web", &["client_credentials"], &[]).await;
    let ada = app.create_user("acme", "ada", "analytical engine").await;
    let document = app.get_json(&format!("{}/openapi.json", app.admin)).await;
    let mut checked = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        let Some(parameters) = item["get"]["parameters"].as_array() else { continue };
        if !parameters.iter().any(|p| p["name"] == "status" && p["in"] == "query") {
            continue;
        }
        let filled = path.replace("{realm}", "acme").replace("{client}", "web").replace("{userId}", &ada);
        let refused = app.get(&format!("{filled}?status=NoSuchStatus")).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{path}: {:?}", refused.body);
        assert_eq!(refused.refused_fields(), vec![("status".to_owned(), "OneOf".to_owned())], "{path}");
        let one_of = refused.body["notifications"][0]["message"].as_str().unwrap().to_owned();
        let first = one_of.trim_start_matches("status must be ").split([',', ' ']).next().unwrap().to_owned();
        let taken = app.get(&format!("{filled}?status={first}")).await;
        assert_eq!(taken.status, StatusCode::OK, "{path} status={first}: {:?}", taken.body);
        checked.push(path.clone());
    }
    assert!(checked.len() >= 20, "{checked:?}");
    assert!(checked.contains(&"/realms/{realm}/delegation-grants".to_owned()), "{checked:?}");
}

fn urlencode(text: &str) -> String {
    text.replace(':', "%3A").replace('+', "%2B")
}
