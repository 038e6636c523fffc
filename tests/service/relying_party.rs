//! A stock relying party that no one here wrote, node's `openid-client` (pinned in
//! `tests/relying-party`, installed by `scripts/test`), signs a person in: discovery, the
//! authorization URL with PKCE, the code's exchange, its checks of the ID token (signature, issuer,
//! audience, nonce, `at_hash`) and userinfo are all its own; the test only plays the browser.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::browser::{Browser, REDIRECT, realm_with_clients};
use crate::support::spawn_app;

/// The relying party's next JSON line; a guard against a hung process, not a measure of speed.
async fn next_line(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("the relying party answers")
        .expect("its output is readable")
        .expect("it printed a line (its errors are on stderr)");
    serde_json::from_str(&line).expect("a JSON line")
}

#[tokio::test]
async fn openid_client_completes_the_code_flow_after_a_sign_in_on_the_page() {
    let app = spawn_app().await;
    let (web, _) = realm_with_clients(&app).await;
    let party = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("relying-party");
    assert!(
        party.join("node_modules/openid-client").is_dir(),
        "openid-client is not installed: run `npm ci --prefix tests/relying-party` (scripts/test does)"
    );
    let issuer = format!("{}/realms/acme", app.base);
    let mut child = tokio::process::Command::new("node")
        .arg(party.join("code_flow.mjs"))
        .args([issuer.as_str(), "web", web.secret.as_str(), REDIRECT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stdin = child.stdin.take().unwrap();

    let started = next_line(&mut lines).await;
    let mut browser = Browser::new(&app);
    let page = browser.open(started["authorizationUrl"].as_str().unwrap()).await;
    assert!(page.shows_login_form(), "{} {}", page.status, page.body);
    let answer = browser.sign_in("acme", &page, "ada", "analytical engine").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    let callback = answer.location.unwrap();
    stdin.write_all(format!("{callback}\n").as_bytes()).await.unwrap();

    let received = next_line(&mut lines).await;
    let users = app.get("/realms/acme/users?searchTerm=ada").await;
    let ada = users.items()[0]["id"].clone();
    assert_eq!(received["claims"]["sub"], ada, "{received}");
    assert_eq!(received["claims"]["iss"], issuer.as_str());
    assert_eq!(received["userinfo"]["sub"], ada);
    assert_eq!(received["userinfo"]["preferred_username"], "ada");
    assert_eq!(received["userinfo"]["email"], "ada@example.com");
    assert_eq!(received["refreshToken"], true);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.unwrap().unwrap();
    assert!(status.success());
}
