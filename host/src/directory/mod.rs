//! The directory: realms, clients, people, groups, roles, scopes, organizations, resource servers,
//! providers, sessions, secrets and the team. A change to any of them is one function here that
//! checks it, writes it, trails it and announces it to the other hosts, whichever edge asks for
//! it: the admin API, the console, the configuration import, a client registering itself, or a
//! client known by its metadata document. The realms' and clients' signing keys are here too:
//! created with their client, rotated and revoked by administrators, and read by token issuance.

pub mod account_roles;
pub mod admin;
pub mod claim_mappers;
pub mod client_fields;
pub mod clients;
pub mod connection_providers;
pub mod consumers;
pub mod groups;
pub mod identity_providers;
pub mod invitations;
pub mod keys;
pub mod listing;
pub mod members;
pub mod organizations;
pub mod people;
pub mod reach;
pub mod realms;
pub mod resource_servers;
pub mod roles;
pub mod rotation;
pub mod scopes;
pub mod secrets;
pub mod sessions;
pub mod team;

use crate::kernel::validate::{Notification, Rule};
use crate::runtime::error::Error;

/// A refusal for each of `names` that `found` does not find, at `field[index]`, told in `message`:
/// what a list naming other things of the realm answers for the names it gets wrong.
async fn missing<Found: Future<Output = Result<bool, Error>>>(
    field: &str,
    names: &[String],
    found: impl Fn(String) -> Found,
    message: impl Fn(&str) -> String,
) -> Result<Vec<Notification>, Error> {
    let mut refused = Vec::new();
    for (index, name) in names.iter().enumerate() {
        if !found(name.clone()).await? {
            refused.push(Notification::new(format!("{field}[{index}]"), Rule::NotFound, message(name)));
        }
    }
    Ok(refused)
}
