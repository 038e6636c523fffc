//! Tenant scoping as extractors: a handler that names [`InRealm<P>`] or [`InClient<P>`] receives
//! the realm (and client) its path names, already loaded and already checked to be in the
//! caller's reach for the permission `P`. A realm of another account and one that does not exist
//! get the same 403; an unknown client of a reachable realm gets 404.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;

use super::clients::client_in_reach;
use super::realm_in_reach;
use crate::AppState;
use crate::authz::permission;
use crate::error::Error;
use crate::http::auth::Caller;
use crate::store::clients::Client;
use crate::store::realms::Realm;
use crate::validate::Rule;

/// A permission a handler needs, as a type.
pub trait Permission {
    const NAME: &'static str;
}

macro_rules! permissions {
    ($($marker:ident => $name:ident),* $(,)?) => {
        $(
            #[doc = concat!("Needs `", stringify!($name), "`.")]
            #[derive(Debug)]
            pub struct $marker;

            impl Permission for $marker {
                const NAME: &'static str = permission::$name;
            }
        )*
    };
}

permissions! {
    RealmRead => REALM_READ,
    RealmUpdate => REALM_UPDATE,
    RealmDelete => REALM_DELETE,
    ClientCreate => CLIENT_CREATE,
    ClientRead => CLIENT_READ,
    ClientUpdate => CLIENT_UPDATE,
    ClientDelete => CLIENT_DELETE,
    UserCreate => USER_CREATE,
    UserRead => USER_READ,
    OrganizationCreate => ORGANIZATION_CREATE,
    OrganizationRead => ORGANIZATION_READ,
    SessionRead => SESSION_READ,
    AuditRead => AUDIT_READ,
}

/// The path's parameter `name`.
async fn path_parameter(parts: &mut Parts, state: &AppState, name: &str) -> Result<String, Error> {
    let Path(mut parameters) = Path::<HashMap<String, String>>::from_request_parts(parts, state)
        .await
        .map_err(|rejection| Error::invalid(name, Rule::Format, rejection.body_text()))?;
    parameters.remove(name).ok_or_else(|| Error::Internal(anyhow::anyhow!("the route has no {{{name}}} parameter")))
}

/// The realm of the path's `{realm}`, in the caller's reach for `P`.
#[derive(Debug)]
pub struct InRealm<P> {
    pub realm: Arc<Realm>,
    pub caller: Caller,
    needs: PhantomData<P>,
}

impl<P: Permission + Send> FromRequestParts<AppState> for InRealm<P> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let caller = Caller::from_request_parts(parts, state).await?;
        let realm_id = path_parameter(parts, state, "realm").await?;
        let realm = realm_in_reach(state, &caller, &realm_id, P::NAME).await?;
        Ok(Self { realm, caller, needs: PhantomData })
    }
}

/// The client of the path's `{realm}` and `{client}`, in the caller's reach for `P`.
#[derive(Debug)]
pub struct InClient<P> {
    pub client: Client,
    pub caller: Caller,
    needs: PhantomData<P>,
}

impl<P: Permission + Send> FromRequestParts<AppState> for InClient<P> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let caller = Caller::from_request_parts(parts, state).await?;
        let realm_id = path_parameter(parts, state, "realm").await?;
        let client_id = path_parameter(parts, state, "client").await?;
        let client = client_in_reach(state, &caller, &realm_id, &client_id, P::NAME).await?;
        Ok(Self { client, caller, needs: PhantomData })
    }
}
