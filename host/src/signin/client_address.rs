//! The addresses a client may ask the token endpoint from (its allowed IPs): addresses and CIDR
//! networks, every address when the list is empty. A request from anywhere else is refused
//! before any grant is looked at, and recorded as a failed sign-in of the client.

use std::net::IpAddr;

use ipnet::IpNet;

use super::{Login, Origin, Refusal, SignInError, login_data, publish};
use crate::AppState;
use crate::store::clients::Client;
use crate::store::events::EventType;
use crate::store::realms::Realm;

/// What `login_failed` gives as the reason.
pub const FAILURE_REASON: &str = "client_address_not_allowed";

/// An entry of the list: an address or a network.
pub fn parse(entry: &str) -> Option<IpNet> {
    entry.parse::<IpNet>().ok().or_else(|| entry.parse::<IpAddr>().ok().map(IpNet::from))
}

/// Whether the client may ask from `address`. An IPv4 address mapped into IPv6 counts as itself.
pub fn admits(client: &Client, address: IpAddr) -> bool {
    let address = match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    };
    client.allowed_ips.is_empty() || client.allowed_ips.iter().filter_map(|e| parse(e)).any(|n| n.contains(&address))
}

/// Refuses a request of `client` from an address it does not allow, publishing `login_failed`.
pub async fn enforce(
    state: &AppState,
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
    let mut tx = state.store.begin().await?;
    publish(&mut tx, realm, client, EventType::LoginFailed, login_data(login, origin), state.clock.now()).await?;
    tx.commit().await?;
    state.metrics.sign_in_failed(FAILURE_REASON);
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
    fn addresses_and_networks_admit_and_an_empty_list_admits_all() {
        let ip = |text: &str| text.parse::<IpAddr>().unwrap_or_else(|e| panic!("{e}"));
        assert!(admits(&client(&[]), ip("203.0.113.9")));
        let listed = client(&["198.51.100.7", "203.0.113.0/24", "2001:db8::/32"]);
        assert!(admits(&listed, ip("198.51.100.7")));
        assert!(admits(&listed, ip("203.0.113.200")));
        assert!(admits(&listed, ip("::ffff:203.0.113.1")), "a mapped IPv4 address is itself");
        assert!(admits(&listed, ip("2001:db8:5::1")));
        assert!(!admits(&listed, ip("198.51.100.8")));
        assert!(!admits(&listed, ip("2001:db9::1")));
    }
}
