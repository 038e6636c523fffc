//! Imports. [`configuration`]: an account's realms, clients, roles, groups, scopes, organizations,
//! resource servers and webhook endpoints as one document, and the plan of importing one.
//! [`migration`]: exports of Keycloak and Auth0 read into that document and user import rows.
//! [`users`]: people with the password hashes other providers exported, read
//! a batch at a time so a file of any length is imported in bounded memory, every refused row
//! reported with its line and reasons and none of them stopping the others.

pub mod configuration;
pub mod migration;
pub mod users;
