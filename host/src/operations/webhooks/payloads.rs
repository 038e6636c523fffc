//! The webhook payload builder (`wit/payloads.wit`): turns an event record into the `data` object
//! of its message. The service embeds `plugins/payloads`; `payloads_component` names another.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};
use wasmtime::component::Component;

use crate::runtime::components::{self, Limits, Pool};

wasmtime::component::bindgen!({ world: "payloads", path: "../wit", exports: { default: async } });

use castellan::plugins::payload_types::Fact;

/// The component built from `plugins/payloads` with the service.
const EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/castellan_payloads.wasm"));

/// Builds payloads with a pool of warm instances of one component.
#[derive(Debug, Clone)]
pub struct PayloadBuilder {
    pool: Arc<Pool<Payloads, PayloadsPre<Limits>>>,
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The component refused the event (an event type it does not know, say).
    #[error("the payload builder refused the event: {0}")]
    Refused(String),
    /// The component trapped, ran out of time or memory, or answered something not a JSON object.
    #[error("the payload builder failed: {0:#}")]
    Failed(anyhow::Error),
}

impl PayloadBuilder {
    /// The component at `path`, or the embedded one; checked by instantiating it once.
    pub fn load(path: Option<&Path>) -> anyhow::Result<Self> {
        static EMBEDDED_COMPONENT: OnceLock<Result<Component, String>> = OnceLock::new();
        let component = components::load(path, &EMBEDDED_COMPONENT, EMBEDDED, "the embedded payload builder")?;
        let pool = Pool::new(&component, PayloadsPre::new, |pre, store| pre.instantiate(store))?;
        Ok(Self { pool })
    }

    /// The `data` object for an event of `event_type` whose facts are the members of `record`.
    pub async fn build(&self, event_type: &str, record: &Map<String, Value>) -> Result<Map<String, Value>, BuildError> {
        let event = EventRecord {
            event_type: event_type.to_owned(),
            facts: record.iter().map(|(name, value)| Fact { name: name.clone(), value: value.to_string() }).collect(),
        };
        let called = async {
            let mut lease = self.pool.lease()?;
            let answer = lease.instance.call_build(&mut lease.store, &event).await?;
            lease.keep();
            anyhow::Ok(answer)
        };
        let answer = called.await.map_err(BuildError::Failed)?;
        let text = answer.map_err(BuildError::Refused)?;
        match serde_json::from_str(&text) {
            Ok(Value::Object(data)) => Ok(data),
            Ok(_) => Err(BuildError::Failed(anyhow::anyhow!("the answer is not a JSON object"))),
            Err(error) => Err(BuildError::Failed(anyhow::anyhow!("the answer is not JSON: {error}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn record(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[tokio::test]
    async fn the_embedded_component_builds_the_documented_fields_of_an_event() {
        let builder = PayloadBuilder::load(None).unwrap_or_else(|error| panic!("{error:#}"));
        let data = builder
            .build("token_revoked", &record(json!({ "token_id": "t1", "subject": "u1", "internal": 5 })))
            .await
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(
            Value::Object(data),
            json!({ "token_id": "t1", "subject": "u1", "session_id": null, "token_type_hint": null })
        );
    }

    #[tokio::test]
    async fn an_event_the_component_does_not_know_is_refused_and_the_instance_stays_usable() {
        let builder = PayloadBuilder::load(None).unwrap_or_else(|error| panic!("{error:#}"));
        assert!(matches!(builder.build("user_teleported", &Map::new()).await, Err(BuildError::Refused(_))));
        assert!(builder.build("ping", &record(json!({ "message": "hello" }))).await.is_ok());
    }

    #[test]
    fn a_file_that_is_not_a_component_is_refused_at_load() {
        let path = std::env::temp_dir().join(format!("not-a-component-{}.wasm", std::process::id()));
        std::fs::write(&path, b"\0asm garbage").unwrap_or_else(|error| panic!("{error}"));
        let loaded = PayloadBuilder::load(Some(&path));
        let _ = std::fs::remove_file(&path);
        assert!(loaded.is_err());
    }
}
