//! The admin operations called from inside the service, as the caller of the request at hand: an
//! export reads the account through the same views a person reads, and an import's steps are the
//! same creations and updates a person sends, each checked, trailed and announced as such. The
//! operations are called as functions, never through the router: no credential is checked again
//! and no rate limit spent, as the request that carries them was.

use std::collections::{HashMap, HashSet};

use futures_util::{StreamExt as _, TryStreamExt as _, stream};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{Action, Client, Collection, Document, Group, Item, OFFERED_PROVIDERS, Outcome, Realm, RoleName, Step};
use crate::authz::caller::Caller;
use crate::directory::admin::{
    clients, groups, identity_providers, organizations, realms, resource_servers, roles, scopes,
};
use crate::directory::reach::{Admin, Found, InClient, InRealm};
use crate::directory::roles::Grantee;
use crate::kernel::error_code::ErrorCode;
use crate::kernel::ids::PLATFORM_REALM;
use crate::kernel::validate::Body;
use crate::operations::admin::webhooks;
use crate::operations::webhooks::Webhooks;
use crate::runtime::answer::Answer;
use crate::runtime::error::Error;

/// Items asked for per page of a list.
const PAGE: usize = 200;
/// Realms read at once by an export: their reads wait on the database, not on each other.
const REALMS_AT_ONCE: usize = 4;

/// The admin operations, answering as one caller.
pub struct Replay<'a> {
    admin: Admin<'a>,
    webhooks: &'a Webhooks,
    caller: Caller,
}

/// `item` as the admin API shows it.
fn shown<T: Serialize>(item: &T) -> Result<Value, Error> {
    serde_json::to_value(item).map_err(|error| Error::Internal(error.into()))
}

/// What an operation answered, as the admin API shows it (`Null` for a deletion).
fn data<T: Serialize>(answered: Result<Answer<T>, Error>) -> Result<Value, Error> {
    match answered? {
        Answer::Ok(data) | Answer::Created(data) => shown(&data),
        Answer::Paged(page) => shown(&page.items),
        Answer::Done => Ok(Value::Null),
    }
}

/// A read's refusal, as the export's own.
fn read_refused(error: Error) -> Error {
    match error {
        Error::Forbidden(_) => Error::Forbidden(ErrorCode::Forbidden),
        // Something listed a moment ago was deleted while the account was read.
        Error::NotFound(_) => Error::Conflict("the configuration changed while it was read: read it again".into()),
        Error::Internal(_) | Error::Unavailable(_) => error,
        other => Error::Internal(anyhow::anyhow!("an admin read was refused: {other}")),
    }
}

impl<'a> Replay<'a> {
    pub fn new(admin: Admin<'a>, webhooks: &'a Webhooks, caller: &Caller) -> Self {
        Self { admin, webhooks, caller: caller.clone() }
    }

    /// Every item of a paged list, read with `list` page by page; a refusal is the caller's.
    async fn all<T: Serialize, Answered>(&self, list: impl Fn(Option<String>) -> Answered) -> Result<Vec<Value>, Error>
    where
        Answered: Future<Output = Result<Answer<T>, Error>>,
    {
        let mut items = Vec::new();
        for page in 1.. {
            let answered = list(Some(format!("pageSize={PAGE}&pageNumber={page}"))).await.map_err(read_refused)?;
            let Answer::Paged(found) = answered else {
                return Err(Error::Internal(anyhow::anyhow!("an admin list answered no page")));
            };
            let (fewer, total_pages) = (found.items.len() < PAGE, found.total_pages());
            for item in &found.items {
                items.push(shown(item)?);
            }
            if fewer || total_pages <= page {
                break;
            }
        }
        Ok(items)
    }

    /// The list an unpaged read answers.
    async fn listed<T: Serialize>(
        &self,
        read: impl Future<Output = Result<Answer<Vec<T>>, Error>>,
    ) -> Result<Vec<Value>, Error> {
        match read.await.map_err(read_refused)?.data() {
            Some(items) => items.iter().map(shown).collect(),
            None => Err(Error::Internal(anyhow::anyhow!("an admin read answered no list"))),
        }
    }

    /// The items of a list, in the order of their keys: an export reads the same whatever order
    /// things were made in.
    async fn items<T: Serialize, Answered>(
        &self,
        collection: Collection,
        list: impl Fn(Option<String>) -> Answered,
    ) -> Result<Vec<Item>, Error>
    where
        Answered: Future<Output = Result<Answer<T>, Error>>,
    {
        let mut items: Vec<Item> =
            self.all(list).await?.iter().filter_map(|view| Item::of_view(collection, view)).collect();
        items.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(items)
    }

    /// The item with the identity providers it offers (`offered`), when it offers any.
    fn with_offer(mut item: Item, offered: Vec<Value>) -> Item {
        if !offered.is_empty() {
            item.fields.insert(OFFERED_PROVIDERS.into(), Value::Array(offered));
        }
        item
    }

    /// The account's configuration as the caller may read it: every realm but the service's own
    /// (or, given `only`, those of its realms), the clients made through the admin API (not those
    /// that registered themselves). Realms are read a few at a time.
    pub async fn document(&self, only: Option<&HashSet<String>>) -> Result<Document, Error> {
        let (admin, caller) = (&self.admin, &self.caller);
        let scopes = self.all(|query| scopes::list(admin, caller, None, query)).await?;
        let catalogue = scopes.iter().filter(|view| view["realmId"].is_null());
        let mut document = Document {
            scopes: catalogue.filter_map(|v| Item::of_view(Collection::CatalogueScope, v)).collect(),
            realms: Vec::new(),
        };
        let items: Vec<Item> = self
            .all(|query| realms::list(admin, caller.clone(), query))
            .await?
            .iter()
            .filter_map(|view| Item::of_view(Collection::Realm, view))
            .filter(|item| item.key != PLATFORM_REALM && only.is_none_or(|only| only.contains(&item.key)))
            .collect();
        document.realms =
            stream::iter(items).map(|item| self.realm(item)).buffered(REALMS_AT_ONCE).try_collect().await?;
        document.scopes.sort_by(|a, b| a.key.cmp(&b.key));
        document.realms.sort_by(|a, b| a.key().cmp(b.key()));
        Ok(document)
    }

    /// One realm with everything that belongs to it.
    async fn realm(&self, item: Item) -> Result<Realm, Error> {
        let (admin, caller, at) = (&self.admin, &self.caller, item.key.as_str());
        let own_scopes = self.all(|query| scopes::list(admin, caller, Some(at), query)).await?;
        let mut organizations = Vec::new();
        let listed = self.items(Collection::Organization, |query| async move {
            organizations::list(admin, InRealm::reach(admin, caller, at).await?, query).await
        });
        for organization in listed.await? {
            let id = organization.id.clone().unwrap_or_default();
            let offered = self
                .listed(async {
                    let found = Found::reach(admin, caller, at, &id).await?;
                    identity_providers::organization_providers(admin, found).await
                })
                .await?;
            organizations.push(Self::with_offer(organization, offered));
        }
        let mut realm = Realm {
            scopes: own_scopes
                .iter()
                .filter(|view| view["realmId"] == at)
                .filter_map(|view| Item::of_view(Collection::RealmScope, view))
                .collect(),
            roles: self.items(Collection::RealmRole, |query| roles::list(admin, caller, at, None, query)).await?,
            organizations,
            resource_servers: self
                .items(Collection::ResourceServer, |query| async move {
                    let reached = InRealm::reach(admin, caller, at).await?;
                    resource_servers::list(admin, reached, query).await
                })
                .await?,
            identity_providers: self
                .items(Collection::IdentityProvider, |query| async move {
                    let reached = InRealm::reach(admin, caller, at).await?;
                    identity_providers::list(admin, reached, query).await
                })
                .await?,
            webhooks: self
                .items(Collection::RealmWebhook, |query| {
                    webhooks::list_endpoints(admin, caller.clone(), at, None, query)
                })
                .await?,
            ..Realm::default()
        };
        let groups = self.items(Collection::Group, |query| async move {
            groups::list(admin, InRealm::reach(admin, caller, at).await?, query).await
        });
        for group in groups.await? {
            let id = group.id.clone().unwrap_or_default();
            let held = self.listed(roles::grants_of(admin, caller, at, Grantee::Group(id))).await?;
            realm.groups.push(Group { item: group, roles: role_names(&held) });
        }
        let clients = self
            .all(|query| async move { clients::list(admin, InRealm::reach(admin, caller, at).await?, query).await });
        for view in clients.await? {
            let Some(item) = Item::of_view(Collection::Client, &view).filter(|_| view["registration"] == "Admin")
            else {
                continue;
            };
            let key = item.key.as_str();
            let offered = self
                .listed(async {
                    let reached = InClient::reach(admin, caller, at, key).await?;
                    identity_providers::client_providers(admin, reached).await
                })
                .await?;
            let granted = self.listed(roles::grants_of(admin, caller, at, Grantee::Client(key.to_owned())));
            realm.clients.push(Client {
                roles: self
                    .items(Collection::ClientRole, |query| roles::list(admin, caller, at, Some(key), query))
                    .await?,
                granted_roles: role_names(&granted.await?),
                webhooks: self
                    .items(Collection::ClientWebhook, |query| {
                        webhooks::list_endpoints(admin, caller.clone(), at, Some(key), query)
                    })
                    .await?,
                item: Some(Self::with_offer(item, offered)),
            });
        }
        realm.item = Some(item);
        realm.scopes.sort_by(|a, b| a.key.cmp(&b.key));
        realm.clients.sort_by(|a, b| a.key().cmp(b.key()));
        Ok(realm)
    }
}

/// The roles of a list of role views, by name (and client).
fn role_names(views: &[Value]) -> Vec<RoleName> {
    let mut names: Vec<RoleName> = views
        .iter()
        .filter_map(|view| {
            let name = view["name"].as_str()?.to_owned();
            Some(RoleName { client: view["clientId"].as_str().map(str::to_owned), name })
        })
        .collect();
    names.sort();
    names
}

/// What a step would do, without doing it.
pub fn foreseen(step: &Step) -> Outcome {
    match &step.action {
        Action::Create => Outcome::of("Created"),
        Action::Update => Outcome::of("Updated"),
        Action::Unchanged => Outcome::of("Unchanged"),
        Action::Skip => Outcome::of("Skipped"),
        Action::Withdraw => Outcome::of("Withdrawn"),
        Action::Refuse(reason) => Outcome::refused_because(reason.clone()),
    }
}

/// Carries out a plan's steps in order: what a refused realm, client or group holds is refused
/// with it.
pub struct Executor<'a> {
    replay: &'a Replay<'a>,
    /// Role ids by realm, client and name; group and organization ids by realm and name.
    roles: HashMap<(String, RoleName), String>,
    groups: HashMap<(String, String), String>,
    organizations: HashMap<(String, String), String>,
    /// Realms, clients, groups and organizations that were refused: `realm`, `realm/client`,
    /// `realm#group`, `realm@organization`.
    refused: HashSet<String>,
}

impl<'a> Executor<'a> {
    pub fn new(replay: &'a Replay<'a>, held: &Document) -> Self {
        let mut executor = Self {
            replay,
            roles: HashMap::new(),
            groups: HashMap::new(),
            organizations: HashMap::new(),
            refused: HashSet::new(),
        };
        for realm in &held.realms {
            let key = realm.key().to_owned();
            for role in &realm.roles {
                executor.know_role(&key, None, role);
            }
            for client in &realm.clients {
                for role in &client.roles {
                    executor.know_role(&key, Some(client.key()), role);
                }
            }
            for group in &realm.groups {
                if let Some(id) = &group.item.id {
                    executor.groups.insert((key.clone(), group.item.key.clone()), id.clone());
                }
            }
            for organization in &realm.organizations {
                if let Some(id) = &organization.id {
                    executor.organizations.insert((key.clone(), organization.key.clone()), id.clone());
                }
            }
        }
        executor
    }

    fn know_role(&mut self, realm: &str, client: Option<&str>, role: &Item) {
        if let Some(id) = &role.id {
            let name = RoleName { client: client.map(str::to_owned), name: role.key.clone() };
            self.roles.insert((realm.to_owned(), name), id.clone());
        }
    }

    /// The containers a step belongs to, and the one it is, when refusing it refuses others.
    fn places(step: &Step) -> (Vec<String>, Option<String>) {
        let realm = step.realm.clone().unwrap_or_default();
        let mut within = Vec::new();
        if step.collection != Collection::Realm && step.realm.is_some() {
            within.push(realm.clone());
        }
        if let Some(client) = step.client.as_ref().filter(|_| step.collection != Collection::Client) {
            within.push(format!("{realm}/{client}"));
        }
        if let Some(group) = &step.group {
            within.push(format!("{realm}#{group}"));
        }
        if step.collection == Collection::OrganizationIdentityProviders {
            within.push(format!("{realm}@{}", step.key));
        }
        let holds = match step.collection {
            Collection::Realm => Some(realm),
            Collection::Client => Some(format!("{realm}/{}", step.key)),
            Collection::Group => Some(format!("{realm}#{}", step.key)),
            Collection::Organization => Some(format!("{realm}@{}", step.key)),
            _ => None,
        };
        (within, holds)
    }

    pub async fn take(&mut self, step: &Step) -> Result<Outcome, Error> {
        let (within, holds) = Self::places(step);
        let outcome = if let Some(place) = within.iter().find(|place| self.refused.contains(*place)) {
            Outcome::refused_because(format!("{place} was not imported"))
        } else {
            match &step.action {
                Action::Create | Action::Update | Action::Withdraw => self.send(step).await?,
                _ => foreseen(step),
            }
        };
        // A realm, client or group that could not be created holds nothing: what belongs to it
        // is refused with it.
        if outcome.outcome == "Refused"
            && step.action == Action::Create
            && let Some(place) = holds
        {
            self.refused.insert(place);
        }
        Ok(outcome)
    }

    /// The operation a step calls, and what it answered.
    async fn send(&mut self, step: &Step) -> Result<Outcome, Error> {
        let realm = step.realm.clone().unwrap_or_default();
        let answered = match &step.role {
            Some(role) => {
                let grantee = match step.collection {
                    Collection::GroupRole => {
                        let group = step.group.clone().unwrap_or_default();
                        let Some(group) = self.groups.get(&(realm.clone(), group)) else {
                            return Ok(Outcome::refused_because("the group was not imported"));
                        };
                        Grantee::Group(group.clone())
                    }
                    _ => Grantee::Client(step.client.clone().unwrap_or_default()),
                };
                let Some(role_id) = self.roles.get(&(realm.clone(), role.clone())) else {
                    return Ok(Outcome::refused_because(format!("the realm holds no role {}", role.label())));
                };
                self.grant(step, &realm, grantee, role_id).await
            }
            None => {
                if step.collection == Collection::OrganizationIdentityProviders
                    && step.id.is_none()
                    && !self.organizations.contains_key(&(realm.clone(), step.key.clone()))
                {
                    return Ok(Outcome::refused_because("the organization was not imported"));
                }
                self.change(step, &realm).await
            }
        };
        let data = match answered {
            Ok(data) => data,
            Err(error) => {
                let reasons = error.notifications().iter().map(shown).collect::<Result<_, _>>()?;
                return Ok(Outcome::refused(reasons));
            }
        };
        if step.action == Action::Create {
            self.learn(step, &realm, &data);
        }
        let outcome = match step.action {
            Action::Create => "Created",
            Action::Withdraw => "Withdrawn",
            _ => "Updated",
        };
        let secret = ["clientSecret", "signingSecret"].iter().find_map(|name| data[*name].as_str()).map(str::to_owned);
        Ok(Outcome { outcome, reasons: Vec::new(), secret })
    }

    /// Grants `role_id` to `grantee`, or withdraws it.
    async fn grant(&self, step: &Step, realm: &str, grantee: Grantee, role_id: &str) -> Result<Value, Error> {
        let (admin, caller) = (&self.replay.admin, &self.replay.caller);
        if step.action == Action::Withdraw {
            return data(roles::withdraw(admin, caller, realm, grantee, role_id).await);
        }
        let body = Body::from_map(Map::from_iter([("roleId".to_owned(), json!(role_id))]));
        data(roles::grant(admin, caller, realm, grantee, body).await)
    }

    /// Creates what the step describes, or changes it to the step's fields.
    async fn change(&self, step: &Step, realm: &str) -> Result<Value, Error> {
        let (admin, caller) = (&self.replay.admin, &self.replay.caller);
        let fields = || Body::from_map(step.fields.clone());
        let id = step.id.as_deref().unwrap_or_default();
        let client = step.client.as_deref().unwrap_or_default();
        let creating = step.action == Action::Create;
        match step.collection {
            Collection::CatalogueScope if creating => data(scopes::create(admin, caller, None, fields()).await),
            Collection::CatalogueScope => data(scopes::update(admin, caller, None, id, fields()).await),
            Collection::Realm if creating => data(realms::create(admin, caller.clone(), fields()).await),
            Collection::Realm => data(realms::update(admin, InRealm::reach(admin, caller, id).await?, fields()).await),
            Collection::RealmSettings => {
                data(realms::update(admin, InRealm::reach(admin, caller, realm).await?, fields()).await)
            }
            Collection::RealmScope if creating => data(scopes::create(admin, caller, Some(realm), fields()).await),
            Collection::RealmScope => data(scopes::update(admin, caller, Some(realm), id, fields()).await),
            Collection::RealmRole if creating => data(roles::create(admin, caller, realm, None, fields()).await),
            Collection::RealmRole => data(roles::update(admin, caller, realm, None, id, fields()).await),
            Collection::Client if creating => {
                data(clients::create(admin, InRealm::reach(admin, caller, realm).await?, fields()).await)
            }
            Collection::Client => {
                let reached = InClient::reach(admin, caller, realm, id).await?;
                data(clients::update(admin, reached, fields()).await)
            }
            Collection::ClientRole if creating => {
                data(roles::create(admin, caller, realm, Some(client), fields()).await)
            }
            Collection::ClientRole => data(roles::update(admin, caller, realm, Some(client), id, fields()).await),
            Collection::Group if creating => {
                data(groups::create(admin, InRealm::reach(admin, caller, realm).await?, fields()).await)
            }
            Collection::Group => {
                data(groups::update(admin, Found::reach(admin, caller, realm, id).await?, fields()).await)
            }
            Collection::Organization if creating => {
                let reached = InRealm::reach(admin, caller, realm).await?;
                data(organizations::create(admin, reached, fields()).await)
            }
            Collection::Organization => {
                let found = Found::reach(admin, caller, realm, id).await?;
                data(organizations::update(admin, found, fields()).await)
            }
            Collection::ResourceServer if creating => {
                let reached = InRealm::reach(admin, caller, realm).await?;
                data(resource_servers::create(admin, reached, fields()).await)
            }
            Collection::ResourceServer => {
                let found = Found::reach(admin, caller, realm, id).await?;
                data(resource_servers::update(admin, found, fields()).await)
            }
            Collection::IdentityProvider if creating => {
                let reached = InRealm::reach(admin, caller, realm).await?;
                data(identity_providers::create(admin, reached, fields()).await)
            }
            Collection::IdentityProvider => {
                let found = Found::reach(admin, caller, realm, id).await?;
                data(identity_providers::update(admin, found, fields()).await)
            }
            // What a client or organization offers is replaced whole.
            Collection::ClientIdentityProviders => {
                let reached = InClient::reach(admin, caller, realm, &step.key).await?;
                data(identity_providers::offer_client_providers(admin, reached, fields()).await)
            }
            Collection::OrganizationIdentityProviders => {
                let known = self.organizations.get(&(realm.to_owned(), step.key.clone()));
                let organization = step.id.as_ref().or(known).cloned().unwrap_or_default();
                let found = Found::reach(admin, caller, realm, &organization).await?;
                data(identity_providers::offer_organization_providers(admin, found, fields()).await)
            }
            Collection::RealmWebhook | Collection::ClientWebhook => {
                let client = (step.collection == Collection::ClientWebhook).then_some(client);
                if creating {
                    data(webhooks::register(admin, self.replay.webhooks, caller.clone(), realm, client, fields()).await)
                } else {
                    data(webhooks::update_endpoint(admin, caller.clone(), (realm, client, id), fields()).await)
                }
            }
            Collection::GroupRole | Collection::ClientGrantedRole => {
                Err(Error::invalid("roleId", crate::kernel::validate::Rule::Required, "roleId is required"))
            }
        }
    }

    /// Keeps the id of a created role or group, which later grants name.
    fn learn(&mut self, step: &Step, realm: &str, data: &Value) {
        let Some(id) = data["id"].as_str() else { return };
        let item = Item { key: step.key.clone(), fields: Map::new(), id: Some(id.to_owned()) };
        match step.collection {
            Collection::RealmRole => self.know_role(realm, None, &item),
            Collection::ClientRole => self.know_role(realm, step.client.as_deref(), &item),
            Collection::Group => {
                self.groups.insert((realm.to_owned(), step.key.clone()), id.to_owned());
            }
            Collection::Organization => {
                self.organizations.insert((realm.to_owned(), step.key.clone()), id.to_owned());
            }
            _ => {}
        }
    }
}
