//! Outgoing e-mail through the configured SMTP server (`smtp_url`).

use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::config::Settings;

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

pub struct Mailer {
    transport: Option<AsyncSmtpTransport<Tokio1Executor>>,
    from: Mailbox,
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
        Ok(Self { transport, from: settings.mail_from.parse()? })
    }

    /// Sends the message; returns once the SMTP server accepted it.
    pub async fn send(&self, mail: Mail<'_>) -> Result<(), MailError> {
        let transport = self.transport.as_ref().ok_or(MailError::NotConfigured)?;
        let to: Mailbox = mail.to.parse().map_err(|_| MailError::Address(mail.to.to_owned()))?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject)
            .header(ContentType::TEXT_PLAIN)
            .body(mail.body)?;
        transport.send(message).await?;
        Ok(())
    }
}
