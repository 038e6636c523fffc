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

/// On PostgreSQL, ending a session while the write queue holds its browser's session and opens a
/// session of the same code commits both, one after the other: the end writes the browser's
/// session first, as the queue does, so neither waits on a row the other holds. (SQLite has one
/// writer at a time: nothing to interleave.)
#[tokio::test]
async fn ending_a_session_waits_behind_the_queue_holding_its_browser_session_instead_of_deadlocking() {
    use castellan::store::{browser, sessions};

    let app = spawn_app().await;
    if !app.db.url.starts_with("postgres") {
        return;
    }
    let (web, _) = realm_with_clients(&app).await;
    let mut browser = crate::oauth::browser::Browser::new(&app);
    let code = crate::oauth::browser::signed_in(&mut browser, "web", "s").await.param("code").unwrap();
    let exchanged = crate::oauth::browser::exchange(&app, &web, &code, crate::oauth::browser::VERIFIER).await;
    assert_eq!(exchanged.status, reqwest::StatusCode::OK, "{:?}", exchanged.body);
    let store = app.state.context.store.clone();
    let (session_id, browser_id): (String, String) =
        sqlx::query_as("SELECT id, browser_session_id FROM sessions WHERE client_id = 'web'")
            .fetch_one(store.pool())
            .await
            .unwrap();
    let session = sessions::find(store.pool(), &session_id).await.unwrap().expect("the session the code opened");

    // The queue's side: the browser's session held, as a batch of redemptions holds it.
    let mut queue = store.begin().await.unwrap();
    let (queue_pid,): (i32,) = sqlx::query_as("SELECT pg_backend_pid()").fetch_one(&mut *queue).await.unwrap();
    assert!(browser::hold_live(&mut *queue, &[browser_id.as_str()]).await.unwrap().contains(&browser_id));
    // A second presentation of the code ends the session meanwhile, in a transaction of its own.
    let now = app.state.clock.now();
    let ending = {
        let (store, session_id) = (store.clone(), session_id.clone());
        tokio::spawn(async move {
            let mut tx = store.begin().await?;
            let ended = sessions::end(&mut tx, &session_id, "authorization_code_reused", now).await?;
            tx.commit().await?;
            anyhow::Ok(ended)
        })
    };
    // Once the end waits on a lock the queue holds (other tests share the database: only a wait
    // on this queue's connection counts), the queue opens the same session (already there:
    // nothing to open) and commits.
    let waiting = "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))";
    loop {
        let (count,): (i64,) = sqlx::query_as(waiting).bind(queue_pid).fetch_one(store.pool()).await.unwrap();
        if count > 0 {
            break;
        }
        tokio::task::yield_now().await;
    }
    let opened = sessions::insert_new_rows(&mut *queue, &[&session]).await.unwrap();
    assert!(opened.is_empty(), "the session was there already");
    queue.commit().await.expect("the queue's batch commits");
    assert!(ending.await.unwrap().expect("the end commits after it"), "the session ended");
}
