//! Members of groups and organizations: added and removed the same way for both, each change
//! trailed and announced.

use crate::kernel::validate::{Body, Notification, Refusals, Rule, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::memberships::{self, Membership};
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};
use crate::store::users as user_store;
use serde_json::{Value, json};
use utoipa::ToSchema;

/// A group or an organization whose members change.
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    pub kind: Membership,
    pub id: &'a str,
    pub realm_id: &'a str,
}

impl Owner<'_> {
    /// The trail's kind of membership, and the name of the owner's id in a membership's record.
    fn names(&self) -> (ResourceKind, &'static str) {
        match self.kind {
            Membership::Group => (ResourceKind::GroupMember, "groupId"),
            Membership::Organization => (ResourceKind::OrganizationMember, "organizationId"),
        }
    }

    /// The membership of `user_id` as its trail row records it.
    fn membership(&self, user_id: &str) -> serde_json::Value {
        json!({ self.names().1: self.id, "userId": user_id })
    }

    fn change(&self, user_id: &str, action: ChangeAction, status: u16) -> Change {
        let (resource_type, _) = self.names();
        let place = Place::in_realm(resource_type, user_id, self.realm_id).under(self.id);
        let change = Change::of(action, place, status);
        match action {
            ChangeAction::Delete => change.before(self.membership(user_id)),
            _ => change.after(self.membership(user_id)),
        }
    }

    fn noun(&self) -> &'static str {
        match self.kind {
            Membership::Group => "group",
            Membership::Organization => "organization",
        }
    }
}

/// Adds the person `user_id`, who must be a person of the realm.
pub async fn add(context: &Context, owner: Owner<'_>, user_id: &str, by: Author<'_>) -> Result<(), Error> {
    if user_store::find(context.store.pool(), owner.realm_id, user_id).await?.is_none() {
        return Err(Error::invalid("userId", Rule::NotFound, "no user with this id in the realm"));
    }
    let mut tx = context.store.begin().await?;
    if !memberships::add(&mut *tx, owner.kind, owner.id, user_id, context.clock.now()).await? {
        return Err(Error::Conflict(format!("already a member of the {}", owner.noun())));
    }
    changes::commit(context, by, tx, owner.change(user_id, ChangeAction::Create, 201)).await
}

/// Removes the person `user_id`.
pub async fn remove(context: &Context, owner: Owner<'_>, user_id: &str, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    if !memberships::remove(&mut *tx, owner.kind, owner.id, user_id).await? {
        return Err(Error::NotFound("member"));
    }
    changes::commit(context, by, tx, owner.change(user_id, ChangeAction::Delete, 200)).await
}

/// A person to add to a group or an organization.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct MembershipInput {
    /// The id of a person of the realm.
    pub(crate) user_id: String,
}

impl MembershipInput {
    pub(crate) fn read(body: &mut Body) -> Option<Self> {
        Some(Self { user_id: body.required("userId", guid)? })
    }
}

pub(crate) fn guid(path: &str, value: &Value) -> Result<String, Refusals> {
    let id = text(1, 64)(path, value)?;
    if uuid::Uuid::parse_str(&id).is_err() {
        return Err(vec![Notification::new(path, Rule::Format, format!("{path} must be a GUID"))]);
    }
    Ok(id)
}
