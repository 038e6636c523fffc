//! The account's secrets (API keys, personal access tokens, account client secrets): issued,
//! rotated and deleted here, each change trailed. A value is shown once, when it is made; only its
//! keyed hash and last four characters are kept.

use serde::Serialize;

use crate::directory::rotation::Rotation;
use crate::kernel::crypto::{generate_secret, last_four};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::secrets::{self as secret_store, Secret};
use crate::store::trail::{Change, ChangeAction, Placed};

/// A secret just given a value: the value, shown once.
#[derive(Debug)]
pub struct Valued {
    pub secret: Secret,
    pub value: String,
}

/// Fresh value of the secret's kind, set on `secret` as kept: its keyed hash and last four.
fn fresh_value(context: &Context, secret: &mut Secret) -> String {
    let value = generate_secret(secret.secret_type.value_prefix());
    secret.value_hash = context.hasher.hash(&value);
    secret.value_last_four = last_four(&value);
    value
}

/// Issues `secret` with a fresh value of its kind.
pub async fn issue<View: Serialize>(
    context: &Context,
    mut secret: Secret,
    by: Author<'_>,
    describe: impl Fn(&Secret) -> View,
) -> Result<Valued, Error> {
    let value = fresh_value(context, &mut secret);
    let mut tx = context.store.begin().await?;
    secret_store::insert(&mut *tx, &secret).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Create, secret.place(), 201).after(describe(&secret)))
        .await?;
    Ok(Valued { secret, value })
}

/// Deletes `secret`: it is refused from the next call on.
pub async fn delete<View: Serialize>(
    context: &Context,
    secret: &Secret,
    by: Author<'_>,
    describe: impl Fn(&Secret) -> View,
) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    secret_store::delete(&mut *tx, &secret.account_id, &secret.id).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Delete, secret.place(), 200).before(describe(secret)))
        .await
}

/// Gives `before` a fresh value, the previous one treated as `rotation` says.
pub async fn rotate<View: Serialize>(
    context: &Context,
    before: &Secret,
    rotation: &Rotation,
    by: Author<'_>,
    describe: impl Fn(&Secret) -> View,
) -> Result<Valued, Error> {
    let now = context.clock.now();
    let mut secret = before.clone();
    let value = fresh_value(context, &mut secret);
    secret.rotated_at = Some(now);
    secret.previous_value_hash = rotation.previous_hash(Some(&before.value_hash));
    secret.previous_value_valid_until = rotation.previous_value_valid_until;
    secret.issued_tokens_revoked_before = rotation.revoked_before(before.issued_tokens_revoked_before);
    secret.updated_at = now;
    let mut tx = context.store.begin().await?;
    secret_store::rotate(&mut *tx, &secret).await?;
    let change = Change::of(ChangeAction::Update, secret.place(), 200)
        .before(describe(before))
        .after(describe(&secret))
        .details(rotation.details());
    changes::commit(context, by, tx, change).await?;
    Ok(Valued { secret, value })
}
