//! What leaves the host: HTTP requests that reach public addresses only (webhook deliveries,
//! notifications, and the documents clients and upstream providers name), and e-mail.

pub mod address;
pub mod documents;
pub mod mail;

use std::sync::Arc;
use std::time::Duration;

use address::AddressPolicy;
use mail::Mailer;

use crate::kernel::config::Settings;

/// The longest any outgoing request may take (a webhook attempt succeeds on a 2xx within it);
/// fetches set shorter limits of their own.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// An HTTP client that reaches only the addresses its policy permits, checked on every
/// connection after DNS resolution, and follows no redirects. Cloning it shares its connections.
#[derive(Debug, Clone)]
pub struct PublicWeb {
    pub addresses: AddressPolicy,
    pub http: reqwest::Client,
}

impl PublicWeb {
    /// The client of the settings: `webhook_allowed_networks` beside the public addresses, and
    /// the certificates of `webhook_ca_file` beside the system's.
    pub fn new(settings: &Settings) -> anyhow::Result<Self> {
        let addresses = AddressPolicy::new(&settings.webhook_allowed_networks);
        let mut http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("Castellan-Webhooks/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(addresses.clone()));
        if let Some(path) = &settings.webhook_ca_file {
            let pem = std::fs::read(path)
                .map_err(|error| anyhow::anyhow!("cannot read webhook_ca_file {}: {error}", path.display()))?;
            for certificate in reqwest::Certificate::from_pem_bundle(&pem)? {
                http = http.add_root_certificate(certificate);
            }
        }
        Ok(Self { addresses, http: http.build()? })
    }
}

/// The host's ways out.
#[derive(Debug)]
pub struct Outbound {
    pub web: PublicWeb,
    pub mailer: Arc<Mailer>,
    /// The documents fetched from addresses clients and upstream providers name.
    pub kept: documents::KeptDocuments,
    /// Fetches any caller can start (a client's metadata document, named by an authorization
    /// request): at most [`documents::ANONYMOUS_FETCHES_AT_ONCE`] at once.
    pub anonymous_fetches: tokio::sync::Semaphore,
}

impl Outbound {
    pub fn new(settings: &Settings) -> anyhow::Result<Self> {
        use anyhow::Context as _;
        let web = PublicWeb::new(settings).context("cannot set up outgoing HTTP")?;
        let mailer = Arc::new(Mailer::new(settings).context("cannot set up e-mail")?);
        Ok(Self {
            web,
            mailer,
            kept: documents::KeptDocuments::default(),
            anonymous_fetches: tokio::sync::Semaphore::new(documents::ANONYMOUS_FETCHES_AT_ONCE),
        })
    }
}
