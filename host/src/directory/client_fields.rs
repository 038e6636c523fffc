//! The checks of a client's fields in the admin API: scope tokens, redirect URIs, web origins,
//! https addresses, JWK Sets and colours.

use jsonwebtoken::DecodingKey;
use jsonwebtoken::jwk::JwkSet;
use serde_json::Value;

use crate::kernel::validate::{Refusals, Rule, text};

/// A scope token (RFC 6749 §3.3).
pub fn scope_token(path: &str, value: &Value) -> Result<String, Refusals> {
    let scope = text(1, 128)(path, value)?;
    if scope.chars().all(|c| c == '!' || ('#'..='[').contains(&c) || (']'..='~').contains(&c)) {
        Ok(scope)
    } else {
        Err(vec![crate::kernel::validate::Notification::new(
            path,
            Rule::Pattern,
            format!("{path} must be a scope token: printable ASCII without spaces, quotes or backslashes"),
        )])
    }
}

pub fn redirect_uri(path: &str, value: &Value) -> Result<String, Refusals> {
    let text = text(1, 2048)(path, value)?;
    match crate::kernel::addresses::redirect_uri_problem(&text) {
        None => Ok(text),
        Some(why) => Err(vec![crate::kernel::validate::Notification::new(path, Rule::Format, format!("{path} {why}"))]),
    }
}

/// A web origin as browsers send it in `Origin`: `https://host[:port]` (http on a loopback host),
/// with no path, query or trailing slash.
pub fn web_origin(path: &str, value: &Value) -> Result<String, Refusals> {
    let text = text(1, 300)(path, value)?;
    let parsed = url::Url::parse(&text).ok().filter(|uri| uri.origin().ascii_serialization() == text);
    match parsed {
        Some(uri)
            if uri.scheme() == "https" || (uri.scheme() == "http" && crate::kernel::addresses::is_loopback(&uri)) =>
        {
            Ok(text)
        }
        _ => Err(vec![crate::kernel::validate::Notification::new(
            path,
            Rule::Format,
            format!("{path} must be an origin such as https://app.example.com (http only on a loopback host)"),
        )]),
    }
}

/// An https address (a logo, so that the page never loads a picture over plain HTTP; a JWK Set).
pub fn https_address(path: &str, value: &Value) -> Result<String, Refusals> {
    let text = text(1, 2048)(path, value)?;
    if crate::kernel::addresses::is_https_address(&text) {
        return Ok(text);
    }
    Err(vec![crate::kernel::validate::Notification::new(
        path,
        Rule::Format,
        format!("{path} must be an https address"),
    )])
}

/// A JWK Set of public keys, kept as its text.
pub fn jwk_set(path: &str, value: &Value) -> Result<String, Refusals> {
    check_jwks(value)
        .map_err(|why| vec![crate::kernel::validate::Notification::new(path, Rule::Format, format!("{path} {why}"))])
}

/// A colour as `#rrggbb`.
pub fn color(path: &str, value: &Value) -> Result<String, Refusals> {
    let text = text(1, 64)(path, value)?;
    if text.len() == 7 && text.starts_with('#') && text[1..].bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(text.to_ascii_lowercase())
    } else {
        Err(vec![crate::kernel::validate::Notification::new(
            path,
            Rule::Format,
            format!("{path} must be a colour as #rrggbb"),
        )])
    }
}

/// Whether a JWK carries a private or symmetric part, which no client ever sends.
pub fn has_private_part(jwk: &Value) -> bool {
    ["d", "p", "q", "dp", "dq", "qi", "k"].iter().any(|part| jwk.get(part).is_some())
}

/// A JWK Set as a client configures it: at least one public key of a kind assertions may be
/// signed with, and no private part.
pub fn check_jwks(value: &Value) -> Result<String, String> {
    let set: JwkSet = serde_json::from_value(value.clone()).map_err(|_| "must be a JWK Set: {\"keys\": [...]}")?;
    if set.keys.is_empty() || set.keys.len() > 20 {
        return Err("must hold 1 to 20 keys".into());
    }
    for key in value["keys"].as_array().into_iter().flatten() {
        if has_private_part(key) {
            return Err("must hold public keys only: a private or symmetric key was given".into());
        }
    }
    for key in &set.keys {
        DecodingKey::from_jwk(key).map_err(|_| "holds a key that cannot verify signatures")?;
    }
    Ok(value.to_string())
}
