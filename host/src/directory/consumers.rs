//! A client's consumers: the callers of the client's own API, each with a key the client's API
//! checks at introspection. A consumer's key is minted here and shown once; the store keeps its
//! digest.

use serde::Serialize;

use crate::kernel::crypto::{generate_secret, last_four};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::consumers::{self as consumer_store, Consumer};
use crate::store::trail::{Change, ChangeAction, Placed};

/// The prefix of a consumer's key.
pub const CONSUMER_KEY_PREFIX: &str = "cstl_ck_";

/// A consumer with the key it was just given, shown once.
#[derive(Debug)]
pub struct Keyed {
    pub consumer: Consumer,
    pub key: String,
}

/// Creates `consumer` with a fresh key.
pub async fn create<View: Serialize>(
    context: &Context,
    mut consumer: Consumer,
    by: Author<'_>,
    describe: impl Fn(&Consumer) -> View,
) -> Result<Keyed, Error> {
    let key = generate_secret(CONSUMER_KEY_PREFIX);
    consumer.value_hash = context.hasher.hash(&key);
    consumer.value_last_four = last_four(&key);
    let mut tx = context.store.begin().await?;
    consumer_store::insert(&mut *tx, &consumer).await?;
    let change = Change::of(ChangeAction::Create, consumer.place(), 201).after(describe(&consumer));
    changes::commit(context, by, tx, change).await?;
    Ok(Keyed { consumer, key })
}

/// Changes `before` into `consumer`.
pub async fn update<View: Serialize>(
    context: &Context,
    before: &Consumer,
    mut consumer: Consumer,
    by: Author<'_>,
    describe: impl Fn(&Consumer) -> View,
) -> Result<Consumer, Error> {
    consumer.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    consumer_store::update(&mut *tx, &consumer).await?;
    let change =
        Change::of(ChangeAction::Update, consumer.place(), 200).before(describe(before)).after(describe(&consumer));
    changes::commit(context, by, tx, change).await?;
    Ok(consumer)
}

/// Deletes `consumer`: its key is inactive from the next introspection on.
pub async fn delete<View: Serialize>(
    context: &Context,
    consumer: &Consumer,
    by: Author<'_>,
    describe: impl Fn(&Consumer) -> View,
) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    consumer_store::delete(&mut *tx, &consumer.id).await?;
    let change = Change::of(ChangeAction::Delete, consumer.place(), 200).before(describe(consumer));
    changes::commit(context, by, tx, change).await
}
