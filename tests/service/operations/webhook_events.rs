//! A client's events with their fan-out status, paged: each event once however many endpoints and
//! attempts it has, newest first from its fan-out, with its filters and its count.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::operations::webhooks::{SHOP_HOOKS, create_user, recorded, register, spawn_receiving};
use crate::support::TestApp;
use crate::support::receiver::Receiver;

/// One page of the client's events for `query`, with the number of all the events it pages through.
async fn events(app: &TestApp, query: &str) -> (Vec<Value>, i64) {
    let listed = app.get(&format!("{SHOP_HOOKS}/events?{query}")).await;
    assert_eq!(listed.status, StatusCode::OK, "{query}: {:?}", listed.body);
    (listed.items().clone(), listed.body["pagination"]["totalItems"].as_i64().unwrap())
}

fn field<'a>(items: &'a [Value], name: &str) -> Vec<&'a str> {
    items.iter().map(|item| item[name].as_str().unwrap()).collect()
}

#[tokio::test]
async fn events_are_paged_once_each_from_their_fan_out_with_filters_and_counts() {
    let app = spawn_receiving().await;
    let (steady, flaky) = (Receiver::start().await, Receiver::start().await);
    let hears = json!(["user_created", "user_updated"]);
    let (steady_id, _) =
        register(&app, SHOP_HOOKS, json!({ "name": "Steady", "url": steady.url, "events": hears, "retries": 0 })).await;
    let (flaky_id, _) =
        register(&app, SHOP_HOOKS, json!({ "name": "Flaky", "url": flaky.url, "events": hears, "retries": 0 })).await;

    // Five people, a second apart: five events, each fanned out to both endpoints; the flaky one
    // refuses them all.
    flaky.answer_with(500);
    let mut people = Vec::new();
    for name in ["ada", "bo", "cy", "di", "ed"] {
        people.push(create_user(&app, "hooks", name).await);
        app.advance(1).await;
    }
    let attempts = recorded(&app, SHOP_HOOKS, "Failed", 5).await;
    assert_eq!(attempts.len(), 10);

    // Newest first, two to a page; every page counts all five.
    let (first, total) = events(&app, "pageSize=2").await;
    let (second, _) = events(&app, "pageSize=2&pageNumber=2").await;
    let (last, _) = events(&app, "pageSize=2&pageNumber=3").await;
    assert_eq!((first.len(), second.len(), last.len(), total), (2, 2, 1, 5));
    let newest_first: Vec<&str> = [&first, &second, &last].into_iter().flat_map(|p| field(p, "createdAt")).collect();
    let mut sorted = newest_first.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    sorted.dedup();
    assert_eq!(newest_first, sorted, "strictly newest first, no event twice");
    assert!(first.iter().all(|e| e["endpoints"] == 2 && e["delivered"] == 1 && e["status"] == "Partial"));
    let (oldest_first, _) = events(&app, "pageSize=5&sortDirection=asc").await;
    let oldest = oldest_first[0].clone();
    assert_eq!(oldest, last[0], "ascending is the same order turned round");

    // A replay of the oldest event to the flaky endpoint, accepted: the event is counted once,
    // keeps its place and time, and both endpoints now have it.
    flaky.answer_with(200);
    let refused = attempts
        .iter()
        .find(|a| a["eventId"] == oldest["eventId"] && a["webhookId"] == flaky_id.as_str())
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let replay = app.post(&format!("{SHOP_HOOKS}/{flaky_id}/deliveries/{refused}/replay"), json!({})).await;
    assert_eq!(replay.status, StatusCode::CREATED, "{:?}", replay.body);
    recorded(&app, SHOP_HOOKS, "Succeeded", 6).await;
    let (all, total) = events(&app, "pageSize=50&sortDirection=asc").await;
    assert_eq!(total, 5);
    assert_eq!((&all[0]["eventId"], &all[0]["createdAt"]), (&oldest["eventId"], &oldest["createdAt"]));
    assert_eq!((all[0]["endpoints"].as_i64(), all[0]["delivered"].as_i64()), (Some(2), Some(2)));
    assert_eq!(field(&all, "status"), ["Delivered", "Partial", "Partial", "Partial", "Partial"]);

    // The status filter pages and counts the events of that status alone.
    let (partial, total) = events(&app, "status=Partial&pageSize=3").await;
    assert_eq!((partial.len(), total), (3, 4));
    assert!(partial.iter().all(|e| e["status"] == "Partial"));
    let (delivered, total) = events(&app, "status=Delivered").await;
    assert_eq!((field(&delivered, "eventId"), total), (vec![oldest["eventId"].as_str().unwrap()], 1));
    assert_eq!(events(&app, "status=Pending").await.1, 0);

    // Another type of event: found by its type, by a search term, and sorted by type.
    let updated = app.put(&format!("/realms/hooks/users/{}", people[1]), json!({ "firstName": "Bo" })).await;
    assert_eq!(updated.status, StatusCode::OK, "{:?}", updated.body);
    recorded(&app, SHOP_HOOKS, "Succeeded", 8).await;
    let (of_type, total) = events(&app, "eventType=user_updated").await;
    assert_eq!((field(&of_type, "eventType"), total), (vec!["user_updated"], 1));
    assert_eq!(field(&events(&app, "searchTerm=UPDATED").await.0, "eventType"), ["user_updated"]);
    assert_eq!(events(&app, "searchTerm=nothing-like-it").await.1, 0);
    let (by_type, _) = events(&app, "sortBy=eventType&sortDirection=desc&pageSize=1").await;
    assert_eq!(field(&by_type, "eventType"), ["user_updated"]);
    let (newest, total) = events(&app, "pageSize=1").await;
    assert_eq!((field(&newest, "eventType"), total), (vec!["user_updated"], 6));

    // An endpoint removed takes its attempts along: the events remain, with the endpoint left.
    let removed = app.delete(&format!("{SHOP_HOOKS}/{flaky_id}")).await;
    assert!(removed.status.is_success(), "{:?}", removed.body);
    let (left, total) = events(&app, "pageSize=50").await;
    assert_eq!(total, 6);
    assert!(left.iter().all(|e| e["endpoints"] == 1 && e["delivered"] == 1 && e["status"] == "Delivered"), "{left:?}");
    // The last endpoint removed, the events go too: neither listed nor counted.
    let removed = app.delete(&format!("{SHOP_HOOKS}/{steady_id}")).await;
    assert!(removed.status.is_success(), "{:?}", removed.body);
    assert_eq!(events(&app, "pageSize=50").await, (vec![], 0));
}
