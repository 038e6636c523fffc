//! Token signing keys: a realm's (`/realms/{realm}/signing-keys`), which sign the tokens of every
//! client without keys of its own, and a client's (`/realms/{realm}/clients/{client}/signing-keys`),
//! listed with how each stands, and rotated.

use axum::extract::State;
use axum::response::Response;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::reach::{ClientRead, ClientUpdate, InClient, InRealm, RealmRead, RealmUpdate};
use crate::directory::keys;
use crate::http::AppState;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::kernel::clock::iso;
use crate::kernel::validate::{Body, boolean};
use crate::runtime::error::Error;
use crate::store::clients::SigningKeys;
use crate::store::signing_keys::{self as key_store, Owner, SigningKey};

/// A signing key as the admin API shows it (public part only).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SigningKeyView {
    /// The `kid` of the tokens it signs.
    pub id: String,
    /// Realm (a key of the realm, signing for every client without keys of its own) or Client (a
    /// client's own).
    pub owner: String,
    pub algorithm: String,
    /// Next (published, signs from `signsFrom`), Active (signs new tokens) or Retired (published
    /// until its tokens expire).
    pub status: String,
    /// The public JWK.
    #[schema(value_type = Object)]
    pub public_key: Value,
    pub created_at: String,
    /// When it starts signing: a rotation publishes the next key five minutes before.
    pub signs_from: String,
    /// When it stops signing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retired_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_until: Option<String>,
}

fn views(found: Vec<SigningKey>, now: DateTime<Utc>) -> Vec<SigningKeyView> {
    let instant = |at: Option<DateTime<Utc>>| at.map(iso);
    found
        .into_iter()
        .map(|key| SigningKeyView {
            status: keys::stage(&key, now).to_owned(),
            owner: if key.client_id.is_some() { "Client" } else { "Realm" }.to_owned(),
            public_key: serde_json::from_str(&key.public_jwk).unwrap_or(Value::Null),
            id: key.id.into(),
            algorithm: key.algorithm,
            created_at: iso(key.created_at),
            signs_from: iso(key.signs_from),
            retired_at: instant(key.retired_at),
            published_until: instant(key.published_until),
        })
        .collect()
}

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

#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct RotateSigningKeysInput {
    /// Revoke every earlier key at once (its tokens stop verifying); default false keeps them
    /// published until their tokens expire.
    revoke_old_keys: Option<bool>,
}

impl RotateSigningKeysInput {
    fn read(body: &mut Body) -> Self {
        Self { revoke_old_keys: body.optional("revokeOldKeys", boolean) }
    }
}

/// The answer to a rotation of signing keys.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RotatedSigningKeys {
    /// The new key's `kid` (the first, for a realm with keys of two algorithms).
    pub signing_key_id: String,
    /// Every new key's `kid`, one per algorithm.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signing_key_ids: Vec<String>,
    /// When they start signing: five minutes on (they are published first, and the current keys
    /// sign until then), or at once when the rotation revokes.
    pub signs_from: String,
    /// Earlier keys withdrawn at once by a rotation that revokes.
    pub revoked_keys_count: u64,
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

fn answer(rotated: &keys::Rotated) -> RotatedSigningKeys {
    let ids: Vec<String> = rotated.key_ids.iter().map(ToString::to_string).collect();
    RotatedSigningKeys {
        signing_key_id: ids.first().cloned().unwrap_or_default(),
        signing_key_ids: ids,
        signs_from: iso(rotated.signs_from),
        revoked_keys_count: rotated.revoked,
    }
}
