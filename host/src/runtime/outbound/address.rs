//! Address safety: what the host sends or fetches may only reach public addresses. A URL's host is
//! checked when it is registered (a webhook endpoint, a client's `jwks_uri`) and again on every
//! connection, after DNS resolution, so a name that later resolves inside (DNS rebinding) is
//! refused. Networks named in `webhook_allowed_networks` are accepted too; that list exists for
//! development and tests.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use ipnet::IpNet;

/// Whether `ip` is an address of the public internet: not loopback, private, link-local, CGNAT,
/// multicast, unspecified, reserved, documentation, benchmarking, or an IPv6 form that embeds an
/// IPv4 address (mapped, compatible, NAT64, 6to4, Teredo).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => is_public_v4(ip),
        IpAddr::V6(ip) => is_public_v6(ip),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0 // "this network"
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // documentation
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast
        || (a == 192 && b == 168)
        || (a == 198 && (18..20).contains(&b)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // documentation
        || (a == 203 && b == 0 && c == 113) // documentation
        || a >= 224) // multicast, reserved, broadcast
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    let embeds_v4 = segments[..5].iter().all(|s| *s == 0) && (segments[5] == 0 || segments[5] == 0xffff);
    !(ip.is_unspecified()
        || ip.is_loopback()
        || embeds_v4 // IPv4-mapped and IPv4-compatible
        || (segments[0] == 0x64 && segments[1] == 0xff9b) // NAT64
        || (segments[0] == 0x100 && segments[1..4].iter().all(|s| *s == 0)) // discard
        || (segments[0] == 0x2001 && segments[1] < 0x200) // IETF protocol assignments, Teredo
        || (segments[0] == 0x2001 && segments[1] == 0xdb8) // documentation
        || segments[0] == 0x2002 // 6to4
        || (segments[0] & 0xfe00) == 0xfc00 // unique local
        || (segments[0] & 0xffc0) == 0xfe80 // link-local
        || (segments[0] & 0xffc0) == 0xfec0 // site-local
        || (segments[0] & 0xff00) == 0xff00) // multicast
}

/// Which addresses the host may reach: public ones and those of the allowed networks.
#[derive(Debug, Clone, Default)]
pub struct AddressPolicy {
    allowed: Arc<[IpNet]>,
}

impl AddressPolicy {
    pub fn new(allowed: &[IpNet]) -> Self {
        Self { allowed: allowed.into() }
    }

    pub fn permits(&self, ip: IpAddr) -> bool {
        is_public(ip) || self.allowed.iter().any(|net| net.contains(&ip))
    }

    /// Why a URL whose host is a literal address may not be reached, if it may not. Names are
    /// checked by [`AddressPolicy::resolve`], the resolver of every connection; literal addresses
    /// never reach a resolver, so each send checks them here.
    pub fn refuses_literal(&self, url: &url::Url) -> Option<String> {
        let ip = match url.host()? {
            url::Host::Ipv4(ip) => IpAddr::V4(ip),
            url::Host::Ipv6(ip) => IpAddr::V6(ip),
            url::Host::Domain(_) => return None,
        };
        (!self.permits(ip)).then(|| format!("{ip} is not a public address"))
    }

    /// Resolves `host` and answers its addresses when every one of them is permitted; a name with
    /// any refused address is refused whole.
    pub async fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
        if let Ok(ip) = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
            return if self.permits(ip) { Ok(vec![SocketAddr::new(ip, port)]) } else { Err(refused(host, ip)) };
        }
        let found: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|error| format!("{host} cannot be resolved: {error}"))?
            .collect();
        if found.is_empty() {
            return Err(format!("{host} resolves to no address"));
        }
        match found.iter().find(|address| !self.permits(address.ip())) {
            Some(address) => Err(refused(host, address.ip())),
            None => Ok(found),
        }
    }
}

fn refused(host: &str, ip: IpAddr) -> String {
    if host.trim_start_matches('[').trim_end_matches(']') == ip.to_string() {
        format!("{ip} is not a public address")
    } else {
        format!("{host} resolves to {ip}, which is not a public address")
    }
}

/// The resolver of the delivery client: every new connection resolves through the policy.
impl reqwest::dns::Resolve for AddressPolicy {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.clone();
        Box::pin(async move {
            let addresses = policy.resolve(name.as_str(), 0).await?;
            let addresses: reqwest::dns::Addrs = Box::new(addresses.into_iter());
            Ok(addresses)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(text: &str) -> bool {
        is_public(text.parse().unwrap_or_else(|_| panic!("{text} is not an address")))
    }

    #[test]
    fn inside_addresses_are_not_public() {
        for inside in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "198.18.0.1",
            "::1",
            "::",
            "::ffff:127.0.0.1",
            "::ffff:8.8.8.8",
            "::127.0.0.1",
            "fe80::1",
            "fc00::1",
            "fd12::1",
            "ff02::1",
            "64:ff9b::a00:1",
            "2001:db8::1",
            "2002:a00:1::",
            "2001::1",
        ] {
            assert!(!public(inside), "{inside} must be refused");
        }
    }

    #[test]
    fn internet_addresses_are_public() {
        for outside in
            ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "192.0.3.1", "2606:4700::1111", "2a00:1450::1"]
        {
            assert!(public(outside), "{outside} must be accepted");
        }
    }

    #[tokio::test]
    async fn allowed_networks_open_inside_addresses_and_names_resolve_through_the_policy() {
        let closed = AddressPolicy::default();
        assert!(closed.resolve("127.0.0.1", 443).await.is_err());
        assert!(closed.resolve("localhost", 443).await.is_err());
        let open = AddressPolicy::new(&["127.0.0.0/8".parse().unwrap_or_else(|_| unreachable!())]);
        assert_eq!(open.resolve("127.0.0.1", 443).await, Ok(vec![SocketAddr::from(([127, 0, 0, 1], 443))]));
        assert!(open.resolve("[::1]", 443).await.is_err());
    }
}
