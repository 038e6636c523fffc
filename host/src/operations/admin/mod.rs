//! The admin operations of the operations wing: webhook endpoints and their figures, capture
//! endpoints, the account's notifications, and reading the audit trail and the access log.

pub mod audit;
pub mod captures;
pub mod notifications;
pub mod webhooks;
