//! Operations: what the service tells and takes outside sign-in. Webhooks to customers' backends,
//! the account's notifications and e-mail, warnings of expiring secrets, the dedicated instance,
//! imports of people and configuration, and the audit trail and access log as the account reads
//! them.

pub mod admin;
pub mod audit;
pub mod import;
pub mod instance;
pub mod notifications;
pub mod secret_expiry;
pub mod webhooks;
