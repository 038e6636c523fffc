//! Lists of addresses and CIDR networks that say where something may be used from: a client's
//! allowed IPs (the token endpoint) and an account's admin networks (the admin API). An empty
//! list admits every address; entries are kept in canonical form.

use std::net::IpAddr;

use ipnet::IpNet;

use crate::kernel::validate::{Notification, Refusals, Rule, text};

/// An entry: an address (`203.0.113.7`, `2001:db8::1`) or a network (`203.0.113.0/24`).
pub fn parse(entry: &str) -> Option<IpNet> {
    entry.parse::<IpNet>().ok().or_else(|| entry.parse::<IpAddr>().ok().map(IpNet::from))
}

/// An entry's canonical form: an address alone, or a network with its host bits cleared.
pub fn canonical(entry: &str) -> Option<String> {
    parse(entry.trim()).map(|network| {
        if network.prefix_len() == network.max_prefix_len() {
            network.addr().to_string()
        } else {
            network.trunc().to_string()
        }
    })
}

/// Whether `list` admits `address`. An IPv4 address mapped into IPv6 counts as itself.
pub fn admits(list: &[String], address: IpAddr) -> bool {
    let address = match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    };
    list.is_empty() || list.iter().filter_map(|entry| parse(entry)).any(|network| network.contains(&address))
}

/// A body field holding one entry, read into its canonical form.
pub fn entry(path: &str, value: &serde_json::Value) -> Result<String, Refusals> {
    let written = text(1, 64)(path, value)?;
    canonical(&written).ok_or_else(|| {
        vec![Notification::new(
            path,
            Rule::Format,
            format!("{path} must be an IP address or a network in CIDR notation"),
        )]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn addresses_and_networks_admit_and_an_empty_list_admits_all() {
        assert!(admits(&[], ip("203.0.113.9")));
        let listed: Vec<String> =
            ["198.51.100.7", "203.0.113.0/24", "2001:db8::/32"].iter().map(|e| (*e).to_owned()).collect();
        assert!(admits(&listed, ip("198.51.100.7")));
        assert!(admits(&listed, ip("203.0.113.200")));
        assert!(admits(&listed, ip("::ffff:203.0.113.1")), "a mapped IPv4 address is itself");
        assert!(admits(&listed, ip("2001:db8:5::1")));
        assert!(!admits(&listed, ip("198.51.100.8")));
        assert!(!admits(&listed, ip("2001:db9::1")));
    }

    #[test]
    fn entries_are_kept_in_canonical_form() {
        assert_eq!(canonical(" 203.0.113.77/24 ").as_deref(), Some("203.0.113.0/24"));
        assert_eq!(canonical("198.51.100.7/32").as_deref(), Some("198.51.100.7"));
        assert_eq!(canonical("2001:DB8::1").as_deref(), Some("2001:db8::1"));
        assert_eq!(canonical("example.com"), None);
        assert_eq!(canonical("10.0.0.0/33"), None);
    }
}
