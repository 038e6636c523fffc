//! The admin operations on the directory, as the admin API, the console and the configuration
//! import call them: each checks that what it acts on is in the caller's reach, reads what the
//! caller sent, and makes the change through the directory's own functions, which write, trail
//! and announce it.

pub mod account_roles;
pub mod clients;
pub mod groups;
pub mod identity_providers;
pub mod invitations;
pub mod members;
pub mod organizations;
pub mod people;
pub mod realms;
pub mod resource_servers;
pub mod roles;
pub mod scopes;
pub mod secrets;
pub mod sessions;
pub mod team;
