//! Outgoing e-mail through the configured SMTP server (`smtp_url`). Notices that must not be lost
//! when no server is configured (attack protection's) are written to the outbox folder instead.

use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::kernel::config::Settings;

/// Why a message did not go out.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("no SMTP server is configured (smtp_url)")]
    NotConfigured,
    #[error("invalid recipient address: {0}")]
    Address(String),
    #[error("cannot build the message: {0}")]
    Build(#[from] lettre::error::Error),
    #[error("the SMTP server refused or could not be reached: {0}")]
    Smtp(#[from] lettre::transport::smtp::Error),
}

/// One plain-text message.
#[derive(Debug, Clone)]
pub struct Mail<'a> {
    pub to: &'a str,
    pub subject: &'a str,
    pub body: String,
}

/// A message decided inside a transaction, sent once it commits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Letter {
    pub to: String,
    pub subject: String,
    pub body: String,
}

pub struct Mailer {
    transport: Option<AsyncSmtpTransport<Tokio1Executor>>,
    from: Mailbox,
    outbox: std::path::PathBuf,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer").field("configured", &self.transport.is_some()).field("from", &self.from).finish()
    }
}

impl Mailer {
    /// The mailer of the settings (checked at load: the URL and the sender parse).
    pub fn new(settings: &Settings) -> anyhow::Result<Self> {
        let transport = match &settings.smtp_url {
            Some(url) => Some(AsyncSmtpTransport::<Tokio1Executor>::from_url(url)?.build()),
            None => None,
        };
        Ok(Self { transport, from: settings.mail_from.parse()?, outbox: settings.mail_outbox.clone() })
    }

    /// Whether an SMTP server is configured: whether e-mail can reach people at all.
    pub fn configured(&self) -> bool {
        self.transport.is_some()
    }

    fn message(&self, mail: Mail<'_>) -> Result<Message, MailError> {
        let to: Mailbox = mail.to.parse().map_err(|_| MailError::Address(mail.to.to_owned()))?;
        Ok(Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject)
            .header(ContentType::TEXT_PLAIN)
            .body(mail.body)?)
    }

    /// Sends the message; returns once the SMTP server accepted it.
    pub async fn send(&self, mail: Mail<'_>) -> Result<(), MailError> {
        let transport = self.transport.as_ref().ok_or(MailError::NotConfigured)?;
        transport.send(self.message(mail)?).await?;
        Ok(())
    }

    /// Sends the letter through the SMTP server or, without one, writes it to the outbox folder;
    /// what fails is logged, never answered to anyone.
    pub async fn deliver(&self, letter: &Letter) {
        let mail = Mail { to: &letter.to, subject: &letter.subject, body: letter.body.clone() };
        let message = match self.message(mail) {
            Ok(message) => message,
            Err(error) => {
                tracing::error!(%error, to = letter.to, "cannot build an e-mail");
                return;
            }
        };
        let Some(transport) = &self.transport else {
            let path = self.outbox.join(format!("{}.eml", crate::kernel::ids::new_guid()));
            let written = tokio::fs::create_dir_all(&self.outbox).await;
            match written.and(tokio::fs::write(&path, message.formatted()).await) {
                Ok(()) => {
                    tracing::info!(to = letter.to, path = %path.display(), "no SMTP server: e-mail written to the outbox")
                }
                Err(error) => tracing::error!(%error, to = letter.to, "cannot write an e-mail to the outbox"),
            }
            return;
        };
        if let Err(error) = transport.send(message).await {
            tracing::error!(%error, to = letter.to, "the SMTP server did not take an e-mail");
        }
    }
}
