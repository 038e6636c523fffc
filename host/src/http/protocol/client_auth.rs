//! Who the client of a protocol request is: the credentials it presents (a secret by HTTP Basic or
//! in the body, or a signed assertion: `private_key_jwt`), a confidential client they
//! authenticate, or a public client naming itself by `client_id`. Each notes the client for the
//! request's log line and for CORS.

use std::sync::Arc;

use axum::http::{HeaderMap, header};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::{Form, OAuthError, cors, forbidden_character};
use crate::http::AppState;
use crate::oauth::client_keys::{self, AssertionError};
use crate::runtime::error::OAuthCode;
use crate::store::clients::{Client, ClientType};
use crate::store::realms::Realm;

/// Client credentials from HTTP Basic (RFC 6749 §2.3.1: both parts form-encoded) or the body.
pub fn presented_credentials(headers: &HeaderMap, form: &Form) -> Result<Option<(String, String, bool)>, OAuthError> {
    let basic = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| {
        let (scheme, rest) = v.split_once(' ')?;
        scheme.eq_ignore_ascii_case("basic").then(|| rest.trim().to_owned())
    });
    let in_body = form.get("client_secret");
    match (basic, in_body) {
        (Some(_), Some(_)) => Err(OAuthError::new(
            OAuthCode::MultipleClientAuthentications,
            "use one client authentication method: HTTP Basic or the body, not both",
        )),
        (Some(encoded), None) => {
            let decoded = STANDARD.decode(encoded).ok().and_then(|b| String::from_utf8(b).ok());
            let Some((id, secret)) = decoded.as_deref().and_then(|d| d.split_once(':')) else {
                return Err(OAuthError::invalid_client(true));
            };
            let decode = |part: &str| {
                url::form_urlencoded::parse(format!("x={part}").as_bytes()).next().map(|(_, v)| v.into_owned())
            };
            match (decode(id), decode(secret)) {
                (Some(id), _) if id.contains('\0') => Err(forbidden_character("client_id")),
                (_, Some(secret)) if secret.contains('\0') => Err(forbidden_character("client_secret")),
                (Some(id), Some(secret)) => Ok(Some((id, secret, true))),
                _ => Err(OAuthError::invalid_client(true)),
            }
        }
        (None, Some(secret)) => match form.get("client_id") {
            Some(id) => Ok(Some((id.to_owned(), secret.to_owned(), false))),
            None => Err(OAuthError::invalid_client(false)),
        },
        (None, None) => Ok(None),
    }
}

/// The client the request's credentials name (by HTTP Basic, `client_id`, or an assertion's
/// `sub`), whether or not they authenticate it.
pub fn named_client_id(headers: &HeaderMap, form: &Form) -> Option<String> {
    if let Ok(Some((id, _, _))) = presented_credentials(headers, form) {
        return Some(id);
    }
    form.get("client_id")
        .map(str::to_owned)
        .or_else(|| form.get("client_assertion").and_then(client_keys::named_client))
}

/// Whether the request carries client credentials: a secret or an assertion.
pub fn authenticates(headers: &HeaderMap, form: &Form) -> Result<bool, OAuthError> {
    Ok(form.get("client_assertion_type").is_some() || presented_credentials(headers, form)?.is_some())
}

/// Authenticates the confidential client of the request (`client_secret_basic`,
/// `client_secret_post` or `private_key_jwt`). Unknown client, wrong secret or assertion, disabled
/// client and a public client all get the same 401 `invalid_client`. A client that holds keys
/// authenticates with them alone.
pub async fn authenticate_client(
    state: &AppState,
    realm: &Realm,
    headers: &HeaderMap,
    form: &Form,
) -> Result<Arc<Client>, OAuthError> {
    if let Some(kind) = form.get("client_assertion_type") {
        return asserted_client(state, realm, headers, form, kind).await;
    }
    let Some((id, secret, basic)) = presented_credentials(headers, form)? else {
        return Err(OAuthError::invalid_client(false));
    };
    crate::http::observe::note_caller(format!("client:{id}"));
    if form.get("client_id").is_some_and(|named| named != id) {
        return Err(OAuthError::new(OAuthCode::ClientMismatch, "client_id differs from the authenticated client"));
    }
    let client = crate::oauth::tokens::find_client(state, &realm.id, &id).await?;
    if let Some(named) = &client {
        cors::note_client(named);
    }
    let now = state.clock.now();
    let authenticated = client.filter(|c| {
        crate::oauth::metadata_documents::usable(realm, c)
            && c.client_type == ClientType::Confidential
            && !c.uses_keys()
            && c.accepts_secret(&state.hasher, &secret, now)
    });
    authenticated.ok_or_else(|| OAuthError::invalid_client(basic))
}

/// The client a signed assertion authenticates (RFC 7523 §2.2), named by `client_id` or by the
/// assertion's `sub`.
async fn asserted_client(
    state: &AppState,
    realm: &Realm,
    headers: &HeaderMap,
    form: &Form,
    kind: &str,
) -> Result<Arc<Client>, OAuthError> {
    if presented_credentials(headers, form)?.is_some() {
        return Err(OAuthError::new(
            OAuthCode::MultipleClientAuthentications,
            "use one client authentication method: a secret or an assertion, not both",
        ));
    }
    if kind != client_keys::ASSERTION_TYPE {
        return Err(OAuthError::new(
            OAuthCode::InvalidClient,
            format!("client_assertion_type {kind} is not supported"),
        ));
    }
    let assertion = form.require("client_assertion")?;
    let named = client_keys::named_client(assertion);
    let Some(id) = form.get("client_id").map(str::to_owned).or(named) else {
        return Err(OAuthError::invalid_client(false));
    };
    crate::http::observe::note_caller(format!("client:{id}"));
    let client = crate::oauth::tokens::find_client(state, &realm.id, &id).await?;
    if let Some(named) = &client {
        cors::note_client(named);
    }
    let client = client
        .filter(|c| {
            crate::oauth::metadata_documents::usable(realm, c)
                && c.client_type == ClientType::Confidential
                && c.uses_keys()
        })
        .ok_or_else(|| OAuthError::invalid_client(false))?;
    match client_keys::verify(state, &crate::oauth::tokens::issuer(state, &realm.id), &client, assertion).await {
        Ok(()) => Ok(client),
        Err(AssertionError::Refused(why)) => {
            tracing::info!(client = %id, why, "a client assertion was refused");
            Err(OAuthError::invalid_client(false))
        }
        Err(AssertionError::Failed(failure)) => Err(failure.into()),
    }
}

/// A public client, which holds no secret, named by `client_id` alone (RFC 6749 §2.1): only where
/// another proof stands in for the secret, a PKCE verifier.
pub async fn public_client(state: &AppState, realm: &Realm, form: &Form) -> Result<Arc<Client>, OAuthError> {
    let id = form.require("client_id")?;
    crate::http::observe::note_caller(format!("client:{id}"));
    let client = crate::oauth::tokens::find_client(state, &realm.id, id).await?;
    if let Some(named) = &client {
        cors::note_client(named);
    }
    client
        .filter(|c| crate::oauth::metadata_documents::usable(realm, c) && c.client_type == ClientType::Public)
        .ok_or_else(|| OAuthError::invalid_client(false))
}
