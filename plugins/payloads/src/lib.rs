//! The webhook payload builder: turns the record of an event into the `data` object of the
//! message delivered for it, with exactly the fields documented for its type, in
//! that order. A fact the record lacks is `null`; a fact no field names is left out, so the
//! service can record more than it announces.
//!
//! Compiled to `wasm32-wasip2` it is a component of the `payloads` world (`wit/payloads.wit`),
//! written without the standard library so that it imports nothing. On the build machine it is an
//! ordinary library, which is how its tests run.

#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::format;
use alloc::string::String;

/// Whether a field is always present in `data` (null when unrecorded) or only when recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presence {
    Always,
    WhenRecorded,
}

use Presence::{Always, WhenRecorded};

const ACCOUNT: &[(&str, Presence)] = &[
    ("id", Always),
    ("username", Always),
    ("email", Always),
    ("first_name", Always),
    ("last_name", Always),
    ("email_confirmed", Always),
    ("status", Always),
    ("realm_id", Always),
    ("client_id", Always),
    // A person created through an identity provider names it.
    ("identity_provider", WhenRecorded),
];

const LOGIN: &[(&str, Presence)] = &[
    ("grant_type", Always),
    ("user_id", Always),
    ("username", Always),
    ("email", Always),
    ("ip_address", Always),
    ("user_agent", Always),
    ("session_id", Always),
    ("failure_reason", Always),
    ("resource", Always),
    ("scopes", Always),
    ("authentication_methods", Always),
    ("acr", Always),
    ("identity_provider", Always),
    ("consumer_id", Always),
    ("consumer_name", Always),
];

const LOCKOUT: &[(&str, Presence)] = &[
    ("user_id", Always),
    ("username", Always),
    ("email", Always),
    ("lockout_end", Always),
    ("access_failed_count", Always),
];

const TOKEN_REVOKED: &[(&str, Presence)] =
    &[("token_id", Always), ("subject", Always), ("session_id", Always), ("token_type_hint", Always)];

const TOKEN_REUSE: &[(&str, Presence)] = &[
    ("token_id", Always),
    ("subject", Always),
    ("session_id", Always),
    ("ip_address", Always),
    ("user_agent", Always),
];

/// A manual rotation names how many keys it revoked; a scheduled one its period and `automatic`.
const KEYS_ROTATED: &[(&str, Presence)] = &[
    ("signing_key_id", Always),
    ("encryption_key_id", Always),
    ("revoked_keys_count", WhenRecorded),
    ("rotation_days", WhenRecorded),
    ("automatic", WhenRecorded),
];

const SUSPENSION: &[(&str, Presence)] = &[
    ("id", Always),
    ("user_id", Always),
    ("level", Always),
    ("status", Always),
    ("starts_at", Always),
    ("ends_at", Always),
    ("restricted_scopes", Always),
    ("revokes_every_role", Always),
    ("revoked_role_ids", Always),
    ("sessions_terminated_at", Always),
    ("lifted_at", Always),
];

/// A person's authenticator added or removed (client endpoints): `by` is `user` or
/// `administrator`.
const AUTHENTICATOR: &[(&str, Presence)] = &[
    ("user_id", Always),
    ("username", Always),
    ("authenticator_id", Always),
    ("kind", Always),
    ("name", Always),
    ("by", Always),
];

/// `details` is recorded only for a client secret rotation.
const ADMIN_CHANGE: &[(&str, Presence)] = &[
    ("action", Always),
    ("resource_type", Always),
    ("resource_id", Always),
    ("parent_id", Always),
    ("realm_id", Always),
    ("client_id", Always),
    ("actor_type", Always),
    ("actor_user_id", Always),
    ("actor_username", Always),
    ("actor_email", Always),
    ("actor_credential_id", Always),
    ("actor_credential_name", Always),
    ("ip_address", Always),
    ("method", Always),
    ("path", Always),
    ("details", WhenRecorded),
];

/// Raised once per attack incident, when it opens (realm endpoints only).
const ATTACK_DETECTED: &[(&str, Presence)] = &[
    ("incident_id", Always),
    ("kind", Always),
    ("severity", Always),
    ("started_at", Always),
    ("client_id", Always),
    ("reasons", Always),
];

/// Raised for each account whose correct password arrived from an attack (realm endpoints only).
const CREDENTIAL_COMPROMISED: &[(&str, Presence)] = &[
    ("user_id", Always),
    ("username", Always),
    ("email", Always),
    ("incident_id", Always),
    ("ip_address", Always),
    ("detected_at", Always),
];

const PING: &[(&str, Presence)] = &[("message", Always), ("subscription", Always)];

/// The fields of `data` for an event type, or None for a type this builder does not know.
fn fields(event_type: &str) -> Option<&'static [(&'static str, Presence)]> {
    Some(match event_type {
        "user_created" | "user_updated" | "user_deleted" => ACCOUNT,
        "login_succeeded" | "login_failed" => LOGIN,
        "user_locked_out" => LOCKOUT,
        "token_revoked" => TOKEN_REVOKED,
        "token_reuse_detected" => TOKEN_REUSE,
        "keys_rotated" => KEYS_ROTATED,
        "user_suspended" | "user_suspension_ended" => SUSPENSION,
        "authenticator_added" | "authenticator_removed" => AUTHENTICATOR,
        "admin_resource_created" | "admin_resource_updated" | "admin_resource_deleted" => ADMIN_CHANGE,
        "attack_detected" => ATTACK_DETECTED,
        "credential_compromised" => CREDENTIAL_COMPROMISED,
        "ping" => PING,
        _ => return None,
    })
}

/// Builds the `data` object (JSON text) of an event from its facts: `fact(name)` answers the
/// recorded value of a fact as JSON text. The values are the service's own serialisation and are
/// copied as they are.
pub fn build<'a>(event_type: &str, fact: impl Fn(&str) -> Option<&'a str>) -> Result<String, String> {
    let fields = fields(event_type).ok_or_else(|| format!("no payload is defined for event type {event_type:?}"))?;
    let mut data = String::with_capacity(64 * fields.len());
    data.push('{');
    for &(name, presence) in fields {
        let value = match (fact(name), presence) {
            (Some(value), _) => value,
            (None, Always) => "null",
            (None, WhenRecorded) => continue,
        };
        if data.len() > 1 {
            data.push(',');
        }
        data.push('"');
        data.push_str(name);
        data.push_str("\":");
        data.push_str(value);
    }
    data.push('}');
    Ok(data)
}

castellan_guest::runtime!();

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod component {
    use alloc::string::String;

    wit_bindgen::generate!({ world: "payloads", path: "../../wit" });

    struct Builder;

    impl Guest for Builder {
        fn build(event: EventRecord) -> Result<String, String> {
            let fact = |name: &str| event.facts.iter().find(|fact| fact.name == name).map(|fact| fact.value.as_str());
            super::build(&event.event_type, fact)
        }
    }

    export!(Builder);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a str> {
        move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    fn parsed(text: &str) -> serde_json::Value {
        serde_json::from_str(text).unwrap_or_else(|error| panic!("{text} is not JSON: {error}"))
    }

    #[test]
    fn every_field_of_the_type_is_present_in_order_and_unknown_facts_are_left_out() {
        let data =
            build("user_locked_out", facts(&[("username", "\"ann\""), ("internal_note", "1"), ("user_id", "\"u1\"")]))
                .unwrap_or_default();
        assert_eq!(
            data,
            r#"{"user_id":"u1","username":"ann","email":null,"lockout_end":null,"access_failed_count":null}"#
        );
    }

    #[test]
    fn optional_fields_appear_only_when_recorded() {
        let manual = parsed(
            &build("keys_rotated", facts(&[("signing_key_id", "\"k\""), ("revoked_keys_count", "2")]))
                .unwrap_or_default(),
        );
        assert_eq!(
            manual,
            serde_json::json!({ "signing_key_id": "k", "encryption_key_id": null, "revoked_keys_count": 2 })
        );
        let change = parsed(
            &build("admin_resource_updated", facts(&[("details", r#"{"mode":"Immediate"}"#)])).unwrap_or_default(),
        );
        assert_eq!(change["details"]["mode"], "Immediate");
        let plain = parsed(&build("admin_resource_created", facts(&[])).unwrap_or_default());
        assert!(plain.get("details").is_none() && plain["actor_email"].is_null());
        let federated = parsed(
            &build("user_created", facts(&[("id", "\"u1\""), ("identity_provider", "\"corp\"")])).unwrap_or_default(),
        );
        assert_eq!(federated["identity_provider"], "corp", "a person created through a provider names it");
        let local = parsed(&build("user_created", facts(&[("id", "\"u2\"")])).unwrap_or_default());
        assert!(local.get("identity_provider").is_none());
    }

    #[test]
    fn every_event_type_of_the_spec_has_a_payload() {
        let types = [
            "user_created",
            "user_updated",
            "user_deleted",
            "login_succeeded",
            "login_failed",
            "user_locked_out",
            "token_revoked",
            "keys_rotated",
            "token_reuse_detected",
            "user_suspended",
            "user_suspension_ended",
            "authenticator_added",
            "authenticator_removed",
            "admin_resource_created",
            "admin_resource_updated",
            "admin_resource_deleted",
            "ping",
            "attack_detected",
            "credential_compromised",
        ];
        for event_type in types {
            let data = build(event_type, facts(&[]));
            assert!(data.as_deref().is_ok_and(|text| parsed(text).is_object()), "{event_type}: {data:?}");
        }
    }

    #[test]
    fn an_unknown_event_type_is_refused() {
        assert_eq!(
            build("user_teleported", facts(&[])),
            Err("no payload is defined for event type \"user_teleported\"".into())
        );
    }
}
