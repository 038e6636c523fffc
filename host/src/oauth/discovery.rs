//! What the provider says of itself: the OpenID Provider metadata of a realm (OIDC Discovery 1.0,
//! RFC 8414), and the RFC 9728 metadata of its resource servers. Both are public.

use serde_json::{Value, json};

use super::tokens::issuer;
use crate::oauth::signin::assurance::Level;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients::GrantType;
use crate::store::realms::{ClientRegistration, Realm};
use crate::store::resource_servers::ResourceServer;

/// The realm's provider metadata: its endpoints, and what each supports.
pub async fn provider_metadata(context: &Context, realm: &Realm) -> Result<Value, Error> {
    let issuer = issuer(context, &realm.id);
    let endpoint = |path: &str| format!("{issuer}/protocol/openid-connect/{path}");
    // `create` is named only where people may sign up, as the authorization endpoint refuses it elsewhere.
    let mut prompts = vec!["none", "login", "consent", "select_account"];
    if super::signin::signup::open(context, realm) {
        prompts.push("create");
    }
    // The standard scopes, then those the realm has (the account's catalogue and its own).
    let mut scopes: Vec<String> = ["openid", "profile", "email"].map(String::from).to_vec();
    for name in crate::store::scopes::names_in_realm(context.store.pool(), &realm.account_id, &realm.id).await? {
        if !scopes.contains(&name) {
            scopes.push(name);
        }
    }
    let mut document = json!({
        "issuer": issuer,
        "token_endpoint": endpoint("token"),
        "jwks_uri": endpoint("certs"),
        "introspection_endpoint": endpoint("token/introspect"),
        "revocation_endpoint": endpoint("revoke"),
        "userinfo_endpoint": endpoint("userinfo"),
        "authorization_endpoint": endpoint("auth"),
        "end_session_endpoint": endpoint("logout"),
        "device_authorization_endpoint": endpoint("auth/device"),
        "grant_types_supported": GrantType::ANNOUNCED.map(GrantType::as_str),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "code_challenge_methods_supported": ["S256"],
        "prompt_values_supported": prompts,
        "authorization_response_iss_parameter_supported": true,
        "request_parameter_supported": false,
        "request_uri_parameter_supported": false,
        "claims_parameter_supported": false,
        "acr_values_supported": Level::ALL.map(Level::acr),
        "ui_locales_supported": super::signin::texts::SUPPORTED,
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256", "RS256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"],
        "token_endpoint_auth_signing_alg_values_supported": super::client_keys::ALGORITHMS,
        "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "private_key_jwt"],
        "introspection_endpoint_auth_signing_alg_values_supported": super::client_keys::ALGORITHMS,
        "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "private_key_jwt"],
        "revocation_endpoint_auth_signing_alg_values_supported": super::client_keys::ALGORITHMS,
        "scopes_supported": scopes,
        "claims_supported": [
            "iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "at_hash", "sid", "azp",
            "preferred_username", "name",
            "given_name", "family_name", "email", "email_verified"
        ],
        "access_token_issuer": issuer,
        "dpop_signing_alg_values_supported": super::dpop::ALGORITHMS,
    });
    if let Value::Object(fields) = &mut document {
        // Where clients register themselves (RFC 7591), named only where the realm takes registrations.
        if realm.settings.client_registration != ClientRegistration::Closed {
            fields.insert("registration_endpoint".into(), Value::String(endpoint("register")));
        }
        // Said only where the realm takes clients known by a metadata document.
        if realm.settings.client_id_metadata_documents {
            fields.insert("client_id_metadata_document_supported".into(), Value::Bool(true));
        }
    }
    Ok(document)
}

/// The metadata a resource server of the realm publishes (or proxies) at its own
/// `/.well-known/oauth-protected-resource`: which authorization server issues tokens for it and
/// which scopes it takes.
pub fn protected_resource(context: &Context, realm: &Realm, server: &ResourceServer) -> Value {
    json!({
        "resource": server.address,
        "resource_name": server.name,
        "authorization_servers": [issuer(context, &realm.id)],
        "scopes_supported": server.scopes,
        "bearer_methods_supported": ["header"],
    })
}
