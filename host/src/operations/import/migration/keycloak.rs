//! A Keycloak realm export (`kc.sh export --realm …`, or the admin console's partial export): the
//! realm's settings, roles, client scopes, clients, groups, organizations, and its users with their
//! password credentials.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::{Translation, client_id, exact_addresses, flag, item, person_row, realm_id, text, texts};
use crate::directory::scopes::STANDARD_SCOPES;
use crate::kernel::validate::{Notification, Rule};
use crate::operations::import::configuration::{Client, Collection, Group, Realm, RoleName};

/// Keycloak's own clients, which every realm has.
const OWN_CLIENTS: &[&str] =
    &["account", "account-console", "admin-cli", "broker", "realm-management", "security-admin-console"];
/// Keycloak's own client scopes; `openid`, `profile` and `email` are standard here.
const OWN_SCOPES: &[&str] = &[
    "acr",
    "address",
    "basic",
    "email",
    "microprofile-jwt",
    "offline_access",
    "organization",
    "phone",
    "profile",
    "role_list",
    "roles",
    "saml_organization",
    "service_account",
    "web-origins",
];
const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// Parts of a realm export nothing here takes, and why.
const UNTAKEN: &[(&str, &str)] = &[
    ("identityProviders", "identity brokering is not offered yet: these providers are not carried"),
    ("authenticationFlows", "sign-in steps here are the service's own, not configurable flows"),
    ("components", "user federation (LDAP, Kerberos) and key providers are not carried: keys here are made anew"),
    ("smtpServer", "mail here is the service's own configuration"),
    ("requiredActions", "required actions are not carried"),
    ("clientPolicies", "client policies are not carried: the service's Cedar policies decide"),
];

fn is_own_role(name: &str) -> bool {
    name == "offline_access" || name == "uma_authorization" || name.starts_with("default-roles-")
}

pub(super) fn translate(export: Map<String, Value>, realm: Option<&str>) -> Result<Translation, Vec<Notification>> {
    let Some(name) = text(&export, "realm") else {
        return Err(vec![Notification::new(
            "realm",
            Rule::Required,
            "a Keycloak realm export names its realm (realm)",
        )]);
    };
    let mut t = Translation::default();
    let id = realm.map_or_else(|| realm_id(name), str::to_owned);
    let mut out =
        Realm { item: Some(item(Collection::Realm, settings(&mut t, &export, name, &id))), ..Realm::default() };

    let scopes = scopes(&mut t, &export, &mut out);
    let service_accounts = roles(&mut t, &export, &mut out);
    clients(&mut t, &export, &scopes, &service_accounts, &mut out);
    groups(&mut t, &export, &mut out);
    organizations(&mut t, &export, &mut out);
    let clients: HashSet<String> = out.clients.iter().map(|c| c.key().to_owned()).collect();
    users(&mut t, &export, &clients);
    for (part, why) in UNTAKEN {
        let count = export.get(*part).map_or(0, |v| v.as_array().map_or(1, Vec::len));
        if count > 0 {
            t.left_behind(format!("{part} ({count})"), why);
        }
    }
    t.document.realms.push(out);
    Ok(t)
}

/// The realm's own settings.
fn settings(t: &mut Translation, export: &Map<String, Value>, name: &str, id: &str) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("id".into(), json!(id));
    fields.insert("displayName".into(), json!(text(export, "displayName").unwrap_or(name)));
    if flag(export, "enabled") == Some(false) {
        fields.insert("status".into(), json!("Disabled"));
    }
    if id == name {
        t.mapped(format!("realm {name}"), format!("realm {id}"));
    } else {
        t.changed(
            format!("realm {name}"),
            format!("realm {id}"),
            "realm ids here are lowercase letters, digits, - and _",
        );
    }
    if let Some(allowed) = flag(export, "registrationAllowed") {
        fields.insert("selfSignUp".into(), json!(allowed));
    }
    if let Some(protected) = flag(export, "bruteForceProtected") {
        fields.insert("lockoutEnabled".into(), json!(protected));
        if let Some(failures) = export.get("failureFactor").and_then(Value::as_i64) {
            fields.insert("maxFailedAttempts".into(), json!(failures.clamp(1, 100)));
        }
        if let Some(seconds) = export.get("maxFailureWaitSeconds").and_then(Value::as_i64) {
            fields.insert("lockoutDurationMinutes".into(), json!(((seconds + 59) / 60).clamp(1, 1440)));
        }
        t.changed(
            "brute force detection",
            "realm lockout",
            "Keycloak counts failures per person; here failures from one unapproved address within an hour \
             lock that address out of the account, and attack protection watches the rest",
        );
    }
    for rule in text(export, "passwordPolicy").unwrap_or_default().split(" and ").filter(|r| !r.trim().is_empty()) {
        let rule = rule.trim();
        let length = rule.strip_prefix("length(").and_then(|r| r.strip_suffix(')')).and_then(|n| n.parse::<i64>().ok());
        match length {
            Some(length) => {
                fields.insert("minimumPasswordLength".into(), json!(length.clamp(8, 64)));
                t.mapped(format!("password policy {rule}"), "minimumPasswordLength");
            }
            None => t.left_behind(format!("password policy {rule}"), "only a minimum length is a password rule here"),
        }
    }
    fields
}

/// The client scopes that become realm scopes; returns the names clients may then ask for.
fn scopes(t: &mut Translation, export: &Map<String, Value>, out: &mut Realm) -> HashSet<String> {
    let mut names: HashSet<String> = STANDARD_SCOPES.iter().map(|s| (*s).to_owned()).collect();
    for scope in export.get("clientScopes").and_then(Value::as_array).into_iter().flatten() {
        let Some(scope) = scope.as_object() else { continue };
        let name = text(scope, "name").unwrap_or_default();
        if OWN_SCOPES.contains(&name) {
            continue;
        }
        if text(scope, "protocol").is_some_and(|p| p != "openid-connect") {
            t.left_behind(format!("client scope {name}"), "only OpenID Connect is spoken here");
            continue;
        }
        let mut fields = Map::new();
        fields.insert("name".into(), json!(name));
        if let Some(description) = text(scope, "description") {
            fields.insert("description".into(), json!(description));
        }
        names.insert(name.to_owned());
        out.scopes.push(item(Collection::RealmScope, fields));
        let mappers = scope.get("protocolMappers").and_then(Value::as_array).map_or(0, Vec::len);
        if mappers > 0 {
            t.changed(format!("client scope {name}"), format!("scope {name}"), "its protocol mappers are not carried");
        } else {
            t.mapped(format!("client scope {name}"), format!("scope {name}"));
        }
    }
    names
}

/// A role: its name in the form names take here, with a note.
fn role(t: &mut Translation, source: &str, role: &Map<String, Value>) -> Option<Map<String, Value>> {
    let name = text(role, "name")?;
    let here = client_id(name);
    let mut fields = Map::new();
    fields.insert("name".into(), json!(here));
    if let Some(description) = text(role, "description").filter(|d| !d.starts_with("${")) {
        fields.insert("description".into(), json!(description));
    }
    if flag(role, "composite") == Some(true) {
        t.changed(format!("{source} {name}"), format!("role {here}"), "the roles it was composed of are not carried");
    } else if here != name {
        t.changed(
            format!("{source} {name}"),
            format!("role {here}"),
            "role names here are letters, digits, -, _, . and :",
        );
    } else {
        t.mapped(format!("{source} {name}"), format!("role {here}"));
    }
    Some(fields)
}

/// The realm roles; returns the roles of each service account (by client id), which are granted to
/// the client here.
fn roles(t: &mut Translation, export: &Map<String, Value>, out: &mut Realm) -> Vec<(String, Vec<RoleName>)> {
    let realm_roles = export.get("roles").and_then(|r| r.get("realm")).and_then(Value::as_array);
    for value in realm_roles.into_iter().flatten() {
        let Some(fields) = value.as_object() else { continue };
        if text(fields, "name").is_some_and(is_own_role) {
            continue;
        }
        if let Some(fields) = role(t, "realm role", fields) {
            out.roles.push(item(Collection::RealmRole, fields));
        }
    }
    let mut accounts = Vec::new();
    for user in export.get("users").and_then(Value::as_array).into_iter().flatten() {
        let Some(user) = user.as_object() else { continue };
        if let Some(client) = text(user, "serviceAccountClientId") {
            accounts.push((client.to_owned(), role_names(user)));
        }
    }
    accounts
}

/// The roles a person or group holds: realm roles, and client roles by client.
fn role_names(holder: &Map<String, Value>) -> Vec<RoleName> {
    let mut names: Vec<RoleName> = texts(holder, "realmRoles")
        .into_iter()
        .filter(|name| !is_own_role(name))
        .map(|name| RoleName { client: None, name: client_id(&name) })
        .collect();
    for (client, roles) in holder.get("clientRoles").and_then(Value::as_object).into_iter().flatten() {
        if OWN_CLIENTS.contains(&client.as_str()) {
            continue;
        }
        for name in roles.as_array().into_iter().flatten().filter_map(Value::as_str) {
            names.push(RoleName { client: Some(client_id(client)), name: client_id(name) });
        }
    }
    names
}

fn clients(
    t: &mut Translation,
    export: &Map<String, Value>,
    scopes: &HashSet<String>,
    service_accounts: &[(String, Vec<RoleName>)],
    out: &mut Realm,
) {
    let client_roles = export.get("roles").and_then(|r| r.get("client")).and_then(Value::as_object);
    for value in export.get("clients").and_then(Value::as_array).into_iter().flatten() {
        let Some(client) = value.as_object() else { continue };
        let Some(source_id) = text(client, "clientId") else { continue };
        let source = format!("client {source_id}");
        if OWN_CLIENTS.contains(&source_id) {
            t.left_behind(source, "one of Keycloak's own clients");
            continue;
        }
        if text(client, "protocol").is_some_and(|p| p != "openid-connect") {
            t.left_behind(source, "only OpenID Connect is spoken here");
            continue;
        }
        if flag(client, "bearerOnly") == Some(true) {
            t.left_behind(
                source,
                "a bearer-only client signs no one in: describe the API it guards as a resource server",
            );
            continue;
        }
        let id = client_id(source_id);
        let public = flag(client, "publicClient") == Some(true);
        let attribute = |name: &str| client.get("attributes").and_then(|a| a.get(name)).and_then(Value::as_str);
        let mut changes = Vec::new();
        let mut grants = Vec::new();
        if flag(client, "standardFlowEnabled") != Some(false) {
            grants.extend(["authorization_code", "refresh_token"]);
        }
        if flag(client, "directAccessGrantsEnabled") == Some(true) {
            grants.push("password");
        }
        if flag(client, "serviceAccountsEnabled") == Some(true) && !public {
            grants.push("client_credentials");
        }
        if attribute("oauth2.device.authorization.grant.enabled") == Some("true") {
            grants.push(DEVICE_GRANT);
        }
        if flag(client, "implicitFlowEnabled") == Some(true) {
            changes.push("the implicit grant is not offered");
        }
        let (redirects, wild) = exact_addresses(texts(client, "redirectUris"));
        if !wild.is_empty() {
            changes.push("wildcard redirect URIs are left out: addresses here are compared exactly");
        }
        let logout: Vec<String> = match attribute("post.logout.redirect.uris") {
            Some("+") => redirects.clone(),
            Some(list) => exact_addresses(list.split("##").map(str::to_owned).collect()).0,
            None => Vec::new(),
        };
        let mut origins = Vec::new();
        for origin in texts(client, "webOrigins") {
            match origin.as_str() {
                "+" => origins.extend(redirects.iter().filter_map(|uri| origin_of(uri))),
                "*" => changes.push("the web origin * is left out: name each origin"),
                _ => origins.push(origin),
            }
        }
        origins.dedup();
        let mut allowed: Vec<String> = Vec::new();
        if grants.iter().any(|g| *g == "authorization_code" || *g == "password") {
            allowed.push("openid".into());
        }
        for scope in texts(client, "defaultClientScopes").into_iter().chain(texts(client, "optionalClientScopes")) {
            if scopes.contains(&scope) && !allowed.contains(&scope) {
                allowed.push(scope);
            }
        }
        let mut fields = Map::new();
        fields.insert("id".into(), json!(id));
        if let Some(name) = text(client, "name").filter(|n| !n.starts_with("${")) {
            fields.insert("name".into(), json!(name));
        }
        if let Some(description) = text(client, "description") {
            fields.insert("description".into(), json!(description));
        }
        fields.insert("type".into(), json!(if public { "Public" } else { "Confidential" }));
        if flag(client, "enabled") == Some(false) {
            fields.insert("status".into(), json!("Disabled"));
        }
        let mut configuration = Map::new();
        configuration.insert("grantTypes".into(), json!(grants));
        configuration.insert("allowedScopes".into(), json!(allowed));
        configuration.insert("redirectUris".into(), json!(redirects));
        configuration.insert("postLogoutRedirectUris".into(), json!(logout));
        configuration.insert("allowedOrigins".into(), json!(origins));
        if attribute("standard.token.exchange.enabled") == Some("true") {
            configuration.insert("tokenExchangeEnabled".into(), json!(true));
        }
        fields.insert("clientConfiguration".into(), Value::Object(configuration));
        if !public {
            changes.push("a new secret is issued: give it to the application");
        }
        if id != source_id {
            changes.push("client ids here are letters, digits, -, _, . and :");
        }
        let mappers = client.get("protocolMappers").and_then(Value::as_array).map_or(0, Vec::len);
        if mappers > 0 {
            changes.push("its protocol mappers are not carried");
        }
        if changes.is_empty() {
            t.mapped(source, format!("client {id}"));
        } else {
            t.changed(source, format!("client {id}"), &changes.join("; "));
        }
        let mut out_client = Client { item: Some(item(Collection::Client, fields)), ..Client::default() };
        for value in client_roles.and_then(|roles| roles.get(source_id)).and_then(Value::as_array).into_iter().flatten()
        {
            if let Some(fields) = value.as_object().and_then(|r| role(t, &format!("client role {source_id}/"), r)) {
                out_client.roles.push(item(Collection::ClientRole, fields));
            }
        }
        if let Some((_, roles)) = service_accounts.iter().find(|(client, _)| client == source_id) {
            out_client.granted_roles = roles.clone();
            if !roles.is_empty() {
                t.mapped(format!("service account of {source_id}"), format!("roles granted to client {id}"));
            }
        }
        out.clients.push(out_client);
    }
}

/// `scheme://host[:port]` of an address.
fn origin_of(address: &str) -> Option<String> {
    let url = url::Url::parse(address).ok()?;
    let origin = url.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

/// Groups, subgroups named by their path (groups here are flat).
fn groups(t: &mut Translation, export: &Map<String, Value>, out: &mut Realm) {
    let mut pending: Vec<(String, Value)> = export
        .get("groups")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|g| (String::new(), g.clone()))
        .collect();
    while let Some((parent, value)) = pending.pop() {
        let Some(group) = value.as_object() else { continue };
        let Some(name) = text(group, "name") else { continue };
        let path = if parent.is_empty() { name.to_owned() } else { format!("{parent}/{name}") };
        let mut fields = Map::new();
        fields.insert("name".into(), json!(path));
        out.groups.push(Group { item: item(Collection::Group, fields), roles: role_names(group) });
        if parent.is_empty() {
            t.mapped(format!("group /{path}"), format!("group {path}"));
        } else {
            t.changed(
                format!("group /{path}"),
                format!("group {path}"),
                "groups here are flat: a subgroup is named by its path, and inherits nothing from its parent",
            );
        }
        for sub in group.get("subGroups").and_then(Value::as_array).into_iter().flatten() {
            pending.push((path.clone(), sub.clone()));
        }
    }
    out.groups.sort_by(|a, b| a.item.key.cmp(&b.item.key));
}

fn organizations(t: &mut Translation, export: &Map<String, Value>, out: &mut Realm) {
    for value in export.get("organizations").and_then(Value::as_array).into_iter().flatten() {
        let Some(organization) = value.as_object() else { continue };
        let Some(name) = text(organization, "name") else { continue };
        let domains: Vec<&str> = organization
            .get("domains")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|d| d.get("name").and_then(Value::as_str))
            .collect();
        let mut fields = Map::new();
        fields.insert("name".into(), json!(name));
        if let Some(description) = text(organization, "description") {
            fields.insert("description".into(), json!(description));
        }
        fields.insert("domains".into(), json!(domains));
        if flag(organization, "enabled") == Some(false) {
            fields.insert("status".into(), json!("Disabled"));
        }
        out.organizations.push(item(Collection::Organization, fields));
        t.mapped(format!("organization {name}"), format!("organization {name}"));
    }
}

/// The people, with their password hashes; service accounts are their clients here.
fn users(t: &mut Translation, export: &Map<String, Value>, clients: &HashSet<String>) {
    let (mut no_password, mut other_credentials, mut foreign_roles, mut required) = (0, 0, 0, 0);
    let mut nameless = 0;
    for value in export.get("users").and_then(Value::as_array).into_iter().flatten() {
        let Some(user) = value.as_object() else { continue };
        if user.contains_key("serviceAccountClientId") {
            continue;
        }
        let Some(username) = text(user, "username") else {
            nameless += 1;
            continue;
        };
        let names = ["email", "firstName", "lastName", "emailVerified"];
        let mut row = person_row(user, username, names, flag(user, "enabled") == Some(false));
        let credentials = user.get("credentials").and_then(Value::as_array).cloned().unwrap_or_default();
        let password = credentials.iter().find(|c| c.get("type").and_then(Value::as_str) == Some("password"));
        match password.and_then(password_hash) {
            Some(hash) => {
                row.insert("passwordHash".into(), hash);
            }
            None => no_password += 1,
        }
        // Time-based one-time passwords go with the person, with their app's parameters.
        let apps: Vec<Value> = credentials
            .iter()
            .filter(|c| c.get("type").and_then(Value::as_str) == Some("otp"))
            .filter_map(totp_factor)
            .collect();
        other_credentials += credentials.len() - usize::from(password.is_some()) - apps.len();
        if !apps.is_empty() {
            row.insert("totp".into(), Value::Array(apps));
        }
        required += usize::from(!texts(user, "requiredActions").is_empty());
        let roles = role_names(user);
        let realm_roles: Vec<&str> = roles.iter().filter(|r| r.client.is_none()).map(|r| r.name.as_str()).collect();
        row.insert("roles".into(), json!(realm_roles));
        let mut by_client = Map::new();
        for role in roles.iter().filter(|r| r.client.is_some()) {
            let client = role.client.clone().unwrap_or_default();
            if !clients.contains(&client) {
                foreign_roles += 1;
                continue;
            }
            let list = by_client.entry(client).or_insert_with(|| json!([]));
            if let Value::Array(list) = list {
                list.push(json!(role.name));
            }
        }
        if !by_client.is_empty() {
            row.insert("clientRoles".into(), Value::Object(by_client));
        }
        let groups: Vec<String> = texts(user, "groups").iter().map(|g| g.trim_start_matches('/').to_owned()).collect();
        row.insert("groups".into(), json!(groups));
        t.users.push(Value::Object(row));
    }
    t.people(no_password);
    t.nameless(nameless);
    if other_credentials > 0 {
        t.left_behind(
            format!("other credentials ({other_credentials})"),
            "passkeys and counter-based one-time passwords are not carried: people enrol again",
        );
    }
    if required > 0 {
        t.left_behind(
            format!("people with required actions ({required})"),
            "actions asked of people at their next sign-in are not carried",
        );
    }
    if foreign_roles > 0 {
        t.left_behind(
            format!("client roles of clients left behind ({foreign_roles})"),
            "their clients are not carried",
        );
    }
}

/// A Keycloak time-based OTP credential as an import's `totp` app. Keycloak keys the HMAC with
/// the secret's text as it stores it, unless the credential says it is base32 (`secretEncoding`);
/// the import takes base32 either way.
fn totp_factor(credential: &Value) -> Option<Value> {
    let secret: Value = serde_json::from_str(credential.get("secretData")?.as_str()?).ok()?;
    let data: Value = serde_json::from_str(credential.get("credentialData")?.as_str()?).ok()?;
    if data.get("subType").and_then(Value::as_str) != Some("totp") {
        return None;
    }
    let value = secret.get("value")?.as_str()?;
    let secret = match data.get("secretEncoding").and_then(Value::as_str) {
        Some(encoding) if encoding.eq_ignore_ascii_case("BASE32") => value.to_owned(),
        _ => data_encoding::BASE32_NOPAD.encode(value.as_bytes()),
    };
    let algorithm = data.get("algorithm").and_then(Value::as_str).unwrap_or("HmacSHA1");
    let mut app = json!({
        "secret": secret,
        "algorithm": crate::kernel::totp::Algorithm::parse(algorithm)?.as_str(),
        "digits": data.get("digits").and_then(Value::as_i64).unwrap_or(6),
        "period": data.get("period").and_then(Value::as_i64).unwrap_or(30),
    });
    if let Some(label) = credential.get("userLabel").and_then(Value::as_str).filter(|l| !l.is_empty()) {
        app["name"] = json!(label);
    }
    Some(app)
}

/// A Keycloak password credential as an import's `passwordHash`: PBKDF2 (SHA-1, -256 or -512),
/// Argon2 (as a PHC string), or bcrypt.
fn password_hash(credential: &Value) -> Option<Value> {
    let secret: Value = serde_json::from_str(credential.get("secretData")?.as_str()?).ok()?;
    let data: Value = serde_json::from_str(credential.get("credentialData")?.as_str()?).ok()?;
    let value = secret.get("value")?.as_str()?;
    let salt = secret.get("salt").and_then(Value::as_str).unwrap_or_default();
    let iterations = data.get("hashIterations").and_then(Value::as_i64);
    match data.get("algorithm")?.as_str()? {
        algorithm @ ("pbkdf2" | "pbkdf2-sha256" | "pbkdf2-sha512") => {
            Some(json!({ "algorithm": algorithm, "value": value, "salt": salt, "iterations": iterations? }))
        }
        "bcrypt" => Some(json!({ "algorithm": "bcrypt", "value": value })),
        "argon2" => {
            let parameter = |name: &str| {
                data.get("additionalParameters")?.get(name)?.as_array()?.first()?.as_str().map(str::to_owned)
            };
            let variant = parameter("type").unwrap_or_else(|| "id".into());
            let version = if parameter("version").as_deref() == Some("1.0") { 16 } else { 19 };
            let memory = parameter("memory")?;
            let parallelism = parameter("parallelism").unwrap_or_else(|| "1".into());
            let unpadded = |b64: &str| b64.trim_end_matches('=').to_owned();
            let phc = format!(
                "$argon2{variant}$v={version}$m={memory},t={},p={parallelism}${}${}",
                iterations?,
                unpadded(salt),
                unpadded(value)
            );
            Some(json!({ "algorithm": "argon2", "value": phc }))
        }
        _ => None,
    }
}
