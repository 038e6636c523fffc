//! Clients of a realm: the one way a client comes to be, whoever creates it (an administrator, the
//! client itself through registration, or the service reading the client's metadata document).

use serde::Serialize;

use crate::directory::keys;
use crate::kernel::crypto::{generate_secret, last_four};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::Transaction;
use crate::store::clients::{self as client_store, CLIENT_SECRET_PREFIX, Client, ClientType, SigningKeys};
use crate::store::signing_keys as key_store;
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
