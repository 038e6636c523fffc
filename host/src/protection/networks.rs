//! Facts about source addresses from data files: datacenter networks and Tor exits, as lists of
//! networks in CIDR notation (one a line; a bare address is a single-address network; `#` starts a
//! comment). The public lists are fetched as the README's operations section describes.

use std::net::IpAddr;
use std::path::Path;

use anyhow::Context as _;
use ipnet::IpNet;

/// A set of networks, answering membership by binary search over merged ranges.
#[derive(Debug, Clone, Default)]
pub struct NetworkList {
    /// Disjoint, sorted, inclusive ranges of IPv6 addresses (IPv4 as IPv4-mapped).
    ranges: Vec<(u128, u128)>,
}

fn as_v6_number(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(v4.to_ipv6_mapped()),
        IpAddr::V6(v6) => u128::from(v6.to_ipv4_mapped().map_or(v6, |v4| v4.to_ipv6_mapped())),
    }
}

impl NetworkList {
    /// Reads the list at `path`.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("invalid network list {}", path.display()))
    }

    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let mut ranges = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let entry = line.split('#').next().unwrap_or_default().trim();
            if entry.is_empty() {
                continue;
            }
            let network: IpNet = match entry.parse() {
                Ok(network) => network,
                Err(_) => entry.parse::<IpAddr>().map(IpNet::from).map_err(|_| {
                    anyhow::anyhow!("line {}: {entry:?} is neither a network nor an address", number + 1)
                })?,
            };
            ranges.push((as_v6_number(network.network()), as_v6_number(network.broadcast())));
        }
        ranges.sort_unstable();
        let mut merged: Vec<(u128, u128)> = Vec::with_capacity(ranges.len());
        for (start, end) in ranges {
            match merged.last_mut() {
                Some(last) if start <= last.1.saturating_add(1) => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        Ok(Self { ranges: merged })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let n = as_v6_number(ip);
        let after = self.ranges.partition_point(|(start, _)| *start <= n);
        after > 0 && self.ranges[after - 1].1 >= n
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn networks_and_addresses_are_matched_across_merged_ranges() {
        let list = NetworkList::parse(
            "# datacenter ranges\n203.0.113.0/25\n203.0.113.128/25 # adjacent: merged\n198.51.100.7\n\n2001:db8::/32\n",
        )
        .unwrap();
        assert_eq!(list.len(), 3);
        let ip = |text: &str| text.parse::<IpAddr>().unwrap();
        assert!(list.contains(ip("203.0.113.0")) && list.contains(ip("203.0.113.255")));
        assert!(!list.contains(ip("203.0.114.0")) && !list.contains(ip("203.0.112.255")));
        assert!(list.contains(ip("198.51.100.7")) && !list.contains(ip("198.51.100.8")));
        assert!(list.contains(ip("2001:db8:1::1")) && !list.contains(ip("2001:db9::1")));
        assert!(list.contains(ip("::ffff:203.0.113.9")), "IPv4-mapped addresses read as IPv4");
        assert!(NetworkList::parse("not-a-network").is_err());
        assert!(!NetworkList::default().contains(ip("203.0.113.1")));
    }
}
