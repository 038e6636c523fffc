//! The directory through the admin API: realms, clients, people, roles, scopes, providers, the team,
//! credentials and what each can reach.

pub mod allowed_ips;
pub mod catalogue;
pub mod clients;
pub mod credentials;
pub mod identity_providers;
pub mod paging;
pub mod permissions;
pub mod platform;
pub mod reach;
pub mod realm_roles;
pub mod realms;
pub mod rotation;
pub mod team;
pub mod trail;
pub mod users;
