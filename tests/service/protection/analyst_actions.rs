//! What operators do with readings: apply a recommended change (only while it still tightens the
//! realm), revert it (only while the realm still holds the applied value), both in the change trail
//! with `admin_resource_updated`; and the post-incident report as a page and as a PDF.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::protection::analyst::{Realm, realm_with};

const MINUTE: i64 = 60;

/// A realm whose credential-stuffing incident has its opening reading; the incident and the reading.
async fn read_realm() -> (Realm, String, Value) {
    let r = realm_with(true, |_| {}).await;
    r.stuff("198.51.100.7").await;
    let incident = r.incident().await["id"].as_str().unwrap().to_owned();
    r.app.advance(5 * MINUTE).await;
    let (readings, _) = r.readings(&incident, None).await;
    assert_eq!(readings.len(), 1, "{readings:?}");
    (r, incident, readings[0].clone())
}

fn apply_path(reading: &Value, index: usize) -> String {
    format!("/threat-incidents/analyses/{}/recommendations/{index}/apply", reading["id"].as_str().unwrap())
}

#[tokio::test]
async fn a_recommendation_tightens_the_realm_once_and_its_revert_restores_only_what_it_set() {
    let (r, incident, reading) = read_realm().await;
    let changes: Vec<&str> =
        reading["recommendations"].as_array().unwrap().iter().map(|c| c["change"].as_str().unwrap()).collect();
    assert_eq!(changes, ["RefuseBreachedPasswords", "RequireLongerPasswords"], "{reading}");
    assert_eq!(reading["recommendations"][1]["value"], 12);
    assert_eq!(reading["recommendations"][1]["currentValue"], 8);

    let auditor = r.app.key_with(&["Auditor"], None).await;
    let refused = r.app.call_as(&auditor, reqwest::Method::POST, &apply_path(&reading, 0), None).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "reading is not acting: {:?}", refused.body);
    let beyond = r.app.post(&apply_path(&reading, 2), json!({})).await;
    assert_eq!(beyond.status, StatusCode::NOT_FOUND, "{:?}", beyond.body);

    let events_before = r.app.events("admin_resource_updated").await.len();
    let applied = r.app.post(&apply_path(&reading, 0), json!({})).await;
    assert_eq!(applied.status, StatusCode::CREATED, "{:?}", applied.body);
    assert_eq!(
        (applied.data()["change"].as_str(), applied.data()["previousValue"].as_bool()),
        (Some("RefuseBreachedPasswords"), Some(false))
    );
    assert_eq!(r.settings().await["blockBreachedPasswords"], true);
    let again = r.app.post(&apply_path(&reading, 0), json!({})).await;
    assert_eq!((again.status, again.error_code()), (StatusCode::CONFLICT, "Conflict"), "already applied");
    assert!(
        again.body["notifications"][0]["message"].as_str().unwrap().contains("Already in place"),
        "{:?}",
        again.body
    );
    let (readings, _) = r.readings(&incident, None).await;
    let shown = &readings[0]["recommendations"][0];
    assert_eq!(
        (shown["appliedActionId"].clone(), shown["tightens"].as_bool()),
        (applied.data()["id"].clone(), Some(false))
    );

    let action = applied.data()["id"].as_str().unwrap().to_owned();
    let reverted = r.app.post(&format!("/threat-incidents/analysis-actions/{action}/revert"), json!({})).await;
    assert_eq!(reverted.status, StatusCode::OK, "{:?}", reverted.body);
    assert!(reverted.data()["revertedAt"].is_string());
    assert_eq!(r.settings().await["blockBreachedPasswords"], false);
    let twice = r.app.post(&format!("/threat-incidents/analysis-actions/{action}/revert"), json!({})).await;
    assert_eq!(twice.status, StatusCode::CONFLICT, "{:?}", twice.body);

    // Both are changes of the realm, in its trail and announced to its endpoints.
    let events = r.app.events("admin_resource_updated").await;
    assert_eq!(events.len(), events_before + 2, "{events:?}");
    let trail = r.app.get(&format!("/audit-trail?realmId={}&resourceType=realm&action=Update", r.realm)).await;
    let rows = trail.items();
    assert_eq!(rows.len(), 2, "{:?}", trail.body);
    assert_eq!(
        (rows[0]["before"]["blockBreachedPasswords"].as_bool(), rows[0]["after"]["blockBreachedPasswords"].as_bool()),
        (Some(true), Some(false)),
        "the revert, newest first"
    );
    assert_eq!(rows[1]["after"]["blockBreachedPasswords"], true, "the apply");

    // A later change by someone else is left alone by a revert.
    let applied = r.app.post(&apply_path(&reading, 1), json!({})).await;
    assert_eq!(applied.status, StatusCode::CREATED, "{:?}", applied.body);
    assert_eq!(r.settings().await["minimumPasswordLength"], 12);
    r.app.put(&format!("/realms/{}", r.realm), json!({ "minimumPasswordLength": 14 })).await;
    let action = applied.data()["id"].as_str().unwrap();
    let kept = r.app.post(&format!("/threat-incidents/analysis-actions/{action}/revert"), json!({})).await;
    assert_eq!(kept.status, StatusCode::CONFLICT, "{:?}", kept.body);
    assert_eq!(r.settings().await["minimumPasswordLength"], 14, "the later change stays");

    // A realm already at least as strict: Already in place.
    r.app.put(&format!("/realms/{}", r.realm), json!({ "blockBreachedPasswords": true })).await;
    let strict = r.app.post(&apply_path(&reading, 0), json!({})).await;
    assert_eq!(strict.status, StatusCode::CONFLICT, "{:?}", strict.body);
    assert!(
        strict.body["notifications"][0]["message"].as_str().unwrap().contains("at least as strict"),
        "{:?}",
        strict.body
    );
}

#[tokio::test]
async fn the_closing_reading_s_report_prints_as_a_page_and_as_a_pdf() {
    let (r, incident, opening) = read_realm().await;
    let early = r.app.get(&format!("/threat-incidents/analyses/{}/report", opening["id"].as_str().unwrap())).await;
    assert_eq!(early.status, StatusCode::NOT_FOUND, "the opening reading has no report: {:?}", early.body);
    r.app.advance(40 * MINUTE).await;
    let (readings, _) = r.readings(&incident, None).await;
    assert_eq!(readings[0]["moment"], "Closed");
    let closing = readings[0]["id"].as_str().unwrap();
    let address = |format: &str| format!("{}/threat-incidents/analyses/{closing}/report?format={format}", r.app.admin);

    let page = r.app.http.get(address("html")).header("x-api-key", &r.app.key).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let html = page.text().await.unwrap();
    for heading in
        ["Post-incident report", "Nature of the incident", "Data and people affected", "Risks", "Communication"]
    {
        assert!(html.contains(heading), "{heading} missing from the page");
    }
    assert!(html.contains(&incident), "the page names the incident");

    let pdf = r
        .app
        .http
        .get(address("pdf"))
        .header("x-api-key", &r.app.key)
        .header("accept-language", "fr")
        .send()
        .await
        .unwrap();
    assert_eq!(pdf.status(), StatusCode::OK);
    assert_eq!(pdf.headers()["content-type"], "application/pdf");
    let bytes = pdf.bytes().await.unwrap();
    assert!(bytes.starts_with(b"%PDF-"), "a PDF");
    let dir = std::env::temp_dir().join(format!("castellan-report-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("report.pdf");
    std::fs::write(&file, &bytes).unwrap();
    // Rendered to an image, as a reader would show it…
    let rendered = std::process::Command::new("pdftoppm")
        .args(["-png", "-r", "50", "-f", "1", "-l", "1"])
        .arg(&file)
        .arg(dir.join("page"))
        .status()
        .expect("pdftoppm (poppler-utils) runs");
    assert!(rendered.success());
    let image = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "png"));
    let image = image.expect("a rendered page").path();
    assert!(std::fs::read(&image).unwrap().starts_with(b"\x89PNG"), "an image of the page");
    // …and its text read back, accents included.
    let text = std::process::Command::new("pdftotext")
        .args(["-enc", "UTF-8"])
        .arg(&file)
        .arg("-")
        .output()
        .expect("pdftotext runs");
    let text = String::from_utf8(text.stdout).unwrap();
    for heading in ["Rapport post-incident", "Nature de l'incident", "Données et personnes concernées", "Risques"] {
        assert!(text.contains(heading), "{heading} missing from {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);

    let wrong = r.app.get(&format!("/threat-incidents/analyses/{closing}/report?format=docx")).await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST, "{:?}", wrong.body);
}
