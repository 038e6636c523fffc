//! `/metrics`: every family present from the start, in the Prometheus text format unless
//! OpenMetrics is asked for, accepted by `promtool check metrics`, and counting what happens.

use reqwest::StatusCode;
use serde_json::json;

use crate::operations::webhooks::receiving;
use crate::support::receiver::Receiver;
use crate::support::{TestApp, TestDatabase, spawn_app, spawn_with};

/// `/metrics` as a scraper that asks for `accept` gets it: its content type and body.
async fn scrape(app: &TestApp, accept: Option<&str>) -> (String, String) {
    let mut request = app.http.get(format!("{}/metrics", app.base));
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    let answer = request.send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let content_type = answer.headers()["content-type"].to_str().unwrap().to_owned();
    (content_type, answer.text().await.unwrap())
}

/// The value of the sample `series` (name and labels exactly as written), if present.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// The families that must be described from the first scrape, by their `# TYPE` lines.
const FAMILIES: &[&str] = &[
    "castellan_build_info gauge",
    "castellan_http_requests_total counter",
    "castellan_http_request_duration_seconds histogram",
    "castellan_http_requests_in_flight gauge",
    "castellan_job_failures_total counter",
    "castellan_token_requests_total counter",
    "castellan_sign_in_failures_total counter",
    "castellan_lockouts_total counter",
    "castellan_attack_protection_measures_total counter",
    "castellan_attack_protection_measures_in_force gauge",
    "castellan_attack_protection_failed_open_total counter",
    "castellan_attack_incidents_opened_total counter",
    "castellan_webhook_attempts_total counter",
    "castellan_webhook_attempt_duration_seconds histogram",
    "castellan_webhook_backlog gauge",
    "castellan_webhook_endpoints_disabled gauge",
    "castellan_db_pool_connections gauge",
    "castellan_db_transactions_total counter",
    "castellan_db_transaction_wait_seconds_total counter",
    "castellan_cache_lookups_total counter",
    "castellan_rate_limit_refusals_total counter",
    "castellan_access_log_queue gauge",
    "castellan_write_queue gauge",
    "castellan_signing_key_age_seconds gauge",
    "castellan_metrics_read_failures_total counter",
    "process_cpu_seconds_total counter",
    "process_resident_memory_bytes gauge",
    "process_open_fds gauge",
    "process_start_time_seconds gauge",
];

#[tokio::test]
async fn every_family_is_there_from_the_start_in_the_format_the_scraper_asks_for() {
    let app = spawn_app().await;
    let (content_type, text) = scrape(&app, None).await;
    assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
    for family in FAMILIES {
        assert!(text.contains(&format!("# TYPE {family}\n")), "# TYPE {family} missing:\n{text}");
    }
    assert!(!text.contains("# EOF") && !text.contains("# UNIT"), "no OpenMetrics lines in the text format");
    // Known label sets start at zero.
    for series in [
        r#"castellan_sign_in_failures_total{reason="invalid_credentials"}"#,
        "castellan_lockouts_total",
        r#"castellan_attack_protection_measures_total{measure="source_blocked"}"#,
        r#"castellan_attack_protection_measures_in_force{measure="source_blocked"}"#,
        r#"castellan_attack_incidents_opened_total{kind="credential_stuffing"}"#,
        r#"castellan_webhook_attempts_total{outcome="failed"}"#,
        r#"castellan_webhook_backlog{state="due"}"#,
        "castellan_webhook_endpoints_disabled",
        r#"castellan_rate_limit_refusals_total{class="failed_authentication"}"#,
        r#"castellan_cache_lookups_total{cache="verifiers",result="hit"}"#,
    ] {
        assert_eq!(sample(&text, series), Some(0.0), "{series}:\n{text}");
    }
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(sample(&text, &format!(r#"castellan_build_info{{version="{version}"}}"#)), Some(1.0));
    assert!(sample(&text, "process_resident_memory_bytes").is_some_and(|bytes| bytes > 0.0));

    // Prometheus' own linter accepts the exposition.
    let mut promtool = tokio::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool is installed (scripts/test installs Debian's prometheus package)");
    tokio::io::AsyncWriteExt::write_all(&mut promtool.stdin.take().unwrap(), text.as_bytes()).await.unwrap();
    let checked = promtool.wait_with_output().await.unwrap();
    assert!(
        checked.status.success(),
        "promtool check metrics:\n{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );

    let asked = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";
    let (content_type, openmetrics) = scrape(&app, Some(asked)).await;
    assert!(content_type.starts_with("application/openmetrics-text; version=1.0.0"), "{content_type}");
    assert!(openmetrics.ends_with("# EOF\n"));
    assert!(openmetrics.contains("# TYPE castellan_token_requests counter\n"));
}

#[tokio::test]
async fn the_counters_and_gauges_follow_what_happens() {
    let app = spawn_with(TestDatabase::new().await, receiving).await;
    app.create_realm("acme").await;
    app.put("/realms/acme", json!({ "maxFailedAttempts": 2 })).await;
    let shop = app.create_client("acme", "shop", &["client_credentials", "password"], &[]).await;
    let receiver = Receiver::start().await;
    let hook = json!({ "name": "Users", "url": receiver.url, "events": ["user_created"] });
    assert_eq!(app.post("/realms/acme/clients/shop/webhooks", hook).await.status, StatusCode::CREATED);
    app.create_user("acme", "ada", "analytical engine").await;
    receiver.delivered(&app, 1).await;

    app.token(&shop, &[("grant_type", "client_credentials")]).await;
    let wrong = crate::support::TestClient { secret: "cstl_cs_wrong".into(), ..shop.clone() };
    app.token(&wrong, &[("grant_type", "client_credentials")]).await;
    let elsewhere = crate::support::TestClient { realm: "nowhere".into(), ..shop.clone() };
    app.token(&elsewhere, &[("grant_type", "client_credentials")]).await;
    for _ in 0..2 {
        let refused = app.token(&shop, &[("grant_type", "password"), ("username", "ada"), ("password", "nope")]).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    }

    app.advance(3600).await;

    let (_, text) = scrape(&app, None).await;
    let token = |grant: &str, outcome: &str| {
        sample(
            &text,
            &format!(r#"castellan_token_requests_total{{realm="acme",grant_type="{grant}",outcome="{outcome}"}}"#),
        )
    };
    assert_eq!(token("client_credentials", "issued"), Some(1.0), "{text}");
    assert_eq!(token("client_credentials", "invalid_client"), Some(1.0));
    assert_eq!(token("password", "invalid_grant"), Some(2.0));
    assert!(!text.contains(r#"realm="nowhere""#), "a realm that does not exist is no label value");
    assert_eq!(sample(&text, r#"castellan_sign_in_failures_total{reason="invalid_credentials"}"#), Some(2.0));
    assert_eq!(sample(&text, "castellan_lockouts_total"), Some(1.0));
    assert_eq!(sample(&text, r#"castellan_webhook_attempts_total{outcome="succeeded"}"#), Some(1.0));
    assert_eq!(sample(&text, "castellan_webhook_attempt_duration_seconds_count"), Some(1.0));
    assert!(sample(&text, r#"castellan_cache_lookups_total{cache="clients",result="hit"}"#).unwrap() > 0.0);
    assert!(sample(&text, "castellan_db_transactions_total").unwrap() > 0.0);
    assert!(sample(&text, "castellan_signing_key_age_seconds").unwrap() >= 3600.0, "{text}");
}

/// The metric names `text` mentions: words starting `castellan_` or `process_`.
fn metric_names(text: &str) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    let mut rest = text;
    while let Some(at) = ["castellan_", "process_"].iter().filter_map(|prefix| rest.find(prefix)).min() {
        let tail = &rest[at..];
        let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
        let preceded = rest[..at].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if !preceded {
            names.insert(tail[..end].to_owned());
        }
        rest = &tail[end..];
    }
    names
}

#[tokio::test]
async fn the_dashboard_and_the_alert_rules_read_only_metrics_the_service_exposes() {
    let app = spawn_app().await;
    let (_, text) = scrape(&app, None).await;
    let mut exposed = std::collections::BTreeSet::new();
    for line in text.lines().filter_map(|line| line.strip_prefix("# TYPE ")) {
        let (name, kind) = line.split_once(' ').unwrap();
        exposed.insert(name.to_owned());
        if kind == "histogram" {
            for part in ["_bucket", "_count", "_sum"] {
                exposed.insert(format!("{name}{part}"));
            }
        }
    }
    let deploy = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy");
    let alerts = deploy.join("prometheus/castellan-alerts.yml");
    for file in [deploy.join("grafana/castellan-dashboard.json"), alerts.clone()] {
        let read = std::fs::read_to_string(&file).unwrap();
        let named = metric_names(&read);
        assert!(named.len() > 10, "{}: {named:?}", file.display());
        let unknown: Vec<&String> = named.iter().filter(|name| !exposed.contains(*name)).collect();
        assert!(unknown.is_empty(), "{} reads metrics the service does not expose: {unknown:?}", file.display());
    }
    let checked = tokio::process::Command::new("promtool")
        .args(["check", "rules"])
        .arg(&alerts)
        .output()
        .await
        .expect("promtool is installed (scripts/test installs Debian's prometheus package)");
    assert!(checked.status.success(), "promtool check rules:\n{}", String::from_utf8_lossy(&checked.stdout));
}

/// The failing-job alert and the dashboard's panel, evaluated by `promtool test rules` on the
/// series as Prometheus stores them after a scrape: the target's `job` and `instance` labels
/// added, and an exposed label that clashes with them renamed `exported_…` (`honor_labels` is
/// off by default). The alert and the panel name the background job that failed, not the scrape
/// job.
#[tokio::test]
async fn a_failing_job_is_named_by_the_alert_and_the_dashboard_once_prometheus_has_scraped_it() {
    let app = spawn_app().await;
    app.state.metrics.job_failed("signing-key-rotation");
    let (_, text) = scrape(&app, None).await;
    let line = text.lines().find(|line| line.starts_with("castellan_job_failures_total{")).expect("the failure");
    let (name, rest) = line.split_once('{').unwrap();
    let (labels, _) = rest.split_once('}').unwrap();
    let instance = app.base.trim_start_matches("http://");
    let mut stored: Vec<String> = labels
        .split(',')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (label, value) = pair.split_once('=').unwrap();
            let label = if ["job", "instance"].contains(&label) { format!("exported_{label}") } else { label.into() };
            format!("{label}={value}")
        })
        .collect();
    stored.extend([r#"job="castellan""#.to_owned(), format!(r#"instance="{instance}""#)]);
    let series = format!("{name}{{{}}}", stored.join(","));

    let deploy = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(deploy.join("grafana/castellan-dashboard.json")).unwrap())
            .unwrap();
    let panel = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|panel| panel["targets"].as_array().cloned().unwrap_or_default())
        .find_map(|target| {
            target["expr"].as_str().filter(|e| e.contains("castellan_job_failures_total")).map(str::to_owned)
        })
        .expect("a panel of job failures");
    let panel = panel.replace("$instance", ".*").replace("$__rate_interval", "5m");
    let by = panel.split_once("sum by (").and_then(|(_, rest)| rest.split_once(')')).map(|(by, _)| by.to_owned());
    let by = by.expect("the panel sums by a label");

    let tests = format!(
        r#"rule_files:
  - {rules}
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: '{series}'
        values: '0 0 0 0 1 1'
    alert_rule_test:
      - eval_time: 5m
        alertname: CastellanJobFailing
        exp_alerts:
          - exp_labels:
              severity: warning
              job: castellan
              instance: '{instance}'
              task: signing-key-rotation
            exp_annotations:
              summary: 'Background job signing-key-rotation failed on {instance}'
    promql_expr_test:
      - expr: '{panel} > bool 0'
        eval_time: 5m
        exp_samples:
          - labels: '{{{by}="signing-key-rotation"}}'
            value: 1
"#,
        rules = deploy.join("prometheus/castellan-alerts.yml").display(),
    );
    let file = std::env::temp_dir().join(format!("castellan-alert-tests-{}.yml", uuid::Uuid::new_v4()));
    std::fs::write(&file, tests).unwrap();
    let checked = tokio::process::Command::new("promtool")
        .args(["test", "rules"])
        .arg(&file)
        .output()
        .await
        .expect("promtool is installed (scripts/test installs Debian's prometheus package)");
    std::fs::remove_file(&file).unwrap();
    assert!(
        checked.status.success(),
        "promtool test rules:\n{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
}
