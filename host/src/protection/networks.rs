//! Facts about source addresses from data files: datacenter networks and Tor exits, as lists of
//! networks in CIDR notation (one a line; a bare address is a single-address network; `#` starts a
//! comment), and the country and network of an address from MaxMind-format databases (the
//! GeoLite2-Country and GeoLite2-ASN layouts). The README says where the public data sets come from.

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

/// The country and the network of addresses, from MaxMind-format databases when configured.
#[derive(Default)]
pub struct Geography {
    countries: Option<maxminddb::Reader<Vec<u8>>>,
    networks: Option<maxminddb::Reader<Vec<u8>>>,
}

impl std::fmt::Debug for Geography {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Geography")
            .field("countries", &self.countries.is_some())
            .field("networks", &self.networks.is_some())
            .finish()
    }
}

fn open_database(path: &Path) -> anyhow::Result<maxminddb::Reader<Vec<u8>>> {
    maxminddb::Reader::open_readfile(path).with_context(|| format!("cannot read the database {}", path.display()))
}

impl Geography {
    /// Reads a country database (`country.iso_code`) and a network database
    /// (`autonomous_system_number`, `autonomous_system_organization`), each when given.
    pub fn load(countries: Option<&Path>, networks: Option<&Path>) -> anyhow::Result<Self> {
        Ok(Self {
            countries: countries.map(open_database).transpose()?,
            networks: networks.map(open_database).transpose()?,
        })
    }

    /// The ISO 3166 code of the address's country, when known.
    pub fn country(&self, ip: IpAddr) -> Option<String> {
        let found = self.countries.as_ref()?.lookup(ip).ok()?;
        let path = [maxminddb::PathElement::Key("country"), maxminddb::PathElement::Key("iso_code")];
        found.decode_path::<String>(&path).ok().flatten()
    }

    /// The address's network: `AS64500 Example Hosting`, when known.
    pub fn network(&self, ip: IpAddr) -> Option<String> {
        let found = self.networks.as_ref()?.lookup(ip).ok()?;
        let number =
            found.decode_path::<u32>(&[maxminddb::PathElement::Key("autonomous_system_number")]).ok().flatten()?;
        let organization = found
            .decode_path::<String>(&[maxminddb::PathElement::Key("autonomous_system_organization")])
            .ok()
            .flatten();
        Some(match organization {
            Some(organization) => format!("AS{number} {organization}"),
            None => format!("AS{number}"),
        })
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

    #[test]
    fn countries_and_networks_come_from_maxmind_databases() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let geography =
            Geography::load(Some(&fixtures.join("countries.mmdb")), Some(&fixtures.join("networks.mmdb"))).unwrap();
        let ip = |text: &str| text.parse::<IpAddr>().unwrap();
        assert_eq!(geography.country(ip("198.51.100.7")).as_deref(), Some("NL"));
        assert_eq!(geography.country(ip("203.0.113.7")).as_deref(), Some("BR"));
        assert_eq!(geography.country(ip("192.0.2.1")), None);
        assert_eq!(geography.network(ip("198.51.100.7")).as_deref(), Some("AS64500 Example Hosting"));
        assert_eq!(geography.network(ip("203.0.113.7")), None);
        assert_eq!(Geography::default().country(ip("198.51.100.7")), None);
        assert!(Geography::load(Some(&fixtures.join("make_mmdb.py")), None).is_err(), "not a database");
    }
}
