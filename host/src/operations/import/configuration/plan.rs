//! The plan of importing a configuration document: what each item does, in an order where what an
//! item names exists before it.

use std::collections::HashSet;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Collection, Document, Item, Kind, OFFERED_PROVIDERS, Realm, RoleName};
use crate::store::imports::OnConflict;

/// What an import does with one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Action {
    Create,
    Update,
    /// The account holds it with every field the document gives.
    Unchanged,
    /// The account holds it, different, and the import leaves it as it is.
    Skip,
    /// A grant the account makes and the document, overwriting, does not.
    Withdraw,
    Refuse(String),
}

/// One thing an import does.
#[derive(Debug, Clone)]
pub struct Step {
    pub collection: Collection,
    pub realm: Option<String>,
    /// The client the item belongs to, or the grantee client.
    pub client: Option<String>,
    /// The grantee group.
    pub group: Option<String>,
    /// The item's key, or for a grant the role's label.
    pub key: String,
    pub action: Action,
    /// What a creation or an update sends.
    pub fields: Map<String, Value>,
    /// The item's id in the account, when it holds it.
    pub id: Option<String>,
    /// The role a grant names.
    pub role: Option<RoleName>,
}

impl Step {
    fn of(collection: Collection, key: &str, action: Action) -> Step {
        Step {
            collection,
            realm: None,
            client: None,
            group: None,
            key: key.to_owned(),
            action,
            fields: Map::new(),
            id: None,
            role: None,
        }
    }
}

/// The item without the providers it offers, and those providers when it names them.
fn without_offer(item: &Item) -> (Item, Option<Value>) {
    let mut item = item.clone();
    let offered = item.fields.remove(OFFERED_PROVIDERS);
    (item, offered)
}

/// Whether every field `given` names has that value in `held` (nested objects field by field).
fn covers(held: &Map<String, Value>, given: &Map<String, Value>) -> bool {
    given.iter().all(|(name, value)| match (held.get(name), value) {
        (Some(Value::Object(held)), Value::Object(given)) => covers(held, given),
        (Some(held), value) => held == value,
        (None, value) => value.is_null(),
    })
}

/// The steps of importing the `kinds` of `document` into an account that holds `held`, the
/// conflicts handled as `on_conflict` says, in an order where what an item names exists before it.
pub fn plan(document: &Document, held: &Document, kinds: &[Kind], on_conflict: OnConflict) -> Vec<Step> {
    let mut planner = Planner { held, on_conflict, steps: Vec::new(), offers: Vec::new() };
    planner.run(document);
    planner.steps.retain(|step| kinds.contains(&step.collection.kind()));
    planner.refuse_orphans();
    planner.steps
}

struct Planner<'a> {
    held: &'a Document,
    on_conflict: OnConflict,
    steps: Vec<Step>,
    /// The identity providers clients and organizations offer: set once the providers exist.
    offers: Vec<Step>,
}

fn find<'a>(items: &'a [Item], key: &str) -> Option<&'a Item> {
    items.iter().find(|item| item.key == key)
}

impl<'a> Planner<'a> {
    /// The action for an item the account may already hold.
    fn decide(&self, given: &Item, held: Option<&Item>) -> (Action, Option<String>) {
        let Some(held) = held else { return (Action::Create, None) };
        let action = if covers(&held.fields, &given.fields) { Action::Unchanged } else { self.conflict() };
        (action, held.id.clone())
    }

    /// What an item the account holds, different, does.
    fn conflict(&self) -> Action {
        match self.on_conflict {
            OnConflict::Skip => Action::Skip,
            OnConflict::Overwrite => Action::Update,
            OnConflict::Fail => Action::Refuse("the account already holds it, different".into()),
        }
    }

    /// The steps of the items of one place; returns where they start.
    fn items(
        &mut self,
        collection: Collection,
        place: (Option<&str>, Option<&str>),
        given: &[Item],
        held: &[Item],
    ) -> usize {
        let first = self.steps.len();
        let offering = match collection {
            Collection::Client => Some(Collection::ClientIdentityProviders),
            Collection::Organization => Some(Collection::OrganizationIdentityProviders),
            _ => None,
        };
        for item in given {
            let (item, offered) = without_offer(item);
            let held_item = find(held, &item.key).map(without_offer);
            let (action, id) = self.decide(&item, held_item.as_ref().map(|(held, _)| held));
            let mut step = Step::of(collection, &item.key, action);
            (step.realm, step.client) = (place.0.map(str::to_owned), place.1.map(str::to_owned));
            (step.fields, step.id) = (item.fields.clone(), id.clone());
            self.steps.push(step);
            if let (Some(offering), Some(offered)) = (offering, offered) {
                let held_offer = held_item.and_then(|(_, offer)| offer).unwrap_or(Value::Array(Vec::new()));
                let action = if held_offer == offered {
                    Action::Unchanged
                } else if held_offer.as_array().is_some_and(Vec::is_empty) {
                    Action::Create
                } else {
                    self.conflict()
                };
                let mut step = Step::of(offering, &item.key, action);
                step.realm = place.0.map(str::to_owned);
                step.client = (offering == Collection::ClientIdentityProviders).then(|| item.key.clone());
                step.id = id;
                step.fields.insert(OFFERED_PROVIDERS.into(), offered);
                self.offers.push(step);
            }
        }
        first
    }

    /// The grants of a grantee (its step `at`): those it lacks are made and, when overwriting,
    /// those the document does not make are withdrawn. Each role must be one the realm will hold.
    /// A skipped grantee keeps its grants.
    fn grants(&mut self, collection: Collection, at: &Step, given: &[RoleName], held: &[RoleName], roles: &Roles) {
        let skipped = matches!(at.action, Action::Skip | Action::Refuse(_));
        for role in given {
            let action = if skipped {
                Action::Skip
            } else if held.contains(role) {
                Action::Unchanged
            } else if !roles.contains(role) {
                Action::Refuse(format!("the realm holds no role {}", role.label()))
            } else {
                Action::Create
            };
            self.grant(collection, at, role, action);
        }
        if self.on_conflict == OnConflict::Overwrite && !skipped {
            for role in held.iter().filter(|role| !given.contains(role)) {
                self.grant(collection, at, role, Action::Withdraw);
            }
        }
    }

    fn grant(&mut self, collection: Collection, at: &Step, role: &RoleName, action: Action) {
        let mut step = Step::of(collection, &role.label(), action);
        (step.realm, step.role) = (at.realm.clone(), Some(role.clone()));
        match collection {
            Collection::GroupRole => step.group = Some(at.key.clone()),
            _ => step.client = Some(at.key.clone()),
        }
        self.steps.push(step);
    }

    fn run(&mut self, document: &Document) {
        let held: &'a Document = self.held;
        let empty = Realm::default();
        let realms: Vec<(&Realm, &Realm)> = document
            .realms
            .iter()
            .map(|realm| (realm, held.realms.iter().find(|r| r.key() == realm.key()).unwrap_or(&empty)))
            .collect();
        self.items(Collection::CatalogueScope, (None, None), &document.scopes, &held.scopes);
        // A realm is created first, without the settings that name its scopes; an update waits
        // for them.
        let mut settle = Vec::new();
        for (given, held) in &realms {
            let Some(item) = &given.item else { continue };
            let (action, _) = self.decide(item, held.item.as_ref());
            let mut step = Step::of(Collection::Realm, &item.key, action.clone());
            step.realm = Some(item.key.clone());
            step.id = held.item.as_ref().map(|_| item.key.clone());
            step.fields = item.fields.clone();
            if action != Action::Create {
                settle.push(step);
                continue;
            }
            let scopes = step.fields.remove("registrationScopes");
            if let Some(scopes) = scopes.filter(|s| s.as_array().is_some_and(|list| !list.is_empty())) {
                // The rest of the realm's creation, once its scopes exist.
                let mut later = Step::of(Collection::RealmSettings, &item.key, Action::Create);
                (later.realm, later.id) = (Some(item.key.clone()), Some(item.key.clone()));
                later.fields.insert("registrationScopes".into(), scopes);
                settle.push(later);
            }
            self.steps.push(step);
        }
        for (given, held) in &realms {
            self.items(Collection::RealmScope, (Some(given.key()), None), &given.scopes, &held.scopes);
        }
        self.steps.extend(settle);
        for (given, held) in &realms {
            self.items(Collection::RealmRole, (Some(given.key()), None), &given.roles, &held.roles);
        }
        let mut client_steps = Vec::new();
        for (given, held) in &realms {
            let given_clients: Vec<Item> = given.clients.iter().filter_map(|c| c.item.clone()).collect();
            let held_clients: Vec<Item> = held.clients.iter().filter_map(|c| c.item.clone()).collect();
            let first = self.items(Collection::Client, (Some(given.key()), None), &given_clients, &held_clients);
            client_steps.push(self.steps[first..].to_vec());
        }
        for (given, held) in &realms {
            for client in &given.clients {
                let held_roles =
                    held.clients.iter().find(|c| c.key() == client.key()).map_or(&[][..], |c| &c.roles[..]);
                let place = (Some(given.key()), Some(client.key()));
                self.items(Collection::ClientRole, place, &client.roles, held_roles);
            }
        }
        for ((given, held), clients) in realms.iter().zip(client_steps) {
            let given_groups: Vec<Item> = given.groups.iter().map(|g| g.item.clone()).collect();
            let held_groups: Vec<Item> = held.groups.iter().map(|g| g.item.clone()).collect();
            let first = self.items(Collection::Group, (Some(given.key()), None), &given_groups, &held_groups);
            let groups: Vec<Step> = self.steps[first..].to_vec();
            let roles = Roles::of(given, held);
            for (group, at) in given.groups.iter().zip(&groups) {
                let held_group = held.groups.iter().find(|g| g.item.key == group.item.key);
                let held_grants = held_group.map_or(&[][..], |g| &g.roles[..]);
                self.grants(Collection::GroupRole, at, &group.roles, held_grants, &roles);
            }
            for (client, at) in given.clients.iter().zip(&clients) {
                let held_client = held.clients.iter().find(|c| c.key() == client.key());
                let held_grants = held_client.map_or(&[][..], |c| &c.granted_roles[..]);
                self.grants(Collection::ClientGrantedRole, at, &client.granted_roles, held_grants, &roles);
            }
        }
        for (given, held) in &realms {
            let place = (Some(given.key()), None);
            self.items(Collection::IdentityProvider, place, &given.identity_providers, &held.identity_providers);
        }
        let offers = std::mem::take(&mut self.offers);
        let (clients, organizations): (Vec<Step>, Vec<Step>) =
            offers.into_iter().partition(|step| step.collection == Collection::ClientIdentityProviders);
        self.steps.extend(clients);
        self.offers = organizations;
        for (given, held) in &realms {
            let place = (Some(given.key()), None);
            self.items(Collection::Organization, place, &given.organizations, &held.organizations);
        }
        let organizations = std::mem::take(&mut self.offers);
        self.steps.extend(organizations);
        for (given, held) in &realms {
            let place = (Some(given.key()), None);
            self.items(Collection::ResourceServer, place, &given.resource_servers, &held.resource_servers);
        }
        for (given, held) in &realms {
            self.items(Collection::RealmWebhook, (Some(given.key()), None), &given.webhooks, &held.webhooks);
            for client in &given.clients {
                let held_client = held.clients.iter().find(|c| c.key() == client.key());
                let held_hooks = held_client.map_or(&[][..], |c| &c.webhooks[..]);
                let place = (Some(given.key()), Some(client.key()));
                self.items(Collection::ClientWebhook, place, &client.webhooks, held_hooks);
            }
        }
    }

    /// Refuses the items whose realm or client neither the account holds nor the import creates.
    fn refuse_orphans(&mut self) {
        let held = self.held;
        let mut realms: HashSet<String> = held.realms.iter().map(|r| r.key().to_owned()).collect();
        let mut clients: HashSet<(String, String)> = held
            .realms
            .iter()
            .flat_map(|r| r.clients.iter().map(move |c| (r.key().to_owned(), c.key().to_owned())))
            .collect();
        for step in self.steps.iter().filter(|step| step.action == Action::Create) {
            match (step.collection, &step.realm) {
                (Collection::Realm, Some(realm)) => {
                    realms.insert(realm.clone());
                }
                (Collection::Client, Some(realm)) => {
                    clients.insert((realm.clone(), step.key.clone()));
                }
                _ => {}
            }
        }
        for step in &mut self.steps {
            let Some(realm) = step.realm.clone() else { continue };
            let client = step.client.clone().filter(|_| step.collection != Collection::Client);
            let reason = if step.collection != Collection::Realm && !realms.contains(&realm) {
                format!("the account holds no realm {realm}, and the import does not create it")
            } else if let Some(client) = client.filter(|c| !clients.contains(&(realm.clone(), c.clone()))) {
                format!("the realm holds no client {client}, and the import does not create it")
            } else {
                continue;
            };
            if !matches!(step.action, Action::Refuse(_)) {
                step.action = Action::Refuse(reason);
            }
        }
    }
}

/// The roles a realm will hold after an import: those it holds and those the document creates.
struct Roles(HashSet<RoleName>);

impl Roles {
    fn of(given: &Realm, held: &Realm) -> Roles {
        let mut names = HashSet::new();
        for realm in [given, held] {
            names.extend(realm.roles.iter().map(|role| RoleName { client: None, name: role.key.clone() }));
            for client in &realm.clients {
                let owner = Some(client.key().to_owned());
                names
                    .extend(client.roles.iter().map(|role| RoleName { client: owner.clone(), name: role.key.clone() }));
            }
        }
        Roles(names)
    }

    fn contains(&self, role: &RoleName) -> bool {
        self.0.contains(role)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn document(value: Value) -> Document {
        Document::read(value).unwrap()
    }

    fn outline(steps: &[Step]) -> Vec<(Collection, &str, &Action)> {
        steps.iter().map(|step| (step.collection, step.key.as_str(), &step.action)).collect()
    }

    #[test]
    fn an_item_covers_another_when_every_field_it_gives_is_held() {
        let held = json!({ "name": "web", "clientConfiguration": { "grantTypes": ["password"], "redirectUris": [] } });
        let given = json!({ "name": "web", "clientConfiguration": { "grantTypes": ["password"] } });
        let (Value::Object(held), Value::Object(given)) = (held, given) else { unreachable!() };
        assert!(covers(&held, &given));
        assert!(!covers(&given, &held), "a field the account lacks is a difference");
    }

    #[test]
    fn what_an_item_names_comes_before_it() {
        let given = document(json!({ "realms": [{
            "id": "acme", "registrationScopes": ["reports:read"],
            "scopes": [{ "name": "reports:read" }],
            "groups": [{ "name": "staff", "roles": [{ "name": "clerk", "clientId": "web" }] }],
            "clients": [{ "id": "web", "roles": [{ "name": "clerk" }] }],
        }] }));
        let steps = plan(&given, &Document::default(), &Kind::ALL, OnConflict::Skip);
        let order: Vec<Collection> = steps.iter().map(|s| s.collection).collect();
        assert_eq!(
            order,
            [
                Collection::Realm,
                Collection::RealmScope,
                Collection::RealmSettings,
                Collection::Client,
                Collection::ClientRole,
                Collection::Group,
                Collection::GroupRole,
            ]
        );
        assert!(!steps[0].fields.contains_key("registrationScopes"), "set once its scopes exist");
    }

    #[test]
    fn conflicts_follow_the_policy_and_overwriting_withdraws_grants() {
        let mut held = document(json!({ "realms": [{ "id": "acme",
            "roles": [{ "name": "admin" }, { "name": "clerk" }],
            "groups": [{ "name": "staff", "roles": [{ "name": "admin" }, { "name": "clerk" }] }] }] }));
        held.realms[0].groups[0].item.id = Some("g1".into());
        let given = document(json!({ "realms": [{ "id": "acme",
            "roles": [{ "name": "admin", "description": "All" }],
            "groups": [{ "name": "staff", "roles": [{ "name": "admin" }, { "name": "ghost" }] }] }] }));
        let skip = plan(&given, &held, &Kind::ALL, OnConflict::Skip);
        assert_eq!(
            outline(&skip),
            [
                (Collection::Realm, "acme", &Action::Unchanged),
                (Collection::RealmRole, "admin", &Action::Skip),
                (Collection::Group, "staff", &Action::Unchanged),
                (Collection::GroupRole, "admin", &Action::Unchanged),
                (Collection::GroupRole, "ghost", &Action::Refuse("the realm holds no role ghost".into())),
            ]
        );
        let overwrite = plan(&given, &held, &Kind::ALL, OnConflict::Overwrite);
        assert_eq!(overwrite[1].action, Action::Update);
        assert_eq!(outline(&overwrite).last(), Some(&(Collection::GroupRole, "clerk", &Action::Withdraw)));
        let fail = plan(&given, &held, &Kind::ALL, OnConflict::Fail);
        assert!(matches!(fail[1].action, Action::Refuse(_)));
    }

    #[test]
    fn one_part_goes_only_into_realms_that_exist() {
        let given = document(json!({ "realms": [{ "id": "acme", "roles": [{ "name": "admin" }] }] }));
        let steps = plan(&given, &Document::default(), &[Kind::Role], OnConflict::Skip);
        assert_eq!(steps.len(), 1);
        assert!(matches!(&steps[0].action, Action::Refuse(why) if why.contains("no realm acme")));
    }
}
