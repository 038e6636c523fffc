//! Tenant scoping as extractors: a handler that names [`InRealm<P>`], [`InClient<P>`],
//! [`Found<R, P>`] or [`Owned<R, P>`] receives what its path names, loaded and checked to be in
//! the caller's reach (see [`crate::directory::reach`]).

use std::collections::HashMap;

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;

pub use crate::directory::reach::*;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::kernel::validate::Rule;
use crate::runtime::error::Error;

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

impl<P: Permission + Send> FromRequestParts<AppState> for InRealm<P> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let caller = Caller::from_request_parts(parts, state).await?;
        let mut path = Parameters::of(parts, state).await?;
        Self::reach(&state.admin(), &caller, &path.take("realm")?).await
    }
}

impl<P: Permission + Send> FromRequestParts<AppState> for InClient<P> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let caller = Caller::from_request_parts(parts, state).await?;
        let mut path = Parameters::of(parts, state).await?;
        Self::reach(&state.admin(), &caller, &path.take("realm")?, &path.take("client")?).await
    }
}

impl<P: Permission + Send> FromRequestParts<AppState> for ClientUser<P> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let caller = Caller::from_request_parts(parts, state).await?;
        let mut path = Parameters::of(parts, state).await?;
        let (realm, client, user) = (path.take("realm")?, path.take("client")?, path.take("userId")?);
        Self::reach(&state.admin(), &caller, &realm, &client, &user).await
    }
}

impl<R: Addressed, P: Permission + Send> FromRequestParts<AppState> for Found<R, P> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let caller = Caller::from_request_parts(parts, state).await?;
        let mut path = Parameters::of(parts, state).await?;
        Self::reach(&state.admin(), &caller, &path.take("realm")?, &path.take(R::PARAMETER)?).await
    }
}

impl<R: OfClient, P: Permission + Send> FromRequestParts<AppState> for FoundOfClient<R, P> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let caller = Caller::from_request_parts(parts, state).await?;
        let mut path = Parameters::of(parts, state).await?;
        let (realm, client, id) = (path.take("realm")?, path.take("client")?, path.take(R::PARAMETER)?);
        Self::reach(&state.admin(), &caller, &realm, &client, &id).await
    }
}

impl<R: AccountOwned, P: Permission + Send> FromRequestParts<AppState> for Owned<R, P> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let caller = Caller::from_request_parts(parts, state).await?;
        let id = Parameters::of(parts, state).await?.take(R::PARAMETER)?;
        Self::reach(&state.admin(), &caller, &id).await
    }
}
