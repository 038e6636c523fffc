//! The change trail of administrative changes, and the event outbox that announces them.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sqlx::{Any, Executor};

use super::events::EventType;
use super::page::{self, Listing, Page, PageRequest, Scope};
use super::text_enum;
use super::{Error, Store};
use crate::kernel::ids::{AccountId, ClientId, CredentialId, RealmId, UserId, new_guid};

text_enum! {
    /// Who made a change: a signed-in person, or an account credential.
    pub enum ActorType {
        User,
        Credential,
        /// A client that registered itself, changing its own registration (RFC 7592).
        Client,
        /// The operator of the deployment, by a command run on its host (`castellan team ...`).
        Operator,
    }
}

text_enum! {
    pub enum Outcome {
        Succeeded,
        Refused,
    }
}

text_enum! {
    pub enum ChangeAction {
        Create,
        Update,
        Delete,
        /// A person of the team signed in as a user of a realm (recorded, never announced).
        Impersonate,
    }
}

impl ChangeAction {
    /// The administrative event announcing a change of this kind; none for an impersonation.
    pub fn event_type(self) -> Option<EventType> {
        match self {
            Self::Create => Some(EventType::AdminResourceCreated),
            Self::Update => Some(EventType::AdminResourceUpdated),
            Self::Delete => Some(EventType::AdminResourceDeleted),
            Self::Impersonate => None,
        }
    }

    pub fn of_method(method: &str) -> Option<Self> {
        match method {
            "POST" => Some(Self::Create),
            "PUT" | "PATCH" => Some(Self::Update),
            "DELETE" => Some(Self::Delete),
            _ => None,
        }
    }
}

/// The caller behind a change or an access, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub account_id: AccountId,
    pub actor_type: ActorType,
    pub user_id: Option<UserId>,
    pub username: Option<String>,
    pub email: Option<String>,
    pub credential_id: Option<CredentialId>,
    pub credential_name: Option<String>,
    pub ip_address: String,
}

impl Actor {
    /// The id of who acted: the person, or the credential acting for no one.
    pub fn acting_id(&self) -> Option<String> {
        match self.actor_type {
            ActorType::User => self.user_id.clone().map(String::from),
            ActorType::Credential => self.credential_id.clone().map(String::from),
            // A self-registered client acts with its registration access token, named by the
            // client's id.
            ActorType::Client => self.credential_name.clone(),
            ActorType::Operator => None,
        }
    }
}

/// Where and how a change was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub path: String,
}

/// What a change (or a refused request) addressed, by its name in the trail and in
/// `admin_resource_*` events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceKind {
    Realm,
    Client,
    SigningKey,
    ClientScopes,
    ClientAllowedIps,
    ClientClaimMappers,
    ClientRoleGrant,
    Consumer,
    User,
    Session,
    Group,
    GroupMember,
    Organization,
    OrganizationMember,
    ResourceServer,
    IdentityProvider,
    ConnectionProvider,
    Connection,
    Scope,
    Role,
    UserRole,
    GroupRole,
    DelegationGrant,
    Webhook,
    ThreatIncident,
    ThreatMeasure,
    Secret,
    AccountRole,
    AccountMember,
    AccountInvitation,
    NotificationPreferences,
    Member,
    Account,
    /// An account's settings on the deployment: maintenance window and admin networks.
    DedicatedInstance,
    InitialAccessToken,
    Consent,
    Suspension,
    Resource,
    /// A person's TOTP app, recovery codes or passkey.
    Authenticator,
}

impl ResourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Role | Self::AccountRole => "role",
            Self::Realm => "realm",
            Self::Client => "client",
            Self::SigningKey => "signing_key",
            Self::ClientScopes => "client_scopes",
            Self::ClientAllowedIps => "client_allowed_ips",
            Self::ClientClaimMappers => "client_claim_mappers",
            Self::ClientRoleGrant => "client_role_grant",
            Self::Consumer => "consumer",
            Self::User => "user",
            Self::Session => "session",
            Self::Group => "group",
            Self::GroupMember => "group_member",
            Self::Organization => "organization",
            Self::OrganizationMember => "organization_member",
            Self::ResourceServer => "resource_server",
            Self::IdentityProvider => "identity_provider",
            Self::ConnectionProvider => "connection_provider",
            Self::Connection => "connection",
            Self::Scope => "scope",
            Self::UserRole => "user_role",
            Self::GroupRole => "group_role",
            Self::DelegationGrant => "delegation_grant",
            Self::Webhook => "webhook",
            Self::ThreatIncident => "threat_incident",
            Self::ThreatMeasure => "threat_measure",
            Self::Secret => "secret",
            Self::AccountMember => "account_member",
            Self::AccountInvitation => "account_invitation",
            Self::NotificationPreferences => "notification_preferences",
            Self::Member => "member",
            Self::Account => "account",
            Self::DedicatedInstance => "dedicated_instance",
            Self::InitialAccessToken => "initial_access_token",
            Self::Consent => "consent",
            Self::Suspension => "suspension",
            Self::Resource => "resource",
            Self::Authenticator => "authenticator",
        }
    }

    /// The kind a collection of the admin API holds (`clients` → client), read from a route
    /// template; `client-secret` addresses its client.
    pub fn of_collection(segment: &str) -> Self {
        match segment {
            "realms" => Self::Realm,
            "clients" | "client-secret" => Self::Client,
            "users" => Self::User,
            "groups" => Self::Group,
            "members" => Self::Member,
            "organizations" => Self::Organization,
            "resource-servers" => Self::ResourceServer,
            "identity-providers" => Self::IdentityProvider,
            "connection-providers" => Self::ConnectionProvider,
            "connections" => Self::Connection,
            "scopes" => Self::Scope,
            "sessions" => Self::Session,
            "signing-keys" => Self::SigningKey,
            "roles" => Self::Role,
            "secrets" => Self::Secret,
            "consumers" => Self::Consumer,
            "account" => Self::Account,
            "instance" => Self::DedicatedInstance,
            "initial-access-tokens" => Self::InitialAccessToken,
            "consents" => Self::Consent,
            "suspensions" => Self::Suspension,
            "authenticators" => Self::Authenticator,
            _ => Self::Resource,
        }
    }

    /// What a committed change of this kind makes stale in the hosts' caches.
    pub fn makes_stale(self) -> Stale {
        match self {
            Self::Realm => Stale::Realm,
            // Roles, groups and grants to people change the realm's cached role sets.
            Self::Role | Self::UserRole | Self::Group | Self::GroupRole | Self::GroupMember => Stale::RealmRoles,
            Self::Secret | Self::AccountRole | Self::DedicatedInstance => Stale::Account,
            Self::DelegationGrant => Stale::Delegation,
            Self::Suspension => Stale::Suspensions,
            Self::IdentityProvider => Stale::Providers,
            Self::SigningKey => Stale::Keys,
            Self::Client
            | Self::ClientRoleGrant
            | Self::ClientScopes
            | Self::ClientAllowedIps
            | Self::ClientClaimMappers => Stale::Client,
            _ => Stale::Nothing,
        }
    }
}

/// What the hosts' caches hold of a changed resource: see [`ResourceKind::makes_stale`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stale {
    /// The realm the change's id names.
    Realm,
    /// The signing keys of the change's client, or of its realm when it names no client.
    Keys,
    /// The role sets of the change's realm.
    RealmRoles,
    /// The credentials of the caller's account.
    Account,
    /// The delegation grants of the change's realm.
    Delegation,
    /// The suspensions of the change's realm.
    Suspensions,
    /// The identity providers of the change's realm.
    Providers,
    /// The change's client.
    Client,
    Nothing,
}

/// One administrative change.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub action: ChangeAction,
    pub resource_type: ResourceKind,
    pub resource_id: Option<String>,
    pub parent_id: Option<String>,
    /// The realm the change happened in; changes outside a realm publish no event.
    pub realm_id: Option<RealmId>,
    pub client_id: Option<ClientId>,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub details: Option<Value>,
    /// Whether the event carries `details` too; only a client secret's rotation does, the other
    /// details stay in the trail.
    pub details_in_event: bool,
    pub status: u16,
}

/// Where a changed thing sits, as its trail row and its `admin_resource_*` event name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub kind: ResourceKind,
    pub id: String,
    pub parent: Option<String>,
    pub realm: Option<String>,
    pub client: Option<String>,
}

impl Place {
    /// Something of a realm, filed under the realm.
    pub fn in_realm(kind: ResourceKind, id: &str, realm: &str) -> Self {
        Self { kind, id: id.to_owned(), parent: Some(realm.to_owned()), realm: Some(realm.to_owned()), client: None }
    }

    /// Something the account owns outside any realm (a secret, a member, the preferences): in
    /// the trail only, never announced.
    pub fn outside_realms(kind: ResourceKind, id: &str) -> Self {
        Self { kind, id: id.to_owned(), parent: None, realm: None, client: None }
    }

    /// Names the client the thing belongs to.
    pub fn of_client(mut self, client: &str) -> Self {
        self.client = Some(client.to_owned());
        self
    }

    /// Files the thing under another parent than its realm.
    pub fn under(mut self, parent: &str) -> Self {
        self.parent = Some(parent.to_owned());
        self
    }
}

/// A stored thing an administrative change can address.
pub trait Placed {
    fn place(&self) -> Place;
}

impl Change {
    /// A change of the thing at `place`, with neither view nor details yet.
    pub fn of(action: ChangeAction, place: Place, status: u16) -> Self {
        Self {
            action,
            resource_type: place.kind,
            resource_id: Some(place.id),
            parent_id: place.parent,
            realm_id: place.realm.map(RealmId::known),
            client_id: place.client.map(ClientId::known),
            before: None,
            after: None,
            details: None,
            details_in_event: false,
            status,
        }
    }

    /// The thing as it was, in the view the trail keeps.
    pub fn before(mut self, view: impl serde::Serialize) -> Self {
        self.before = Some(json!(view));
        self
    }

    /// The thing as it is now.
    pub fn after(mut self, view: impl serde::Serialize) -> Self {
        self.after = Some(json!(view));
        self
    }

    pub fn details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// Details the trail keeps and the change's event carries as well.
    pub fn announced_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self.details_in_event = true;
        self
    }
}

/// Writes the trail row of a successful change and, for a change inside a realm, its event.
pub async fn record_change(
    tx: &mut super::Connection,
    actor: &Actor,
    request: &Request,
    change: &Change,
    at: DateTime<Utc>,
) -> Result<(), Error> {
    insert_row(&mut *tx, actor, request, change, Outcome::Succeeded, None, at).await?;
    if let (Some(realm_id), Some(event_type)) = (&change.realm_id, change.action.event_type()) {
        let mut data = json!({
            "action": change.action.as_str(),
            "resource_type": change.resource_type.as_str(),
            "resource_id": change.resource_id,
            "parent_id": change.parent_id,
            "realm_id": realm_id,
            "client_id": change.client_id,
            "actor_type": actor.actor_type.as_str(),
            "actor_user_id": actor.user_id,
            "actor_username": actor.username,
            "actor_email": if actor.actor_type == ActorType::Credential { None } else { actor.email.clone() },
            "actor_credential_id": actor.credential_id,
            "actor_credential_name": actor.credential_name,
            "ip_address": actor.ip_address,
            "method": request.method,
            "path": request.path,
        });
        if let (Some(details), true, Some(object)) = (&change.details, change.details_in_event, data.as_object_mut()) {
            object.insert("details".into(), details.clone());
        }
        let event = super::events::Event {
            event_type,
            account_id: &actor.account_id,
            realm_id: Some(realm_id),
            client_id: change.client_id.as_deref(),
            data,
        };
        super::events::publish(tx, event, at).await?;
    }
    Ok(())
}

/// Writes the trail row of a refused change; refused changes raise no event.
pub async fn record_refusal<'c>(
    db: impl Executor<'c, Database = Any>,
    actor: &Actor,
    request: &Request,
    change: &Change,
    error_code: &str,
    at: DateTime<Utc>,
) -> Result<(), Error> {
    insert_row(db, actor, request, change, Outcome::Refused, Some(error_code), at).await
}

async fn insert_row<'c>(
    db: impl Executor<'c, Database = Any>,
    actor: &Actor,
    request: &Request,
    change: &Change,
    outcome: Outcome,
    error_code: Option<&str>,
    at: DateTime<Utc>,
) -> Result<(), Error> {
    let text = |value: &Option<Value>| value.as_ref().map(Value::to_string);
    sqlx::query(
        "INSERT INTO audit_trail (id, account_id, realm_id, client_id, occurred_at, outcome, action, resource_type, \
         resource_id, parent_id, actor_type, actor_user_id, actor_username, actor_email, actor_credential_id, \
         actor_credential_name, ip_address, method, path, status, error_code, before_state, after_state, details) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, \
         $22, $23, $24)",
    )
    .bind(new_guid())
    .bind(&actor.account_id)
    .bind(&change.realm_id)
    .bind(&change.client_id)
    .bind(super::millis(at))
    .bind(outcome.as_str())
    .bind(change.action.as_str())
    .bind(change.resource_type.as_str())
    .bind(&change.resource_id)
    .bind(&change.parent_id)
    .bind(actor.actor_type.as_str())
    .bind(&actor.user_id)
    .bind(&actor.username)
    .bind(&actor.email)
    .bind(&actor.credential_id)
    .bind(&actor.credential_name)
    .bind(&actor.ip_address)
    .bind(&request.method)
    .bind(&request.path)
    .bind(i64::from(change.status))
    .bind(error_code)
    .bind(text(&change.before))
    .bind(text(&change.after))
    .bind(text(&change.details))
    .execute(db)
    .await
    .map(|_| ())
    .map_err(Error::from)
}

/// A row of the change trail.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct TrailRow {
    pub id: String,
    pub realm_id: Option<RealmId>,
    pub client_id: Option<ClientId>,
    #[sqlx(try_from = "super::Millis")]
    pub occurred_at: DateTime<Utc>,
    pub outcome: String,
    pub action: String,
    pub resource_type: String,
    pub resource_id: Option<String>,
    pub parent_id: Option<String>,
    pub actor_type: String,
    pub actor_user_id: Option<UserId>,
    pub actor_username: Option<String>,
    pub actor_email: Option<String>,
    pub actor_credential_id: Option<CredentialId>,
    pub actor_credential_name: Option<String>,
    pub ip_address: String,
    pub method: String,
    pub path: String,
    pub status: i64,
    pub error_code: Option<String>,
    pub before_state: Option<String>,
    pub after_state: Option<String>,
    pub details: Option<String>,
}

pub const LISTING: Listing = Listing {
    table: "audit_trail",
    columns: "id, realm_id, client_id, occurred_at, outcome, action, resource_type, resource_id, parent_id, \
              actor_type, actor_user_id, actor_username, actor_email, actor_credential_id, actor_credential_name, \
              ip_address, method, path, status, error_code, before_state, after_state, details",
    created: "occurred_at",
    tie_breaker: "id",
    search: &["resource_type", "resource_id", "path", "actor_username", "actor_credential_name"],
    status: Some("outcome"),
    sortable: &[("occurredAt", "occurred_at"), ("resourceType", "resource_type"), ("createdAt", "occurred_at")],
};

/// Which entries of an account's trail a page shows.
#[derive(Debug, Clone, Default)]
pub struct TrailFilter<'a> {
    pub realm_id: Option<&'a str>,
    pub resource_type: Option<&'a str>,
    pub actor_credential_id: Option<&'a str>,
    pub actor_user_id: Option<&'a str>,
    pub action: Option<&'a str>,
}

/// A page of an account's change trail.
pub async fn page(
    store: &Store,
    account_id: &str,
    filter: TrailFilter<'_>,
    request: &PageRequest,
) -> Result<Page<TrailRow>, Error> {
    let scope = Scope::of("account_id", account_id)
        .and_given("realm_id", filter.realm_id)
        .and_given("resource_type", filter.resource_type)
        .and_given("actor_credential_id", filter.actor_credential_id)
        .and_given("actor_user_id", filter.actor_user_id)
        .and_given("action", filter.action);
    page::fetch(store.pool(), &LISTING, &scope, request).await
}
