//! The connections the service holds, played with raw sockets: a request head that never ends and a
//! connection that says nothing are cut at the header-read timeout, a kept-alive connection at its
//! idle timeout, and no more than `max_connections` are open at once. The deadlines run on the
//! service's clock, so the tests move the manual clock instead of waiting.

use std::time::Duration;

use chrono::TimeDelta;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::support::{TestApp, TestDatabase, spawn_with};

const HEALTH: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: castellan\r\n\r\n";

async fn spawn_with_connections(adjust: impl FnOnce(&mut castellan::kernel::config::Settings)) -> TestApp {
    spawn_with(TestDatabase::new().await, adjust).await
}

async fn connect(app: &TestApp) -> TcpStream {
    TcpStream::connect(app.base.trim_start_matches("http://")).await.unwrap()
}

/// Moves the service's clock without a request: the connections under test may be all it accepts.
fn move_clock(app: &TestApp, seconds: i64) {
    app.state.manual_clock.as_ref().expect("a manual clock").advance(TimeDelta::seconds(seconds));
}

/// Whether the server closed the connection: it reads to its end (or is reset), waiting at most
/// for the server to act on a deadline that has already passed.
async fn closed(socket: &mut TcpStream) -> bool {
    let mut buffer = [0_u8; 1024];
    loop {
        match tokio::time::timeout(Duration::from_secs(30), socket.read(&mut buffer)).await {
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
            Err(_) => return false,
        }
    }
}

/// Whether nothing has arrived and the connection is still open, right now.
fn quiet(socket: &TcpStream) -> bool {
    let mut buffer = [0_u8; 64];
    matches!(socket.try_read(&mut buffer), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// Reads one answer to `/healthz` (its body is `ok`).
async fn answered(socket: &mut TcpStream) -> String {
    let mut text = Vec::new();
    let mut buffer = [0_u8; 1024];
    while !text.ends_with(b"ok") {
        let read = tokio::time::timeout(Duration::from_secs(30), socket.read(&mut buffer)).await;
        let n = read.expect("an answer in time").expect("readable");
        assert!(n > 0, "closed before answering: {}", String::from_utf8_lossy(&text));
        text.extend_from_slice(&buffer[..n]);
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// Reads until an answer's head has arrived (an interim `100 Continue` is one), and returns what
/// was read.
async fn answer_head(socket: &mut TcpStream) -> String {
    let mut text = Vec::new();
    let mut buffer = [0_u8; 1024];
    while !text.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = tokio::time::timeout(Duration::from_secs(30), socket.read(&mut buffer)).await;
        let n = read.expect("an answer in time").expect("readable");
        assert!(n > 0, "closed before answering: {}", String::from_utf8_lossy(&text));
        text.extend_from_slice(&buffer[..n]);
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// Lets the service act on what it woke for: it runs on the test's thread, so yielding runs it.
async fn settle() {
    for _ in 0..64 {
        tokio::task::yield_now().await;
    }
}

/// Waits until the service counts `open` connections.
async fn open_connections(app: &TestApp, open: i64) {
    for _ in 0..10_000 {
        if app.state.metrics.connections_open() == open {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("{} connections open, not {open}", app.state.metrics.connections_open());
}

#[tokio::test]
async fn a_request_head_sent_a_byte_at_a_time_or_never_is_cut_at_the_header_read_timeout() {
    let app = spawn_with_connections(|settings| settings.header_read_timeout_seconds = 10).await;
    let mut slow = connect(&app).await;
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: cas").await.unwrap();
    let mut silent = connect(&app).await;
    let mut prompt = connect(&app).await;
    open_connections(&app, 3).await;
    move_clock(&app, 5);
    slow.write_all(b"tellan\r\nX-Slow: 1").await.unwrap();
    assert!(quiet(&slow) && quiet(&silent), "within the timeout both stay open");
    prompt.write_all(HEALTH).await.unwrap();
    assert!(answered(&mut prompt).await.starts_with("HTTP/1.1 200"), "a whole head in time is served");

    move_clock(&app, 6);
    assert!(closed(&mut slow).await, "the head still not ended 11 seconds after its first byte");
    assert!(closed(&mut silent).await, "a connection that said nothing for 11 seconds");
    let metrics = app.state.metrics.render();
    assert!(metrics.contains(r#"castellan_http_connections_cut_total{reason="header_timeout"} 2"#), "{metrics}");
    assert!(quiet(&prompt), "the connection that was answered waits for its idle timeout, not this one");
}

#[tokio::test]
async fn a_kept_alive_connection_closes_once_idle_past_its_timeout() {
    let app = spawn_with_connections(|settings| {
        settings.header_read_timeout_seconds = 10;
        settings.idle_timeout_seconds = 60;
    })
    .await;
    let mut socket = connect(&app).await;
    socket.write_all(HEALTH).await.unwrap();
    assert!(answered(&mut socket).await.starts_with("HTTP/1.1 200"));
    move_clock(&app, 59);
    assert!(quiet(&socket), "idle for 59 of its 60 seconds");
    socket.write_all(HEALTH).await.unwrap();
    assert!(answered(&mut socket).await.starts_with("HTTP/1.1 200"), "the next request on the same connection");
    move_clock(&app, 59);
    assert!(quiet(&socket), "each answer starts the idle time again");
    move_clock(&app, 2);
    assert!(closed(&mut socket).await, "61 seconds idle");
    let metrics = app.state.metrics.render();
    assert!(metrics.contains(r#"castellan_http_connections_cut_total{reason="idle_timeout"} 1"#), "{metrics}");
}

#[tokio::test]
async fn past_the_bound_no_connection_is_taken_until_one_closes_and_held_ones_cannot_keep_it() {
    let app = spawn_with_connections(|settings| {
        settings.max_connections = 4;
        settings.header_read_timeout_seconds = 10;
    })
    .await;
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(connect(&app).await);
    }
    open_connections(&app, 4).await;
    // A fifth is left waiting: the health check of an attacked host.
    let mut health = connect(&app).await;
    health.write_all(HEALTH).await.unwrap();
    assert!(quiet(&health), "not taken while four are open");
    assert_eq!(app.state.metrics.connections_open(), 4);
    // The attacker's connections say nothing: the header-read timeout frees their places.
    move_clock(&app, 11);
    assert!(answered(&mut health).await.starts_with("HTTP/1.1 200"), "the health check is served");
    for socket in &mut held {
        assert!(closed(socket).await);
    }
}

#[tokio::test]
async fn a_body_sent_after_100_continue_is_read_past_the_header_read_timeout() {
    let app = spawn_with_connections(|settings| {
        settings.header_read_timeout_seconds = 10;
        settings.idle_timeout_seconds = 60;
    })
    .await;
    let body = b"grant_type=client_credentials&client_id=nobody&client_secret=wrong";
    let head = format!(
        "POST /realms/platform/protocol/openid-connect/token HTTP/1.1\r\nHost: castellan\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\
         Expect: 100-continue\r\n\r\n",
        body.len()
    );
    let mut socket = connect(&app).await;
    socket.write_all(head.as_bytes()).await.unwrap();
    let interim = answer_head(&mut socket).await;
    assert!(interim.starts_with("HTTP/1.1 100"), "the body is asked for: {interim}");

    // A large upload takes longer than the header-read timeout: its body is no head.
    socket.write_all(&body[..10]).await.unwrap();
    move_clock(&app, 11);
    settle().await;
    assert!(quiet(&socket), "the upload goes on past the header-read timeout");
    move_clock(&app, 50);
    settle().await;
    socket.write_all(&body[10..]).await.unwrap();
    let answer = answer_head(&mut socket).await;
    assert!(answer.starts_with("HTTP/1.1 401"), "the request is answered: {answer}");
    let metrics = app.state.metrics.render();
    assert!(metrics.contains(r#"castellan_http_connections_cut_total{reason="header_timeout"} 0"#), "{metrics}");
}
