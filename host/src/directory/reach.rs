//! Tenant scoping: what an admin operation acts on, already loaded and already checked to be in
//! the caller's reach for a permission. [`InRealm<P>`] and [`InClient<P>`] hold a realm (and a
//! client) the caller may act on with the permission `P`; [`Found<R, P>`] adds the thing of that
//! realm an id names (a user, a group, a session…), and [`Owned<R, P>`] what the caller's account
//! owns outside any realm (a secret, a role, a capture). A realm, client, role or scope of another
//! account and one that does not exist get the same 403 (`Error::unreached`); a record a reachable
//! realm does not hold (a user, a session, a grant…) gets 404. The admin API reads them from the
//! request's path; the console and the configuration import build them with `reach`.

use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::Arc;

use crate::authz::caller::Caller;
use crate::authz::{Authorizer, Resource, permission};
use crate::kernel::error_code::ErrorCode;
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::captures::{self, Capture};
use crate::store::clients::{self as client_store, Client};
use crate::store::connections::{self, Connection, ConnectionProvider};
use crate::store::consumers::{self, Consumer};
use crate::store::delegation::{self, DelegationGrant};
use crate::store::identity_providers::{self, IdentityProvider};
use crate::store::organizations::{self, Organization};
use crate::store::realm_roles::{self, Group};
use crate::store::realms::Realm;
use crate::store::resource_servers::{self, ResourceServer};
use crate::store::roles::{self, AccountRole};
use crate::store::secrets::{self, Secret};
use crate::store::sessions::{self, Session};
use crate::store::users::{self, User};

/// What the admin operations work with: the context, and the policies that decide on each caller.
#[derive(Clone, Copy)]
pub struct Admin<'a> {
    pub context: &'a Context,
    pub authz: &'a Authorizer,
}

impl Deref for Admin<'_> {
    type Target = Context;
    fn deref(&self) -> &Context {
        self.context
    }
}

/// Loads a realm the caller may act on with `permission`. A realm of another account and one that
/// does not exist get the same 403 (no existence leak).
pub async fn realm_in_reach(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    permission: &str,
) -> Result<Arc<Realm>, Error> {
    let realm = super::realms::find(admin.context, realm_id).await?;
    let owner = realm.as_ref().map(|r| r.account_id.clone());
    caller.require(admin.authz, permission, Resource::Realm { id: realm_id.to_owned(), owner })?;
    realm.ok_or(Error::Forbidden(ErrorCode::Forbidden))
}

/// Loads a client the caller may act on with `permission`; like a realm, one of another account
/// and one that does not exist get the same 403.
pub async fn client_in_reach(
    admin: &Admin<'_>,
    caller: &Caller,
    realm_id: &str,
    client_id: &str,
    permission: &str,
) -> Result<Client, Error> {
    let realm = super::realms::find(admin.context, realm_id).await?;
    let owner = realm.as_ref().map(|r| r.account_id.clone());
    let resource = Resource::Client { realm_id: realm_id.to_owned(), id: client_id.to_owned(), owner };
    caller.require(admin.authz, permission, resource)?;
    client_store::find(admin.store.pool(), realm_id, client_id).await?.ok_or(Error::unreached())
}

/// A permission an operation needs, as a type.
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
    UserUpdate => USER_UPDATE,
    UserDelete => USER_DELETE,
    UserImpersonate => USER_IMPERSONATE,
    OrganizationCreate => ORGANIZATION_CREATE,
    OrganizationRead => ORGANIZATION_READ,
    OrganizationUpdate => ORGANIZATION_UPDATE,
    OrganizationDelete => ORGANIZATION_DELETE,
    SessionRead => SESSION_READ,
    SessionDelete => SESSION_DELETE,
    SecretRead => SECRET_READ,
    SecretUpdate => SECRET_UPDATE,
    SecretDelete => SECRET_DELETE,
    RoleRead => ROLE_READ,
    RoleUpdate => ROLE_UPDATE,
    RoleDelete => ROLE_DELETE,
    WebhookRead => WEBHOOK_READ,
    WebhookDelete => WEBHOOK_DELETE,
    AuditRead => AUDIT_READ,
}

/// The realm of the path's `{realm}`, in the caller's reach for `P`.
#[derive(Debug)]
pub struct InRealm<P> {
    pub realm: Arc<Realm>,
    pub caller: Caller,
    needs: PhantomData<P>,
}

impl<P: Permission + Send> InRealm<P> {
    /// The realm `realm_id`, in `caller`'s reach for `P`.
    pub async fn reach(admin: &Admin<'_>, caller: &Caller, realm_id: &str) -> Result<Self, Error> {
        let realm = realm_in_reach(admin, caller, realm_id, P::NAME).await?;
        Ok(Self { realm, caller: caller.clone(), needs: PhantomData })
    }
}

/// The client of the path's `{realm}` and `{client}`, in the caller's reach for `P`.
#[derive(Debug)]
pub struct InClient<P> {
    pub client: Client,
    pub caller: Caller,
    needs: PhantomData<P>,
}

impl<P: Permission + Send> InClient<P> {
    /// The client `client_id` of the realm `realm_id`, in `caller`'s reach for `P`.
    pub async fn reach(admin: &Admin<'_>, caller: &Caller, realm_id: &str, client_id: &str) -> Result<Self, Error> {
        let client = client_in_reach(admin, caller, realm_id, client_id, P::NAME).await?;
        Ok(Self { client, caller: caller.clone(), needs: PhantomData })
    }
}

/// The client of the path's `{realm}` and `{client}`, in the caller's reach for `P`, and the person
/// of its realm the path's `{userId}` names (404 when the realm has none).
#[derive(Debug)]
pub struct ClientUser<P> {
    pub client: Client,
    pub user: User,
    pub caller: Caller,
    needs: PhantomData<P>,
}

impl<P: Permission + Send> ClientUser<P> {
    /// The client `client_id` of the realm `realm_id`, in `caller`'s reach for `P`, and the person
    /// `user_id` of its realm.
    pub async fn reach(
        admin: &Admin<'_>,
        caller: &Caller,
        realm_id: &str,
        client_id: &str,
        user_id: &str,
    ) -> Result<Self, Error> {
        let client = client_in_reach(admin, caller, realm_id, client_id, P::NAME).await?;
        let user = users::find(admin.store.pool(), &client.realm_id, user_id).await?.ok_or(Error::NotFound("user"))?;
        Ok(Self { client, user, caller: caller.clone(), needs: PhantomData })
    }
}

/// Something of a realm that a path parameter names.
pub trait Addressed: Sized + Send {
    /// The path parameter that holds its id.
    const PARAMETER: &'static str;
    /// Its name in a 404.
    const WHAT: &'static str;

    fn find(admin: &Admin<'_>, realm: &Realm, id: &str) -> impl Future<Output = Result<Option<Self>, Error>> + Send;
}

/// The `R` the path names, of the path's realm, which is in the caller's reach for `P`. Unknown in
/// that realm, it gets 404.
#[derive(Debug)]
pub struct Found<R, P> {
    pub realm: Arc<Realm>,
    pub item: R,
    pub caller: Caller,
    needs: PhantomData<P>,
}

impl<R: Addressed, P: Permission + Send> Found<R, P> {
    /// The `R` named `id` of the realm `realm_id`, which is in `caller`'s reach for `P`.
    pub async fn reach(admin: &Admin<'_>, caller: &Caller, realm_id: &str, id: &str) -> Result<Self, Error> {
        let realm = realm_in_reach(admin, caller, realm_id, P::NAME).await?;
        let item = R::find(admin, &realm, id).await?.ok_or(Error::NotFound(R::WHAT))?;
        Ok(Self { realm, item, caller: caller.clone(), needs: PhantomData })
    }
}

impl Addressed for User {
    const PARAMETER: &'static str = "userId";
    const WHAT: &'static str = "user";

    async fn find(admin: &Admin<'_>, realm: &Realm, id: &str) -> Result<Option<Self>, Error> {
        Ok(users::find(admin.store.pool(), &realm.id, id).await?)
    }
}

impl Addressed for Group {
    const PARAMETER: &'static str = "groupId";
    const WHAT: &'static str = "group";

    async fn find(admin: &Admin<'_>, realm: &Realm, id: &str) -> Result<Option<Self>, Error> {
        Ok(realm_roles::find_group(admin.store.pool(), &realm.id, id).await?)
    }
}

impl Addressed for Organization {
    const PARAMETER: &'static str = "organizationId";
    const WHAT: &'static str = "organization";

    async fn find(admin: &Admin<'_>, realm: &Realm, id: &str) -> Result<Option<Self>, Error> {
        Ok(organizations::find(admin.store.pool(), &realm.id, id).await?)
    }
}

impl Addressed for ResourceServer {
    const PARAMETER: &'static str = "serverId";
    const WHAT: &'static str = "resource server";

    async fn find(admin: &Admin<'_>, realm: &Realm, id: &str) -> Result<Option<Self>, Error> {
        Ok(resource_servers::find(admin.store.pool(), &realm.id, id).await?)
    }
}

impl Addressed for IdentityProvider {
    const PARAMETER: &'static str = "providerId";
    const WHAT: &'static str = "identity provider";

    async fn find(admin: &Admin<'_>, realm: &Realm, id: &str) -> Result<Option<Self>, Error> {
        Ok(identity_providers::find(admin.store.pool(), &realm.id, id).await?)
    }
}

impl Addressed for ConnectionProvider {
    const PARAMETER: &'static str = "providerId";
    const WHAT: &'static str = "connection provider";

    async fn find(admin: &Admin<'_>, realm: &Realm, id: &str) -> Result<Option<Self>, Error> {
        Ok(connections::find_provider(admin.store.pool(), &realm.id, id).await?)
    }
}

impl Addressed for Connection {
    const PARAMETER: &'static str = "connectionId";
    const WHAT: &'static str = "connection";

    async fn find(admin: &Admin<'_>, realm: &Realm, id: &str) -> Result<Option<Self>, Error> {
        Ok(connections::find(admin.store.pool(), &realm.id, id).await?)
    }
}

impl Addressed for Session {
    const PARAMETER: &'static str = "sessionId";
    const WHAT: &'static str = "session";

    async fn find(admin: &Admin<'_>, realm: &Realm, id: &str) -> Result<Option<Self>, Error> {
        Ok(sessions::find(admin.store.pool(), id).await?.filter(|session| session.realm_id == realm.id))
    }
}

impl Addressed for DelegationGrant {
    const PARAMETER: &'static str = "grantId";
    const WHAT: &'static str = "delegation grant";

    async fn find(admin: &Admin<'_>, realm: &Realm, id: &str) -> Result<Option<Self>, Error> {
        Ok(delegation::find(admin.store.pool(), &realm.id, id).await?)
    }
}

/// Something of a client that a path parameter names.
pub trait OfClient: Sized + Send {
    /// The path parameter that holds its id.
    const PARAMETER: &'static str;
    /// Its name in a 404.
    const WHAT: &'static str;

    fn find(admin: &Admin<'_>, client: &Client, id: &str) -> impl Future<Output = Result<Option<Self>, Error>> + Send;
}

/// The `R` the path names, of the path's client, which is in the caller's reach for `P`.
#[derive(Debug)]
pub struct FoundOfClient<R, P> {
    pub client: Client,
    pub item: R,
    pub caller: Caller,
    needs: PhantomData<P>,
}

impl<R: OfClient, P: Permission + Send> FoundOfClient<R, P> {
    /// The `R` named `id` of the client `client_id` of the realm `realm_id`, which is in `caller`'s
    /// reach for `P`.
    pub async fn reach(
        admin: &Admin<'_>,
        caller: &Caller,
        realm_id: &str,
        client_id: &str,
        id: &str,
    ) -> Result<Self, Error> {
        let client = client_in_reach(admin, caller, realm_id, client_id, P::NAME).await?;
        let item = R::find(admin, &client, id).await?.ok_or(Error::NotFound(R::WHAT))?;
        Ok(Self { client, item, caller: caller.clone(), needs: PhantomData })
    }
}

impl OfClient for Consumer {
    const PARAMETER: &'static str = "consumerId";
    const WHAT: &'static str = "consumer";

    async fn find(admin: &Admin<'_>, client: &Client, id: &str) -> Result<Option<Self>, Error> {
        Ok(consumers::find(admin.store.pool(), &client.realm_id, &client.id, id).await?)
    }
}

/// Something the caller's account owns outside any realm, named by a path parameter.
pub trait AccountOwned: Sized + Send {
    /// The path parameter that holds its id.
    const PARAMETER: &'static str;

    /// The caller's `id`, when the caller holds `permission` on it (refused or not found otherwise).
    fn in_reach(
        admin: &Admin<'_>,
        caller: &Caller,
        id: &str,
        permission: &'static str,
    ) -> impl Future<Output = Result<Self, Error>> + Send;
}

/// The `R` of the caller's account the path names, in the caller's reach for `P`.
#[derive(Debug)]
pub struct Owned<R, P> {
    pub item: R,
    pub caller: Caller,
    needs: PhantomData<P>,
}

impl<R: AccountOwned, P: Permission + Send> Owned<R, P> {
    /// The `R` of `caller`'s account named `id`, in their reach for `P`.
    pub async fn reach(admin: &Admin<'_>, caller: &Caller, id: &str) -> Result<Self, Error> {
        let item = R::in_reach(admin, caller, id, P::NAME).await?;
        Ok(Self { item, caller: caller.clone(), needs: PhantomData })
    }
}

impl AccountOwned for Secret {
    const PARAMETER: &'static str = "id";

    async fn in_reach(admin: &Admin<'_>, caller: &Caller, id: &str, permission: &'static str) -> Result<Self, Error> {
        let secret = secrets::find(admin.store.pool(), caller.account_id(), id).await?;
        let owner = secret.as_ref().map(|s| s.account_id.clone());
        caller.require(admin.authz, permission, Resource::Secret { id: id.to_owned(), owner })?;
        secret.ok_or(Error::NotFound("secret"))
    }
}

impl AccountOwned for AccountRole {
    const PARAMETER: &'static str = "roleId";

    async fn in_reach(admin: &Admin<'_>, caller: &Caller, id: &str, permission: &'static str) -> Result<Self, Error> {
        let role = roles::find(admin.store.pool(), caller.account_id(), id).await?;
        let owner = role.as_ref().map(|r| r.account_id.clone());
        caller.require(admin.authz, permission, Resource::AccountRole { id: id.to_owned(), owner })?;
        role.ok_or(Error::unreached())
    }
}

/// A capture is the caller's while it lasts.
impl AccountOwned for Capture {
    const PARAMETER: &'static str = "captureId";

    async fn in_reach(admin: &Admin<'_>, caller: &Caller, id: &str, permission: &'static str) -> Result<Self, Error> {
        caller.require_account(admin.authz, permission)?;
        let now = admin.clock.now();
        captures::find(admin.store.pool(), caller.account_id(), id, now).await?.ok_or(Error::NotFound("capture"))
    }
}
