//! The DPoP proofs of protocol requests (RFC 9449): at the token endpoint, the proof whose key the
//! tokens are bound to; where an access token is used, the proof by the key it is bound to. A
//! refusal is `invalid_dpop_proof`, or `use_dpop_nonce` with a fresh nonce in `DPoP-Nonce`.

use axum::http::HeaderMap;

use super::OAuthError;
use crate::http::AppState;
use crate::oauth::dpop::{self, ProofError, Request};
use crate::runtime::error::OAuthCode;

/// The header a proof travels in.
const DPOP: &str = "dpop";

/// The thumbprint of the key of the request's proof for `request`, when it carries one.
pub async fn proven_key(
    state: &AppState,
    headers: &HeaderMap,
    request: Request<'_>,
) -> Result<Option<String>, OAuthError> {
    let mut values = headers.get_all(DPOP).iter();
    let Some(value) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        return Err(OAuthError::new(OAuthCode::InvalidDpopProof, "send one DPoP proof"));
    }
    let proof =
        value.to_str().map_err(|_| OAuthError::new(OAuthCode::InvalidDpopProof, "the DPoP proof is not a JWT"))?;
    match dpop::verify(state, proof, request).await {
        Ok(proven) => Ok(Some(proven.jkt)),
        Err(ProofError::Invalid(why)) => Err(OAuthError::new(OAuthCode::InvalidDpopProof, why)),
        Err(ProofError::NonceNeeded) => Err(OAuthError {
            dpop_nonce: Some(dpop::nonce(state, state.clock.now())),
            ..OAuthError::new(OAuthCode::UseDpopNonce, "the DPoP proof must carry the nonce given in DPoP-Nonce")
        }),
        Err(ProofError::Failed(failure)) => Err(failure.into()),
    }
}
