//! `/realms/{realm}/clients/{client}/signing-keys`: a client's token signing keys, listed with how
//! each stands, and rotated.

use axum::extract::State;
use axum::response::Response;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use super::commit;
use super::reach::{ClientRead, ClientUpdate, InClient};
use crate::AppState;
use crate::clock::iso;
use crate::error::Error;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::store::signing_keys as key_store;
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};
use crate::tokens::keys;
use crate::validate::boolean;

/// A signing key as the admin API shows it (public part only).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SigningKeyView {
    /// The `kid` of the tokens it signs.
    pub id: String,
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

#[utoipa::path(get, path = "/realms/{realm}/clients/{client}/signing-keys", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)),
    responses((status = 200, description = "The client's keys that are not revoked, newest first, in `data`", body = [SigningKeyView]),
              (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn signing_keys(
    State(state): State<AppState>,
    InClient { client, .. }: InClient<ClientRead>,
) -> Result<Response, Error> {
    let found = key_store::of_client(state.store.pool(), &client.realm_id, &client.id).await?;
    let now = state.clock.now();
    let instant = |at: Option<DateTime<Utc>>| at.map(iso);
    let views: Vec<SigningKeyView> = found
        .into_iter()
        .map(|key| SigningKeyView {
            status: keys::stage(&key, now).to_owned(),
            public_key: serde_json::from_str(&key.public_jwk).unwrap_or(Value::Null),
            id: key.id.into(),
            algorithm: key.algorithm,
            created_at: iso(key.created_at),
            signs_from: iso(key.signs_from),
            retired_at: instant(key.retired_at),
            published_until: instant(key.published_until),
        })
        .collect();
    Ok(envelope::ok(views))
}

#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct RotateSigningKeysInput {
    /// Revoke every earlier key at once (its tokens stop verifying); default false keeps them
    /// published until their tokens expire.
    revoke_old_keys: Option<bool>,
}

/// The answer to a rotation of a client's signing keys.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RotatedSigningKeys {
    /// The new key's `kid`.
    pub signing_key_id: String,
    /// When it starts signing: five minutes on (it is published first, and the current key signs
    /// until then), or at once when the rotation revokes.
    pub signs_from: String,
    /// Earlier keys withdrawn at once by a rotation that revokes.
    pub revoked_keys_count: u64,
}

#[utoipa::path(post, path = "/realms/{realm}/clients/{client}/signing-keys/rotate", tag = "Clients",
    params(("realm" = String, Path), ("client" = String, Path)), request_body = RotateSigningKeysInput,
    responses((status = 200, description = "The new key, in `data`", body = RotatedSigningKeys),
              (status = 400), (status = 403), (status = 404)),
    security(("apiKey" = [])))]
pub async fn rotate_signing_keys(
    State(state): State<AppState>,
    InClient { client, caller, .. }: InClient<ClientUpdate>,
    JsonBody(mut body): JsonBody,
) -> Result<Response, Error> {
    let revoke = body.optional("revokeOldKeys", boolean).unwrap_or(false);
    body.finish()?;
    let key = keys::fresh(&state, &client, state.clock.now())?;
    let mut tx = state.store.begin().await?;
    let account = caller.account_id().to_owned();
    let rotated = keys::rotate(&state, &mut tx, &account, &client, keys::Rotation::Manual { revoke }, key)
        .await?
        .ok_or_else(|| Error::Internal(anyhow::anyhow!("a manual rotation always rotates")))?;
    let kid = rotated.key_id.to_string();
    let details = json!({ "signing_key_id": kid, "revoked_keys_count": rotated.revoked });
    let place =
        Place::in_realm(ResourceKind::SigningKey, &kid, &client.realm_id).of_client(&client.id).under(&client.id);
    let change = Change::of(ChangeAction::Update, place, 200).details(details);
    commit(&state, &caller, tx, change).await?;
    Ok(envelope::ok(RotatedSigningKeys {
        signing_key_id: kid,
        signs_from: iso(rotated.signs_from),
        revoked_keys_count: rotated.revoked,
    }))
}
