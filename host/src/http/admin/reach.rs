//! Tenant scoping as extractors: a handler that names [`InRealm<P>`], [`InClient<P>`],
//! [`Found<R, P>`] or [`Owned<R, P>`] receives what its path names, loaded and checked to be in
//! the caller's reach (see [`crate::directory::reach`]).

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;

pub use crate::directory::reach::*;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::kernel::validate::Rule;
use crate::runtime::error::Error;
use crate::store::clients::Client;
use crate::store::realms::Realm;
use crate::store::users;

/// The path's parameters, read once per extractor.
struct Parameters(HashMap<String, String>);

impl Parameters {
    async fn of(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let Path(parameters) = Path::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map_err(|rejection| Error::invalid("path", Rule::Format, rejection.body_text()))?;
        Ok(Self(parameters))
    }

    /// The parameter `name`, which the route always has.
    fn take(&mut self, name: &str) -> Result<String, Error> {
        self.0.remove(name).ok_or_else(|| Error::Internal(anyhow::anyhow!("the route has no {{{name}}} parameter")))
    }
}

/// The caller, the path's realm in their reach for `permission`, and the path's other parameters.
async fn realm_of_path(
    parts: &mut Parts,
    state: &AppState,
    permission: &str,
) -> Result<(Caller, Arc<Realm>, Parameters), Error> {
    let caller = Caller::from_request_parts(parts, state).await?;
    let mut parameters = Parameters::of(parts, state).await?;
    let realm = realm_in_reach(&state.admin(), &caller, &parameters.take("realm")?, permission).await?;
    Ok((caller, realm, parameters))
}

/// The caller, the path's client in their reach for `permission`, and the path's other parameters.
async fn client_of_path(
    parts: &mut Parts,
    state: &AppState,
    permission: &str,
) -> Result<(Caller, Client, Parameters), Error> {
    let caller = Caller::from_request_parts(parts, state).await?;
    let mut parameters = Parameters::of(parts, state).await?;
    let (realm_id, client_id) = (parameters.take("realm")?, parameters.take("client")?);
    let client = client_in_reach(&state.admin(), &caller, &realm_id, &client_id, permission).await?;
    Ok((caller, client, parameters))
}

impl<P: Permission + Send> FromRequestParts<AppState> for InRealm<P> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let (caller, realm, _) = realm_of_path(parts, state, P::NAME).await?;
        Ok(Self { realm, caller, needs: PhantomData })
    }
}

impl<P: Permission + Send> FromRequestParts<AppState> for InClient<P> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let (caller, client, _) = client_of_path(parts, state, P::NAME).await?;
        Ok(Self { client, caller, needs: PhantomData })
    }
}

impl<P: Permission + Send> FromRequestParts<AppState> for ClientUser<P> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let (caller, client, mut parameters) = client_of_path(parts, state, P::NAME).await?;
        let user = users::find(state.store.pool(), &client.realm_id, &parameters.take("userId")?)
            .await?
            .ok_or(Error::NotFound("user"))?;
        Ok(Self { client, user, caller, needs: PhantomData })
    }
}

impl<R: Addressed, P: Permission + Send> FromRequestParts<AppState> for Found<R, P> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let (caller, realm, mut parameters) = realm_of_path(parts, state, P::NAME).await?;
        let item =
            R::find(&state.admin(), &realm, &parameters.take(R::PARAMETER)?).await?.ok_or(Error::NotFound(R::WHAT))?;
        Ok(Self { realm, item, caller, needs: PhantomData })
    }
}

impl<R: OfClient, P: Permission + Send> FromRequestParts<AppState> for FoundOfClient<R, P> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let (caller, client, mut parameters) = client_of_path(parts, state, P::NAME).await?;
        let item =
            R::find(&state.admin(), &client, &parameters.take(R::PARAMETER)?).await?.ok_or(Error::NotFound(R::WHAT))?;
        Ok(Self { client, item, caller, needs: PhantomData })
    }
}

impl<R: AccountOwned, P: Permission + Send> FromRequestParts<AppState> for Owned<R, P> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let caller = Caller::from_request_parts(parts, state).await?;
        let id = Parameters::of(parts, state).await?.take(R::PARAMETER)?;
        let item = R::in_reach(&state.admin(), &caller, &id, P::NAME).await?;
        Ok(Self { item, caller, needs: PhantomData })
    }
}
