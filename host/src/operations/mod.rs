//! Operations: what the service tells and takes outside sign-in. Webhooks to customers' backends,
//! the account's notifications and e-mail, warnings of expiring secrets, the dedicated instance,
//! and imports of people and configuration.

pub mod import;
pub mod instance;
pub mod notifications;
pub mod secret_expiry;
pub mod webhooks;
