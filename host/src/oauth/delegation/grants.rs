//! Delegation grants: what an administrator writes to let a client act for a person through token
//! exchange. A grant is written once and never edited; it can only be withdrawn, at once and for
//! good, and the tokens issued under it end with it.

use serde::Serialize;
use serde_json::json;

use crate::kernel::error_code::ErrorCode;
use crate::kernel::validate::{Notification, Rule};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::delegation::{self as store, DelegationGrant, Withdrawal};
use crate::store::memberships::{self, Membership};
use crate::store::realms::Realm;
use crate::store::trail::{Change, ChangeAction, Placed};
use crate::store::{clients, organizations, resource_servers, users};

/// A grant withdrawn, and how many seconds its last issued token may still be used.
#[derive(Debug, Clone)]
pub struct Withdrawn {
    pub grant: DelegationGrant,
    pub revocation_limit_seconds: i64,
}

/// Writes a grant after checking every reference it makes against the realm (one refusal per
/// refused field); `view` is how the trail shows it.
pub async fn write<V: Serialize>(
    context: &Context,
    by: Author<'_>,
    realm: &Realm,
    grant: &DelegationGrant,
    view: impl Fn(&DelegationGrant) -> V,
) -> Result<(), Error> {
    check_references(context, realm, grant).await?;
    let mut tx = context.store.begin().await?;
    store::insert(&mut *tx, grant).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Create, grant.place(), 201).after(view(grant))).await
}

/// Withdraws a live grant for `reason`, recording who did it.
pub async fn withdraw<V: Serialize>(
    context: &Context,
    by: Author<'_>,
    before: &DelegationGrant,
    reason: &str,
    view: impl Fn(&DelegationGrant) -> V,
) -> Result<Withdrawn, Error> {
    let now = context.clock.now();
    let by_id = by.actor.acting_id();
    let withdrawal = Withdrawal { reason, by_type: by.actor.actor_type, by_id: by_id.as_deref(), at: now };
    let mut tx = context.store.begin().await?;
    let Some(grant) = store::withdraw(&mut *tx, &before.id, &withdrawal).await? else {
        return Err(Error::InvalidState(
            ErrorCode::DelegationGrantAlreadyWithdrawn,
            "the delegation grant is already withdrawn".into(),
        ));
    };
    let limit = grant.issued_tokens_expire_at.map_or(0, |until| ((until - now).num_milliseconds().max(0) + 999) / 1000);
    let change = Change::of(ChangeAction::Update, grant.place(), 200)
        .before(view(before))
        .after(view(&grant))
        .details(json!({ "reason": reason, "revocation_limit_seconds": limit }));
    changes::commit(context, by, tx, change).await?;
    Ok(Withdrawn { grant, revocation_limit_seconds: limit })
}

fn refuse(field: impl Into<String>, rule: Rule, message: impl Into<String>) -> Notification {
    Notification::new(field, rule, message)
}

/// Checks every reference of the grant against the realm, one notification per refused field.
async fn check_references(context: &Context, realm: &Realm, grant: &DelegationGrant) -> Result<(), Error> {
    let pool = context.store.pool();
    let mut refused = Vec::new();
    match clients::find(pool, &realm.id, &grant.client_id).await? {
        None => refused.push(refuse("clientId", Rule::NotFound, format!("no client {} in the realm", grant.client_id))),
        Some(client) if !client.token_exchange_enabled => refused.push(refuse(
            "clientId",
            Rule::NotEnabled,
            format!("Token Exchange is not enabled on the client {}", client.id),
        )),
        Some(client) => {
            let allowed = client.allowed_scopes.clone();
            for (index, scope) in grant.scopes.iter().enumerate() {
                if !allowed.contains(scope) {
                    let message = format!("{scope} is not a scope the client {} may request", client.id);
                    refused.push(refuse(format!("scopes[{index}]"), Rule::NotFound, message));
                }
            }
        }
    }
    let person = users::find(pool, &realm.id, &grant.subject_user_id).await?;
    if person.is_none() {
        refused.push(refuse("subjectUserId", Rule::NotFound, "no person with this id in the realm"));
    }
    for (index, address) in grant.allowed_resources.iter().enumerate() {
        if resource_servers::find_by_address(pool, &realm.id, address).await?.is_none() {
            let message = format!("{address} is not a resource server of the realm");
            refused.push(refuse(format!("allowedResources[{index}]"), Rule::NotFound, message));
        }
    }
    if let Some(organization) = &grant.organization_id {
        if organizations::find(pool, &realm.id, organization).await?.is_none() {
            refused.push(refuse("organizationId", Rule::NotFound, "no organization with this id in the realm"));
        } else if person.is_some()
            && !memberships::is_member(pool, Membership::Organization, organization, &grant.subject_user_id).await?
        {
            refused.push(refuse("organizationId", Rule::NotFound, "the person is not a member of the organization"));
        }
    }
    if refused.is_empty() { Ok(()) } else { Err(Error::Validation(refused)) }
}
