//! An Auth0 tenant: the document its Deploy CLI exports (`a0deploy export --format yaml`, read as
//! JSON: `tenant`, `clients`, `resourceServers`, `clientGrants`, `roles`, `organizations`,
//! `connections`, …) with `users`, the rows of a users export job, each with the `passwordHash`
//! Auth0's password hash export gives (bcrypt) or a bulk-import `custom_password_hash`, and the
//! names of the `roles` the person holds.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::{Translation, client_id, exact_addresses, flag, item, person_row, realm_id, text, texts};
use crate::kernel::validate::{Notification, Rule};
use crate::operations::import::configuration::{Client, Collection, Realm};

const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";
const PASSWORD_REALM_GRANT: &str = "http://auth0.com/oauth/grant-type/password-realm";

/// Parts of a tenant nothing here takes, and why.
const UNTAKEN: &[(&str, &str)] = &[
    ("rules", "code run at sign-in is not carried: extensions here are WebAssembly plugins"),
    ("actions", "code run at sign-in is not carried: extensions here are WebAssembly plugins"),
    ("hooks", "code run at sign-in is not carried: extensions here are WebAssembly plugins"),
    ("emailTemplates", "mail here is the service's own"),
    ("emailProvider", "mail here is the service's own configuration"),
    ("guardianFactors", "multi-factor settings are not carried"),
    ("logStreams", "events here go to webhook endpoints: subscribe one"),
];

pub(super) fn translate(export: Map<String, Value>, realm: Option<&str>) -> Result<Translation, Vec<Notification>> {
    let known =
        ["tenant", "clients", "resourceServers", "clientGrants", "roles", "organizations", "connections", "users"];
    if !known.iter().any(|part| export.contains_key(*part)) {
        let message =
            "an Auth0 export holds at least one of tenant, clients, resourceServers, roles, organizations, users";
        return Err(vec![Notification::new("", Rule::Required, message)]);
    }
    let mut t = Translation::default();
    let tenant = export.get("tenant").and_then(Value::as_object).cloned().unwrap_or_default();
    let name = text(&tenant, "friendly_name").unwrap_or("auth0");
    let id = realm.map_or_else(|| realm_id(name), str::to_owned);
    let mut fields = Map::new();
    fields.insert("id".into(), json!(id));
    fields.insert("displayName".into(), json!(name));
    t.changed(format!("tenant {name}"), format!("realm {id}"), "a tenant is one realm here");
    connections(&mut t, &export, &mut fields);
    let mut out = Realm { item: Some(item(Collection::Realm, fields)), ..Realm::default() };

    clients(&mut t, &export, &mut out);
    resource_servers(&mut t, &export, &mut out);
    roles(&mut t, &export, &mut out);
    for value in export.get("organizations").and_then(Value::as_array).into_iter().flatten() {
        let Some(organization) = value.as_object() else { continue };
        let Some(name) = text(organization, "display_name").or_else(|| text(organization, "name")) else { continue };
        let mut fields = Map::new();
        fields.insert("name".into(), json!(name));
        out.organizations.push(item(Collection::Organization, fields));
        t.changed(
            format!("organization {name}"),
            format!("organization {name}"),
            "its connections and branding are not carried; give it its e-mail domains",
        );
    }
    users(&mut t, &export);
    for (part, why) in UNTAKEN {
        let count = export.get(*part).map_or(0, |v| v.as_array().map_or(1, Vec::len));
        if count > 0 {
            t.left_behind(format!("{part} ({count})"), why);
        }
    }
    t.document.realms.push(out);
    Ok(t)
}

/// The database connection's rules become the realm's; other connections stay behind.
fn connections(t: &mut Translation, export: &Map<String, Value>, realm: &mut Map<String, Value>) {
    for value in export.get("connections").and_then(Value::as_array).into_iter().flatten() {
        let Some(connection) = value.as_object() else { continue };
        let name = text(connection, "name").unwrap_or("connection");
        if text(connection, "strategy") != Some("auth0") {
            t.left_behind(
                format!("connection {name}"),
                "identity brokering is not offered yet: this connection is not carried",
            );
            continue;
        }
        let options = connection.get("options").cloned().unwrap_or(Value::Null);
        let length =
            options.get("password_complexity_options").and_then(|o| o.get("min_length")).and_then(Value::as_i64);
        if let Some(length) = length {
            realm.insert("minimumPasswordLength".into(), json!(length.clamp(8, 64)));
        }
        if let Some(disabled) = options.get("disable_signup").and_then(Value::as_bool) {
            realm.insert("selfSignUp".into(), json!(!disabled));
        }
        if options.get("brute_force_protection").and_then(Value::as_bool) == Some(true) {
            realm.insert("lockoutEnabled".into(), json!(true));
        }
        t.changed(
            format!("connection {name}"),
            "the realm's people and password rules",
            "a realm holds its people itself; only the minimum length of the password policy is carried",
        );
    }
}

fn clients(t: &mut Translation, export: &Map<String, Value>, out: &mut Realm) {
    let grants = export.get("clientGrants").and_then(Value::as_array).cloned().unwrap_or_default();
    for value in export.get("clients").and_then(Value::as_array).into_iter().flatten() {
        let Some(client) = value.as_object() else { continue };
        let Some(name) = text(client, "name") else { continue };
        let source = format!("client {name}");
        if flag(client, "global") == Some(true) {
            t.left_behind(source, "Auth0's own client");
            continue;
        }
        let id = super::slug(name, &['_', '.'], 128);
        let public = matches!(text(client, "app_type"), Some("spa" | "native"))
            || text(client, "token_endpoint_auth_method") == Some("none");
        let mut changes = vec!["its id is made from its name: give the application the new id"];
        if !public {
            changes.push("a new secret is issued: give it to the application");
        }
        let mut grant_types = Vec::new();
        let asked = texts(client, "grant_types");
        let asked = if asked.is_empty() { vec!["authorization_code".into(), "refresh_token".into()] } else { asked };
        for grant in &asked {
            match grant.as_str() {
                "authorization_code" | "refresh_token" | "password" => grant_types.push(grant.clone()),
                "client_credentials" if !public => grant_types.push(grant.clone()),
                PASSWORD_REALM_GRANT => {
                    grant_types.push("password".into());
                    changes.push("the password-realm grant is the password grant here, into the one realm");
                }
                DEVICE_GRANT => grant_types.push(grant.clone()),
                "implicit" => changes.push("the implicit grant is not offered"),
                _ => changes.push("grants this service does not offer (MFA, passwordless) are left out"),
            }
        }
        grant_types.sort();
        grant_types.dedup();
        let (redirects, wild) = exact_addresses(texts(client, "callbacks"));
        if !wild.is_empty() {
            changes.push("wildcard callback addresses are left out: addresses here are compared exactly");
        }
        let (logout, _) = exact_addresses(texts(client, "allowed_logout_urls"));
        let (mut origins, _) = exact_addresses(texts(client, "web_origins"));
        origins.extend(exact_addresses(texts(client, "allowed_origins")).0);
        origins.sort();
        origins.dedup();
        let mut scopes = vec!["openid".to_owned(), "profile".to_owned(), "email".to_owned()];
        for grant in grants.iter().filter(|g| g.get("client_id").and_then(Value::as_str) == Some(name)) {
            for scope in grant.get("scope").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
                if !scopes.iter().any(|s| s == scope) {
                    scopes.push(scope.to_owned());
                }
            }
        }
        let mut configuration = Map::new();
        configuration.insert("grantTypes".into(), json!(grant_types));
        configuration.insert("allowedScopes".into(), json!(scopes));
        configuration.insert("redirectUris".into(), json!(redirects));
        configuration.insert("postLogoutRedirectUris".into(), json!(logout));
        configuration.insert("allowedOrigins".into(), json!(origins));
        let mut fields = Map::new();
        fields.insert("id".into(), json!(id));
        fields.insert("name".into(), json!(name));
        if let Some(description) = text(client, "description") {
            fields.insert("description".into(), json!(description));
        }
        fields.insert("type".into(), json!(if public { "Public" } else { "Confidential" }));
        fields.insert("clientConfiguration".into(), Value::Object(configuration));
        if let Some(logo) = text(client, "logo_uri") {
            fields.insert("branding".into(), json!({ "logoUri": logo }));
        }
        t.changed(source, format!("client {id}"), &changes.join("; "));
        out.clients.push(Client { item: Some(item(Collection::Client, fields)), ..Client::default() });
    }
}

/// APIs become resource servers, their scopes the realm's, their client grants the clients they allow.
fn resource_servers(t: &mut Translation, export: &Map<String, Value>, out: &mut Realm) {
    let grants = export.get("clientGrants").and_then(Value::as_array).cloned().unwrap_or_default();
    let clients: Vec<(String, String)> = export
        .get("clients")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str))
        .map(|name| (name.to_owned(), super::slug(name, &['_', '.'], 128)))
        .collect();
    let mut realm_scopes = HashSet::new();
    for value in export.get("resourceServers").and_then(Value::as_array).into_iter().flatten() {
        let Some(server) = value.as_object() else { continue };
        let Some(identifier) = text(server, "identifier") else { continue };
        let name = text(server, "name").unwrap_or(identifier);
        let source = format!("API {name}");
        if identifier.ends_with("/api/v2/") || flag(server, "is_system") == Some(true) {
            t.left_behind(source, "Auth0's Management API: the admin API here takes its place");
            continue;
        }
        if !url::Url::parse(identifier).is_ok_and(|url| url.scheme() == "https") {
            t.left_behind(source, "its identifier is not an https address, which names a resource server here");
            continue;
        }
        let mut scopes = Vec::new();
        for scope in server.get("scopes").and_then(Value::as_array).into_iter().flatten() {
            let Some(value) = scope.get("value").and_then(Value::as_str) else { continue };
            scopes.push(value.to_owned());
            if realm_scopes.insert(value.to_owned()) {
                let mut fields = Map::new();
                fields.insert("name".into(), json!(value));
                if let Some(description) = scope.get("description").and_then(Value::as_str) {
                    fields.insert("description".into(), json!(description));
                }
                out.scopes.push(item(Collection::RealmScope, fields));
            }
        }
        let allowed: Vec<&str> = grants
            .iter()
            .filter(|g| g.get("audience").and_then(Value::as_str) == Some(identifier))
            .filter_map(|g| g.get("client_id").and_then(Value::as_str))
            .filter_map(|client| clients.iter().find(|(name, _)| name == client).map(|(_, id)| id.as_str()))
            .collect();
        let mut fields = Map::new();
        fields.insert("name".into(), json!(name));
        fields.insert("address".into(), json!(identifier));
        fields.insert("scopes".into(), json!(scopes));
        fields.insert("allowedClients".into(), json!(allowed));
        out.resource_servers.push(item(Collection::ResourceServer, fields));
        t.mapped(source, format!("resource server {identifier}"));
    }
}

fn roles(t: &mut Translation, export: &Map<String, Value>, out: &mut Realm) {
    for value in export.get("roles").and_then(Value::as_array).into_iter().flatten() {
        let Some(role) = value.as_object() else { continue };
        let Some(name) = text(role, "name") else { continue };
        let here = client_id(name);
        let mut fields = Map::new();
        fields.insert("name".into(), json!(here));
        if let Some(description) = text(role, "description") {
            fields.insert("description".into(), json!(description));
        }
        out.roles.push(item(Collection::RealmRole, fields));
        let permissions = role.get("permissions").and_then(Value::as_array).map_or(0, Vec::len);
        if permissions > 0 {
            t.changed(
                format!("role {name}"),
                format!("role {here}"),
                "its permissions are not carried: a role here is a claim, and scopes belong to resource servers",
            );
        } else if here != name {
            t.changed(
                format!("role {name}"),
                format!("role {here}"),
                "role names here are letters, digits, -, _, . and :",
            );
        } else {
            t.mapped(format!("role {name}"), format!("role {here}"));
        }
    }
}

fn users(t: &mut Translation, export: &Map<String, Value>) {
    let (mut by_email, mut no_password, mut nameless) = (0, 0, 0);
    for value in export.get("users").and_then(Value::as_array).into_iter().flatten() {
        let Some(user) = value.as_object() else { continue };
        let email = text(user, "email");
        let Some(username) = text(user, "username").or(email) else {
            nameless += 1;
            continue;
        };
        if text(user, "username").is_none() {
            by_email += 1;
        }
        let names = ["email", "given_name", "family_name", "email_verified"];
        let mut row = person_row(user, username, names, flag(user, "blocked") == Some(true));
        match password_hash(user) {
            Some(hash) => {
                row.insert("passwordHash".into(), hash);
            }
            None => no_password += 1,
        }
        let roles: Vec<String> = texts(user, "roles").iter().map(|r| client_id(r)).collect();
        if !roles.is_empty() {
            row.insert("roles".into(), json!(roles));
        }
        t.users.push(Value::Object(row));
    }
    t.people(no_password);
    t.nameless(nameless);
    if by_email > 0 {
        t.changed(
            format!("users without a username ({by_email})"),
            "people named by e-mail",
            "their e-mail address is their username here",
        );
    }
}

/// The hash of Auth0's password hash export (`passwordHash`, bcrypt), or a bulk-import
/// `custom_password_hash` of bcrypt or Argon2.
fn password_hash(user: &Map<String, Value>) -> Option<Value> {
    if let Some(hash) = text(user, "passwordHash").or_else(|| text(user, "password_hash")) {
        return Some(json!({ "algorithm": "bcrypt", "value": hash }));
    }
    let custom = user.get("custom_password_hash")?;
    let value = custom.get("hash")?.get("value")?.as_str()?;
    match custom.get("algorithm")?.as_str()? {
        "bcrypt" => Some(json!({ "algorithm": "bcrypt", "value": value })),
        "argon2" => Some(json!({ "algorithm": "argon2", "value": value })),
        _ => None,
    }
}
