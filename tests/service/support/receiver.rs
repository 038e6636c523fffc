//! A webhook receiver: HTTPS on loopback with a certificate from a test authority, recording every
//! request it gets and answering with a status the test chooses (and, serving a document, a JSON
//! body with its `Cache-Control`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

use crate::support::TestApp;
use crate::support::authority::certified;

/// The test certificate authority: its certificate in a PEM file the service is told to trust,
/// and a server certified by it for 127.0.0.1 and localhost (its configuration, and its
/// certificate and key in PEM files for servers that read files).
struct Authority {
    ca_file: PathBuf,
    server_files: (PathBuf, PathBuf),
    config: Arc<rustls::ServerConfig>,
}

fn authority() -> &'static Authority {
    static AUTHORITY: OnceLock<Authority> = OnceLock::new();
    AUTHORITY.get_or_init(|| {
        let certified = certified("Castellan test authority");
        let file = |what: &str, pem: &str| {
            // Under the build's own scratch folder, not the system's: each test process writes its
            // own, and `cargo clean` takes them away.
            let folder = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
            let path = folder.join(format!("castellan-test-{what}-{}.pem", std::process::id()));
            std::fs::write(&path, pem).unwrap();
            path
        };
        Authority {
            ca_file: file("authority", &certified.authority_pem),
            server_files: (file("server", &certified.server_pem), file("server-key", &certified.key_pem)),
            config: certified.config,
        }
    })
}

/// Serves `router` over HTTPS, certified by the test authority, to whatever `listener` accepts.
pub fn serve_tls(listener: tokio::net::TcpListener, router: Router) -> tokio::task::JoinHandle<()> {
    let acceptor = TlsAcceptor::from(server_config());
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, router) = (acceptor.clone(), router.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else { return };
                let service = TowerToHyperService::new(router);
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tls), service).await;
            });
        }
    })
}

/// The PEM files of the certified server's certificate and private key.
pub fn certified_files() -> (PathBuf, PathBuf) {
    authority().server_files.clone()
}

/// The TLS configuration of a server certified by the test authority for 127.0.0.1.
pub fn server_config() -> Arc<rustls::ServerConfig> {
    authority().config.clone()
}

/// The PEM file of the authority that certifies every receiver.
pub fn authority_file() -> PathBuf {
    authority().ca_file.clone()
}

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Delivery {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

#[derive(Clone, Default)]
struct Shared {
    seen: Arc<Mutex<Vec<Delivery>>>,
    status: Arc<AtomicU16>,
    /// The JSON body answered, and its `Cache-Control`.
    document: Arc<Mutex<Option<(serde_json::Value, String)>>>,
    /// Whether answers go out; while false, each request is recorded and its answer waits.
    open: Arc<tokio::sync::watch::Sender<bool>>,
    /// How many requests arrived.
    arrived: Arc<tokio::sync::watch::Sender<usize>>,
}

pub struct Receiver {
    /// `https://127.0.0.1:<port>/hooks`
    pub url: String,
    shared: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    /// Starts a receiver answering 200.
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Shared::default();
        shared.status.store(200, Ordering::SeqCst);
        shared.open.send_replace(true);
        let task = serve_tls(listener, Router::new().fallback(record).with_state(shared.clone()));
        Self { url: format!("https://127.0.0.1:{port}/hooks"), shared, task }
    }

    /// Answers every later request with `status`.
    pub fn answer_with(&self, status: u16) {
        self.shared.status.store(status, Ordering::SeqCst);
    }

    /// Answers every later request with `document` as JSON and this `Cache-Control`.
    pub fn serve(&self, document: serde_json::Value, cache_control: &str) {
        *self.shared.document.lock().unwrap() = Some((document, cache_control.to_owned()));
    }

    /// Holds every later answer back until [`Receiver::release`]: requests are recorded as they
    /// arrive, and their senders wait.
    pub fn hold(&self) {
        self.shared.open.send_replace(false);
    }

    /// Lets the held answers, and every later one, go out.
    pub fn release(&self) {
        self.shared.open.send_replace(true);
    }

    /// Returns once `count` requests in all have arrived.
    pub async fn arrivals(&self, count: usize) {
        let mut arrived = self.shared.arrived.subscribe();
        arrived.wait_for(|arrived| *arrived >= count).await.unwrap();
    }

    pub fn received(&self) -> Vec<Delivery> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// Runs the service's deliveries due now, then returns every request received, which must be
    /// at least `count`.
    pub async fn delivered(&self, app: &TestApp, count: usize) -> Vec<Delivery> {
        app.settle().await;
        let seen = self.received();
        assert!(seen.len() >= count, "expected {count} deliveries, got {}", seen.len());
        seen
    }
}

async fn record(State(shared): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    shared.seen.lock().unwrap().push(Delivery { headers, body });
    shared.arrived.send_modify(|arrived| *arrived += 1);
    let mut open = shared.open.subscribe();
    let _ = open.wait_for(|open| *open).await;
    let status = StatusCode::from_u16(shared.status.load(Ordering::SeqCst)).unwrap();
    match shared.document.lock().unwrap().clone() {
        Some((document, cache_control)) => {
            (status, [(header::CACHE_CONTROL, cache_control)], Json(document)).into_response()
        }
        None => status.into_response(),
    }
}
