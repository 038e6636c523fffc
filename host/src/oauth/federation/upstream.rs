//! An upstream OpenID provider as the service reads it: its metadata from its discovery address
//! (OpenID Connect Discovery 1.0) and its JWK Set from the `jwks_uri` the metadata names. Both are
//! fetched through the address-checked fetch clients' documents use (https, public addresses
//! unless an operator opened others, size and time limits) and kept as long as their answers
//! allow, up to an hour.

use std::sync::Arc;

use jsonwebtoken::jwk::JwkSet;
use serde_json::Value;

use crate::oauth::client_keys::{MAX_JWKS_BYTES, REFETCH_AFTER};
use crate::runtime::context::Context;
use crate::runtime::outbound::documents::{self, Shelf};

/// The largest discovery document read.
const MAX_METADATA_BYTES: usize = 64 * 1024;
/// The suffix a discovery address adds to the issuer (Discovery §4).
const WELL_KNOWN: &str = "/.well-known/openid-configuration";

/// What a sign-in needs of the provider's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub userinfo_endpoint: Option<String>,
    pub jwks_uri: String,
    /// Whether the provider names itself in its authorization responses (RFC 9207), which then
    /// must name it.
    pub sends_issuer: bool,
}

/// Reads a discovery document fetched from `address`: the issuer must be the one the address is
/// made of (Discovery §4.3), every endpoint an https address, and the provider must answer with a
/// code and take PKCE's S256 when it says what it takes.
pub fn read(address: &str, body: &[u8]) -> Result<Metadata, String> {
    let Ok(Value::Object(document)) = serde_json::from_slice::<Value>(body) else {
        return Err("the discovery document is not a JSON object".into());
    };
    let text = |name: &str| document.get(name).and_then(Value::as_str).filter(|text| !text.is_empty());
    let issuer = text("issuer").ok_or("the discovery document names no issuer")?;
    if format!("{}{WELL_KNOWN}", issuer.trim_end_matches('/')) != address {
        return Err(format!("the discovery document's issuer {issuer} is not the one its address is made of"));
    }
    let endpoint = |name: &str| -> Result<String, String> {
        let address = text(name).ok_or_else(|| format!("the discovery document has no {name}"))?;
        let https = url::Url::parse(address).is_ok_and(|url| url.scheme() == "https" && url.host().is_some());
        if https { Ok(address.to_owned()) } else { Err(format!("its {name} is not an https address")) }
    };
    let lists = |name: &str| -> Option<Vec<&str>> {
        document.get(name).and_then(Value::as_array).map(|values| values.iter().filter_map(Value::as_str).collect())
    };
    if lists("code_challenge_methods_supported").is_some_and(|methods| !methods.contains(&"S256")) {
        return Err("the provider does not take PKCE's S256".into());
    }
    if lists("response_types_supported").is_some_and(|types| !types.contains(&"code")) {
        return Err("the provider does not answer with a code".into());
    }
    Ok(Metadata {
        issuer: issuer.to_owned(),
        authorization_endpoint: endpoint("authorization_endpoint")?,
        token_endpoint: endpoint("token_endpoint")?,
        userinfo_endpoint: text("userinfo_endpoint").map(|_| endpoint("userinfo_endpoint")).transpose()?,
        jwks_uri: endpoint("jwks_uri")?,
        sends_issuer: document.get("authorization_response_iss_parameter_supported").and_then(Value::as_bool)
            == Some(true),
    })
}

/// The provider's metadata, kept or fetched anew.
pub async fn discover(context: &Context, address: &str) -> Result<Metadata, String> {
    let now = context.clock.now();
    let kept = &context.outbound.kept;
    if let Some(metadata) = kept.kept::<Metadata>((Shelf::Providers, address), now, None) {
        return Ok(Metadata::clone(&metadata));
    }
    let fetched = documents::fetch(context, "the provider's discovery address", address, MAX_METADATA_BYTES).await?;
    let metadata = read(address, &fetched.body)?;
    kept.keep((Shelf::Providers, address), Arc::new(metadata.clone()), now, fetched.keep);
    Ok(metadata)
}

/// The provider's keys, kept or fetched anew; `again` fetches anew (a token names a key the kept
/// set lacks: the provider rotated) unless the kept set is younger than a minute.
pub async fn keys(context: &Context, jwks_uri: &str, again: bool) -> Result<Arc<JwkSet>, String> {
    let now = context.clock.now();
    let read = |body: &[u8]| -> Result<JwkSet, String> {
        serde_json::from_slice(body).map_err(|_| "the provider's jwks_uri holds no JWK Set".to_owned())
    };
    let kept = &context.outbound.kept;
    if let Some(keys) = kept.kept::<JwkSet>((Shelf::Providers, jwks_uri), now, again.then_some(REFETCH_AFTER)) {
        return Ok(keys);
    }
    let fetched = documents::fetch(context, "the provider's jwks_uri", jwks_uri, MAX_JWKS_BYTES).await?;
    let keys = Arc::new(read(&fetched.body)?);
    kept.keep((Shelf::Providers, jwks_uri), keys.clone(), now, fetched.keep);
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const ADDRESS: &str = "https://id.example/realms/people/.well-known/openid-configuration";

    fn document() -> Value {
        json!({
            "issuer": "https://id.example/realms/people",
            "authorization_endpoint": "https://id.example/realms/people/protocol/openid-connect/auth",
            "token_endpoint": "https://id.example/realms/people/protocol/openid-connect/token",
            "jwks_uri": "https://id.example/realms/people/protocol/openid-connect/certs",
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": true,
        })
    }

    fn with(name: &str, value: Value) -> Result<Metadata, String> {
        let mut document = document();
        document[name] = value;
        read(ADDRESS, document.to_string().as_bytes())
    }

    #[test]
    fn a_provider_s_document_is_read_when_it_names_itself_and_speaks_https() {
        let metadata = read(ADDRESS, document().to_string().as_bytes()).unwrap();
        assert_eq!(metadata.issuer, "https://id.example/realms/people");
        assert!(metadata.sends_issuer);
        assert_eq!(metadata.userinfo_endpoint, None);
        assert_eq!(metadata.jwks_uri, "https://id.example/realms/people/protocol/openid-connect/certs");
    }

    #[test]
    fn a_document_that_could_mislead_a_sign_in_is_refused() {
        assert!(with("issuer", json!("https://evil.example/realms/people")).unwrap_err().contains("is not the one"));
        assert!(with("token_endpoint", json!("http://id.example/token")).unwrap_err().contains("https"));
        assert!(with("jwks_uri", Value::Null).unwrap_err().contains("no jwks_uri"));
        assert!(with("code_challenge_methods_supported", json!(["plain"])).unwrap_err().contains("S256"));
        assert!(with("response_types_supported", json!(["id_token"])).unwrap_err().contains("code"));
        assert!(read(ADDRESS, b"[]").is_err());
    }
}
