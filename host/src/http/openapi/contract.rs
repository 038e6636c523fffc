//! What turns the document generated from the handlers' annotations into the contract clients are
//! generated from: every operation gets a unique `operationId` derived from its method and path,
//! every success response the envelope it is really sent in (`data`, `pagination` with the right
//! item schema, or neither for a deletion), and every operation the error answers it can give, in
//! the error envelope with its `errorCode`.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// GET addresses that name one thing, not a collection: read, not listed.
const SINGLETONS: &[&str] = &[
    "account",
    "summary",
    "threat-standing",
    "rotation-policy",
    "metrics",
    "notification-preferences",
    "export",
    "instance",
];

/// Paths served at an address of their own besides the admin API's base: the first server is
/// their own address, the second the admin API's.
const OWN_ADDRESSES: &[(&str, &str)] =
    &[("/dedicated/instance", "the dedicated-environment operations, at the address they are published under")];

/// POST addresses that name an action on what precedes them.
const ACTIONS: &[&str] = &[
    "accept",
    "dismiss",
    "impersonate",
    "migrate",
    "replay",
    "revoke",
    "rotate",
    "rotate-secret",
    "test",
    "translate",
    "withdraw",
];

/// Path parameters that choose a part of what precedes them, not one item of a collection.
const PARTS: &[&str] = &["{resourceType}"];

const METHODS: &[&str] = &["get", "post", "put", "delete", "patch"];

/// The error answers every operation can give, besides those it declares.
const COMMON_ERRORS: &[(&str, &str)] = &[
    ("400", "ValidationFailed (one notification per refused field), or a malformed request"),
    ("401", "Unauthorized: the API key or bearer token is missing, unknown or expired"),
    ("403", "Forbidden: the caller lacks the permission"),
    ("429", "TooManyRequests: a rate limit is spent; `Retry-After` says when to come back"),
    ("500", "InternalError: quote the `requestId` when reporting it"),
    ("503", "ServiceUnavailable: the database cannot be reached; `Retry-After` says when to try again"),
];

const NOT_FOUND: &str = "NotFound: no such resource (or not visible to the caller)";

/// Applies the contract to the generated document.
pub fn apply(document: &mut Value) {
    add_envelopes(document);
    let Some(paths) = document.get_mut("paths").and_then(Value::as_object_mut) else { return };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else { continue };
        if let Some((_, description)) = OWN_ADDRESSES.iter().find(|(own, _)| own == path) {
            let servers = json!([
                {"url": "/api/v1", "description": description},
                {"url": "/api/v1/admin", "description": "the same operations under the admin API's base"},
            ]);
            item.insert("servers".into(), servers);
        }
        for (method, operation) in item.iter_mut().filter(|(method, _)| METHODS.contains(&method.as_str())) {
            let Some(operation) = operation.as_object_mut() else { continue };
            operation.insert("operationId".into(), operation_id(method, path).into());
            let public = operation.get("security").and_then(Value::as_array).is_none_or(Vec::is_empty);
            let paged = has_query(operation, "pageNumber");
            let responses = operation.entry("responses").or_insert_with(|| json!({}));
            let Some(responses) = responses.as_object_mut() else { continue };
            for (status, response) in responses.iter_mut() {
                if status.starts_with('2') {
                    wrap_success(response, paged, method == "delete");
                } else {
                    refer_to_error(status, response);
                }
            }
            for (status, description) in COMMON_ERRORS {
                if public && matches!(*status, "401" | "403") {
                    continue;
                }
                responses.entry(*status).or_insert_with(|| error_response(description));
            }
            if path.contains('{') {
                responses.entry("404").or_insert_with(|| error_response(NOT_FOUND));
            }
        }
    }
    omit_rather_than_null(document);
}

/// Answers omit an empty field rather than send `null`: the schemas only answers use (none of a
/// request body, where `null` still reads as absent) describe each optional field as absent or
/// holding a value, never `null`, so generated clients read it as optional.
fn omit_rather_than_null(document: &mut Value) {
    let referenced = |part: &str| {
        let mut names = BTreeSet::new();
        if let Some(paths) = document.get("paths").and_then(Value::as_object) {
            for item in paths.values().filter_map(Value::as_object) {
                for operation in METHODS.iter().filter_map(|method| item.get(*method)) {
                    collect_references(&operation[part], document, &mut names);
                    if part == "requestBody" {
                        collect_references(&operation["parameters"], document, &mut names);
                    }
                }
            }
        }
        names
    };
    let answered = referenced("responses");
    let requested = referenced("requestBody");
    let Some(schemas) = document.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else { return };
    for name in answered.difference(&requested) {
        if let Some(schema) = schemas.get_mut(name) {
            strip_null(schema);
        }
    }
}

/// The names of the component schemas `value` refers to, directly or through other components.
fn collect_references(value: &Value, document: &Value, names: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let Some(name) = map.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix(SCHEMAS))
                && names.insert(name.to_owned())
                && let Some(schema) = document.pointer(&format!("/components/schemas/{name}"))
            {
                collect_references(schema, document, names);
            }
            map.values().for_each(|inner| collect_references(inner, document, names));
        }
        Value::Array(items) => items.iter().for_each(|inner| collect_references(inner, document, names)),
        _ => {}
    }
}

const SCHEMAS: &str = "#/components/schemas/";

/// Removes `null` from every type and alternative of `schema` and the schemas inside it.
fn strip_null(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else { return };
    if let Some(types) = map.get_mut("type").and_then(Value::as_array_mut) {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            map.insert("type".into(), only);
        }
    }
    for key in ["oneOf", "anyOf"] {
        let Some(alternatives) = map.get_mut(key).and_then(Value::as_array_mut) else { continue };
        alternatives.retain(|alternative| alternative.get("type").is_none_or(|t| t != "null"));
        if let [only] = alternatives.as_slice() {
            let only = only.clone();
            map.remove(key);
            if let Some(only) = only.as_object() {
                for (k, v) in only {
                    map.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
    }
    for key in ["properties", "items", "additionalProperties", "allOf", "oneOf", "anyOf"] {
        match map.get_mut(key) {
            Some(Value::Object(inner)) if key == "properties" => inner.values_mut().for_each(strip_null),
            Some(Value::Array(inner)) => inner.iter_mut().for_each(strip_null),
            Some(inner @ Value::Object(_)) => strip_null(inner),
            _ => {}
        }
    }
}

/// `listRealmClients`, `getRealmClient`, `rotateRealmClientSigningKeys`, …: the verb of the
/// method (or the action the path ends with), then the path's nouns, each singular where an id
/// follows it.
pub fn operation_id(method: &str, path: &str) -> String {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let is_param = |s: &str| s.starts_with('{');
    let mut nouns: Vec<String> = Vec::new();
    for (i, segment) in segments.iter().enumerate().take(segments.len().saturating_sub(1)) {
        if !is_param(segment) {
            let followed_by_id = segments.get(i + 1).is_some_and(|next| is_param(next));
            nouns.push(if followed_by_id { singular(segment) } else { (*segment).to_owned() });
        }
    }
    let last = segments.last().copied().unwrap_or_default();
    if PARTS.contains(&last) {
        nouns.push("part".to_owned());
    }
    let verb = if is_param(last) {
        match method {
            "get" => "get",
            "put" => "update",
            "post" => "create",
            other => other,
        }
        .to_owned()
    } else if method == "post" && ACTIONS.contains(&last) {
        words(last)
    } else {
        let (verb, noun) = match method {
            "get" if SINGLETONS.contains(&last) => ("get", last.to_owned()),
            "get" => ("list", last.to_owned()),
            "post" => ("create", singular(last)),
            "put" => ("update", last.to_owned()),
            other => (other, last.to_owned()),
        };
        nouns.push(noun);
        verb.to_owned()
    };
    let mut id = verb
        .split('-')
        .enumerate()
        .map(|(i, w)| if i == 0 { w.to_owned() } else { capitalized(w) })
        .collect::<String>();
    for noun in &nouns {
        id.push_str(&words(noun).split('-').map(capitalized).collect::<String>());
    }
    id
}

fn words(segment: &str) -> String {
    segment.replace('_', "-")
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|first| first.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
}

/// `clients` → `client`, `deliveries` → `delivery`.
fn singular(word: &str) -> String {
    if let Some(stem) = word.strip_suffix("ies") {
        format!("{stem}y")
    } else if word.ends_with("ss") {
        word.to_owned()
    } else {
        word.strip_suffix('s').unwrap_or(word).to_owned()
    }
}

fn has_query(operation: &Map<String, Value>, name: &str) -> bool {
    operation
        .get("parameters")
        .and_then(Value::as_array)
        .is_some_and(|parameters| parameters.iter().any(|p| p["in"] == "query" && p["name"] == name))
}

/// The envelope schemas every answer refers to.
fn add_envelopes(document: &mut Value) {
    let Some(schemas) = document.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else { return };
    schemas.insert(
        "ErrorEnvelope".into(),
        json!({
            "type": "object",
            "description": "Every error answer of the admin API.",
            "required": ["success", "statusCode", "errorCode", "notifications"],
            "properties": {
                "success": { "type": "boolean", "description": "Always false." },
                "statusCode": { "type": "string", "description": "The HTTP status name: BadRequest, NotFound, …" },
                "errorCode": { "$ref": "#/components/schemas/ErrorCode" },
                "requestId": { "type": "string", "description": "The id to quote; also in `X-Request-Id`." },
                "notifications": { "type": "array", "items": { "$ref": "#/components/schemas/NotificationBody" } }
            }
        }),
    );
    schemas.insert(
        "DoneEnvelope".into(),
        json!({
            "type": "object",
            "description": "The answer of a deletion or an action that returns nothing.",
            "required": ["success", "statusCode"],
            "properties": {
                "success": { "type": "boolean" },
                "statusCode": { "type": "string", "description": "The HTTP status name: OK." }
            }
        }),
    );
}

/// A success answer in the envelope: `data` holding what the handler declared, `pagination`
/// holding a page of it on paged lists, neither for a deletion that declared nothing. A document
/// (declared in other media types only, such as a report's page and PDF) is answered as itself.
fn wrap_success(response: &mut Value, paged: bool, deletion: bool) {
    let content = response.get("content").and_then(Value::as_object);
    if content.is_some_and(|types| !types.is_empty() && !types.contains_key("application/json")) {
        return;
    }
    let declared = response.pointer("/content/application~1json/schema").cloned();
    let schema = match (declared, paged) {
        (Some(schema), true) => {
            let item = schema.get("items").cloned().unwrap_or(schema);
            envelope(
                "pagination",
                json!({
                    "type": "object",
                    "required": ["items", "pageNumber", "pageSize", "totalItems", "totalPages"],
                    "properties": {
                        "items": { "type": "array", "items": item },
                        "pageNumber": { "type": "integer", "minimum": 1 },
                        "pageSize": { "type": "integer", "minimum": 1 },
                        "totalItems": { "type": "integer", "minimum": 0 },
                        "totalPages": { "type": "integer", "minimum": 0 },
                        "totalItemsAtLeast": {
                            "type": "boolean",
                            "description": "Present when a search matched more items than it counts (1,000): totalItems is then a floor and pages may follow totalPages"
                        }
                    }
                }),
            )
        }
        (Some(schema), false) => envelope("data", schema),
        (None, _) if deletion => json!({ "$ref": "#/components/schemas/DoneEnvelope" }),
        (None, _) => envelope("data", json!({ "type": "object", "additionalProperties": true })),
    };
    if let Some(response) = response.as_object_mut() {
        response.insert("content".into(), json!({ "application/json": { "schema": schema } }));
    }
}

fn envelope(field: &str, schema: Value) -> Value {
    json!({
        "type": "object",
        "required": ["success", "statusCode", field],
        "properties": {
            "success": { "type": "boolean" },
            "statusCode": { "type": "string", "description": "The HTTP status name: OK, Created." },
            field: schema
        }
    })
}

fn error_content() -> Value {
    json!({ "application/json": { "schema": { "$ref": "#/components/schemas/ErrorEnvelope" } } })
}

/// An error answer the handler declared, in the error envelope; one declared without words gets
/// those of its status.
fn refer_to_error(status: &str, response: &mut Value) {
    if let Some(response) = response.as_object_mut() {
        response.insert("content".into(), error_content());
        let said = response.get("description").and_then(Value::as_str).is_some_and(|text| !text.is_empty());
        if !said {
            let words = COMMON_ERRORS.iter().find(|(code, _)| *code == status).map_or(NOT_FOUND, |(_, words)| *words);
            let words =
                if status == "409" { "Conflict: the resource's state does not allow the request" } else { words };
            response.insert("description".into(), words.into());
        }
    }
}

fn error_response(description: &str) -> Value {
    json!({ "description": description, "content": error_content() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_the_verb_then_the_nouns_of_the_path() {
        let cases = [
            ("get", "/realms", "listRealms"),
            ("post", "/realms", "createRealm"),
            ("get", "/realms/{realm}", "getRealm"),
            ("put", "/realms/{realm}/clients/{client}", "updateRealmClient"),
            ("delete", "/realms/{realm}/clients/{client}/consumers/{consumerId}", "deleteRealmClientConsumer"),
            ("post", "/realms/{realm}/clients/{client}/signing-keys/rotate", "rotateRealmClientSigningKeys"),
            ("post", "/account/invitations/accept", "acceptAccountInvitations"),
            ("get", "/realms/{realm}/users/{userId}/threat-standing", "getRealmUserThreatStanding"),
            ("get", "/realms/{realm}/clients/{client}/webhooks/deliveries", "listRealmClientWebhooksDeliveries"),
            ("post", "/realms/{realm}/webhooks/{webhookId}/rotate-secret", "rotateSecretRealmWebhook"),
            ("post", "/import", "createImport"),
            ("post", "/import/{resourceType}", "createImportPart"),
            ("get", "/export", "getExport"),
            ("get", "/export/{resourceType}", "getExportPart"),
            ("post", "/import/migrate", "migrateImport"),
            ("get", "/secrets/rotation-policy", "getSecretsRotationPolicy"),
        ];
        for (method, path, id) in cases {
            assert_eq!(operation_id(method, path), id, "{method} {path}");
        }
    }
}
