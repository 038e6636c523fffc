//! The incident analyst with a language model: a local server speaking OpenAI's chat-completions
//! protocol answers valid, invalid and failing responses. A valid answer is the reading; anything
//! else falls back to the component, and the reading says which wrote it. What is sent holds no
//! address, name, e-mail or identifier. A reading neither could write is kept as failed and can be
//! asked for again.

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::StatusCode as AxumStatus;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::protection::analyst::{Realm, realm_with};

const MINUTE: i64 = 60;
const PASSWORD: &str = "correct horse battery staple 7";

/// A request received: its `Authorization` header and its body.
type Request = (Option<String>, Value);

#[derive(Clone, Default)]
struct Shared {
    requests: Arc<Mutex<Vec<Request>>>,
    answer: Arc<Mutex<Option<(u16, Value)>>>,
}

/// A chat-completions server on loopback: it records each request and answers as it is told.
struct ModelStub {
    url: String,
    shared: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ModelStub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn complete(State(shared): State<Shared>, headers: axum::http::HeaderMap, Json(body): Json<Value>) -> Response {
    let key = headers.get("authorization").map(|v| v.to_str().unwrap().to_owned());
    shared.requests.lock().unwrap().push((key, body));
    let (status, body) = shared.answer.lock().unwrap().clone().unwrap_or((500, json!({})));
    (AxumStatus::from_u16(status).unwrap(), Json(body)).into_response()
}

impl ModelStub {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Shared::default();
        let router =
            Router::new().route("/v1/chat/completions", axum::routing::post(complete)).with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Self { url: format!("http://127.0.0.1:{port}/v1/chat/completions"), shared, task }
    }

    /// Answers with a chat completion whose message is `content`.
    fn says(&self, content: &str) {
        let completion = json!({ "id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{ "index": 0, "finish_reason": "stop", "message": { "role": "assistant", "content": content } }] });
        *self.shared.answer.lock().unwrap() = Some((200, completion));
    }

    fn fails(&self, status: u16) {
        *self.shared.answer.lock().unwrap() = Some((status, json!({ "error": { "message": "overloaded" } })));
    }

    fn requests(&self) -> Vec<Request> {
        self.shared.requests.lock().unwrap().clone()
    }
}

fn words(language: &str, reasons: usize) -> Value {
    json!({ "whatHappened": format!("[{language}] a list was worked through"), "whatWasDone": "the source was blocked",
            "exposedPasswords": "none", "why": vec!["breached passwords are tried first"; reasons], "report": null })
}

/// A reading of the model's, with `changes` as its recommendations, each with its reason.
fn reading(classification: &str, changes: Value) -> String {
    let reasons = changes.as_array().map_or(0, Vec::len);
    json!({ "classification": classification, "confidence": 88, "recommendations": changes,
            "words": { "en": words("en", reasons), "fr": words("fr", reasons) } })
    .to_string()
}

async fn with_model(stub: &ModelStub, component: Option<&str>) -> Realm {
    let url = stub.url.clone();
    let component = component.map(std::path::PathBuf::from);
    realm_with(true, move |settings| {
        settings.analyst.model_url = Some(url);
        settings.analyst.model = "test-model".into();
        settings.analyst.model_key = Some("sk-test-key".into());
        settings.analyst.component = component;
    })
    .await
}

/// Opens an incident with a known account named in it, and runs its opening reading.
async fn opening(r: &Realm) -> (String, Value) {
    let user = r.app.create_user(&r.realm, "grace", PASSWORD).await;
    // Eight accounts from one address, one of them real: blocked at the eighth.
    r.sign_in("grace", "wrong", "198.51.100.77").await;
    for n in 0..7 {
        let refused = r.sign_in(&format!("list-{n}"), "guess", "198.51.100.77").await;
        assert_eq!(refused.body["error_code"], "InvalidCredentials", "{:?}", refused.body);
    }
    let incident = r.incident().await["id"].as_str().unwrap().to_owned();
    r.app.advance(5 * MINUTE).await;
    let (readings, _) = r.readings(&incident, None).await;
    assert_eq!(readings.len(), 1);
    let _ = user;
    (incident, readings[0].clone())
}

#[tokio::test]
async fn a_valid_answer_of_the_model_is_the_reading_and_the_prompt_names_no_one() {
    let stub = ModelStub::start().await;
    stub.says(&reading("CredentialStuffing", json!([{ "change": "RefuseBreachedPasswords", "value": 1 }])));
    let r = with_model(&stub, None).await;
    let (incident, read) = opening(&r).await;
    assert_eq!(read["producedBy"], "model:test-model");
    assert!(read.get("modelFailure").is_none(), "{read}");
    assert_eq!((read["classification"].as_str(), read["confidence"].as_i64()), (Some("CredentialStuffing"), Some(88)));
    assert_eq!(read["whatHappened"], "[en] a list was worked through");
    assert_eq!(read["recommendations"][0]["why"], "breached passwords are tried first");
    let (french, _) = r.readings(&incident, Some("fr")).await;
    assert_eq!(french[0]["whatHappened"], "[fr] a list was worked through");

    let requests = stub.requests();
    assert_eq!(requests.len(), 1, "one request per reading");
    let (key, request) = &requests[0];
    assert_eq!(key.as_deref(), Some("Bearer sk-test-key"));
    assert_eq!(request["model"], "test-model");
    let sent = request.to_string();
    let user = r.app.get(&format!("/realms/{}/users?searchTerm=grace", r.realm)).await.items()[0].clone();
    for private in [
        "198.51.100.77",
        "grace",
        "grace@example.com",
        user["id"].as_str().unwrap(),
        &incident,
        &r.realm,
        &r.client.id,
        &r.app.account_id,
    ] {
        assert!(!sent.contains(private), "the prompt holds {private}: {sent}");
    }
    let figures: Value = serde_json::from_str(request["messages"][1]["content"].as_str().unwrap()).unwrap();
    assert_eq!((figures["kind"].as_str(), figures["blockedSources"].as_i64()), (Some("CredentialStuffing"), Some(1)));
    assert_eq!(figures["measures"][0]["unknownAccountFailures"], 7, "what the counters held: {figures}");
}

#[tokio::test]
async fn an_invalid_or_failing_answer_falls_back_to_the_component_and_says_why() {
    let stub = ModelStub::start().await;
    let r = with_model(&stub, None).await;
    let cases = [
        (Some(reading("Ransomware", json!([]))), "is not one a reading may give"),
        (
            Some(reading(
                "CredentialStuffing",
                json!([{ "change": "RefuseBreachedPasswords" }, { "change": "LockOutSooner", "value": 4 },
                       { "change": "LockOutLonger", "value": 60 }, { "change": "RequireLongerPasswords", "value": 12 }]),
            )),
            "at most 3",
        ),
        (Some(reading("BruteForce", json!([{ "change": "LockOutSooner", "value": 2 }]))), "beyond its limit"),
        (
            Some(reading("BruteForce", json!([{ "change": "LockOutLonger", "value": 10 }]))),
            "would not make the realm stricter",
        ),
        (Some(reading("BruteForce", json!([{ "change": "DisableSignIn", "value": 1 }]))), "none of the five"),
        (Some("I think it was an attack.".to_owned()), "not of its shape"),
        (None, "answered 503"),
    ];
    for (n, (content, why)) in cases.into_iter().enumerate() {
        match content {
            Some(content) => stub.says(&content),
            None => stub.fails(503),
        }
        let source = format!("198.51.100.{}", 10 + n);
        let listed_before = r.app.get(&format!("/threat-incidents?realmId={}", r.realm)).await.items().len();
        r.stuff(&source).await;
        let listed = r.app.get(&format!("/threat-incidents?realmId={}&incidentStatus=Active", r.realm)).await;
        assert_eq!(listed.items().len(), 1, "{n}: {:?}", listed.body);
        assert_eq!(r.app.get(&format!("/threat-incidents?realmId={}", r.realm)).await.items().len(), listed_before + 1);
        let incident = listed.items()[0]["id"].as_str().unwrap().to_owned();
        r.app.advance(5 * MINUTE).await;
        let (readings, _) = r.readings(&incident, None).await;
        assert_eq!(readings.len(), 1, "{n}");
        let read = &readings[0];
        assert_eq!(
            (read["status"].as_str(), read["producedBy"].as_str()),
            (Some("Completed"), Some("component")),
            "{n}: {read}"
        );
        assert!(read["modelFailure"].as_str().unwrap_or_default().contains(why), "{n}: {why}: {read}");
        assert_eq!(read["classification"], "CredentialStuffing", "{n}: the component's own reading");
        // Dismissed before the next opens, so that each case has an incident of its own (and no
        // closing reading spends the account's readings of the day).
        let dismissed = r.app.post(&format!("/threat-incidents/{incident}/dismiss"), json!({})).await;
        assert_eq!(dismissed.status, StatusCode::OK, "{:?}", dismissed.body);
    }
}

#[tokio::test]
async fn a_reading_neither_could_write_is_kept_as_failed_and_a_retry_runs_it_again() {
    let stub = ModelStub::start().await;
    stub.fails(500);
    let r = with_model(&stub, Some(env!("FAILING_ANALYST_COMPONENT"))).await;
    let (incident, failed) = opening(&r).await;
    assert_eq!(failed["status"], "Failed", "{failed}");
    let failure = failed["failure"].as_str().unwrap();
    assert!(failure.contains("answered 500") && failure.contains("component failed"), "{failure}");
    let retry = format!("/threat-incidents/analyses/{}/retry", failed["id"].as_str().unwrap());

    let auditor = r.app.key_with(&["Auditor"], None).await;
    let refused = r.app.call_as(&auditor, reqwest::Method::POST, &retry, None).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{:?}", refused.body);

    stub.says(&reading("PasswordSpraying", json!([])));
    // Consent is checked again as the reading runs: withdrawn, the retry fails and says why.
    r.app.put(&format!("/realms/{}", r.realm), json!({ "aiAdvisor": false })).await;
    let withdrawn = r.app.post(&retry, json!({})).await;
    assert_eq!(withdrawn.status, StatusCode::OK, "{:?}", withdrawn.body);
    assert_eq!(withdrawn.data()["status"], "Failed");
    assert!(
        withdrawn.data()["failure"].as_str().unwrap().contains("no longer lets the AI advisor"),
        "{:?}",
        withdrawn.body
    );
    assert_eq!(stub.requests().len(), 1, "nothing was sent for a realm that withdrew its consent");
    r.app.put(&format!("/realms/{}", r.realm), json!({ "aiAdvisor": true })).await;
    let retried = r.app.post(&retry, json!({})).await;
    assert_eq!(retried.status, StatusCode::OK, "{:?}", retried.body);
    assert_eq!((retried.data()["status"].as_str(), retried.data()["runs"].as_i64()), (Some("Completed"), Some(3)));
    assert_eq!(retried.data()["producedBy"], "model:test-model");
    assert_eq!(retried.data()["classification"], "PasswordSpraying");
    let again = r.app.post(&retry, json!({})).await;
    assert_eq!(again.status, StatusCode::CONFLICT, "only a failed reading: {:?}", again.body);
    let (readings, _) = r.readings(&incident, None).await;
    assert_eq!(readings.len(), 1, "the same reading, run again");
}
