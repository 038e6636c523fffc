//! A ChromeDriver session of a headless Chromium, spoken to over the W3C WebDriver protocol:
//! Debian's `chromium` and `chromium-driver`, which `scripts/test` installs.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";
/// The W3C WebDriver key of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A ChromeDriver session of a headless Chromium.
pub struct Driver {
    http: reqwest::Client,
    session: String,
    _process: tokio::process::Child,
}

impl Driver {
    pub async fn start() -> Self {
        assert!(
            std::path::Path::new(CHROMEDRIVER).exists() && std::path::Path::new(CHROMIUM).exists(),
            "Chromium is not installed: `apt-get install chromium chromium-driver` (scripts/test does)"
        );
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let mut process = tokio::process::Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("chromedriver starts");
        // ChromeDriver says when it listens.
        let mut lines = BufReader::new(process.stdout.take().unwrap()).lines();
        let ready = async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if line.contains("started successfully") {
                    return;
                }
            }
            panic!("chromedriver ended before it listened");
        };
        tokio::time::timeout(Duration::from_secs(60), ready).await.expect("chromedriver listens");
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let http = reqwest::Client::new();
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                // The upstream providers on loopback are certified by the test authority alone.
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--ignore-certificate-errors"],
            },
        } } });
        let base = format!("http://127.0.0.1:{port}");
        let answer: Value =
            http.post(format!("{base}/session")).json(&capabilities).send().await.unwrap().json().await.unwrap();
        let session = answer["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("a session: {answer}"));
        Self { http, session: format!("{base}/session/{session}"), _process: process }
    }

    pub async fn command(&self, path: &str, body: Value) -> Value {
        let answer: Value =
            self.http.post(format!("{}{path}", self.session)).json(&body).send().await.unwrap().json().await.unwrap();
        assert!(answer["value"].get("error").is_none(), "{path}: {answer}");
        answer["value"].clone()
    }

    /// A GET of the session's `path`: its value.
    pub async fn read(&self, path: &str) -> Value {
        let answer: Value =
            self.http.get(format!("{}{path}", self.session)).send().await.unwrap().json().await.unwrap();
        assert!(answer["value"].get("error").is_none(), "{path}: {answer}");
        answer["value"].clone()
    }

    /// A DELETE of the session's `path`.
    pub async fn remove(&self, path: &str) {
        let answer: Value =
            self.http.delete(format!("{}{path}", self.session)).send().await.unwrap().json().await.unwrap();
        assert!(answer["value"].get("error").is_none(), "{path}: {answer}");
    }

    pub async fn go(&self, url: &str) {
        self.command("/url", json!({ "url": url })).await;
    }

    pub async fn element(&self, css: &str) -> String {
        let found = self.command("/element", json!({ "using": "css selector", "value": css })).await;
        found[ELEMENT].as_str().unwrap_or_else(|| panic!("{css}: {found}")).to_owned()
    }

    pub async fn type_into(&self, css: &str, text: &str) {
        let element = self.element(css).await;
        self.command(&format!("/element/{element}/value"), json!({ "text": text })).await;
    }

    pub async fn click(&self, css: &str) {
        let element = self.element(css).await;
        self.command(&format!("/element/{element}/click"), json!({})).await;
    }

    pub async fn page_source(&self) -> String {
        let answer: Value =
            self.http.get(format!("{}/source", self.session)).send().await.unwrap().json().await.unwrap();
        answer["value"].as_str().unwrap_or_default().to_owned()
    }

    pub async fn quit(self) {
        let _ = self.http.delete(&self.session).send().await;
    }

    /// Runs `script` in the page with `args`; its returned value.
    pub async fn execute(&self, script: &str, args: Value) -> Value {
        self.command("/execute/sync", json!({ "script": script, "args": args })).await
    }

    /// Runs `script`, which calls its last argument with the result when done.
    pub async fn execute_async(&self, script: &str, args: Value) -> Value {
        self.command("/execute/async", json!({ "script": script, "args": args })).await
    }

    /// Clicks what submits a form (or follows a link) and returns once the next page has loaded:
    /// the page being left is marked, and the browser is asked until a document without the mark is
    /// complete. ChromeDriver holds each question while a navigation is under way, so this takes a
    /// few round trips; the bound is a guard against a page that never comes.
    pub async fn submit(&self, css: &str) {
        self.execute("window.castellanLeft = true", json!([])).await;
        self.click(css).await;
        self.arrive(css).await;
    }

    /// Runs `script`, which leaves the page (a form it submits), and returns once the next page
    /// has loaded, as [`Driver::submit`] does.
    pub async fn submit_by_script(&self, script: &str, args: Value) {
        self.execute("window.castellanLeft = true", json!([])).await;
        self.execute(script, args).await;
        self.arrive("a script").await;
    }

    async fn arrive(&self, css: &str) {
        let arrived = "return window.castellanLeft === undefined && document.readyState === 'complete'";
        for _ in 0..10_000 {
            if self.execute(arrived, json!([])).await == true {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("no page came after clicking {css}");
    }

    /// The text of `css` once it is no longer `old`, for what the page's own scripts write later:
    /// a MutationObserver waits in the page, within WebDriver's script timeout.
    pub async fn text_once_changed(&self, css: &str, old: &str) -> String {
        let wait = "const [css, old, done] = arguments; const element = document.querySelector(css); \
                    if (element.textContent !== old) { done(element.textContent); return; } \
                    new MutationObserver((_, observer) => { if (element.textContent !== old) { \
                    observer.disconnect(); done(element.textContent); } }) \
                    .observe(element, { childList: true, characterData: true, subtree: true });";
        let text = self.execute_async(wait, json!([css, old])).await;
        text.as_str().unwrap_or_default().to_owned()
    }

    /// The address the browser is at.
    pub async fn url(&self) -> String {
        let answer: Value = self.http.get(format!("{}/url", self.session)).send().await.unwrap().json().await.unwrap();
        answer["value"].as_str().unwrap_or_default().to_owned()
    }

    /// How many elements `css` finds.
    pub async fn count(&self, css: &str) -> usize {
        let found = self.command("/elements", json!({ "using": "css selector", "value": css })).await;
        found.as_array().map_or(0, Vec::len)
    }

    /// axe-core's violations on the current page whose impact is serious or critical, as
    /// `rule: targets` lines. axe-core is pinned in `tests/accessibility`.
    pub async fn serious_accessibility_violations(&self) -> Vec<String> {
        let axe = concat!(env!("CARGO_MANIFEST_DIR"), "/accessibility/node_modules/axe-core/axe.min.js");
        let source = std::fs::read_to_string(axe)
            .unwrap_or_else(|_| panic!("{axe} is missing: `npm ci --prefix tests/accessibility` (scripts/test does)"));
        self.execute(&source, json!([])).await;
        let run = "const done = arguments[arguments.length - 1]; \
                   axe.run(document, { resultTypes: ['violations'] }).then(r => done(r.violations), e => done(String(e)));";
        let violations = self.execute_async(run, json!([])).await;
        let violations = violations.as_array().unwrap_or_else(|| panic!("axe ran: {violations}"));
        violations
            .iter()
            .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
            .map(|v| {
                let targets: Vec<String> =
                    v["nodes"].as_array().into_iter().flatten().map(|n| n["target"].to_string()).collect();
                format!("{}: {}", v["id"].as_str().unwrap_or_default(), targets.join(", "))
            })
            .collect()
    }

    /// Saves a screenshot of the page as `path` (PNG).
    pub async fn screenshot(&self, path: &std::path::Path) {
        use base64::Engine as _;
        let answer: Value =
            self.http.get(format!("{}/screenshot", self.session)).send().await.unwrap().json().await.unwrap();
        let png = base64::engine::general_purpose::STANDARD.decode(answer["value"].as_str().unwrap_or_default());
        if let (Ok(png), Some(folder)) = (png, path.parent()) {
            let _ = std::fs::create_dir_all(folder);
            let _ = std::fs::write(path, png);
        }
    }

    /// Runs the browser steps of the test `test`; when one fails, the page as it was is left in
    /// `target/tmp/browser-tests/<test>/failure.png` before the failure goes on.
    pub async fn steps(&self, test: &str, steps: impl Future<Output = ()>) {
        use futures_util::FutureExt as _;
        if let Err(failure) = std::panic::AssertUnwindSafe(steps).catch_unwind().await {
            let path =
                std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-tests").join(test).join("failure.png");
            self.screenshot(&path).await;
            eprintln!("the page at the failure: {}", path.display());
            std::panic::resume_unwind(failure);
        }
    }
}
