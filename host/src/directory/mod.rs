//! The directory: realms, clients, people, groups, roles, scopes, organizations, resource servers,
//! providers, sessions, secrets and the team. A change to any of them is one function here that
//! checks it, writes it, trails it and announces it to the other hosts, whichever edge asks for
//! it: the admin API, the console, the configuration import, a client registering itself, or a
//! client known by its metadata document. The realms' and clients' signing keys are here too:
//! created with their client, rotated and revoked by administrators, and read by token issuance.

pub mod account_roles;
pub mod claim_mappers;
pub mod clients;
pub mod connection_providers;
pub mod consumers;
pub mod groups;
pub mod identity_providers;
pub mod invitations;
pub mod keys;
pub mod members;
pub mod organizations;
pub mod people;
pub mod realms;
pub mod resource_servers;
pub mod roles;
pub mod rotation;
pub mod scopes;
pub mod secrets;
pub mod sessions;
pub mod team;
