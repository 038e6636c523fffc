//! The command line's and the environment's layer of the configuration: `castellan serve` and
//! `castellan migrate` flags, each also read from its `CASTELLAN_*` variable, laid over the file.

use std::net::SocketAddr;
use std::path::PathBuf;

use ipnet::IpNet;

use super::{LogFormat, Settings, parse_network};

/// The flags of `castellan serve` and `castellan migrate`; each also reads its `CASTELLAN_*` variable.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Overrides {
    /// Configuration file (default: ./castellan.toml when it exists).
    #[arg(long, env = "CASTELLAN_CONFIG")]
    pub config: Option<PathBuf>,
    /// Listen address [default: 127.0.0.1:8080].
    #[arg(long, env = "CASTELLAN_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// Database URL [default: sqlite://data/castellan.db].
    #[arg(long, env = "CASTELLAN_DATABASE_URL")]
    pub database_url: Option<String>,
    /// Largest number of pooled database connections [default: 16].
    #[arg(long, env = "CASTELLAN_DATABASE_MAX_CONNECTIONS")]
    pub database_max_connections: Option<u32>,
    /// Start only on the schema this release knows, without migrating (`castellan migrate` does).
    #[arg(long, env = "CASTELLAN_NO_MIGRATE", num_args = 0..=1, default_missing_value = "true")]
    pub no_migrate: Option<bool>,
    /// Let time move only through POST /_dev/clock (development and tests only).
    #[arg(long, env = "CASTELLAN_MANUAL_CLOCK", num_args = 0..=1, default_missing_value = "true")]
    pub manual_clock: Option<bool>,
    /// Trusted proxies, comma separated CIDRs or addresses.
    #[arg(long, env = "CASTELLAN_TRUSTED_PROXIES", value_delimiter = ',', value_parser = parse_network)]
    pub trusted_proxies: Option<Vec<IpNet>>,
    /// File the bootstrap API key is written to on first start (mode 0600).
    #[arg(long, env = "CASTELLAN_BOOTSTRAP_KEY_FILE")]
    pub bootstrap_key_file: Option<PathBuf>,
    /// File holding the secret hashing key [default: data/secret.key].
    #[arg(long, env = "CASTELLAN_SECRET_KEY_FILE")]
    pub secret_key_file: Option<PathBuf>,
    /// Log format [default: text].
    #[arg(long, env = "CASTELLAN_LOG_FORMAT", value_enum)]
    pub log_format: Option<LogFormat>,
    /// Largest request body in bytes [default: 1048576].
    #[arg(long, env = "CASTELLAN_MAX_BODY_BYTES")]
    pub max_body_bytes: Option<usize>,
    /// Days the access log keeps its rows [default: 90].
    #[arg(long, env = "CASTELLAN_ACCESS_LOG_RETENTION_DAYS")]
    pub access_log_retention_days: Option<u32>,
    /// Seconds to keep serving after SIGTERM with /readyz answering 503 [default: 0].
    #[arg(long, env = "CASTELLAN_DRAIN_SECONDS")]
    pub drain_seconds: Option<u32>,
    /// Seconds a request's head may take to arrive [default: 10].
    #[arg(long, env = "CASTELLAN_HEADER_READ_TIMEOUT_SECONDS")]
    pub header_read_timeout_seconds: Option<u32>,
    /// Seconds a kept-alive connection waits for the next request [default: 60].
    #[arg(long, env = "CASTELLAN_IDLE_TIMEOUT_SECONDS")]
    pub idle_timeout_seconds: Option<u32>,
    /// Connections open at once [default: 1024].
    #[arg(long, env = "CASTELLAN_MAX_CONNECTIONS")]
    pub max_connections: Option<u32>,
    /// Public address of the service, base of the issuers [default: http://<listen>].
    #[arg(long, env = "CASTELLAN_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// A label for where the deployment runs, shown by /api/v1/dedicated/instance [default: none].
    #[arg(long, env = "CASTELLAN_REGION")]
    pub region: Option<String>,
    /// Access and ID token lifetime in seconds [default: 300].
    #[arg(long, env = "CASTELLAN_ACCESS_TOKEN_SECONDS")]
    pub access_token_seconds: Option<u32>,
    /// Refresh token lifetime in seconds [default: 1800].
    #[arg(long, env = "CASTELLAN_REFRESH_TOKEN_SECONDS")]
    pub refresh_token_seconds: Option<u32>,
    /// Longest session life in seconds [default: 36000].
    #[arg(long, env = "CASTELLAN_SESSION_SECONDS")]
    pub session_seconds: Option<u32>,
    /// Breached-password list file [default: /usr/share/john/password.lst].
    #[arg(long, env = "CASTELLAN_BREACHED_PASSWORDS_FILE")]
    pub breached_passwords_file: Option<PathBuf>,
    /// HIBP-compatible range API address, e.g. https://api.pwnedpasswords.com/range/.
    #[arg(long, env = "CASTELLAN_BREACHED_PASSWORDS_API")]
    pub breached_passwords_api: Option<String>,
    /// Payload builder component file [default: the embedded one].
    #[arg(long, env = "CASTELLAN_PAYLOADS_COMPONENT")]
    pub payloads_component: Option<PathBuf>,
    /// OpenTelemetry collector to export traces to over OTLP/HTTP, e.g. http://collector:4318 [default: none].
    #[arg(long, env = "CASTELLAN_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,
    /// Networks webhooks may reach besides public addresses, comma separated (development and tests only).
    #[arg(long, env = "CASTELLAN_WEBHOOK_ALLOWED_NETWORKS", value_delimiter = ',', value_parser = parse_network)]
    pub webhook_allowed_networks: Option<Vec<IpNet>>,
    /// PEM certificates webhook deliveries trust besides the public roots.
    #[arg(long, env = "CASTELLAN_WEBHOOK_CA_FILE")]
    pub webhook_ca_file: Option<PathBuf>,
    /// SMTP server for the service's e-mail: smtp://host:port, smtp://host:587?tls=required or smtps://user:pass@host.
    #[arg(long, env = "CASTELLAN_SMTP_URL")]
    pub smtp_url: Option<String>,
    /// From address of the service's e-mail [default: Castellan <no-reply@localhost>].
    #[arg(long, env = "CASTELLAN_MAIL_FROM")]
    pub mail_from: Option<String>,
    /// Redis for attack protection's counters, shared by every host: redis://host:port/db [default: in memory].
    #[arg(long, env = "CASTELLAN_REDIS_URL")]
    pub redis_url: Option<String>,
    /// Folder for e-mail that must not be lost when no SMTP server is configured [default: data/outbox].
    #[arg(long, env = "CASTELLAN_MAIL_OUTBOX")]
    pub mail_outbox: Option<PathBuf>,
    /// Attack detector component file [default: the embedded one].
    #[arg(long, env = "CASTELLAN_DETECTOR_COMPONENT")]
    pub detector_component: Option<PathBuf>,
    /// Datacenter networks (CIDR, one a line): their sources get half the attack thresholds.
    #[arg(long, env = "CASTELLAN_DATACENTER_NETWORKS_FILE")]
    pub datacenter_networks_file: Option<PathBuf>,
    /// Tor exits (addresses or CIDR, one a line): their sources get half the attack thresholds.
    #[arg(long, env = "CASTELLAN_TOR_EXITS_FILE")]
    pub tor_exits_file: Option<PathBuf>,
    /// Push gateway address sign-in requests for phones are posted to (JSON) [default: none].
    #[arg(long, env = "CASTELLAN_PUSH_GATEWAY_URL")]
    pub push_gateway_url: Option<String>,
    /// MaxMind-format country database (GeoLite2-Country layout) for the countries of blocked sources.
    #[arg(long, env = "CASTELLAN_COUNTRY_DATABASE_FILE")]
    pub country_database_file: Option<PathBuf>,
    /// MaxMind-format network database (GeoLite2-ASN layout) for the networks of blocked sources.
    #[arg(long, env = "CASTELLAN_NETWORK_DATABASE_FILE")]
    pub network_database_file: Option<PathBuf>,
    /// The key of the incident analyst's language model.
    #[arg(long, env = "CASTELLAN_ANALYST_MODEL_KEY", hide_env_values = true)]
    pub analyst_model_key: Option<String>,
}

impl Settings {
    /// Lays the overrides given over the settings.
    pub(super) fn apply(&mut self, o: &Overrides) {
        fn set<T: Clone>(target: &mut T, value: &Option<T>) {
            if let Some(value) = value {
                *target = value.clone();
            }
        }
        set(&mut self.listen, &o.listen);
        set(&mut self.database_url, &o.database_url);
        set(&mut self.database_max_connections, &o.database_max_connections);
        if let Some(no_migrate) = o.no_migrate {
            self.migrate_on_start = !no_migrate;
        }
        set(&mut self.manual_clock, &o.manual_clock);
        set(&mut self.trusted_proxies, &o.trusted_proxies);
        if o.bootstrap_key_file.is_some() {
            self.bootstrap_key_file.clone_from(&o.bootstrap_key_file);
        }
        set(&mut self.secret_key_file, &o.secret_key_file);
        set(&mut self.log_format, &o.log_format);
        set(&mut self.max_body_bytes, &o.max_body_bytes);
        set(&mut self.access_log_retention_days, &o.access_log_retention_days);
        set(&mut self.drain_seconds, &o.drain_seconds);
        set(&mut self.header_read_timeout_seconds, &o.header_read_timeout_seconds);
        set(&mut self.idle_timeout_seconds, &o.idle_timeout_seconds);
        set(&mut self.max_connections, &o.max_connections);
        if o.public_url.is_some() {
            self.public_url.clone_from(&o.public_url);
        }
        if o.region.is_some() {
            self.region.clone_from(&o.region);
        }
        set(&mut self.access_token_seconds, &o.access_token_seconds);
        set(&mut self.refresh_token_seconds, &o.refresh_token_seconds);
        set(&mut self.session_seconds, &o.session_seconds);
        if o.breached_passwords_file.is_some() {
            self.breached_passwords_file.clone_from(&o.breached_passwords_file);
        }
        if o.breached_passwords_api.is_some() {
            self.breached_passwords_api.clone_from(&o.breached_passwords_api);
        }
        if o.payloads_component.is_some() {
            self.payloads_component.clone_from(&o.payloads_component);
        }
        if o.otlp_endpoint.is_some() {
            self.otlp_endpoint.clone_from(&o.otlp_endpoint);
        }
        set(&mut self.webhook_allowed_networks, &o.webhook_allowed_networks);
        if o.webhook_ca_file.is_some() {
            self.webhook_ca_file.clone_from(&o.webhook_ca_file);
        }
        if o.smtp_url.is_some() {
            self.smtp_url.clone_from(&o.smtp_url);
        }
        set(&mut self.mail_from, &o.mail_from);
        if o.redis_url.is_some() {
            self.redis_url.clone_from(&o.redis_url);
        }
        set(&mut self.mail_outbox, &o.mail_outbox);
        if o.analyst_model_key.is_some() {
            self.analyst.model_key.clone_from(&o.analyst_model_key);
        }
        if o.push_gateway_url.is_some() {
            self.push_gateway_url.clone_from(&o.push_gateway_url);
        }
        for (setting, given) in [
            (&mut self.detector_component, &o.detector_component),
            (&mut self.datacenter_networks_file, &o.datacenter_networks_file),
            (&mut self.tor_exits_file, &o.tor_exits_file),
            (&mut self.country_database_file, &o.country_database_file),
            (&mut self.network_database_file, &o.network_database_file),
        ] {
            if given.is_some() {
                setting.clone_from(given);
            }
        }
    }
}
