//! A client's claim mappers: the claims it adds to its tokens, each from a person's attribute, a
//! fixed value, or their roles, groups or organizations. A client maps a claim once, with at most
//! [`MAX_MAPPERS`] mappers; each change is trailed as a change of the client.

use crate::kernel::validate::Rule;
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients::{self as client_store, ClaimMapper, Client};
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};

/// The most mappers a client holds.
pub const MAX_MAPPERS: usize = 50;

fn place(client: &Client) -> Place {
    Place::in_realm(ResourceKind::ClientClaimMappers, &client.id, &client.realm_id).of_client(&client.id)
}

/// Adds `mapper` to the client's: refused for a claim the client maps already, or past
/// [`MAX_MAPPERS`].
pub async fn add(context: &Context, client: &Client, mapper: ClaimMapper, by: Author<'_>) -> Result<(), Error> {
    let before = client.claim_mappers.0.clone();
    if before.iter().any(|m| m.claim == mapper.claim) {
        return Err(Error::invalid("claim", Rule::Duplicate, format!("the client maps {} already", mapper.claim)));
    }
    if before.len() >= MAX_MAPPERS {
        return Err(Error::invalid("claim", Rule::Range, format!("a client holds at most {MAX_MAPPERS} mappers")));
    }
    let mut after = before.clone();
    after.push(mapper);
    replace(context, client, (before, after), 201, by).await
}

/// Removes the mapper `mapper_id` of the client: its next tokens no longer carry the claim.
pub async fn remove(context: &Context, client: &Client, mapper_id: &str, by: Author<'_>) -> Result<(), Error> {
    let before = client.claim_mappers.0.clone();
    let after: Vec<ClaimMapper> = before.iter().filter(|m| m.id != mapper_id).cloned().collect();
    if after.len() == before.len() {
        return Err(Error::NotFound("claim mapper"));
    }
    replace(context, client, (before, after), 200, by).await
}

async fn replace(
    context: &Context,
    client: &Client,
    (before, after): (Vec<ClaimMapper>, Vec<ClaimMapper>),
    status: u16,
    by: Author<'_>,
) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    client_store::set_claim_mappers(&mut *tx, client, &after, context.clock.now()).await?;
    let change = Change::of(ChangeAction::Update, place(client), status).before(&before).after(&after);
    changes::commit(context, by, tx, change).await
}
