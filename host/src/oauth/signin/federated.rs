//! A person's browser sign-in through an external identity provider, once the provider answered
//! (`crate::oauth::federation::sign_in`): the person it vouched for found, linked or created
//! (`crate::oauth::federation::person`), and the browser's realm session opened, remembering the provider
//! so that `login_succeeded` names it when a client is answered. A refused sign-in publishes
//! `login_failed` with the provider and why.

use serde_json::{Map, Value};

use super::{BrowserSignIn, GrantType, Login, Origin};
use crate::oauth::federation::person::{self, TakeError};
use crate::oauth::federation::sign_in::Failure;
use crate::protection::Hold;
use crate::protection::Protection;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients::Client;
use crate::store::events::EventType;
use crate::store::identity_providers::IdentityProvider;
use crate::store::realms::Realm;

/// How a federated sign-in is told in `authentication_methods`.
pub const METHOD: &str = "federated";

/// Why the person is not signed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Attack protection blocked the source.
    SourceBlocked,
    /// The provider declined, or its answer failed a check.
    Upstream,
    /// A person of the realm has the address, and the provider cannot vouch for it.
    AccountExists,
    UserDisabled,
}

impl Refused {
    /// The `failure_reason` of `login_failed`.
    fn reason(self) -> &'static str {
        match self {
            Self::SourceBlocked => "source_blocked",
            Self::Upstream => "identity_provider_refused",
            Self::AccountExists => "account_not_linked",
            Self::UserDisabled => "user_disabled",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FederatedError {
    #[error("the federated sign-in is refused: {0:?}")]
    Refused(Refused),
    #[error(transparent)]
    Failed(#[from] Error),
}

impl From<crate::store::Error> for FederatedError {
    fn from(error: crate::store::Error) -> Self {
        Self::Failed(error.into())
    }
}

/// Signs the browser in as the person `provider` vouched for with `vouched` (its claims, or why
/// it gave none), for the authorization request of `client`.
pub async fn sign_in(
    context: &Context,
    protection: &Protection,
    realm: &Realm,
    client: &Client,
    provider: &IdentityProvider,
    vouched: Result<Map<String, Value>, Failure>,
    origin: &Origin,
) -> Result<BrowserSignIn, FederatedError> {
    let now = context.clock.now();
    if protection.refuses(Hold::SourceBlocked, &realm.id, &origin.ip_address, now).await {
        return Err(FederatedError::Refused(Refused::SourceBlocked));
    }
    let claims = match vouched {
        Ok(claims) => claims,
        Err(Failure::Failed(failure)) => return Err(failure.into()),
        Err(failure) => {
            tracing::warn!(realm = %realm.id, provider = %provider.id, %failure, "an upstream sign-in is refused");
            return refuse(context, realm, client, provider, Refused::Upstream, origin).await;
        }
    };
    let user = match person::take(context, realm, client, provider, &claims).await {
        Ok((user, _)) => user,
        Err(TakeError::Failed(failure)) => return Err(failure.into()),
        Err(TakeError::Refused(refused)) => {
            let refused = match refused {
                person::Refused::EmailTaken => Refused::AccountExists,
                person::Refused::Disabled => Refused::UserDisabled,
                person::Refused::NoSubject
                | person::Refused::NoUsername
                | person::Refused::PlatformRealm
                | person::Refused::Unreadable => Refused::Upstream,
            };
            return refuse(context, realm, client, provider, refused, origin).await;
        }
    };
    let (mut session, cookie) = super::browser::new_browser_session(context, realm, &user, &[METHOD], origin, now);
    session.identity_provider = Some(provider.id.to_string());
    crate::store::browser::insert_session(context.store.writer(), &session).await?;
    Ok(BrowserSignIn { session, user, cookie })
}

async fn refuse(
    context: &Context,
    realm: &Realm,
    client: &Client,
    provider: &IdentityProvider,
    refused: Refused,
    origin: &Origin,
) -> Result<BrowserSignIn, FederatedError> {
    let login = Login {
        grant_type: GrantType::AuthorizationCode.as_str(),
        resource: None,
        user: None,
        session_id: None,
        failure_reason: Some(refused.reason()),
        scopes: &[],
        methods: &[METHOD],
    };
    let mut data = super::login_data(login, origin);
    data["identity_provider"] = provider.id.as_str().into();
    let mut tx = context.store.begin().await?;
    super::publish(&mut tx, realm, client, EventType::LoginFailed, data, context.clock.now()).await?;
    tx.commit().await?;
    context.metrics.sign_in_failed(refused.reason());
    Err(FederatedError::Refused(refused))
}
