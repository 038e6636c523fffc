//! The admin API called from inside the service, as the caller of the request at hand: an export
//! reads the account through the same views a person reads, and an import's steps are the same
//! creations and updates a person sends, each checked, trailed and announced as such. No
//! credential is checked again and no rate limit spent: the request that carries them was.

use std::collections::{HashMap, HashSet};

use axum::Router;
use axum::body::Body as RequestBody;
use axum::http::{Method, Request, StatusCode, header};
use futures_util::{StreamExt as _, TryStreamExt as _, stream};
use serde_json::{Map, Value, json};
use tower::ServiceExt as _;

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::kernel::error_code::ErrorCode;
use crate::kernel::ids::PLATFORM_REALM;
use crate::operations::import::configuration::{
    Action, Client, Collection, Document, Group, Item, OFFERED_PROVIDERS, Realm, RoleName, Step,
};
use crate::runtime::error::Error;

/// Items asked for per page of a list.
const PAGE: usize = 200;
/// Realms read at once by an export: their reads wait on the database, not on each other.
const REALMS_AT_ONCE: usize = 4;

/// The admin routes, answering as one caller.
pub struct Replay {
    router: Router,
    caller: Caller,
}

/// What one call answered: its status and its body.
pub struct Answer {
    pub status: StatusCode,
    pub body: Value,
}

impl Replay {
    pub fn new(state: &AppState, caller: &Caller) -> Self {
        Self { router: super::super::routes().with_state(state.clone()), caller: caller.clone() }
    }

    pub async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Result<Answer, Error> {
        let bytes = body.map(|body| body.to_string()).unwrap_or_default();
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(RequestBody::from(bytes))
            .map_err(|error| Error::Internal(error.into()))?;
        request.extensions_mut().insert(self.caller.clone());
        let response = self.router.clone().oneshot(request).await.unwrap_or_else(|never| match never {});
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .map_err(|error| Error::Internal(anyhow::anyhow!("an admin answer could not be read: {error}")))?;
        Ok(Answer { status, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) })
    }

    /// Every item of a paged list; a refusal is the caller's refusal.
    async fn list(&self, path: &str) -> Result<Vec<Value>, Error> {
        let mut items = Vec::new();
        for page in 1.. {
            let answer = self.call(Method::GET, &format!("{path}?pageSize={PAGE}&pageNumber={page}"), None).await?;
            let found = answered(answer)?;
            let pagination = &found["pagination"];
            let page_items = pagination["items"].as_array().cloned().unwrap_or_default();
            let fewer = page_items.len() < PAGE;
            items.extend(page_items);
            if fewer || pagination["totalPages"].as_i64().is_some_and(|total| total <= page) {
                break;
            }
        }
        Ok(items)
    }

    /// The `data` list of an unpaged read.
    async fn read(&self, path: &str) -> Result<Vec<Value>, Error> {
        let answer = answered(self.call(Method::GET, path, None).await?)?;
        Ok(answer["data"].as_array().cloned().unwrap_or_default())
    }

    /// The items of a list, in the order of their keys: an export reads the same whatever order
    /// things were made in.
    async fn items(&self, collection: Collection, path: &str) -> Result<Vec<Item>, Error> {
        let mut items: Vec<Item> =
            self.list(path).await?.iter().filter_map(|view| Item::of_view(collection, view)).collect();
        items.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(items)
    }

    /// The items of a list with the identity providers each offers (`{path}/{id}/identity-providers`).
    async fn offering(&self, collection: Collection, path: &str) -> Result<Vec<Item>, Error> {
        let mut items = Vec::new();
        for item in self.items(collection, path).await? {
            let at = format!("{path}/{}", segment(item.id.as_deref().unwrap_or_default()));
            items.push(self.with_offer(item, &at).await?);
        }
        Ok(items)
    }

    /// The item with the providers the thing at `at` offers, when it offers any.
    async fn with_offer(&self, mut item: Item, at: &str) -> Result<Item, Error> {
        let offered = self.read(&format!("{at}/identity-providers")).await?;
        if !offered.is_empty() {
            item.fields.insert(OFFERED_PROVIDERS.into(), Value::Array(offered));
        }
        Ok(item)
    }

    /// The account's configuration as the caller may read it: every realm but the service's own
    /// (or, given `only`, those of its realms), the clients made through the admin API (not those
    /// that registered themselves). Realms are read a few at a time.
    pub async fn document(&self, only: Option<&HashSet<String>>) -> Result<Document, Error> {
        let scopes = self.list("/scopes").await?;
        let catalogue = scopes.iter().filter(|view| view["realmId"].is_null());
        let mut document = Document {
            scopes: catalogue.filter_map(|v| Item::of_view(Collection::CatalogueScope, v)).collect(),
            realms: Vec::new(),
        };
        let items: Vec<Item> = self
            .list("/realms")
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
        let at = format!("/realms/{}", segment(&item.key));
        let own_scopes = self.list(&format!("{at}/scopes")).await?;
        let mut realm = Realm {
            scopes: own_scopes
                .iter()
                .filter(|view| view["realmId"] == item.key.as_str())
                .filter_map(|view| Item::of_view(Collection::RealmScope, view))
                .collect(),
            roles: self.items(Collection::RealmRole, &format!("{at}/roles")).await?,
            organizations: self.offering(Collection::Organization, &format!("{at}/organizations")).await?,
            resource_servers: self.items(Collection::ResourceServer, &format!("{at}/resource-servers")).await?,
            identity_providers: self.items(Collection::IdentityProvider, &format!("{at}/identity-providers")).await?,
            webhooks: self.items(Collection::RealmWebhook, &format!("{at}/webhooks")).await?,
            ..Realm::default()
        };
        for group in self.items(Collection::Group, &format!("{at}/groups")).await? {
            let id = group.id.clone().unwrap_or_default();
            let roles = role_names(&self.read(&format!("{at}/groups/{}/roles", segment(&id))).await?);
            realm.groups.push(Group { item: group, roles });
        }
        for view in self.list(&format!("{at}/clients")).await? {
            let Some(item) = Item::of_view(Collection::Client, &view).filter(|_| view["registration"] == "Admin")
            else {
                continue;
            };
            let client_at = format!("{at}/clients/{}", segment(&item.key));
            let item = self.with_offer(item, &client_at).await?;
            realm.clients.push(Client {
                roles: self.items(Collection::ClientRole, &format!("{client_at}/roles")).await?,
                granted_roles: role_names(&self.read(&format!("{client_at}/granted-roles")).await?),
                webhooks: self.items(Collection::ClientWebhook, &format!("{client_at}/webhooks")).await?,
                item: Some(item),
            });
        }
        realm.item = Some(item);
        realm.scopes.sort_by(|a, b| a.key.cmp(&b.key));
        realm.clients.sort_by(|a, b| a.key().cmp(b.key()));
        Ok(realm)
    }
}

/// `text` as one segment of a path: every key and id is escaped, so none can reach another address.
fn segment(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// The answer's body, or the refusal it carries as an error.
fn answered(answer: Answer) -> Result<Value, Error> {
    match answer.status {
        StatusCode::OK => Ok(answer.body),
        StatusCode::FORBIDDEN => Err(Error::Forbidden(ErrorCode::Forbidden)),
        // Something listed a moment ago was deleted while the account was read.
        StatusCode::NOT_FOUND => {
            Err(Error::Conflict("the configuration changed while it was read: read it again".into()))
        }
        status => Err(Error::Internal(anyhow::anyhow!("an admin read answered {status}: {}", answer.body))),
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

/// What became of one step.
pub struct Outcome {
    pub outcome: &'static str,
    pub reasons: Vec<Value>,
    /// A created client's secret or endpoint's signing secret.
    pub secret: Option<String>,
}

impl Outcome {
    fn of(outcome: &'static str) -> Self {
        Self { outcome, reasons: Vec::new(), secret: None }
    }

    fn refused(reasons: Vec<Value>) -> Self {
        Self { outcome: "Refused", reasons, secret: None }
    }

    fn refused_because(message: impl Into<String>) -> Self {
        Self::refused(vec![json!({ "code": "Refused", "message": message.into() })])
    }
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
    replay: &'a Replay,
    /// Role ids by realm, client and name; group and organization ids by realm and name.
    roles: HashMap<(String, RoleName), String>,
    groups: HashMap<(String, String), String>,
    organizations: HashMap<(String, String), String>,
    /// Realms, clients, groups and organizations that were refused: `realm`, `realm/client`,
    /// `realm#group`, `realm@organization`.
    refused: HashSet<String>,
}

impl<'a> Executor<'a> {
    pub fn new(replay: &'a Replay, held: &Document) -> Self {
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

    /// The request a step makes, and what it answered.
    async fn send(&mut self, step: &Step) -> Result<Outcome, Error> {
        let realm = step.realm.clone().unwrap_or_default();
        let (client, id) = (step.client.as_deref().map(segment), step.id.as_deref().map(segment));
        let (client, id, at) = (client.unwrap_or_default(), id.unwrap_or_default(), segment(&realm));
        let base = match step.collection {
            Collection::CatalogueScope => "/scopes".to_owned(),
            Collection::Realm => "/realms".to_owned(),
            Collection::RealmSettings => String::new(),
            Collection::RealmScope => format!("/realms/{at}/scopes"),
            Collection::RealmRole => format!("/realms/{at}/roles"),
            Collection::Client => format!("/realms/{at}/clients"),
            Collection::ClientRole => format!("/realms/{at}/clients/{client}/roles"),
            Collection::ClientGrantedRole => format!("/realms/{at}/clients/{client}/granted-roles"),
            Collection::Group => format!("/realms/{at}/groups"),
            Collection::GroupRole => {
                let group = step.group.clone().unwrap_or_default();
                let Some(group) = self.groups.get(&(realm.clone(), group)) else {
                    return Ok(Outcome::refused_because("the group was not imported"));
                };
                format!("/realms/{at}/groups/{}/roles", segment(group))
            }
            Collection::Organization => format!("/realms/{at}/organizations"),
            Collection::ResourceServer => format!("/realms/{at}/resource-servers"),
            Collection::IdentityProvider => format!("/realms/{at}/identity-providers"),
            Collection::ClientIdentityProviders => {
                format!("/realms/{at}/clients/{}/identity-providers", segment(&step.key))
            }
            Collection::OrganizationIdentityProviders => {
                let known = self.organizations.get(&(realm.clone(), step.key.clone()));
                let Some(organization) = step.id.as_ref().or(known) else {
                    return Ok(Outcome::refused_because("the organization was not imported"));
                };
                format!("/realms/{at}/organizations/{}/identity-providers", segment(organization))
            }
            Collection::RealmWebhook => format!("/realms/{at}/webhooks"),
            Collection::ClientWebhook => format!("/realms/{at}/clients/{client}/webhooks"),
        };
        let (method, path, body) = match (&step.action, &step.role) {
            (_, Some(role)) => {
                let Some(role_id) = self.roles.get(&(realm.clone(), role.clone())) else {
                    return Ok(Outcome::refused_because(format!("the realm holds no role {}", role.label())));
                };
                match step.action {
                    Action::Withdraw => (Method::DELETE, format!("{base}/{}", segment(role_id)), None),
                    _ => (Method::POST, base, Some(json!({ "roleId": role_id }))),
                }
            }
            // What a client or organization offers is replaced whole.
            (_, None)
                if matches!(
                    step.collection,
                    Collection::ClientIdentityProviders | Collection::OrganizationIdentityProviders
                ) =>
            {
                (Method::PUT, base, Some(Value::Object(step.fields.clone())))
            }
            (_, None) if step.collection == Collection::RealmSettings => {
                (Method::PUT, format!("/realms/{at}"), Some(Value::Object(step.fields.clone())))
            }
            (Action::Create, None) => (Method::POST, base, Some(Value::Object(step.fields.clone()))),
            (_, None) => (Method::PUT, format!("{base}/{id}"), Some(Value::Object(step.fields.clone()))),
        };
        let answer = self.replay.call(method, &path, body).await?;
        if !answer.status.is_success() {
            let notifications = answer.body["notifications"].as_array().cloned().unwrap_or_default();
            return Ok(Outcome::refused(notifications));
        }
        let data = &answer.body["data"];
        if step.action == Action::Create {
            self.learn(step, &realm, data);
        }
        let outcome = match step.action {
            Action::Create => "Created",
            Action::Withdraw => "Withdrawn",
            _ => "Updated",
        };
        let secret = ["clientSecret", "signingSecret"].iter().find_map(|name| data[*name].as_str()).map(str::to_owned);
        Ok(Outcome { outcome, reasons: Vec::new(), secret })
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
