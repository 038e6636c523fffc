//! The addresses a client may ask the token endpoint from (its allowed IPs): addresses and CIDR
//! networks, every address when the list is empty. A request from anywhere else is refused
//! before any grant is looked at, and recorded as a failed sign-in of the client.

use std::net::IpAddr;

use super::{Login, Origin, Refusal, SignInError, login_data, publish};
use crate::kernel::address_lists;
use crate::runtime::context::Context;
use crate::store::clients::Client;
use crate::store::events::EventType;
use crate::store::realms::Realm;

/// What `login_failed` gives as the reason.
pub const FAILURE_REASON: &str = "client_address_not_allowed";

/// Whether the client may ask from `address`.
pub fn admits(client: &Client, address: IpAddr) -> bool {
    address_lists::admits(&client.allowed_ips, address)
}

/// Refuses a request of `client` from an address it does not allow, publishing `login_failed`.
pub async fn enforce(
    context: &Context,
    realm: &Realm,
    client: &Client,
    grant_type: &str,
    address: IpAddr,
    origin: &Origin,
) -> Result<(), SignInError> {
    if admits(client, address) {
        return Ok(());
    }
    let login = Login {
        grant_type,
        resource: None,
        user: None,
        session_id: None,
        failure_reason: Some(FAILURE_REASON),
        scopes: &[],
        methods: &[],
    };
    let mut tx = context.store.begin().await?;
    publish(&mut tx, realm, client, EventType::LoginFailed, login_data(login, origin), context.clock.now()).await?;
    tx.commit().await?;
    context.metrics.sign_in_failed(FAILURE_REASON);
    Err(Refusal::ClientAddressNotAllowed.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(allowed: &[&str]) -> Client {
        let now = chrono::DateTime::UNIX_EPOCH;
        let client = Client::new("acme", "shop", crate::store::clients::ClientType::Confidential, now);
        Client { allowed_ips: allowed.iter().map(|a| (*a).to_owned()).collect(), ..client }
    }

    #[test]
    fn a_client_is_admitted_from_its_allowed_ips_only() {
        let ip = |text: &str| text.parse::<IpAddr>().unwrap_or_else(|e| panic!("{e}"));
        assert!(admits(&client(&[]), ip("203.0.113.9")));
        assert!(admits(&client(&["203.0.113.0/24"]), ip("203.0.113.9")));
        assert!(!admits(&client(&["203.0.113.0/24"]), ip("198.51.100.9")));
    }
}
