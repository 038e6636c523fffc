//! Members of groups and organizations: listed, added and removed the same way for both.

use axum::response::Response;
use serde_json::{Value, json};

use super::commit;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::envelope;
use crate::kernel::validate::{Body, Notification, Refusals, Rule, text};
use crate::runtime::error::Error;
use crate::store::memberships::{self, Membership};
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};
use crate::store::users as user_store;

/// A group or an organization whose members are asked about; the caller's permission on it has
/// been checked.
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    pub kind: Membership,
    pub id: &'a str,
    pub realm_id: &'a str,
}

impl Owner<'_> {
    fn names(&self) -> (ResourceKind, &'static str, &'static str) {
        match self.kind {
            Membership::Group => (ResourceKind::GroupMember, "groupId", "group"),
            Membership::Organization => (ResourceKind::OrganizationMember, "organizationId", "organization"),
        }
    }

    fn change(&self, user_id: &str, action: ChangeAction, status: u16) -> Change {
        let (resource_type, id_field, _) = self.names();
        let recorded = json!({ id_field: self.id, "userId": user_id });
        let change = Change::of(action, Place::in_realm(resource_type, user_id, self.realm_id).under(self.id), status);
        match action {
            ChangeAction::Delete => change.before(recorded),
            _ => change.after(recorded),
        }
    }
}

fn guid(path: &str, value: &Value) -> Result<String, Refusals> {
    let id = text(1, 64)(path, value)?;
    if uuid::Uuid::parse_str(&id).is_err() {
        return Err(vec![Notification::new(path, Rule::Format, format!("{path} must be a GUID"))]);
    }
    Ok(id)
}

/// The ids of the members, in the order they joined.
pub async fn list(state: &AppState, owner: Owner<'_>) -> Result<Response, Error> {
    Ok(envelope::ok(memberships::members(state.store.pool(), owner.kind, owner.id).await?))
}

/// Adds the person named by `userId`, who must be a person of the realm.
pub async fn add(state: &AppState, caller: &Caller, owner: Owner<'_>, mut body: Body) -> Result<Response, Error> {
    let user_id = body.required("userId", guid);
    body.finish()?;
    let Some(user_id) = user_id else { return Err(Error::invalid("userId", Rule::Required, "userId is required")) };
    if user_store::find(state.store.pool(), owner.realm_id, &user_id).await?.is_none() {
        return Err(Error::invalid("userId", Rule::NotFound, "no user with this id in the realm"));
    }
    let (_, id_field, noun) = owner.names();
    let mut tx = state.store.begin().await?;
    if !memberships::add(&mut *tx, owner.kind, owner.id, &user_id, state.clock.now()).await? {
        return Err(Error::Conflict(format!("already a member of the {noun}")));
    }
    commit(state, caller, tx, owner.change(&user_id, ChangeAction::Create, 201)).await?;
    Ok(envelope::created(json!({ id_field: owner.id, "userId": user_id })))
}

/// Removes the person.
pub async fn remove(state: &AppState, caller: &Caller, owner: Owner<'_>, user_id: &str) -> Result<Response, Error> {
    let mut tx = state.store.begin().await?;
    if !memberships::remove(&mut *tx, owner.kind, owner.id, user_id).await? {
        return Err(Error::NotFound("member"));
    }
    commit(state, caller, tx, owner.change(user_id, ChangeAction::Delete, 200)).await?;
    Ok(envelope::done())
}
