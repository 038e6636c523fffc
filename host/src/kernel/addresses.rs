//! The rules for the addresses a client names: where a person's browser is sent back (redirect
//! URIs) and the https addresses of what it publishes (its logo, its keys, its metadata). The
//! admin API, client registration and metadata documents all check them here.

use url::Url;

/// Whether the address is of this machine, where plain http stays on the device (RFC 8252 §7.3).
pub fn is_loopback(url: &Url) -> bool {
    matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"))
}

/// Why `text` is not a redirect URI a client may have (RFC 8252 §7, RFC 9700 §4.1), if it is
/// not: https; http only on a loopback host; or a private-use scheme in reverse-domain order
/// (`com.example.app:/cb`). Never a fragment; compared exactly, never as a pattern.
pub fn redirect_uri_problem(text: &str) -> Option<&'static str> {
    let Ok(uri) = Url::parse(text) else { return Some("must be an absolute URI") };
    if uri.fragment().is_some() {
        return Some("must not have a fragment");
    }
    match uri.scheme() {
        "https" if uri.host_str().is_some() => None,
        "http" if is_loopback(&uri) => None,
        "http" | "https" => Some("must use https (http only on a loopback host)"),
        scheme if scheme.contains('.') => None,
        _ => Some("must use https, http on a loopback host, or a private-use scheme such as com.example.app"),
    }
}

/// Whether a redirect URI an authorization request names is one the client registered: the same
/// string (RFC 9700 §4.1.3: no pattern, prefix or normalisation), except that for a plain http
/// loopback address the port may be any (RFC 8252 §7.3), since a native app listens on whichever
/// port the system gives it at the time of the request.
pub fn redirect_uri_registered(registered: &str, asked: &str) -> bool {
    if registered == asked {
        return true;
    }
    let (Ok(registered), Ok(asked)) = (Url::parse(registered), Url::parse(asked)) else { return false };
    let loopback = |uri: &Url| uri.scheme() == "http" && is_loopback(uri);
    loopback(&registered)
        && loopback(&asked)
        && registered.host_str() == asked.host_str()
        && registered.username() == asked.username()
        && registered.password() == asked.password()
        && registered.path() == asked.path()
        && registered.query() == asked.query()
        && registered.fragment().is_none()
        && asked.fragment().is_none()
}

/// Whether `text` is an https address with a host and no fragment.
pub fn is_https_address(text: &str) -> bool {
    Url::parse(text).is_ok_and(|uri| uri.scheme() == "https" && uri.host_str().is_some() && uri.fragment().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_are_https_loopback_http_or_reverse_domain_schemes() {
        for good in [
            "https://agent.example/callback",
            "http://127.0.0.1:33418/callback",
            "http://localhost:6274/oauth/callback",
            "com.example.agent:/oauth2redirect",
        ] {
            assert_eq!(redirect_uri_problem(good), None, "{good}");
        }
        for bad in ["http://agent.example/callback", "https://agent.example/callback#x", "myapp:/callback", "/callback"]
        {
            assert!(redirect_uri_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn loopback_redirect_uris_match_on_any_port_and_nothing_else_does() {
        let registered = "http://127.0.0.1/callback";
        assert!(redirect_uri_registered(registered, "http://127.0.0.1:50123/callback"));
        assert!(redirect_uri_registered("http://127.0.0.1:8080/callback", "http://127.0.0.1:9/callback"));
        assert!(redirect_uri_registered("http://[::1]/cb", "http://[::1]:4000/cb"));
        assert!(redirect_uri_registered("http://localhost:1/cb?x=1", "http://localhost:2/cb?x=1"));
        for other in [
            "http://127.0.0.1:50123/callback/more",
            "http://127.0.0.1:50123/callback?x=1",
            "http://127.0.0.2:50123/callback",
            "http://localhost:50123/callback",
            "https://127.0.0.1:50123/callback",
            "http://user@127.0.0.1:50123/callback",
            "http://127.0.0.1:50123/callback#f",
        ] {
            assert!(!redirect_uri_registered(registered, other), "{other}");
        }
        assert!(!redirect_uri_registered("https://app.example/cb", "https://app.example:8443/cb"));
        assert!(!redirect_uri_registered("https://app.example/cb", "https://app.example/cb/"));
    }

    #[test]
    fn https_addresses_have_a_host_and_no_fragment() {
        assert!(is_https_address("https://keys.example/jwks.json"));
        assert!(!is_https_address("http://keys.example/jwks.json"));
        assert!(!is_https_address("https://keys.example/jwks.json#k"));
        assert!(!is_https_address("keys.example"));
    }
}
