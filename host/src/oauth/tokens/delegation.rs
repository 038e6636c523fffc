//! What delegated tokens rest on: the grants a client holds for a person (read through this host's
//! cache: an exchange under a grant withdrawn meanwhile is refused when it commits), the liveness of
//! the grant a token names, and the chain of actors a token carries in `act` (RFC 8693 §4.1).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::delegation::{self as grant_store, DelegationGrant, GrantState};

/// The grants not withdrawn that `client_id` holds for `person_id`, oldest first.
pub async fn grants_for(
    context: &Context,
    realm_id: &str,
    client_id: &str,
    person_id: &str,
) -> Result<Arc<Vec<DelegationGrant>>, Error> {
    if let Some(grants) = context.caches.grants(realm_id, client_id, person_id) {
        return Ok(grants);
    }
    let grants = Arc::new(grant_store::unwithdrawn_for(context.store.pool(), realm_id, client_id, person_id).await?);
    context.caches.keep_grants(realm_id, client_id, person_id, grants.clone());
    Ok(grants)
}

/// Whether the grant a token names is live at `now`: it exists in the realm, is not
/// withdrawn and its term has not passed. Read from the database every time, never from a cache:
/// a withdrawal deactivates the grant's tokens on every host the moment it answers.
pub async fn is_live(context: &Context, realm_id: &str, grant_id: &str, now: DateTime<Utc>) -> Result<bool, Error> {
    let grant = grant_store::find(context.store.pool(), realm_id, grant_id).await?;
    Ok(grant.is_some_and(|g| g.state(now) == GrantState::Live))
}

/// The number of actors in a token's claims: the depth of its nested `act` objects.
pub fn depth(claims: &Map<String, Value>) -> i64 {
    let mut depth = 0;
    let mut act = claims.get("act");
    while let Some(Value::Object(actor)) = act {
        depth += 1;
        act = actor.get("act");
    }
    depth
}

/// The `act` claim of a token `client_id` obtains by exchanging a token with `claims`: the new actor
/// outermost, the previous ones nested inside it.
pub fn next_act(client_id: &str, claims: &Map<String, Value>) -> Value {
    match claims.get("act") {
        Some(previous @ Value::Object(_)) => json!({ "client_id": client_id, "act": previous }),
        _ => json!({ "client_id": client_id }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn actors_nest_outermost_first_and_are_counted() {
        let own = claims(json!({ "sub": "ada" }));
        assert_eq!(depth(&own), 0);
        let once = next_act("agent", &own);
        assert_eq!(once, json!({ "client_id": "agent" }));
        let once = claims(json!({ "sub": "ada", "act": once }));
        assert_eq!(depth(&once), 1);
        let twice = next_act("helper", &once);
        assert_eq!(twice, json!({ "client_id": "helper", "act": { "client_id": "agent" } }));
        assert_eq!(depth(&claims(json!({ "act": twice }))), 2);
        assert_eq!(depth(&claims(json!({ "act": "not an object" }))), 0);
    }
}
