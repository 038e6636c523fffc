//! What a sign-in may be granted: the scopes a client may request, and the resource server a token
//! may be addressed to (RFC 8707).

use super::{Refusal, SignInError};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients::Client;
use crate::store::resource_servers::{self, ResourceServer};

/// Most distinct scopes one request may name. A client may be allowed at most 100, and a person's
/// sign-in adds the OpenID Connect ones.
pub const MAX_SCOPES: usize = 128;

/// Scopes of OpenID Connect every client may ask for in a person's sign-in.
const OIDC_SCOPES: &[&str] = &["openid", "profile", "email"];

/// The requested scopes, each one the client may request and, for a token addressed to a resource
/// server, one the server accepts; without any asked, every such scope. An excess is refused with
/// the excess named, never trimmed.
pub fn requested_scopes(
    client: &Client,
    asked: Option<Vec<String>>,
    person: bool,
    server: Option<&ResourceServer>,
) -> Result<Vec<String>, Refusal> {
    let mut allowed = client.allowed_scopes.clone();
    if let Some(server) = server {
        let accepted = server.scopes.clone();
        allowed.retain(|scope| accepted.contains(scope));
    }
    let Some(scopes) = asked else { return Ok(allowed) };
    let excess: Vec<String> = scopes
        .iter()
        .filter(|s| !(allowed.contains(s) || (person && OIDC_SCOPES.contains(&s.as_str()))))
        .cloned()
        .collect();
    if excess.is_empty() {
        Ok(scopes)
    } else {
        Err(Refusal::ScopesNotAllowed { excess, for_resource: server.is_some() })
    }
}

/// Why a requested resource was not granted: no resource server this client may request tokens
/// for has the address, or the service failed to read.
#[derive(Debug)]
pub enum ResourceError {
    NotAllowed { address: String },
    Failed(Error),
}

impl From<ResourceError> for SignInError {
    fn from(error: ResourceError) -> Self {
        match error {
            ResourceError::NotAllowed { address } => Refusal::ResourceNotAllowed { address }.into(),
            ResourceError::Failed(failure) => failure.into(),
        }
    }
}

/// RFC 8707 `resource`: an active resource server of the realm that lists the client among those
/// it accepts tokens from.
pub async fn requested_resource(
    context: &Context,
    client: &Client,
    address: Option<&str>,
) -> Result<Option<ResourceServer>, ResourceError> {
    let Some(address) = address else { return Ok(None) };
    let server = resource_servers::find_by_address(context.store.pool(), &client.realm_id, address)
        .await
        .map_err(|error| ResourceError::Failed(error.into()))?;
    let allowed = server.filter(|s| s.status == crate::store::Status::Active && s.accepts(client));
    match allowed {
        Some(server) => Ok(Some(server)),
        None => Err(ResourceError::NotAllowed { address: address.to_owned() }),
    }
}
