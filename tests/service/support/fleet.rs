//! The service as a deployment runs it: hosts in processes of their own on one database (and one
//! Redis), stopped with SIGTERM or SIGKILL, behind HAProxy configured by `deploy/haproxy.cfg`.
//!
//! A host process is this test binary started again with only [`host_process`] selected and its
//! settings in the environment; it says on its standard output when it listens. HAProxy starts as
//! a daemon (its command returns once it listens) and logs its health checks to a UDP socket of
//! the test, so every wait here is for something that happened, never for time to pass.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use castellan::Application;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::net::UdpSocket;
use tokio::process::{Child, Command};

use crate::support::receiver::authority_file;
use crate::support::{TestDatabase, policies};

/// The environment that makes [`host_process`] run the service.
const HOST_DATABASE: &str = "CASTELLAN_TEST_HOST_DATABASE";
const HOST_DIR: &str = "CASTELLAN_TEST_HOST_DIR";
const HOST_LISTEN: &str = "CASTELLAN_TEST_HOST_LISTEN";
const HOST_REDIS: &str = "CASTELLAN_TEST_HOST_REDIS";
const HOST_PUBLIC_URL: &str = "CASTELLAN_TEST_HOST_PUBLIC_URL";
const HOST_DRAIN_SECONDS: &str = "CASTELLAN_TEST_HOST_DRAIN_SECONDS";
/// The parent's test authority, which certifies its receivers.
const HOST_AUTHORITY: &str = "CASTELLAN_TEST_HOST_AUTHORITY";
/// Where the first host leaves the bootstrap API key of a fresh database.
const KEY_FILE: &str = "bootstrap-api-key";
/// The line a host process prints once it listens.
const LISTENING: &str = "castellan test host listening";
/// How long a host may take to start or to stop.
const PATIENCE: Duration = Duration::from_secs(60);

/// A host of the service in a process of its own (see the module's comment). Without its
/// environment (in an ordinary run of the ignored tests) it does nothing.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "run by the deployment tests as a host process"]
async fn host_process() {
    let Ok(url) = std::env::var(HOST_DATABASE) else { return };
    let dir = PathBuf::from(std::env::var(HOST_DIR).unwrap());
    let db = TestDatabase::beside(url, dir.clone());
    let mut settings = db.settings();
    settings.listen = std::env::var(HOST_LISTEN).unwrap().parse().unwrap();
    settings.webhook_allowed_networks = vec!["127.0.0.0/8".parse().unwrap()];
    settings.webhook_ca_file = Some(std::env::var(HOST_AUTHORITY).unwrap().into());
    settings.redis_url = std::env::var(HOST_REDIS).ok();
    settings.public_url = std::env::var(HOST_PUBLIC_URL).ok();
    settings.drain_seconds = std::env::var(HOST_DRAIN_SECONDS).map_or(0, |seconds| seconds.parse().unwrap());
    let app = Application::build(settings, &policies()).await.unwrap();
    if let Some(first) = app.bootstrapped() {
        let written = dir.join(format!("{KEY_FILE}.new"));
        std::fs::write(&written, &first.api_key).unwrap();
        std::fs::rename(written, dir.join(KEY_FILE)).unwrap();
    }
    println!("{LISTENING}");
    app.run_until_stopped(castellan::runtime::shutdown::signal()).await.unwrap();
}

/// What a host process runs with besides its database.
#[derive(Debug, Clone, Default)]
pub struct HostSettings {
    pub redis_url: Option<String>,
    pub public_url: Option<String>,
    pub drain_seconds: u32,
}

/// A host process on a fixed loopback port.
pub struct Host {
    process: Child,
    pub base: String,
}

impl Host {
    /// Starts a host on `port` and returns once it listens.
    pub async fn start(db: &TestDatabase, port: u16, settings: &HostSettings) -> Self {
        let log = std::fs::File::create(db.dir.join(format!("host-{port}.log"))).unwrap();
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", &own_test("host_process"), "--ignored", "--nocapture"])
            .env(HOST_DATABASE, &db.url)
            .env(HOST_DIR, &db.dir)
            .env(HOST_LISTEN, format!("127.0.0.1:{port}"))
            .env(HOST_AUTHORITY, authority_file())
            .env(HOST_DRAIN_SECONDS, settings.drain_seconds.to_string())
            .stdout(Stdio::piped())
            .stderr(log)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        for (name, value) in [(HOST_REDIS, &settings.redis_url), (HOST_PUBLIC_URL, &settings.public_url)] {
            if let Some(value) = value {
                command.env(name, value);
            }
        }
        let mut process = command.spawn().unwrap();
        let mut lines = BufReader::new(process.stdout.take().unwrap()).lines();
        let listening = tokio::time::timeout(PATIENCE, async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if line == LISTENING {
                    return true;
                }
            }
            false
        })
        .await;
        assert!(matches!(listening, Ok(true)), "the host on port {port} never listened: see {}", db.dir.display());
        // The rest of what it prints (the test harness's summary) is read and dropped.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Self { process, base: format!("http://127.0.0.1:{port}") }
    }

    /// SIGTERM, then waits for the host to drain, finish what it serves and exit cleanly.
    pub async fn terminate(mut self) {
        let pid = self.process.id().expect("a running host").to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().await.unwrap();
        assert!(sent.success());
        let exited = tokio::time::timeout(PATIENCE, self.process.wait()).await.expect("the host stops").unwrap();
        assert!(exited.success(), "the host stopped cleanly: {exited}");
    }

    /// SIGKILL: no shutdown, no flushing, whatever was in flight is lost with the process.
    pub async fn kill(mut self) {
        self.process.kill().await.unwrap();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The bootstrap API key the first host of a fresh database left in its folder.
pub fn bootstrap_key(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(KEY_FILE)).unwrap()
}

/// HAProxy in front of the hosts, as `deploy/haproxy.cfg` configures it with the addresses of
/// this test.
pub struct Balancer {
    pid: String,
    pub base: String,
    /// HAProxy's log: each health check that changes a host's state.
    log: UdpSocket,
}

impl Balancer {
    /// Starts HAProxy on `port` in front of the hosts on `hosts` (`host1`, `host2`, … in order)
    /// and returns once it listens.
    pub async fn start(dir: &Path, port: u16, hosts: &[u16]) -> Self {
        let log = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let shipped = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/haproxy.cfg")).unwrap();
        let mut configuration = shipped
            .replace("127.0.0.1:514", &log.local_addr().unwrap().to_string())
            .replace("127.0.0.1:8080", &format!("127.0.0.1:{port}"));
        for (n, host) in hosts.iter().enumerate() {
            let shipped_address = format!("127.0.0.1:{}", 8081 + n);
            assert!(configuration.contains(&shipped_address), "deploy/haproxy.cfg has a host {}", n + 1);
            configuration = configuration.replace(&shipped_address, &format!("127.0.0.1:{host}"));
        }
        let (file, pid_file) = (dir.join("haproxy.cfg"), dir.join("haproxy.pid"));
        std::fs::write(&file, configuration).unwrap();
        // As a daemon, HAProxy's command returns once its listeners are bound.
        let started = Command::new("haproxy").arg("-D").arg("-p").arg(&pid_file).arg("-f").arg(&file).output().await;
        let started = started.expect("HAProxy is installed (scripts/test installs Debian's haproxy)");
        assert!(
            started.status.success(),
            "HAProxy refused its configuration: {}",
            String::from_utf8_lossy(&started.stderr)
        );
        let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_owned();
        Self { pid, base: format!("http://127.0.0.1:{port}"), log }
    }

    /// Returns once HAProxy logs that its health checks found `host` (`host1`, …) `UP` or `DOWN`.
    pub async fn until(&self, host: &str, state: &str) {
        let wanted = format!("Server hosts/{host} is {state}");
        let mut datagram = vec![0; 4096];
        let seen = tokio::time::timeout(PATIENCE, async {
            loop {
                let length = self.log.recv(&mut datagram).await.unwrap();
                if String::from_utf8_lossy(&datagram[..length]).contains(&wanted) {
                    return;
                }
            }
        })
        .await;
        assert!(seen.is_ok(), "HAProxy never logged: {wanted}");
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").args(["-KILL", &self.pid]).status();
    }
}

/// The path the test binary knows a test of this module by (its module path without the binary's
/// name), so that a move of the module moves the name with it.
fn own_test(name: &str) -> String {
    let module = module_path!().split_once("::").map_or(module_path!(), |(_, path)| path);
    format!("{module}::{name}")
}
