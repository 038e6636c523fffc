//! Configuration: built-in defaults, then an optional `castellan.toml`, then `CASTELLAN_*`
//! environment variables, then command-line flags. Each layer overrides the one before.

mod overrides;

pub use overrides::Overrides;

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use ipnet::IpNet;
use serde::Deserialize;

/// The file read when `--config` is not given and it exists in the working directory.
pub const DEFAULT_CONFIG_FILE: &str = "castellan.toml";

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Address the HTTP server listens on.
    pub listen: SocketAddr,
    /// `postgres://…` selects PostgreSQL; `sqlite:…` or a plain path selects a SQLite file.
    pub database_url: String,
    /// Largest number of pooled database connections.
    pub database_max_connections: u32,
    /// Apply the database's pending migrations when the service starts. Off (`serve
    /// --no-migrate`), the service refuses to start on a schema older or newer than it knows,
    /// saying which command to run: hosts sharing one database are upgraded with one `castellan
    /// migrate`.
    pub migrate_on_start: bool,
    /// Expose `/_dev/clock` and let time move only when told. Never for production.
    pub manual_clock: bool,
    /// Peers whose `X-Forwarded-For` is believed (CIDR or single addresses).
    #[serde(deserialize_with = "deserialize_networks")]
    pub trusted_proxies: Vec<IpNet>,
    /// Where the first start writes the bootstrap API key (mode 0600), besides stdout.
    pub bootstrap_key_file: Option<PathBuf>,
    /// 32-byte key (hex) that keys the hashes of API keys and client secrets. Created on first
    /// start when missing; every host of one deployment must share it.
    pub secret_key_file: PathBuf,
    /// `text` or `json`.
    pub log_format: LogFormat,
    /// Base address of an OpenTelemetry collector (`http://collector:4318`) to export traces to
    /// over OTLP/HTTP. None by default: no traces are exported.
    pub otlp_endpoint: Option<String>,
    /// Largest accepted request body; larger ones get 413.
    pub max_body_bytes: usize,
    /// Days the access log keeps its rows.
    pub access_log_retention_days: u32,
    /// Seconds a host keeps serving after SIGTERM while `/readyz` already answers 503, so that a
    /// load balancer stops sending it requests before it stops accepting them.
    pub drain_seconds: u32,
    /// Seconds a request's head (its line and headers) may take to arrive from its first byte,
    /// and a new connection's first request from connecting; a slower client is cut off.
    pub header_read_timeout_seconds: u32,
    /// Seconds a kept-alive connection waits for the next request after an answer, then closes.
    pub idle_timeout_seconds: u32,
    /// Connections open at once; past it the service accepts no more until one closes. Keep it
    /// well under the process's open-file limit (`ulimit -n`).
    pub max_connections: u32,
    /// The admin API's limits, per minute: requests of one caller, requests of one caller to the
    /// sensitive endpoints, and failed authentications from one source address.
    pub admin_rate_limits: AdminRateLimits,
    /// The service's public address, the base of every issuer (`{public_url}/realms/{realm}`).
    /// Default: `http://` and the listen address.
    pub public_url: Option<String>,
    /// A label for where the deployment runs (`eu-west-1`, `frankfurt`), shown to accounts by
    /// `/api/v1/dedicated/instance`. None by default.
    pub region: Option<String>,
    /// Lifetime of access and ID tokens, in seconds.
    pub access_token_seconds: u32,
    /// Lifetime of a refresh token, in seconds; each exchange issues a new one.
    pub refresh_token_seconds: u32,
    /// Longest life of a sign-in session, in seconds; its refresh tokens never outlive it.
    pub session_seconds: u32,
    /// A list of breached passwords, one a line, loaded at start (Debian's `john-data` package
    /// installs Openwall's list at the default path).
    pub breached_passwords_file: Option<PathBuf>,
    /// Address of a range API compatible with Have I Been Pwned's, ending where the five-digit
    /// hash prefix goes (`https://api.pwnedpasswords.com/range/`). None by default.
    pub breached_passwords_api: Option<String>,
    /// A payload builder component (`wasm32-wasip2`, world `payloads`) used instead of the one the
    /// service embeds.
    pub payloads_component: Option<PathBuf>,
    /// Networks webhooks may reach besides public addresses. For development and tests only: in
    /// production webhooks must never reach inside.
    #[serde(deserialize_with = "deserialize_networks")]
    pub webhook_allowed_networks: Vec<IpNet>,
    /// PEM certificates webhook deliveries trust besides the public roots (a receiver behind a
    /// private certificate authority, a test receiver).
    pub webhook_ca_file: Option<PathBuf>,
    /// The SMTP server e-mail goes through: `smtp://host:port` (plain, for a relay on the same
    /// host), `smtp://host:587?tls=required` (STARTTLS) or `smtps://user:password@host:465`.
    /// Without it the service sends no e-mail, and what needs one (invitations) is refused.
    pub smtp_url: Option<String>,
    /// The `From` address of the service's e-mail.
    pub mail_from: String,
    /// Where notices that must not be lost (attack protection's) are written as `.eml` files when
    /// no SMTP server is configured.
    pub mail_outbox: PathBuf,
    /// A detector component (`wasm32-wasip2`, world `detector`) used instead of the one the service
    /// embeds.
    pub detector_component: Option<PathBuf>,
    /// Datacenter networks, in CIDR notation one a line: sources in them get half the thresholds.
    pub datacenter_networks_file: Option<PathBuf>,
    /// Tor exit addresses or networks, one a line: sources in them get half the thresholds.
    pub tor_exits_file: Option<PathBuf>,
    /// Where sign-in requests for phones are posted (JSON with the phone's `push_token`), for the
    /// gateway of the phones' platform; without it phones find their requests by asking.
    pub push_gateway_url: Option<String>,
    /// A MaxMind-format country database (GeoLite2-Country layout): the countries of blocked sources.
    pub country_database_file: Option<PathBuf>,
    /// A MaxMind-format network database (GeoLite2-ASN layout): the networks of blocked sources.
    pub network_database_file: Option<PathBuf>,
    /// `redis://host:port/db`: attack protection counts in Redis, together with every host using
    /// it. Without it each host counts in its own memory.
    pub redis_url: Option<String>,
    /// The incident analyst: its component, the plans that include it, the language model.
    pub analyst: AnalystSettings,
}

/// The incident analyst (the `[analyst]` table of the configuration file).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnalystSettings {
    /// Another component of the `analyst` world to run instead of the embedded one.
    pub component: Option<PathBuf>,
    /// The accounts whose plan includes the AI advisor, by id; `"*"` (the default) for every
    /// account. Each realm still decides whether the advisor reads it.
    pub plan_accounts: Vec<String>,
    /// An OpenAI-compatible chat-completions address (`…/v1/chat/completions`); without it the
    /// component reads alone.
    pub model_url: Option<String>,
    /// The model asked.
    pub model: String,
    /// The bearer key sent to the address (or `CASTELLAN_ANALYST_MODEL_KEY`).
    pub model_key: Option<String>,
    /// The longest the model may take to answer, after which the component reads.
    pub model_timeout_seconds: u64,
}

impl Default for AnalystSettings {
    fn default() -> Self {
        Self {
            component: None,
            plan_accounts: vec!["*".to_owned()],
            model_url: None,
            model: "gpt-4o-mini".to_owned(),
            model_key: None,
            model_timeout_seconds: 30,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            database_url: "sqlite://data/castellan.db".to_owned(),
            database_max_connections: 16,
            migrate_on_start: true,
            manual_clock: false,
            trusted_proxies: Vec::new(),
            bootstrap_key_file: None,
            secret_key_file: PathBuf::from("data/secret.key"),
            log_format: LogFormat::Text,
            max_body_bytes: 1024 * 1024,
            access_log_retention_days: 90,
            drain_seconds: 0,
            header_read_timeout_seconds: 10,
            idle_timeout_seconds: 60,
            max_connections: 1024,
            admin_rate_limits: AdminRateLimits::default(),
            public_url: None,
            region: None,
            access_token_seconds: 300,
            refresh_token_seconds: 1800,
            session_seconds: 36_000,
            breached_passwords_file: Some(PathBuf::from("/usr/share/john/password.lst")),
            breached_passwords_api: None,
            payloads_component: None,
            otlp_endpoint: None,
            webhook_allowed_networks: Vec::new(),
            webhook_ca_file: None,
            smtp_url: None,
            mail_from: "Castellan <no-reply@localhost>".to_owned(),
            mail_outbox: PathBuf::from("data/outbox"),
            detector_component: None,
            datacenter_networks_file: None,
            tor_exits_file: None,
            country_database_file: None,
            push_gateway_url: None,
            network_database_file: None,
            redis_url: None,
            analyst: AnalystSettings::default(),
        }
    }
}

/// Per-minute limits of the admin API (the `[admin_rate_limits]` table of the configuration file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdminRateLimits {
    /// Requests of one caller to most endpoints.
    pub requests: u32,
    /// Requests of one caller to the sensitive endpoints (API secrets, imports, impersonation).
    pub sensitive_requests: u32,
    /// Requests from one source address (an IPv6 /64) whose credentials were refused.
    pub failed_authentications: u32,
    /// Client registrations (RFC 7591) asked from one source address, allowed or not.
    pub client_registrations: u32,
    /// Unknown or expired user codes (RFC 8628) typed from one source address.
    pub wrong_user_codes: u32,
    /// Device authorizations (RFC 8628) asked from one source address.
    pub device_authorizations: u32,
    /// Self sign-ups asked from one source address.
    pub sign_ups: u32,
}

impl Default for AdminRateLimits {
    fn default() -> Self {
        Self {
            requests: 300,
            sensitive_requests: 50,
            failed_authentications: 30,
            client_registrations: 10,
            wrong_user_codes: 10,
            device_authorizations: 30,
            sign_ups: 5,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read configuration file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("invalid configuration file {path}: {source}")]
    Parse { path: PathBuf, source: toml::de::Error },
    #[error("invalid setting {name}: {reason}")]
    Invalid { name: &'static str, reason: String },
}

impl Settings {
    /// Layers the configuration file and the overrides (flags, then environment) over the defaults.
    pub fn load(overrides: &Overrides) -> Result<Self, ConfigError> {
        let explicit = overrides.config.as_deref();
        let path = explicit.unwrap_or_else(|| Path::new(DEFAULT_CONFIG_FILE));
        let mut settings = match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str(&text).map_err(|source| ConfigError::Parse { path: path.to_owned(), source })?,
            Err(error) if explicit.is_none() && error.kind() == std::io::ErrorKind::NotFound => Settings::default(),
            Err(source) => {
                return Err(ConfigError::Read { path: path.to_owned(), source });
            }
        };
        settings.apply(overrides);
        settings.check()?;
        Ok(settings)
    }

    fn check(&self) -> Result<(), ConfigError> {
        if self.database_max_connections == 0 {
            return Err(ConfigError::Invalid { name: "database_max_connections", reason: "must be at least 1".into() });
        }
        for (name, value) in [
            ("header_read_timeout_seconds", self.header_read_timeout_seconds),
            ("idle_timeout_seconds", self.idle_timeout_seconds),
            ("max_connections", self.max_connections),
        ] {
            if value == 0 {
                return Err(ConfigError::Invalid { name, reason: "must be at least 1".into() });
            }
        }
        if self.max_body_bytes < 1024 {
            return Err(ConfigError::Invalid { name: "max_body_bytes", reason: "must be at least 1024".into() });
        }
        let limits = self.admin_rate_limits;
        let every = [
            limits.requests,
            limits.sensitive_requests,
            limits.failed_authentications,
            limits.client_registrations,
            limits.wrong_user_codes,
            limits.device_authorizations,
            limits.sign_ups,
        ];
        if every.contains(&0) {
            return Err(ConfigError::Invalid {
                name: "admin_rate_limits",
                reason: "each limit must be at least 1".into(),
            });
        }
        // The model key travels in the request: plain http only where it stays on this machine.
        if let Some(address) = &self.analyst.model_url
            && !url::Url::parse(address).is_ok_and(|u| {
                u.host_str().is_some()
                    && (u.scheme() == "https" || (u.scheme() == "http" && crate::kernel::addresses::is_loopback(&u)))
            })
        {
            return Err(ConfigError::Invalid {
                name: "analyst.model_url",
                reason: "must be an https address (http only on a loopback host: the model key is sent with it)".into(),
            });
        }
        if !(1..=300).contains(&self.analyst.model_timeout_seconds) || self.analyst.model.trim().is_empty() {
            return Err(ConfigError::Invalid {
                name: "analyst",
                reason: "model must be named and model_timeout_seconds be within 1–300".into(),
            });
        }
        if self.access_log_retention_days == 0 {
            return Err(ConfigError::Invalid {
                name: "access_log_retention_days",
                reason: "must be at least 1".into(),
            });
        }
        if let Some(url) = &self.public_url {
            let parsed =
                url::Url::parse(url).map_err(|e| ConfigError::Invalid { name: "public_url", reason: e.to_string() })?;
            if !matches!(parsed.scheme(), "http" | "https") || parsed.query().is_some() || parsed.fragment().is_some() {
                return Err(ConfigError::Invalid {
                    name: "public_url",
                    reason: "must be an http(s) address without query or fragment".into(),
                });
            }
        }
        if let Some(region) = &self.region
            && (region.is_empty() || region.len() > 64 || region.chars().any(char::is_control))
        {
            return Err(ConfigError::Invalid {
                name: "region",
                reason: "must be 1–64 characters, none a control character".into(),
            });
        }
        if let Some(api) = &self.breached_passwords_api
            && !url::Url::parse(api).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
        {
            return Err(ConfigError::Invalid {
                name: "breached_passwords_api",
                reason: "must be an http(s) address".into(),
            });
        }
        if let Some(smtp) = &self.smtp_url
            && !url::Url::parse(smtp).is_ok_and(|u| matches!(u.scheme(), "smtp" | "smtps") && u.host().is_some())
        {
            return Err(ConfigError::Invalid {
                name: "smtp_url",
                reason: "must be an smtp:// or smtps:// address".into(),
            });
        }
        if self.mail_from.parse::<lettre::message::Mailbox>().is_err() {
            return Err(ConfigError::Invalid { name: "mail_from", reason: "must be an e-mail address".into() });
        }
        for (name, seconds) in [
            ("access_token_seconds", self.access_token_seconds),
            ("refresh_token_seconds", self.refresh_token_seconds),
            ("session_seconds", self.session_seconds),
        ] {
            if seconds < 10 {
                return Err(ConfigError::Invalid { name, reason: "must be at least 10 seconds".into() });
            }
        }
        Ok(())
    }
}

/// A network in CIDR form, or a single address meaning just that host.
pub fn parse_network(text: &str) -> Result<IpNet, String> {
    let text = text.trim();
    IpNet::from_str(text)
        .or_else(|_| IpAddr::from_str(text).map(IpNet::from))
        .map_err(|_| format!("`{text}` is neither a CIDR network nor an IP address"))
}

fn deserialize_networks<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<IpNet>, D::Error> {
    let texts = Vec::<String>::deserialize(d)?;
    texts.iter().map(|t| parse_network(t).map_err(serde::de::Error::custom)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_file_and_the_file_overrides_defaults() {
        let dir = std::env::temp_dir().join(format!("castellan-config-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(
            &file,
            "listen = \"127.0.0.1:9000\"\nmax_body_bytes = 4096\ntrusted_proxies = [\"10.0.0.0/8\", \"127.0.0.1\"]\n",
        )
        .unwrap();
        let overrides = Overrides { config: Some(file), max_body_bytes: Some(8192), ..Overrides::default() };
        let settings = Settings::load(&overrides).unwrap();
        assert_eq!(settings.listen, "127.0.0.1:9000".parse().unwrap());
        assert_eq!(settings.max_body_bytes, 8192);
        assert_eq!(settings.trusted_proxies.len(), 2);
        assert_eq!(settings.database_url, Settings::default().database_url);
    }

    #[test]
    fn an_unknown_setting_is_refused() {
        let error = toml::from_str::<Settings>("listn = \"x\"").unwrap_err();
        assert!(error.to_string().contains("listn"));
    }

    #[test]
    fn the_model_address_is_https_or_plain_http_on_this_machine_only() {
        let with = |address: &str| {
            let mut settings = Settings::default();
            settings.analyst.model_url = Some(address.to_owned());
            settings.check()
        };
        for good in [
            "https://models.example/v1/chat/completions",
            "http://127.0.0.1:8000/v1/chat/completions",
            "http://localhost:11434/v1/chat/completions",
            "http://[::1]:8000/v1/chat/completions",
        ] {
            assert!(with(good).is_ok(), "{good}");
        }
        // The bearer key would cross the network in clear.
        for bad in
            ["http://models.example/v1/chat/completions", "http://10.0.0.5/v1", "ftp://models.example/", "models"]
        {
            let refused = with(bad).unwrap_err().to_string();
            assert!(refused.contains("analyst.model_url") && refused.contains("https"), "{bad}: {refused}");
        }
    }

    #[test]
    fn a_missing_explicit_file_is_an_error() {
        let overrides =
            Overrides { config: Some(PathBuf::from("/nonexistent/castellan.toml")), ..Overrides::default() };
        assert!(matches!(Settings::load(&overrides), Err(ConfigError::Read { .. })));
    }
}
