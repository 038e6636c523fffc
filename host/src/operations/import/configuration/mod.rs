//! An account's configuration as one JSON document, and the plan of importing one.
//!
//! A [`Document`] holds the account's catalogue scopes and its realms, each with its scopes, roles,
//! groups (with the roles they grant), organizations, resource servers, identity providers (without
//! their client secrets), clients (with their roles,
//! the roles granted to them and their webhook endpoints) and webhook endpoints. Each item is the
//! body its creation takes in the admin API, and items name one another by what the account's
//! people chose (a realm's or client's id, a role's name and, for a client role, its client), never
//! by the ids the service generated: an export of one account imports into another. Secrets are
//! never part of it; an import gives fresh ones.
//!
//! [`plan`] says what importing a document into an account would do, item by item, from what the
//! account holds (read as a document too): create, update, leave unchanged, skip, withdraw a grant
//! the document does not make, or refuse. [`replay`] carries a plan out one creation or update at a
//! time through the admin operations, as the caller, so each item is checked, trailed and
//! announced as if sent by hand, and a refused item stops only the items that belong to it.

pub mod outcome;
mod plan;
pub mod replay;

pub use self::plan::{Action, Step, plan};
use crate::kernel::validate::{Notification, Rule};
use crate::operations::import::configuration::outcome::Outcome;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// The field of a client or organization item that lists the identity providers it offers: not
/// part of its creation, imported as a step of its own once the providers exist.
pub const OFFERED_PROVIDERS: &str = "identityProviders";

/// The `format` an export writes and an import reads.
pub const FORMAT: &str = "castellan-configuration/1";

/// What `/import/{resourceType}` and `/export/{resourceType}` name: one part of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Kind {
    Scope,
    Realm,
    Role,
    Client,
    Group,
    Organization,
    ResourceServer,
    IdentityProvider,
    Webhook,
}

impl Kind {
    pub const ALL: [Kind; 9] = [
        Kind::Scope,
        Kind::Realm,
        Kind::Role,
        Kind::Client,
        Kind::Group,
        Kind::Organization,
        Kind::ResourceServer,
        Kind::IdentityProvider,
        Kind::Webhook,
    ];

    /// The kind's name in a path.
    pub fn path_name(self) -> &'static str {
        match self {
            Kind::Scope => "scopes",
            Kind::Realm => "realms",
            Kind::Role => "roles",
            Kind::Client => "clients",
            Kind::Group => "groups",
            Kind::Organization => "organizations",
            Kind::ResourceServer => "resource-servers",
            Kind::IdentityProvider => "identity-providers",
            Kind::Webhook => "webhooks",
        }
    }

    pub fn named(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| kind.path_name() == name)
    }
}

/// Where an item lives, which says how the admin API addresses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Collection {
    CatalogueScope,
    Realm,
    /// The realm's settings that name its own scopes, set once they exist.
    RealmSettings,
    RealmScope,
    RealmRole,
    Client,
    ClientRole,
    /// A role granted to a client (to the tokens it gets for itself).
    ClientGrantedRole,
    Group,
    GroupRole,
    Organization,
    ResourceServer,
    IdentityProvider,
    /// The identity providers a client's login page offers.
    ClientIdentityProviders,
    /// The identity providers of an organization.
    OrganizationIdentityProviders,
    RealmWebhook,
    ClientWebhook,
}

impl Collection {
    pub fn kind(self) -> Kind {
        match self {
            Collection::CatalogueScope | Collection::RealmScope => Kind::Scope,
            Collection::Realm | Collection::RealmSettings => Kind::Realm,
            Collection::RealmRole | Collection::ClientRole => Kind::Role,
            Collection::Client | Collection::ClientGrantedRole | Collection::ClientIdentityProviders => Kind::Client,
            Collection::Group | Collection::GroupRole => Kind::Group,
            Collection::Organization | Collection::OrganizationIdentityProviders => Kind::Organization,
            Collection::ResourceServer => Kind::ResourceServer,
            Collection::IdentityProvider => Kind::IdentityProvider,
            Collection::RealmWebhook | Collection::ClientWebhook => Kind::Webhook,
        }
    }

    /// The field that names an item in its place.
    pub fn key_field(self) -> &'static str {
        match self {
            Collection::Realm | Collection::RealmSettings | Collection::Client | Collection::IdentityProvider => "id",
            Collection::ResourceServer => "address",
            Collection::RealmWebhook | Collection::ClientWebhook => "url",
            _ => "name",
        }
    }

    /// The fields of the item's creation input: what an export keeps of the admin API's view
    /// (`a.b` for a field of a nested object). The rest of a view is the service's to set.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Collection::CatalogueScope
            | Collection::RealmScope
            | Collection::RealmRole
            | Collection::ClientRole
            | Collection::Group => &["name", "description"],
            Collection::Realm | Collection::RealmSettings => &[
                "id",
                "displayName",
                "status",
                "maxFailedAttempts",
                "lockoutDurationMinutes",
                "lockoutEnabled",
                "minimumPasswordLength",
                "blockBreachedPasswords",
                "selfSignUp",
                "passkeySignUp",
                "clientRegistration",
                "registrationScopes",
                "clientIdMetadataDocuments",
                "metadataDocumentHosts",
                "aiAdvisor",
                "selfRegisteredClientsPerMinute",
                "maxSelfRegisteredClients",
                "secondFactor",
            ],
            Collection::Client => &[
                "id",
                "name",
                "description",
                "type",
                "status",
                "clientConfiguration.tokenExchangeEnabled",
                "clientConfiguration.allowedScopes",
                "clientConfiguration.grantTypes",
                "clientConfiguration.redirectUris",
                "clientConfiguration.postLogoutRedirectUris",
                "clientConfiguration.allowedOrigins",
                "clientConfiguration.jwks",
                "clientConfiguration.jwksUri",
                "clientConfiguration.secondFactor",
                "signingKey.keys",
                "signingKey.algorithm",
                "signingKey.rotationDays",
                "branding.logoUri",
                "branding.primaryColor",
            ],
            Collection::Organization => &["name", "description", "domains", "status"],
            Collection::ResourceServer => &[
                "name",
                "address",
                "type",
                "scopes",
                "allowedClients",
                "acceptsSelfRegisteredClients",
                "clientId",
                "status",
            ],
            Collection::RealmWebhook | Collection::ClientWebhook => {
                &["name", "url", "description", "events", "retries", "firstRetryAfterSeconds", "status"]
            }
            // The client secret is never exported: an imported provider needs it set again.
            Collection::IdentityProvider => &[
                "id",
                "displayName",
                "protocol",
                "status",
                "discoveryUrl",
                "authorizationUrl",
                "tokenUrl",
                "userinfoUrl",
                "clientId",
                "scopes",
                "claims.username",
                "claims.email",
                "claims.emailVerified",
                "claims.givenName",
                "claims.familyName",
                "trustVerifiedEmail",
                "roleMappings",
            ],
            Collection::ClientGrantedRole
            | Collection::GroupRole
            | Collection::ClientIdentityProviders
            | Collection::OrganizationIdentityProviders => &[],
        }
    }
}

/// One item: its key, the fields its creation takes, and when read from an account its id there.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub key: String,
    pub fields: Map<String, Value>,
    /// The id the account gave it (for a realm or client, its key); never exported.
    pub id: Option<String>,
}

impl Item {
    /// The item an admin API view describes: the creation fields of `collection`, nulls left out.
    /// A webhook endpoint the service disabled after failures is exported Active, as an update
    /// without `status` would make it.
    pub fn of_view(collection: Collection, view: &Value) -> Option<Item> {
        let mut fields = Map::new();
        for path in collection.fields() {
            let mut parts = path.split('.');
            let (Some(first), second) = (parts.next(), parts.next()) else { continue };
            let found = match second {
                None => view.get(first),
                Some(inner) => view.get(first).and_then(|nested| nested.get(inner)),
            };
            let Some(value) = found.filter(|v| !v.is_null()) else { continue };
            match second {
                None => {
                    fields.insert(first.to_owned(), value.clone());
                }
                Some(inner) => {
                    let nested = fields.entry(first.to_owned()).or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(nested) = nested {
                        nested.insert(inner.to_owned(), value.clone());
                    }
                }
            }
        }
        if matches!(collection, Collection::RealmWebhook | Collection::ClientWebhook)
            && fields.get("status").and_then(Value::as_str) == Some("Disabled")
        {
            fields.insert("status".into(), Value::from("Active"));
        }
        let key = fields.get(collection.key_field()).and_then(Value::as_str)?.to_owned();
        let id = view.get("id").and_then(Value::as_str).map(str::to_owned);
        Some(Item { key, fields, id })
    }
}

/// A role named by a grant: a realm role, or the role of one of the realm's clients.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RoleName {
    pub client: Option<String>,
    pub name: String,
}

impl RoleName {
    fn to_value(&self) -> Value {
        let mut fields = Map::new();
        fields.insert("name".into(), Value::from(self.name.clone()));
        if let Some(client) = &self.client {
            fields.insert("clientId".into(), Value::from(client.clone()));
        }
        Value::Object(fields)
    }

    /// `name`, or `client/name` for a client role.
    pub fn label(&self) -> String {
        match &self.client {
            Some(client) => format!("{client}/{}", self.name),
            None => self.name.clone(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Client {
    pub item: Option<Item>,
    pub roles: Vec<Item>,
    pub granted_roles: Vec<RoleName>,
    pub webhooks: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub item: Item,
    pub roles: Vec<RoleName>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Realm {
    pub item: Option<Item>,
    pub scopes: Vec<Item>,
    pub roles: Vec<Item>,
    pub groups: Vec<Group>,
    pub organizations: Vec<Item>,
    pub resource_servers: Vec<Item>,
    pub identity_providers: Vec<Item>,
    pub clients: Vec<Client>,
    pub webhooks: Vec<Item>,
}

impl Realm {
    pub fn key(&self) -> &str {
        self.item.as_ref().map_or("", |item| item.key.as_str())
    }
}

impl Client {
    pub fn key(&self) -> &str {
        self.item.as_ref().map_or("", |item| item.key.as_str())
    }
}

/// An account's configuration, or what a document says it should be.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    pub scopes: Vec<Item>,
    pub realms: Vec<Realm>,
}

const REALM_PARTS: [&str; 8] =
    ["scopes", "roles", "groups", "organizations", "resourceServers", "identityProviders", "clients", "webhooks"];
const CLIENT_PARTS: [&str; 3] = ["roles", "grantedRoles", "webhooks"];

impl Document {
    /// Reads a document, every problem reported at once with its path (`realms[0].clients[1].id`).
    /// Only the keys and the document's shape are checked here; the admin API checks each item's
    /// fields when it is imported.
    pub fn read(value: Value) -> Result<Document, Vec<Notification>> {
        let mut reader = Reader::default();
        let Value::Object(mut top) = value else {
            return Err(vec![Notification::new("", Rule::Type, "the document must be a JSON object")]);
        };
        match top.remove("format") {
            None => {}
            Some(Value::String(format)) if format == FORMAT => {}
            Some(_) => reader.refuse("format", Rule::OneOf, format!("format must be {FORMAT}")),
        }
        let scopes = reader.items("scopes", top.remove("scopes"), Collection::CatalogueScope);
        let mut realms = Vec::new();
        for (index, value) in reader.objects("realms", top.remove("realms")) {
            realms.push(reader.realm(&format!("realms[{index}]"), value));
        }
        reader.duplicates("realms", realms.iter().map(Realm::key), "id");
        for name in top.keys() {
            reader.refuse(name, Rule::Unknown, format!("{name} is not a part of a configuration document"));
        }
        if reader.refused.is_empty() { Ok(Document { scopes, realms }) } else { Err(reader.refused) }
    }

    /// The document as JSON: the creation fields of each item with the items that belong to it.
    /// Empty lists are left out.
    pub fn to_value(&self) -> Value {
        let mut top = Map::new();
        top.insert("format".into(), Value::from(FORMAT));
        put(&mut top, "scopes", self.scopes.iter().map(|item| Value::Object(item.fields.clone())).collect());
        let realms = self.realms.iter().filter_map(|realm| {
            let mut fields = realm.item.as_ref()?.fields.clone();
            let plain = |items: &[Item]| items.iter().map(|item| Value::Object(item.fields.clone())).collect();
            put(&mut fields, "scopes", plain(&realm.scopes));
            put(&mut fields, "roles", plain(&realm.roles));
            let groups = realm.groups.iter().map(|group| {
                let mut fields = group.item.fields.clone();
                put(&mut fields, "roles", group.roles.iter().map(RoleName::to_value).collect());
                Value::Object(fields)
            });
            put(&mut fields, "groups", groups.collect());
            put(&mut fields, "organizations", plain(&realm.organizations));
            put(&mut fields, "resourceServers", plain(&realm.resource_servers));
            put(&mut fields, "identityProviders", plain(&realm.identity_providers));
            let clients = realm.clients.iter().filter_map(|client| {
                let mut fields = client.item.as_ref()?.fields.clone();
                put(&mut fields, "roles", plain(&client.roles));
                put(&mut fields, "grantedRoles", client.granted_roles.iter().map(RoleName::to_value).collect());
                put(&mut fields, "webhooks", plain(&client.webhooks));
                Some(Value::Object(fields))
            });
            put(&mut fields, "clients", clients.collect());
            put(&mut fields, "webhooks", plain(&realm.webhooks));
            Some(Value::Object(fields))
        });
        put(&mut top, "realms", realms.collect());
        Value::Object(top)
    }

    /// Only the parts of `kinds`: the realms stay, as the places of their parts.
    pub fn only(mut self, kinds: &[Kind]) -> Document {
        let keep = |kind: Kind| kinds.contains(&kind);
        if !keep(Kind::Scope) {
            self.scopes.clear();
        }
        for realm in &mut self.realms {
            if !keep(Kind::Realm)
                && let Some(item) = &mut realm.item
            {
                item.fields.retain(|name, _| name == "id");
            }
            if !keep(Kind::Scope) {
                realm.scopes.clear();
            }
            if !keep(Kind::Role) {
                realm.roles.clear();
                realm.clients.iter_mut().for_each(|client| client.roles.clear());
            }
            if !keep(Kind::Group) {
                realm.groups.clear();
            }
            if !keep(Kind::Organization) {
                realm.organizations.clear();
            }
            if !keep(Kind::ResourceServer) {
                realm.resource_servers.clear();
            }
            if !keep(Kind::IdentityProvider) {
                realm.identity_providers.clear();
            }
            if !keep(Kind::Webhook) {
                realm.webhooks.clear();
                realm.clients.iter_mut().for_each(|client| client.webhooks.clear());
            }
            if !keep(Kind::Client) {
                // Clients stay only as the places of their roles and endpoints.
                realm.clients.retain(|client| !client.roles.is_empty() || !client.webhooks.is_empty());
                for client in &mut realm.clients {
                    client.granted_roles.clear();
                    if let Some(item) = &mut client.item {
                        item.fields.retain(|name, _| name == "id");
                    }
                }
            }
        }
        if !keep(Kind::Realm) {
            self.realms.retain(|realm| *realm != Realm { item: realm.item.clone(), ..Realm::default() });
        }
        self
    }
}

fn put(fields: &mut Map<String, Value>, name: &str, values: Vec<Value>) {
    if !values.is_empty() {
        fields.insert(name.into(), Value::Array(values));
    }
}

#[derive(Default)]
struct Reader {
    refused: Vec<Notification>,
}

impl Reader {
    fn refuse(&mut self, field: &str, rule: Rule, message: impl Into<String>) {
        self.refused.push(Notification::new(field, rule, message));
    }

    /// The objects of a list (absent: none), each with its position.
    fn objects(&mut self, path: &str, value: Option<Value>) -> Vec<(usize, Map<String, Value>)> {
        let values = match value {
            None | Some(Value::Null) => return Vec::new(),
            Some(Value::Array(values)) => values,
            Some(_) => {
                self.refuse(path, Rule::Type, format!("{path} must be a list"));
                return Vec::new();
            }
        };
        let mut objects = Vec::new();
        for (index, value) in values.into_iter().enumerate() {
            match value {
                Value::Object(fields) => objects.push((index, fields)),
                _ => self.refuse(&format!("{path}[{index}]"), Rule::Type, "each item must be a JSON object"),
            }
        }
        objects
    }

    fn item(&mut self, path: &str, fields: Map<String, Value>, collection: Collection) -> Item {
        let field = collection.key_field();
        let key = match fields.get(field) {
            Some(Value::String(key)) if !key.trim().is_empty() => key.clone(),
            _ => {
                self.refuse(&format!("{path}.{field}"), Rule::Required, format!("{path}.{field} is required"));
                String::new()
            }
        };
        Item { key, fields, id: None }
    }

    fn items(&mut self, path: &str, value: Option<Value>, collection: Collection) -> Vec<Item> {
        let items: Vec<Item> = self
            .objects(path, value)
            .into_iter()
            .map(|(index, fields)| self.item(&format!("{path}[{index}]"), fields, collection))
            .collect();
        self.duplicates(path, items.iter().map(|item| item.key.as_str()), collection.key_field());
        items
    }

    /// Refuses a key given twice in one place.
    fn duplicates<'a>(&mut self, path: &str, keys: impl Iterator<Item = &'a str>, field: &str) {
        let mut seen = HashSet::new();
        for (index, key) in keys.enumerate() {
            if !key.is_empty() && !seen.insert(key.to_owned()) {
                let message = format!("{key} is given twice in {path}");
                self.refuse(&format!("{path}[{index}].{field}"), Rule::Duplicate, message);
            }
        }
    }

    fn role_names(&mut self, path: &str, value: Option<Value>) -> Vec<RoleName> {
        let mut names = Vec::new();
        for (index, fields) in self.objects(path, value) {
            let text = |name: &str| fields.get(name).and_then(Value::as_str).map(str::to_owned);
            match text("name") {
                Some(name) if fields.keys().all(|field| field == "name" || field == "clientId") => {
                    names.push(RoleName { client: text("clientId"), name });
                }
                _ => self.refuse(
                    &format!("{path}[{index}]"),
                    Rule::Type,
                    "a role is named by its name, and for a client role its clientId",
                ),
            }
        }
        names
    }

    fn realm(&mut self, path: &str, mut fields: Map<String, Value>) -> Realm {
        let mut part = |name: &str| fields.remove(name);
        let [scopes, roles, groups, organizations, servers, providers, clients, webhooks] = REALM_PARTS.map(&mut part);
        let mut realm = Realm {
            scopes: self.items(&format!("{path}.scopes"), scopes, Collection::RealmScope),
            roles: self.items(&format!("{path}.roles"), roles, Collection::RealmRole),
            organizations: self.items(&format!("{path}.organizations"), organizations, Collection::Organization),
            resource_servers: self.items(&format!("{path}.resourceServers"), servers, Collection::ResourceServer),
            identity_providers: self.items(
                &format!("{path}.identityProviders"),
                providers,
                Collection::IdentityProvider,
            ),
            webhooks: self.items(&format!("{path}.webhooks"), webhooks, Collection::RealmWebhook),
            ..Realm::default()
        };
        for (index, mut fields) in self.objects(&format!("{path}.groups"), groups) {
            let at = format!("{path}.groups[{index}]");
            let roles = self.role_names(&format!("{at}.roles"), fields.remove("roles"));
            realm.groups.push(Group { item: self.item(&at, fields, Collection::Group), roles });
        }
        self.duplicates(&format!("{path}.groups"), realm.groups.iter().map(|g| g.item.key.as_str()), "name");
        for (index, mut fields) in self.objects(&format!("{path}.clients"), clients) {
            let at = format!("{path}.clients[{index}]");
            let [roles, granted, webhooks] = CLIENT_PARTS.map(|name| fields.remove(name));
            realm.clients.push(Client {
                roles: self.items(&format!("{at}.roles"), roles, Collection::ClientRole),
                granted_roles: self.role_names(&format!("{at}.grantedRoles"), granted),
                webhooks: self.items(&format!("{at}.webhooks"), webhooks, Collection::ClientWebhook),
                item: Some(self.item(&at, fields, Collection::Client)),
            });
        }
        self.duplicates(&format!("{path}.clients"), realm.clients.iter().map(Client::key), "id");
        realm.item = Some(self.item(path, fields, Collection::Realm));
        realm
    }
}
