//! Token signing keys: a realm's (`/realms/{realm}/signing-keys`), which sign the tokens of every
//! client without keys of its own, and a client's (`/realms/{realm}/clients/{client}/signing-keys`),
//! listed with how each stands, and rotated.

use axum::extract::State;
use axum::response::Response;

use super::reach::{ClientRead, ClientUpdate, InClient, InRealm, RealmRead, RealmUpdate};
use crate::directory::keys;
use crate::directory::keys::{RotateSigningKeysInput, RotatedSigningKeys, SigningKeyView};
use crate::directory::keys::{answer, views};
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::runtime::error::Error;
use crate::store::clients::SigningKeys;
use crate::store::signing_keys::{self as key_store, Owner};

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/signing-keys", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "The keys that sign the client's tokens and are not revoked, newest first, in `data`: its own when it has keys of its own (`signingKey.keys` Own), else the realm's", body = [SigningKeyView]),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn signing_keys(
    State(state): State<AppState>,
    InClient { client, .. }: InClient<ClientRead>,
) -> Result<Response, Error> {
    let owner = match client.signing_keys {
        SigningKeys::Own => Owner::Client(&client.realm_id, &client.id),
        SigningKeys::Realm => Owner::Realm(&client.realm_id),
    };
    let found = key_store::of_owner(state.store.pool(), owner).await?;
    Ok(envelope::ok(views(found, state.clock.now())))
}

#[utoipa::path(get, path = "/realms/{realm}/signing-keys", tag = "Realms",
    params(("realm" = String, Path)),
    responses((status = 200, description = "The realm's own keys that are not revoked, newest first, in `data`: those that sign the tokens of every client without keys of its own", body = [SigningKeyView]),
              (status = 403)),
    security(("apiKey" = [])))]
pub async fn realm_signing_keys(
    State(state): State<AppState>,
    InRealm { realm, .. }: InRealm<RealmRead>,
) -> Result<Response, Error> {
    let found = key_store::of_owner(state.store.pool(), Owner::Realm(&realm.id)).await?;
    Ok(envelope::ok(views(found, state.clock.now())))
}

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/signing-keys/rotate", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = RotateSigningKeysInput,
    responses((status = 200, description = "The new key, in `data`", body = RotatedSigningKeys),
              (status = 400), (status = 403), (status = 404),
              (status = 409, description = "Conflict: the client signs with the realm's keys; rotate those, or give it keys of its own")),
    security(("apiKey" = [])))]
pub async fn rotate_signing_keys(
    State(state): State<AppState>,
    InClient { client, caller, .. }: InClient<ClientUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let revoke = RotateSigningKeysInput::read(&mut body).revoke_old_keys.unwrap_or(false);
    body.finish()?;
    if client.signing_keys == SigningKeys::Realm {
        return Err(Error::Conflict(
            "the client signs with the realm's keys: rotate them at /realms/{realm}/signing-keys/rotate, or give \
             the client keys of its own (signingKey.keys Own)"
                .into(),
        ));
    }
    let owner = Owner::Client(&client.realm_id, &client.id);
    let algorithms = [client.key_algorithm.clone()];
    let rotated = keys::rotate_by_hand(&state, owner, &algorithms, revoke, caller.author()).await?;
    Ok(envelope::ok(answer(&rotated)))
}

#[utoipa::path(post, path = "/realms/{realm}/signing-keys/rotate", tag = "Realms",
    params(("realm" = String, Path)), request_body = RotateSigningKeysInput,
    responses((status = 200, description = "The new keys, one per algorithm the realm signs with, in `data`; the clients with keys of their own keep theirs", body = RotatedSigningKeys),
              (status = 400), (status = 403)),
    security(("apiKey" = [])))]
pub async fn rotate_realm_signing_keys(
    State(state): State<AppState>,
    InRealm { realm, caller, .. }: InRealm<RealmUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let revoke = RotateSigningKeysInput::read(&mut body).revoke_old_keys.unwrap_or(false);
    body.finish()?;
    let owner = Owner::Realm(&realm.id);
    let algorithms = keys::realm_algorithms(&state, &realm.id).await?;
    let rotated = keys::rotate_by_hand(&state, owner, &algorithms, revoke, caller.author()).await?;
    Ok(envelope::ok(answer(&rotated)))
}
