//! The group commit: the small writes of requests that arrive together (sign-in events, refresh
//! token rotations, token exchanges, single sign-on's authorizations, the client sessions codes open) are
//! written in one transaction, and each request is answered once it commits.

use castellan::kernel::ids::{AccountId, ClientId, RealmId, SessionId, UserId};
use castellan::store::events::EventType;
use castellan::store::sessions::Session;
use castellan::store::write_queue::{QueuedEvent, Redemption};
use serde_json::json;

use crate::oauth::browser::realm_with_clients;
use crate::support::spawn_app;

#[tokio::test]
async fn a_write_that_cannot_be_made_is_refused_alone_and_the_rest_of_its_batch_commits() {
    let app = spawn_app().await;
    realm_with_clients(&app).await;
    let now = app.state.clock.now();
    let event = |marker: &str| QueuedEvent {
        event_type: EventType::LoginSucceeded,
        account_id: AccountId::known(app.account_id.clone()),
        realm_id: Some(RealmId::known("acme")),
        client_id: Some(ClientId::known("web")),
        data: json!({ "marker": marker }),
        at: now,
    };
    // A code's client session for a person the realm does not have (deleted meanwhile, say): its
    // row cannot be written.
    let session = Session {
        id: SessionId::fresh(),
        realm_id: RealmId::known("acme"),
        client_id: ClientId::known("web"),
        user_id: UserId::fresh(),
        ip_address: "192.0.2.1".to_owned(),
        user_agent: None,
        authentication_methods: vec!["pwd".to_owned()],
        created_at: now,
        last_active_at: now,
        expires_at: now + chrono::TimeDelta::hours(1),
        ended_at: None,
        end_reason: None,
        browser_session_id: None,
    };
    let orphan = Redemption { session, refresh: None, within_browser_session: false };

    // Queued together (the test's runtime runs the writer only once both wait), they share a batch.
    let writes = &app.state.context.writes;
    let (before, refused, after) =
        tokio::join!(writes.publish(event("before")), writes.redeem(orphan), writes.publish(event("after")));
    assert!(refused.is_err(), "a session of nobody cannot be opened");
    before.expect("the event before it is stored");
    after.expect("the event after it is stored");
    let mut markers: Vec<String> = app
        .events("login_succeeded")
        .await
        .into_iter()
        .map(|(_, _, data)| data["marker"].as_str().unwrap_or_default().to_owned())
        .collect();
    markers.sort();
    assert_eq!(markers, ["after", "before"]);
}
