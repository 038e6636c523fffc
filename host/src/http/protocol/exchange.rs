//! OAuth 2.0 Token Exchange (RFC 8693) at the token endpoint: the form read into an exchange
//! request for `crate::oauth::delegation`, or, with `requested_token_type` naming a connected account's
//! token, for `crate::oauth::federation::connections`; and its answer (RFC 8693 §2.2) or refusal.

use axum::response::Response;
use serde_json::json;

use super::{Form, OAuthError, json_no_store};
use crate::http::AppState;
use crate::oauth::delegation::{self, ACCESS_TOKEN_TYPE, ExchangeError, ExchangeRefusal, ExchangeRequest};
use crate::oauth::federation::connections::{self, CONNECTION_TOKEN_TYPE, VaultError, VaultRefusal, VaultRequest};
use crate::oauth::signin::Origin;
use crate::store::clients::Client;
use crate::store::realms::Realm;

/// A token exchange by `client`, already authenticated.
pub(super) async fn exchange(
    state: &AppState,
    realm: &Realm,
    client: &Client,
    form: &Form,
    origin: &Origin,
) -> Result<Response, OAuthError> {
    if form.get("requested_token_type") == Some(CONNECTION_TOKEN_TYPE) {
        return vault(state, realm, client, form, origin).await;
    }
    let request = ExchangeRequest {
        realm,
        client,
        subject_token: form.get("subject_token"),
        subject_token_type: form.get("subject_token_type"),
        requested_token_type: form.get("requested_token_type"),
        scopes: form.scopes()?,
        resource: form.get("resource"),
        origin,
    };
    let exchanged = delegation::exchange(state, &state.authz, request).await?;
    let mut answer = json!({
        "access_token": exchanged.access.token,
        "issued_token_type": ACCESS_TOKEN_TYPE,
        "token_type": "Bearer",
        "expires_in": exchanged.access.lifetime_seconds,
    });
    if !exchanged.scopes.is_empty()
        && let Some(object) = answer.as_object_mut()
    {
        object.insert("scope".into(), json!(exchanged.scopes.join(" ")));
    }
    Ok(json_no_store(answer))
}

/// An exchange for the access token of a person's connected account. The answer never carries the
/// upstream refresh token.
async fn vault(
    state: &AppState,
    realm: &Realm,
    client: &Client,
    form: &Form,
    origin: &Origin,
) -> Result<Response, OAuthError> {
    let request = VaultRequest {
        realm,
        client,
        subject_token: form.get("subject_token"),
        subject_token_type: form.get("subject_token_type"),
        connection: form.get("connection"),
        origin,
    };
    let token = connections::exchange(state, request).await?;
    let mut answer = json!({
        "access_token": token.access_token,
        "issued_token_type": ACCESS_TOKEN_TYPE,
        "token_type": "Bearer",
    });
    if let Some(object) = answer.as_object_mut() {
        if let Some(seconds) = token.expires_in {
            object.insert("expires_in".into(), json!(seconds));
        }
        if !token.scopes.is_empty() {
            object.insert("scope".into(), json!(token.scopes.join(" ")));
        }
    }
    Ok(json_no_store(answer))
}

impl From<VaultError> for OAuthError {
    fn from(error: VaultError) -> Self {
        let refusal = match error {
            VaultError::Refused(refusal) => refusal,
            VaultError::Failed(failure) => return failure.into(),
        };
        let description = match &refusal {
            VaultRefusal::Missing(name) => format!("{name} is required"),
            VaultRefusal::SubjectTokenTypeUnsupported => {
                format!("subject_token_type must be {ACCESS_TOKEN_TYPE}: only access tokens are exchanged")
            }
            VaultRefusal::SubjectTokenInactive => {
                "the subject token is not an active access token of a person in this realm".to_owned()
            }
            VaultRefusal::NotAllowed(why) => (*why).to_owned(),
            VaultRefusal::ProviderUnknown => "the realm has no active connection provider of this name".to_owned(),
            VaultRefusal::ConnectionMissing => "the person has not connected an account at this provider".to_owned(),
            VaultRefusal::ConnectionRevoked => {
                "the provider no longer honours the connection: the person must connect again".to_owned()
            }
            VaultRefusal::ProviderUnavailable => "the provider cannot renew the token right now".to_owned(),
        };
        Self::new(refusal.code(), description)
    }
}

/// The RFC 6749 answer to each exchange refusal, with its `error_code`.
impl From<ExchangeRefusal> for OAuthError {
    fn from(refusal: ExchangeRefusal) -> Self {
        let code = refusal.code();
        let description = match refusal {
            ExchangeRefusal::NotEnabled => "Token Exchange is not enabled on this client".to_owned(),
            ExchangeRefusal::Missing(name) => format!("{name} is required"),
            ExchangeRefusal::SubjectTokenTypeUnsupported => {
                format!("subject_token_type must be {ACCESS_TOKEN_TYPE}: only access tokens are exchanged")
            }
            ExchangeRefusal::RequestedTokenTypeUnsupported => {
                format!("requested_token_type must be {ACCESS_TOKEN_TYPE}: only access tokens are issued")
            }
            ExchangeRefusal::SubjectTokenInactive => {
                "the subject token is not an active access token of a person in this realm".to_owned()
            }
            ExchangeRefusal::NotPermitted { why } => why.into(),
            ExchangeRefusal::ScopesExceedGrant { whose, excess } => format!("beyond {whose}: {}", excess.join(" ")),
            ExchangeRefusal::ResourceExceedsGrant { resource } => match resource {
                Some(resource) => format!("{resource} is not among the resources the delegation grant lists"),
                None => "the delegation grant confines tokens to the resources it lists: send resource".to_owned(),
            },
            ExchangeRefusal::DepthExceeded { depth, max_depth } => {
                format!("the subject token already carries {depth} actor(s); the delegation grant allows {max_depth}")
            }
            ExchangeRefusal::AssuranceTooLow { reached, needed } => format!(
                "the person's sign-in behind the subject token reached acr {reached}; the delegation grant asks for \
                 {needed}: they sign in again at that level"
            ),
            ExchangeRefusal::ResourceNotAllowed { address } => {
                format!("{address} is not a resource server this client may request tokens for")
            }
        };
        Self::new(code, description)
    }
}

impl From<ExchangeError> for OAuthError {
    fn from(error: ExchangeError) -> Self {
        match error {
            ExchangeError::Refused(refusal) => refusal.into(),
            ExchangeError::Failed(failure) => failure.into(),
        }
    }
}
