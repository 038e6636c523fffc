//! Groups of people in a realm: created, renamed and deleted here, each change trailed and
//! announced. Deleting a group takes from its members the roles it gave them.

use crate::kernel::clock::iso;
use crate::kernel::validate::{Body, text};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::realm_roles::{self as role_store, Group};
use crate::store::trail::{Change, ChangeAction, Placed};
use serde::Serialize;
use utoipa::ToSchema;

/// Creates `group`; its name must be free in the realm. The change is trailed with `describe`'s
/// view of the group.
pub async fn create(context: &Context, group: Group, by: Author<'_>) -> Result<Group, Error> {
    let mut tx = context.store.begin().await?;
    if !role_store::insert_group(&mut *tx, &group).await? {
        return Err(Error::AlreadyExists("group"));
    }
    let change = Change::of(ChangeAction::Create, group.place(), 201).after(GroupView::of(&group));
    changes::commit(context, by, tx, change).await?;
    Ok(group)
}

/// Changes `before` into `group`; a new name must be free in the realm.
pub async fn update(context: &Context, before: &Group, mut group: Group, by: Author<'_>) -> Result<Group, Error> {
    group.updated_at = context.clock.now();
    let mut tx = context.store.begin().await?;
    if !role_store::update_group(&mut *tx, &group).await? {
        return Err(Error::AlreadyExists("group"));
    }
    let change =
        Change::of(ChangeAction::Update, group.place(), 200).before(GroupView::of(before)).after(GroupView::of(&group));
    changes::commit(context, by, tx, change).await?;
    Ok(group)
}

/// Deletes `group`, with its memberships and the roles it gave.
pub async fn delete(context: &Context, group: &Group, by: Author<'_>) -> Result<(), Error> {
    let mut tx = context.store.begin().await?;
    role_store::delete_group(&mut *tx, &group.id).await?;
    changes::commit(context, by, tx, Change::of(ChangeAction::Delete, group.place(), 200).before(GroupView::of(group)))
        .await
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupView {
    pub id: String,
    pub realm_id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl GroupView {
    pub(crate) fn of(group: &Group) -> Self {
        Self {
            id: group.id.clone().into(),
            realm_id: group.realm_id.to_string(),
            name: group.name.clone(),
            description: group.description.clone(),
            created_at: iso(group.created_at),
            updated_at: iso(group.updated_at),
        }
    }
}

/// The body of a group creation or update: at creation the name is required; in an update each
/// field is optional, and a null description removes it.
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct GroupInput {
    /// 1–128 characters, unique in the realm. Required at creation.
    #[schema(value_type = String, required = true)]
    pub(crate) name: Option<String>,
    /// Up to 1024 characters.
    #[schema(value_type = Option<String>)]
    pub(crate) description: Option<Option<String>>,
}

impl GroupInput {
    pub(crate) fn read(body: &mut Body, creating: bool) -> Self {
        let name = if creating { body.required("name", text(1, 128)) } else { body.optional("name", text(1, 128)) };
        let description = body.nullable("description", text(0, 1024)).map(|d| d.filter(|d| !d.is_empty()));
        Self { name, description }
    }
}

/// What adding a member answers.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupMembership {
    pub(crate) group_id: String,
    pub(crate) user_id: String,
}
