//! Clients of a realm: the one way a client comes to be, whoever creates it (an administrator, the
//! client itself through registration, or the service reading the client's metadata document);
//! and an administrator's changes: its settings (with what they do to its signing keys), a new
//! secret, its deletion.

use serde::Serialize;

use crate::directory::keys;
use crate::directory::rotation::Rotation;
use crate::kernel::crypto::{generate_secret, last_four};
use crate::kernel::ids::PLATFORM_REALM;
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Transaction;
use crate::store::clients::{self as client_store, CLIENT_SECRET_PREFIX, Client, ClientType, SigningKeys};
use crate::store::signing_keys::{self as key_store, Owner, SigningKey};
use crate::store::trail::{Change, ChangeAction, Placed};

/// A client just created, with the secret it was given, if any: shown once, kept only hashed.
#[derive(Debug)]
pub struct Created {
    pub client: Client,
    pub secret: Option<String>,
}

/// Creates `client` inside `tx`, which may already hold what the creation rests on (an initial
/// access token spent). A confidential client that does not authenticate with keys is given a
/// secret. A client that signs with keys of its own has its first one published; one on the
/// realm's keys has the realm's keys of its algorithm published ahead of their use. The change is
/// trailed with `describe`'s view of the client, announced and committed by `by`.
///
/// Refused with `AlreadyExists` when the realm has a client of that id.
pub async fn create<View: Serialize>(
    context: &Context,
    mut tx: Transaction,
    mut client: Client,
    by: Author<'_>,
    describe: impl FnOnce(&Client) -> View,
) -> Result<Created, Error> {
    let now = context.clock.now();
    let secret = (client.client_type == ClientType::Confidential && !client.uses_keys())
        .then(|| generate_secret(CLIENT_SECRET_PREFIX));
    if let Some(secret) = &secret {
        client.secret_hash = Some(context.hasher.hash(secret));
        client.secret_last_four = Some(last_four(secret));
        client.secret_rotated_at = Some(now);
    }
    let first_key =
        (client.signing_keys == SigningKeys::Own).then(|| keys::first_own_key(context, &client, now)).transpose()?;
    if !client_store::insert(&mut *tx, &client).await? {
        return Err(Error::AlreadyExists("client"));
    }
    match &first_key {
        Some(key) => key_store::insert(&mut *tx, key).await?,
        None => keys::publish_realm_family(context, &mut tx, &client.realm_id, &client.key_algorithm, now).await?,
    }
    let change = Change::of(ChangeAction::Create, client.place(), 201).after(describe(&client));
    changes::commit(context, by, tx, change).await?;
    Ok(Created { client, secret })
}

/// What a change of a client's settings does to its own signing keys.
enum KeysChange {
    /// Given keys of its own: the first is published now and signs once verifiers hold it.
    First(SigningKey),
    /// Back to the realm's: its own stop signing now and stay published until their tokens expire.
    Retire,
    /// Its own keys change algorithm: a key of the new one replaces them.
    Rotate(SigningKey),
}

/// Changes `before` into `client` as an administrator asked (`by`), with what the change does to
/// the client's signing keys and to the realm's published keys.
pub async fn update<View: Serialize>(
    context: &Context,
    before: &Client,
    mut client: Client,
    by: Author<'_>,
    describe: impl Fn(&Client) -> View,
) -> Result<Client, Error> {
    let now = context.clock.now();
    client.updated_at = now;
    let own = Owner::Client(&client.realm_id, &client.id);
    let keys_change = match (before.signing_keys, client.signing_keys) {
        (SigningKeys::Realm, SigningKeys::Own) => Some(KeysChange::First(keys::first_own_key(context, &client, now)?)),
        (SigningKeys::Own, SigningKeys::Realm) => Some(KeysChange::Retire),
        (SigningKeys::Own, SigningKeys::Own) if client.key_algorithm != before.key_algorithm => {
            Some(KeysChange::Rotate(keys::fresh(context, own, &client.key_algorithm, now)?))
        }
        _ => None,
    };
    let mut tx = context.store.begin().await?;
    client_store::update(&mut *tx, &client).await?;
    match keys_change {
        Some(KeysChange::First(key)) => key_store::insert(&mut *tx, &key).await?,
        Some(KeysChange::Retire) => {
            keys::retire_own(context, &mut tx, &client, now).await?;
        }
        Some(KeysChange::Rotate(key)) => {
            keys::rotate(context, &mut tx, own, keys::Rotation::Manual { revoke: false }, vec![key]).await?;
        }
        None => {}
    }
    if client.signing_keys == SigningKeys::Realm && client.key_algorithm != before.key_algorithm {
        keys::publish_realm_family(context, &mut tx, &client.realm_id, &client.key_algorithm, now).await?;
    }
    let change =
        Change::of(ChangeAction::Update, client.place(), 200).before(describe(before)).after(describe(&client));
    changes::commit(context, by, tx, change).await?;
    Ok(client)
}

/// Whether `client` is the platform's own client, which signs people in to the console.
fn is_platform(client: &Client) -> bool {
    client.realm_id == PLATFORM_REALM && client.id == PLATFORM_REALM
}

/// Deletes `client` and the consents people gave it; never the platform's client.
pub async fn delete<View: Serialize>(
    context: &Context,
    client: &Client,
    by: Author<'_>,
    describe: impl Fn(&Client) -> View,
) -> Result<(), Error> {
    if is_platform(client) {
        return Err(Error::Conflict("the platform client cannot be deleted".into()));
    }
    let mut tx = context.store.begin().await?;
    client_store::delete(&mut *tx, &client.realm_id, &client.id).await?;
    crate::store::consents::forget_client(&mut *tx, &client.realm_id, &client.id).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Delete, client.place(), 200).before(describe(client)))
        .await
}

/// Gives `before` a new secret, the previous one treated as `rotation` says; the new secret, shown
/// once. Only a confidential client that authenticates with a secret has one to rotate.
pub async fn rotate_secret<View: Serialize>(
    context: &Context,
    before: &Client,
    rotation: &Rotation,
    by: Author<'_>,
    describe: impl Fn(&Client) -> View,
) -> Result<(Client, String), Error> {
    if before.client_type != ClientType::Confidential {
        return Err(Error::Conflict("a public client has no secret to rotate".into()));
    }
    if before.uses_keys() {
        return Err(Error::Conflict("a client that holds keys authenticates with them, never with a secret".into()));
    }
    if is_platform(before) {
        return Err(Error::Conflict("the platform client authenticates with account client secrets (/secrets)".into()));
    }
    let now = context.clock.now();
    let secret = generate_secret(CLIENT_SECRET_PREFIX);
    let mut client = before.clone();
    client.secret_hash = Some(context.hasher.hash(&secret));
    client.secret_last_four = Some(last_four(&secret));
    client.secret_rotated_at = Some(now);
    client.previous_secret_hash = rotation.previous_hash(before.secret_hash.as_deref());
    client.previous_secret_valid_until = rotation.previous_value_valid_until;
    client.issued_tokens_revoked_before = rotation.revoked_before(before.issued_tokens_revoked_before);
    client.updated_at = now;
    let mut tx = context.store.begin().await?;
    client_store::rotate_secret(&mut *tx, &client).await?;
    let change = Change::of(ChangeAction::Update, client.place(), 200)
        .before(describe(before))
        .after(describe(&client))
        .announced_details(rotation.details());
    changes::commit(context, by, tx, change).await?;
    Ok((client, secret))
}
