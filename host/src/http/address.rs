//! The client address: the TCP peer, or the right-most untrusted
//! `X-Forwarded-For` entry when the peer is a trusted proxy.

use std::net::IpAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;
use ipnet::IpNet;

use super::connections::Peer;
use crate::http::AppState;

/// The address a request came from, as the service believes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddress(pub IpAddr);

pub fn resolve(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(&canonical(*ip)));
    if !is_trusted(&peer) {
        return peer;
    }
    let forwarded: Vec<IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|entry| entry.trim().parse::<IpAddr>().ok())
        .collect();
    forwarded.iter().rev().find(|ip| !is_trusted(ip)).or_else(|| forwarded.first()).map_or(peer, |ip| canonical(*ip))
}

/// IPv4-mapped IPv6 addresses read as IPv4.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

pub async fn attach(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let peer = request.extensions().get::<ConnectInfo<Peer>>().map_or(IpAddr::from([0, 0, 0, 0]), |info| info.0.0.ip());
    let address = resolve(canonical(peer), request.headers(), &state.settings.trusted_proxies);
    request.extensions_mut().insert(ClientAddress(address));
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(xff: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", xff.parse().unwrap());
        h
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_forwards() {
        let peer: IpAddr = "203.0.113.9".parse().unwrap();
        assert_eq!(resolve(peer, &headers("1.2.3.4"), &[]), peer);
    }

    #[test]
    fn behind_trusted_proxies_the_right_most_untrusted_entry_wins() {
        let trusted: Vec<IpNet> = vec!["127.0.0.1/32".parse().unwrap(), "10.0.0.0/8".parse().unwrap()];
        let peer: IpAddr = "127.0.0.1".parse().unwrap();
        // A client may prepend anything; only what our proxies appended is believed.
        let got = resolve(peer, &headers("6.6.6.6, 198.51.100.7, 10.1.2.3"), &trusted);
        assert_eq!(got, "198.51.100.7".parse::<IpAddr>().unwrap());
        assert_eq!(resolve(peer, &HeaderMap::new(), &trusted), peer);
    }

    #[test]
    fn mapped_ipv6_reads_as_ipv4() {
        let peer: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert_eq!(canonical(peer), "127.0.0.1".parse::<IpAddr>().unwrap());
    }
}
